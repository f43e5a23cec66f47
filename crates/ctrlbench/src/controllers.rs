//! The controller binaries an experiment runs: the Rust widget-controller
//! (built by cargo next to ctrlbench) and the Go reference controller in its
//! controller-runtime builds (built with Go from `controllers/go` into
//! `~/.cache/ctrlbench/controllers/`, keyed by build and source hash).

use std::fmt;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde::Serialize;

use ctrlbench_plane::binaries::go_command;
use ctrlbench_plane::process::{Lifetime, own};

/// The workspace this binary was built from (where controllers/go lives).
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// One controller-runtime build of the Go controller (controllers/go).
pub struct GoBuild {
    /// As in `impl = "go@<label>"`.
    pub label: &'static str,
    /// Extra `go build` arguments (which go.mod).
    pub args: &'static [&'static str],
    /// controller-runtime's priority queue (`controller.Options.UsePriorityQueue`):
    /// None where the build has none (before v0.20), else whether it is on
    /// by default (opt-in in v0.20–v0.22, on from v0.23).
    pub priority_queue_default: Option<bool>,
}

/// Every Go build there is: the one table the spec, the builder and the CLI read.
pub const GO_BUILDS: &[GoBuild] = &[
    GoBuild {
        label: "v0.18.4",
        args: &["-modfile=v0.18.4.mod"],
        priority_queue_default: None,
    },
    GoBuild {
        label: "v0.22",
        args: &[],
        priority_queue_default: Some(false),
    },
    GoBuild {
        label: "v0.25",
        args: &["-modfile=v0.25.mod"],
        priority_queue_default: Some(true),
    },
];

/// The Go build called `label`.
pub fn go_build(label: &str) -> Option<&'static GoBuild> {
    GO_BUILDS.iter().find(|b| b.label == label)
}

/// "go@v0.18.4 or go@v0.22 or go@v0.25", for error messages.
pub fn go_labels() -> String {
    GO_BUILDS
        .iter()
        .map(|b| format!("go@{}", b.label))
        .collect::<Vec<_>>()
        .join(" or ")
}

/// Which controller implementation runs a variant.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub enum Impl {
    Rust,
    /// controller-runtime version, e.g. "v0.18.4", "v0.22" or "v0.25".
    Go(String),
    /// A user's controller: the variant's `command`, started by ctrlbench.
    Command,
    /// A controller already running in the cluster: ctrlbench starts nothing.
    External,
}

impl fmt::Display for Impl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Impl::Rust => write!(f, "rust"),
            Impl::Go(v) => write!(f, "go@{v}"),
            Impl::Command => write!(f, "command"),
            Impl::External => write!(f, "external"),
        }
    }
}

impl Impl {
    /// The runtime's own work-queue order: kube-runtime's scheduler for
    /// kube-rs, client-go's FIFO queue for controller-runtime.
    pub fn default_queue(&self) -> widget_api::presets::Queue {
        match self {
            Impl::Rust => widget_api::presets::Queue::Kube,
            Impl::Go(_) | Impl::Command | Impl::External => widget_api::presets::Queue::Fifo,
        }
    }

    /// Whether controller-runtime's priority queue is on by default: None
    /// for the Rust controller and for Go builds that have no priority queue.
    pub fn priority_queue_default(&self) -> Option<bool> {
        match self {
            Impl::Rust | Impl::Command | Impl::External => None,
            Impl::Go(label) => go_build(label).and_then(|b| b.priority_queue_default),
        }
    }

    pub fn parse(s: &str) -> Option<Impl> {
        match s {
            "rust" => Some(Impl::Rust),
            "command" => Some(Impl::Command),
            "external" => Some(Impl::External),
            _ => {
                let v = s.strip_prefix("go@")?;
                go_build(v).map(|b| Impl::Go(b.label.to_string()))
            }
        }
    }
}

/// Path of the binary for one of ctrlbench's own implementations, building
/// it if needed (a command variant names its own program, an external one none).
pub fn binary(imp: &Impl) -> Result<PathBuf> {
    match imp {
        Impl::Rust => rust_binary(),
        Impl::Go(label) => go_binary(label),
        Impl::Command | Impl::External => bail!("{imp} variants have no ctrlbench binary"),
    }
}

/// Third-party controllers ctrlbench builds from the Go module proxy, each
/// from a wrapper module under `controllers/<name>/` (go.mod, go.sum: the
/// version is pinned there): (name, package). A command's program
/// `@<name>` is that build.
pub const THIRD_PARTY: &[(&str, &str)] = &[("sample-controller", "k8s.io/sample-controller")];

/// The program a command variant's first word names: `@<name>` is a
/// third-party build (built and cached here), anything else is returned as is.
pub fn command_program(first: &str) -> Result<PathBuf> {
    match first.strip_prefix('@') {
        Some(name) => third_party_binary(name),
        None => Ok(PathBuf::from(first)),
    }
}

/// `@<name>`'s package, if ctrlbench builds such a controller from a
/// checkout (nothing is built).
pub fn third_party_known(name: &str) -> Result<&'static str> {
    let Some((_, pkg)) = THIRD_PARTY.iter().find(|(n, _)| *n == name) else {
        bail!(
            "no controller @{name}: ctrlbench builds {}",
            THIRD_PARTY
                .iter()
                .map(|(n, _)| format!("@{n}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    };
    let src = workspace().join("controllers").join(name);
    if !src.join("go.mod").is_file() {
        bail!(
            "the wrapper module of @{name} ({}) is missing: run ctrlbench from a checkout",
            src.display()
        );
    }
    Ok(pkg)
}

/// Where `@<name>`'s binary is kept in the cache at `root` (built or not):
/// `controllers/<name>-<hash of go.mod/go.sum>/<name>`.
pub fn third_party_path(root: &Path, name: &str) -> Result<PathBuf> {
    third_party_known(name)?;
    let src = workspace().join("controllers").join(name);
    Ok(root
        .join("controllers")
        .join(format!("{name}-{:016x}", source_hash(&src)?))
        .join(name))
}

/// `@<name>`'s binary: `~/.cache/ctrlbench/controllers/<name>-<hash of go.mod/go.sum>/`.
pub fn third_party_binary(name: &str) -> Result<PathBuf> {
    let pkg = third_party_known(name)?;
    let src = workspace().join("controllers").join(name);
    let bin = third_party_path(&ctrlbench_plane::binaries::cache_root()?, name)?;
    if bin.is_file() {
        return Ok(bin);
    }
    let dir = bin.parent().context("a cached binary has a directory")?;
    if !which("go") {
        bail!("Go is not installed: @{name} ({pkg}) is built with Go");
    }
    std::fs::create_dir_all(dir)?;
    eprintln!("building @{name} ({pkg}) …");
    let tmp = dir.join(format!("{name}.partial"));
    let out = go_command(Path::new("go"))
        .args(["build", "-trimpath", "-o"])
        .arg(&tmp)
        .arg(pkg)
        .current_dir(&src)
        .env("CGO_ENABLED", "0")
        .env("GOFLAGS", "-mod=mod")
        .output()
        .context("cannot run go build")?;
    if !out.status.success() {
        bail!(
            "go build {pkg} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    std::fs::rename(&tmp, &bin)?;
    Ok(bin)
}

/// Where the Rust controller is looked for: beside the running binary.
/// None when `CTRLBENCH_WIDGET_CONTROLLER` names it: nothing is built then.
pub fn rust_binary_path() -> Result<Option<PathBuf>> {
    if std::env::var_os("CTRLBENCH_WIDGET_CONTROLLER").is_some() {
        return Ok(None);
    }
    beside_harness().map(Some)
}

fn beside_harness() -> Result<PathBuf> {
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
    Ok(dir.join("widget-controller"))
}

fn rust_binary() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("CTRLBENCH_WIDGET_CONTROLLER") {
        return Ok(PathBuf::from(p));
    }
    let candidate = beside_harness()?;
    let exe = std::env::current_exe()?;
    // Always ask cargo in a checkout: it is a no-op when up to date and
    // rebuilds a stale controller, which a file-exists check would miss.
    let ws = workspace();
    if ws.join("Cargo.toml").is_file() && which("cargo") {
        let release = candidate.parent().is_some_and(|d| d.ends_with("release"));
        let mut cmd = nested_cargo();
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

/// The allocators the Rust controller can be built with (`allocator`);
/// all but "system" are cargo features of widget-controller.
pub const ALLOCATORS: &[&str] = &["system", "mimalloc", "jemalloc"];

/// Our Rust controller built with `allocator` (not "system"): cargo builds
/// it with that feature in a target directory of its own
/// (`target/allocator-<name>`), so the default build is never rebuilt over.
pub fn rust_binary_with_allocator(allocator: &str) -> Result<PathBuf> {
    if !ALLOCATORS.contains(&allocator) || allocator == "system" {
        bail!(
            "no allocator build {allocator:?}: use {}",
            ALLOCATORS[1..].join(", ")
        );
    }
    let ws = workspace();
    if !ws.join("Cargo.toml").is_file() || !which("cargo") {
        bail!(
            "allocator = {allocator:?} builds the controller with cargo: run ctrlbench from a checkout"
        );
    }
    let target = allocator_target(&ws, allocator);
    eprintln!("building the Rust controller with {allocator} …");
    let mut cmd = nested_cargo();
    cmd.args([
        "build",
        "--quiet",
        "--release",
        "-p",
        "widget-controller",
        "--features",
        allocator,
    ])
    .arg("--target-dir")
    .arg(&target)
    .current_dir(&ws);
    let status = cmd.status().context("cannot run cargo")?;
    if !status.success() {
        bail!("cargo build -p widget-controller --features {allocator} failed");
    }
    Ok(target.join("release/widget-controller"))
}

/// The target directory of the allocator build (`target/allocator-<name>`
/// of the workspace `ws`): its own, so the default build is never rebuilt over.
pub fn allocator_target(ws: &Path, allocator: &str) -> PathBuf {
    ws.join("target").join(format!("allocator-{allocator}"))
}

/// A `cargo` for building the controller from inside `cargo run` or
/// `cargo test`. Those set the package variables of ctrlbench
/// (`CARGO_MANIFEST_DIR`, `CARGO_PKG_*`, …) for the program they start.
/// A nested cargo would pass them on to build scripts, and ring's reads
/// `CARGO_MANIFEST_DIR` and `OUT_DIR` (which `cargo run` sets for a package
/// with a build script, as ctrlbench is): its fingerprint would differ from
/// the outer build's, and ring, rustls and the whole kube stack would
/// compile again on every switch between the two (about 1.5 min of each
/// warm CI run).
fn nested_cargo() -> Command {
    let mut cmd = Command::new("cargo");
    own(&mut cmd, Lifetime::Attached);
    without_package_env(&mut cmd);
    cmd
}

/// Leaves out of `cmd`'s environment the package variables that `cargo
/// run` and `cargo test` set for ctrlbench (see `nested_cargo`), so that a
/// cargo it runs, or a build step that runs one, builds as its user would.
pub fn without_package_env(cmd: &mut Command) {
    for (key, _) in std::env::vars_os() {
        if let Some(key) = key.to_str().filter(|k| is_package_var(k)) {
            cmd.env_remove(key);
        }
    }
}

/// A variable `cargo run` or `cargo test` sets for the package it runs.
fn is_package_var(key: &str) -> bool {
    matches!(
        key,
        "CARGO"
            | "CARGO_MANIFEST_DIR"
            | "CARGO_MANIFEST_PATH"
            | "CARGO_MANIFEST_LINKS"
            | "CARGO_CRATE_NAME"
            | "CARGO_BIN_NAME"
            | "CARGO_PRIMARY_PACKAGE"
            | "CARGO_TARGET_TMPDIR"
            | "OUT_DIR"
    ) || key.starts_with("CARGO_PKG_")
        || key.starts_with("CARGO_BIN_EXE_")
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

/// Where the Go controller's `label` build is kept in the cache at `root`
/// (built or not): `controllers/go-<label>-<source hash>/widget-controller`.
pub fn go_binary_path(root: &Path, label: &str) -> Result<PathBuf> {
    if go_build(label).is_none() {
        bail!("no Go build {label:?}: use {}", go_labels());
    }
    let src = workspace().join("controllers/go");
    if !src.join("main.go").is_file() {
        bail!(
            "the Go controller's source ({}) is missing: run ctrlbench from a checkout",
            src.display()
        );
    }
    Ok(root
        .join("controllers")
        .join(format!("go-{label}-{:016x}", source_hash(&src)?))
        .join("widget-controller"))
}

fn go_binary(label: &str) -> Result<PathBuf> {
    let bin = go_binary_path(&ctrlbench_plane::binaries::cache_root()?, label)?;
    if bin.is_file() {
        return Ok(bin);
    }
    let extra = go_build(label).map(|b| b.args).unwrap_or_default();
    let src = workspace().join("controllers/go");
    let dir = bin.parent().context("a cached binary has a directory")?;
    if !which("go") {
        bail!(
            "Go is not installed: the Go reference controller (go@{label}) is built with Go ≥ 1.24"
        );
    }
    std::fs::create_dir_all(dir)?;
    eprintln!("building the Go controller (controller-runtime {label}) …");
    let tmp = dir.join("widget-controller.partial");
    let out = go_command(Path::new("go"))
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
    for b in GO_BUILDS {
        out.push((format!("go@{}", b.label), go_binary(b.label)?));
    }
    for (name, _) in THIRD_PARTY {
        out.push((format!("@{name}"), third_party_binary(name)?));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `cargo run` sets for ctrlbench (it has a build script, so
    /// `OUT_DIR` too) stays out of a nested cargo; the user's own
    /// environment, cargo's settings among it, stays in.
    #[test]
    fn a_nested_cargo_gets_none_of_the_outer_packages_variables() {
        for key in [
            "OUT_DIR",
            "CARGO_MANIFEST_DIR",
            "CARGO_PKG_NAME",
            "CARGO_BIN_EXE_ctrlbench",
            "CARGO_PRIMARY_PACKAGE",
        ] {
            assert!(is_package_var(key), "{key}");
        }
        for key in [
            "PATH",
            "HOME",
            "CARGO_HOME",
            "CARGO_TARGET_DIR",
            "RUSTFLAGS",
        ] {
            assert!(!is_package_var(key), "{key}");
        }
    }
}
