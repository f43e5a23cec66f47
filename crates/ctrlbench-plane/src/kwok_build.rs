//! Building KWOK (`sigs.k8s.io/kwok/cmd/kwok`), the fake kubelet behind
//! `--nodes`, and keeping its default stages beside it.
//!
//! A wrapper module is generated (`require sigs.k8s.io/kwok`, then `go mod
//! tidy` against the module proxy) and built into
//! `${XDG_CACHE_HOME:-~/.cache}/ctrlbench/kwok/<version>/kwok`. kwok run on its
//! own (not through kwokctl) has no stages unless its configuration names
//! some, so the stages kwokctl applies by default (node-initialize,
//! node-heartbeat, pod-ready, pod-complete, pod-delete) are copied from the
//! same module into `stages.yaml` there: the plane passes it as `--config`.
//!
//! KWOK is always built, never downloaded: its releases upload the bare
//! binaries with no checksum beside them (its `hack/releases.sh`), and no
//! binary is run unverified.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::binaries::{Lookup, build, build_dir, go_command, which_go};
use crate::kwok::Kwok;

pub use crate::kwok::KWOK_VERSION;

/// The module's stage files kwokctl uses by default, in its order.
const STAGES: [&str; 5] = [
    "kustomize/stage/node/fast/node-initialize.yaml",
    "kustomize/stage/node/heartbeat/node-heartbeat.yaml",
    "kustomize/stage/pod/fast/pod-ready.yaml",
    "kustomize/stage/pod/fast/pod-complete.yaml",
    "kustomize/stage/pod/fast/pod-delete.yaml",
];

/// KWOK and its stages where `at`'s cache keeps them (`kwok/<version>/`).
fn cached(at: &Lookup) -> Kwok {
    let cache = at.kwok_dir();
    Kwok {
        bin: cache.join("kwok"),
        stages: cache.join("stages.yaml"),
    }
}

/// Whether [`install_kwok`] would build KWOK (nothing built or written).
pub fn missing(at: &Lookup) -> bool {
    let kwok = cached(at);
    !(kwok.bin.is_file() && kwok.stages.is_file())
}

/// KWOK from the cache, built there first if missing.
pub fn install_kwok() -> Result<Kwok> {
    let at = Lookup::from_env()?;
    let kwok = cached(&at);
    if !missing(&at) {
        return Ok(kwok);
    }
    let cache = at.kwok_dir();
    let go = which_go()?;
    let work = build_dir(&cache)?;
    let dir = work.path().join("kwok");
    std::fs::create_dir_all(&dir)?;
    std::fs::write(
        dir.join("go.mod"),
        format!(
            "module ctrlbench.dev/tools/kwok\n\ngo 1.24\n\ntool sigs.k8s.io/kwok/cmd/kwok\n\nrequire sigs.k8s.io/kwok {KWOK_VERSION}\n"
        ),
    )?;
    eprintln!("resolving modules for KWOK {KWOK_VERSION}…");
    let out = go_command(&go)
        .args(["mod", "tidy"])
        .current_dir(&dir)
        .output()
        .context("cannot run go mod tidy")?;
    if !out.status.success() {
        bail!(
            "`go mod tidy` for a module requiring sigs.k8s.io/kwok {KWOK_VERSION} failed:\n{}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    write_stages(&go, &dir, &kwok.stages)?;
    build(
        &go,
        &dir,
        "sigs.k8s.io/kwok/cmd/kwok",
        "-s -w",
        &kwok.bin,
        &format!("kwok {KWOK_VERSION}"),
    )?;
    Ok(kwok)
}

/// Concatenates the module's default stages into `out`.
fn write_stages(go: &Path, dir: &Path, out: &Path) -> Result<()> {
    let o = go_command(go)
        .args([
            "mod",
            "download",
            "-json",
            &format!("sigs.k8s.io/kwok@{KWOK_VERSION}"),
        ])
        .current_dir(dir)
        .output()
        .context("cannot run go mod download")?;
    let info: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_default();
    if let Some(err) = info.get("Error").and_then(|e| e.as_str()) {
        bail!("sigs.k8s.io/kwok@{KWOK_VERSION} is not available: {err}");
    }
    let src = PathBuf::from(
        info["Dir"]
            .as_str()
            .context("go mod download gave no module directory")?,
    );
    let mut yaml = String::new();
    for f in STAGES {
        let text = std::fs::read_to_string(src.join(f))
            .with_context(|| format!("cannot read {f} of sigs.k8s.io/kwok@{KWOK_VERSION}"))?;
        yaml.push_str("---\n");
        yaml.push_str(&text);
        if !text.ends_with('\n') {
            yaml.push('\n');
        }
    }
    let tmp = out.with_extension("partial");
    std::fs::write(&tmp, yaml)?;
    std::fs::rename(&tmp, out)?;
    Ok(())
}
