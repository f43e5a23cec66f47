//! Where each plane binary came from, kept beside it in the cache as
//! `<name>.origin.json` and copied into every run's manifest: downloaded
//! (the URL) or built (the Go package and version), with the file's own
//! SHA-256 (a Kubernetes binary's is the published one it matched; etcd's
//! is taken once its archive matched). A result then says which binaries
//! it measured, and a downloaded plane is told from a built one, since
//! their Go toolchains and flags may differ. The file is written after the
//! binary is in place; a binary whose size no longer matches its file
//! (replaced by hand), or one cached before origins were kept, is hashed
//! again and its file rewritten, once. Binaries named by envtest's
//! variables are recorded, not hashed or written beside: they are the
//! user's.

use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// How a binary was had.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Origin {
    /// `downloaded`, `built`, `cached` (before origins were kept, or
    /// changed since), or `environment` (named by `TEST_ASSET_*` or
    /// `KUBEBUILDER_ASSETS`).
    pub how: String,
    /// The URL it was downloaded from, or the Go package it was built from.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub from: String,
    /// The file's SHA-256 (hex); empty for a binary that is the user's.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub sha256: String,
    /// Its size, so that a replaced file is noticed.
    #[serde(default)]
    pub bytes: u64,
}

/// `<bin>.origin.json`.
pub fn file_of(bin: &Path) -> PathBuf {
    let mut name = bin.file_name().unwrap_or_default().to_os_string();
    name.push(".origin.json");
    bin.with_file_name(name)
}

/// Writes `bin`'s origin beside it (through a temporary file, so that a
/// reader never sees half of one).
pub fn write(bin: &Path, how: &str, from: &str, sha256: &str) -> Result<()> {
    let bytes = std::fs::metadata(bin)
        .with_context(|| format!("cannot read {}", bin.display()))?
        .len();
    let o = Origin {
        how: how.to_string(),
        from: from.to_string(),
        sha256: sha256.to_ascii_lowercase(),
        bytes,
    };
    let to = file_of(bin);
    let tmp = to.with_extension("partial");
    std::fs::write(&tmp, serde_json::to_vec_pretty(&o)?)
        .with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, &to).with_context(|| format!("cannot write {}", to.display()))?;
    Ok(())
}

/// Writes the origin of a binary just built from Go package `pkg`.
pub fn write_built(bin: &Path, pkg: &str) -> Result<()> {
    write(bin, "built", pkg, &sha256_of(bin)?)
}

/// The origin of a cached binary: its file when the size still matches,
/// else `cached` with a fresh hash, written back for the next run.
pub fn of_cached(bin: &Path) -> Result<Origin> {
    let bytes = std::fs::metadata(bin)
        .with_context(|| format!("cannot read {}", bin.display()))?
        .len();
    let kept = std::fs::read(file_of(bin))
        .ok()
        .and_then(|b| serde_json::from_slice::<Origin>(&b).ok());
    if let Some(o) = kept.filter(|o| o.bytes == bytes && !o.sha256.is_empty()) {
        return Ok(o);
    }
    let sha = sha256_of(bin)?;
    // A read-only cache still runs: the hash is recorded all the same.
    let _ = write(bin, "cached", "", &sha);
    Ok(Origin {
        how: "cached".to_string(),
        from: String::new(),
        sha256: sha,
        bytes,
    })
}

/// A binary the user named: recorded as theirs (`how`), not hashed.
pub fn of_user(bin: &Path, how: &str) -> Origin {
    Origin {
        how: how.to_string(),
        from: String::new(),
        sha256: String::new(),
        bytes: std::fs::metadata(bin).map(|m| m.len()).unwrap_or(0),
    }
}

/// The SHA-256 of a file, in hex.
pub fn sha256_of(path: &Path) -> Result<String> {
    let mut f =
        std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(format!("{:x}", h.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The SHA-256 of "abc" is FIPS 180-2's first example.
    const ABC: &str = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

    #[test]
    fn a_kept_origin_is_read_back_until_the_file_changes() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("etcd");
        std::fs::write(&bin, "abc").unwrap();
        write(&bin, "downloaded", "http://127.0.0.1:1/etcd.tar.gz", ABC).unwrap();
        assert_eq!(file_of(&bin), dir.path().join("etcd.origin.json"));
        let o = of_cached(&bin).unwrap();
        assert_eq!(
            (o.how.as_str(), o.sha256.as_str(), o.bytes),
            ("downloaded", ABC, 3)
        );
        // Replaced by hand: hashed again, and said to be the cache's.
        std::fs::write(&bin, "abcd").unwrap();
        let o = of_cached(&bin).unwrap();
        assert_eq!(o.how, "cached");
        assert_eq!(
            o.sha256,
            "88d4266fd4e6338d13b845fcf289579d209c897823b9217da3e161936f031589"
        );
        assert_eq!(of_cached(&bin).unwrap(), o, "written back");
    }

    #[test]
    fn a_binary_without_an_origin_is_hashed_once() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("kube-apiserver");
        std::fs::write(&bin, "abc").unwrap();
        let o = of_cached(&bin).unwrap();
        assert_eq!((o.how.as_str(), o.sha256.as_str()), ("cached", ABC));
        assert!(file_of(&bin).is_file());
    }
}
