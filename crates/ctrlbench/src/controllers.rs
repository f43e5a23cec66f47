//! The controller binaries an experiment runs: the Rust widget-controller
//! (built by cargo next to ctrlbench) and the Go reference controller in its
//! two controller-runtime builds (built with Go from `controllers/go` into
//! `~/.cache/ctrlbench/controllers/`, keyed by build and source hash).

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::experiment::Impl;

/// The workspace this binary was built from (where controllers/go lives).
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// (label, extra go build args) of each Go build.
fn go_build(label: &str) -> Option<&'static [&'static str]> {
    match label {
        "v0.22" => Some(&[]),
        "v0.18.4" => Some(&["-modfile=v0.18.4.mod"]),
        _ => None,
    }
}

/// Path of the binary for an implementation, building it if needed.
pub fn binary(imp: &Impl) -> Result<PathBuf> {
    match imp {
        Impl::Rust => rust_binary(),
        Impl::Go(label) => go_binary(label),
    }
}

fn rust_binary() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("CTRLBENCH_WIDGET_CONTROLLER") {
        return Ok(PathBuf::from(p));
    }
    let exe = std::env::current_exe()?;
    let mut dir = exe
        .parent()
        .context("no directory for the running binary")?;
    // Integration tests run from target/<profile>/deps; the binaries are one up.
    if dir.file_name().is_some_and(|n| n == "deps")
        && let Some(up) = dir.parent()
    {
        dir = up;
    }
    let candidate = dir.join("widget-controller");
    // Always ask cargo in a checkout: it is a no-op when up to date and
    // rebuilds a stale controller, which a file-exists check would miss.
    let ws = workspace();
    if ws.join("Cargo.toml").is_file() && which("cargo") {
        let release = dir.ends_with("release");
        let mut cmd = Command::new("cargo");
        cmd.args(["build", "--quiet", "-p", "widget-controller"])
            .current_dir(&ws);
        if release {
            cmd.arg("--release");
        }
        let status = cmd.status().context("cannot run cargo")?;
        if !status.success() {
            bail!("cargo build -p widget-controller failed");
        }
    }
    if candidate.is_file() {
        return Ok(candidate);
    }
    bail!(
        "widget-controller not found next to {}: build it with `cargo build --release -p widget-controller`",
        exe.display()
    )
}

fn which(tool: &str) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).any(|d| d.join(tool).is_file())
}

fn source_hash(src: &Path) -> Result<u64> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(src)?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let n = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            (n.ends_with(".go") && !n.ends_with("_test.go"))
                || n.ends_with(".toml") // embedded (presets.toml)
                || n.ends_with(".mod")
                || n.ends_with(".sum")
        })
        .collect();
    files.sort();
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for f in files {
        f.file_name().hash(&mut h);
        std::fs::read(&f)?.hash(&mut h);
    }
    Ok(h.finish())
}

fn go_binary(label: &str) -> Result<PathBuf> {
    let Some(extra) = go_build(label) else {
        bail!("no Go build {label:?}: use v0.18.4 or v0.22");
    };
    let src = workspace().join("controllers/go");
    if !src.join("main.go").is_file() {
        bail!(
            "the Go controller's source ({}) is missing: run ctrlbench from a checkout",
            src.display()
        );
    }
    let cache = dirs::cache_dir().context("no cache directory: set XDG_CACHE_HOME or HOME")?;
    let dir = cache
        .join("ctrlbench/controllers")
        .join(format!("go-{label}-{:016x}", source_hash(&src)?));
    let bin = dir.join("widget-controller");
    if bin.is_file() {
        return Ok(bin);
    }
    if !which("go") {
        bail!(
            "Go is not installed: the Go reference controller (go@{label}) is built with Go ≥ 1.24"
        );
    }
    std::fs::create_dir_all(&dir)?;
    eprintln!("building the Go controller (controller-runtime {label}) …");
    let tmp = dir.join("widget-controller.partial");
    let out = Command::new("go")
        .arg("build")
        .args(extra)
        .args(["-trimpath", "-o"])
        .arg(&tmp)
        .arg(".")
        .current_dir(&src)
        .output()
        .context("cannot run go build")?;
    if !out.status.success() {
        bail!(
            "go build (controller-runtime {label}) failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    std::fs::rename(&tmp, &bin)?;
    Ok(bin)
}

/// Builds every controller; (label, path) for each.
pub fn build_all() -> Result<Vec<(String, PathBuf)>> {
    let mut out = vec![("rust".to_string(), rust_binary()?)];
    for label in crate::experiment::spec::GO_BUILDS {
        out.push((format!("go@{label}"), go_binary(label)?));
    }
    Ok(out)
}
