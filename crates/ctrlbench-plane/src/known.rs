//! What can be known of a plane before anything is built or started, so a
//! wrong version or gate costs seconds instead of a build: whether a
//! Kubernetes version can be had (binaries at hand, a committed release, or
//! one the Go module proxy serves: one `go list -m -versions` query, cached
//! for a day), and which feature gates its kube-apiserver knows (read from
//! the binary's `--help`, cached beside a binary ctrlbench built).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result, bail};

use crate::binaries::{self, Source};

/// How long the list of served Kubernetes versions is trusted.
const SERVED_FRESH_FOR: Duration = Duration::from_secs(24 * 3600);

/// The file the served versions are cached in: `…/ctrlbench/k8s/served-versions.txt`.
pub fn served_versions_file() -> Result<PathBuf> {
    Ok(binaries::cache_root()?.join("k8s/served-versions.txt"))
}

/// Ok when a plane of `version` can be had without surprises: its binaries
/// are at hand, or it is a committed release, or the proxy serves it; and Go
/// is installed wherever something must be built.
pub fn check_version(version: &str) -> Result<()> {
    let version = binaries::normalize_version(version)?;
    if binaries::find(&version)?.is_some() {
        return Ok(());
    }
    let Some(go) = binaries::which_go_opt() else {
        bail!(
            "Go is not installed, and no etcd/kube-apiserver {version} binaries were found: install Go (≥ 1.26) so ctrlbench can build them, \
             or set KUBEBUILDER_ASSETS to a directory holding etcd and kube-apiserver"
        );
    };
    if binaries::committed(&version) {
        return Ok(());
    }
    served_among(&version, &served_versions(&go)?)
}

/// What a dry run can tell of `version` with nothing built, written or
/// asked of the network: an error where [`check_version`] would fail for
/// sure, a note where only the run can tell (Go then asks the proxy).
/// Go's absence is no error here: the builds it would do are listed, with
/// what they need.
pub fn check_version_offline(version: &str) -> Result<Option<String>> {
    let version = binaries::normalize_version(version)?;
    if binaries::find(&version)?.is_some() || binaries::committed(&version) {
        return Ok(None);
    }
    // A stale list still holds every version it held: the proxy keeps them.
    let cached = served_versions_file()
        .ok()
        .and_then(|f| std::fs::read_to_string(f).ok())
        .map(|t| t.split_whitespace().map(str::to_string).collect::<Vec<_>>())
        .filter(|v| !v.is_empty());
    match cached {
        Some(served) if served.iter().any(|v| v == &format!("v{version}")) => Ok(None),
        _ => Ok(Some(format!(
            "Kubernetes {version} is not a release ctrlbench has modules for: whether the Go module proxy serves it is asked when the run starts"
        ))),
    }
}

/// Ok when the proxy's list `served` holds `version`.
fn served_among(version: &str, served: &[String]) -> Result<()> {
    if !served.iter().any(|v| v == &format!("v{version}")) {
        let newest: Vec<&str> = served
            .iter()
            .rev()
            .filter(|v| !v.contains('-'))
            .take(3)
            .map(String::as_str)
            .collect();
        bail!(
            "Kubernetes {version} is not served by the Go module proxy (k8s.io/kubernetes; the newest are {}): pick one of those",
            newest.join(", ")
        );
    }
    Ok(())
}

/// The versions of k8s.io/kubernetes the proxy serves, oldest first.
fn served_versions(go: &Path) -> Result<Vec<String>> {
    let file = served_versions_file()?;
    let fresh = std::fs::metadata(&file)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| SystemTime::now().duration_since(t).ok())
        .is_some_and(|age| age < SERVED_FRESH_FOR);
    if fresh && let Ok(text) = std::fs::read_to_string(&file) {
        return Ok(text.split_whitespace().map(str::to_string).collect());
    }
    // Outside any module, so no go.mod of the working directory interferes.
    let dir = tempfile::tempdir().context("cannot create a temporary directory")?;
    let out = binaries::go_command(go)
        .args(["list", "-m", "-versions", "k8s.io/kubernetes"])
        .current_dir(dir.path())
        .env("GOFLAGS", "-mod=mod")
        .output()
        .context("cannot run go list")?;
    if !out.status.success() {
        bail!(
            "cannot list the Kubernetes versions the Go module proxy serves: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let versions: Vec<String> = text
        .split_whitespace()
        .skip(1)
        .map(str::to_string)
        .collect();
    if let Some(parent) = file.parent() {
        std::fs::create_dir_all(parent)?;
    }
    write_atomic(&file, &versions.join("\n"))?;
    Ok(versions)
}

/// The feature gates the kube-apiserver of `version` knows, when its binary
/// is at hand (None: not built yet, so gates are checked when it starts).
pub fn feature_gates(version: &str) -> Result<Option<BTreeSet<String>>> {
    gates(version, true)
}

/// [`feature_gates`], with the table read but never cached (a dry run
/// writes nothing).
pub fn feature_gates_unkept(version: &str) -> Result<Option<BTreeSet<String>>> {
    gates(version, false)
}

fn gates(version: &str, keep: bool) -> Result<Option<BTreeSet<String>>> {
    let Some(b) = binaries::find(version)? else {
        return Ok(None);
    };
    let cached = gates_file(&b.kube_apiserver, b.source);
    if let Some(f) = &cached
        && let Ok(text) = std::fs::read_to_string(f)
    {
        return Ok(Some(text.lines().map(str::to_string).collect()));
    }
    let gates = gates_of(&b.kube_apiserver)?;
    if let Some(f) = cached.as_ref().filter(|_| keep) {
        let text: Vec<&str> = gates.iter().map(String::as_str).collect();
        write_atomic(f, &text.join("\n"))?;
    }
    Ok(Some(gates))
}

/// Writes the gate table beside a binary ctrlbench keeps in its cache.
pub fn remember_gates(version: &str) -> Result<()> {
    feature_gates(version).map(|_| ())
}

/// Only a binary in ctrlbench's cache gets its table cached beside it; one
/// from KUBEBUILDER_ASSETS or TEST_ASSET_* may change under us.
fn gates_file(apiserver: &Path, source: Source) -> Option<PathBuf> {
    matches!(source, Source::Cache | Source::Downloaded | Source::Built)
        .then(|| apiserver.with_file_name("feature-gates.txt"))
}

/// Gate names from `kube-apiserver --help`: the lines under
/// `--feature-gates` read `Name=true|false (STAGE - default=…)`, with a
/// `kube:` component prefix from 1.31 on.
fn gates_of(apiserver: &Path) -> Result<BTreeSet<String>> {
    let out = Command::new(apiserver)
        .arg("--help")
        .output()
        .with_context(|| format!("cannot run {} --help", apiserver.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let gates = parse_gates(&text);
    if gates.is_empty() {
        bail!(
            "{} --help lists no feature gates: the binary is not a kube-apiserver",
            apiserver.display()
        );
    }
    Ok(gates)
}

fn parse_gates(help: &str) -> BTreeSet<String> {
    help.lines()
        .filter_map(|l| {
            let l = l.trim();
            let (name, rest) = l.split_once('=')?;
            let name = name.strip_prefix("kube:").unwrap_or(name);
            (rest.starts_with("true|false")
                && !name.is_empty()
                && name.bytes().all(|b| b.is_ascii_alphanumeric()))
            .then(|| name.to_string())
        })
        .collect()
}

/// A reader never sees half a table.
fn write_atomic(path: &Path, text: &str) -> Result<()> {
    let tmp = path.with_extension("partial");
    std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
}

/// `gates` (as `Name=true` or `Name=false`) that `known` lacks, in order.
pub fn unknown_gates<'a>(gates: &'a [String], known: &BTreeSet<String>) -> Vec<&'a str> {
    gates
        .iter()
        .map(|g| g.split_once('=').map_or(g.as_str(), |(n, _)| n))
        .filter(|n| !known.contains(*n))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gates_are_read_from_help_with_or_without_a_component_prefix() {
        let help = "      --feature-gates colonSeparatedMultimapStringString   Comma-separated list of component:key=value pairs. Options are:\n\
                    kube:APIResponseCompression=true|false (BETA - default=true)\n\
                    kube:AllAlpha=true|false (ALPHA - default=false)\n\
                    WatchList=true|false (BETA - default=true)\n\
                    --goaway-chance float   To prevent HTTP/2 clients …\n\
                    --enable-priority-and-fairness=true|false\n";
        let g = parse_gates(help);
        assert_eq!(
            g.into_iter().collect::<Vec<_>>(),
            ["APIResponseCompression", "AllAlpha", "WatchList"]
        );
    }

    #[test]
    fn unknown_gates_are_named() {
        let known: BTreeSet<String> = ["WatchList".to_string()].into();
        let gates = vec!["WatchList=false".to_string(), "NoSuchGate=true".to_string()];
        assert_eq!(unknown_gates(&gates, &known), ["NoSuchGate"]);
    }
}
