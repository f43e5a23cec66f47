//! What the CLI-driven test binaries share: the `ctrlbench` command with the
//! Rust widget-controller that `cargo test --workspace` built beside it,
//! and the check that a command succeeded.

// Each test binary compiles this module and uses a part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ctrlbench_record::Manifest;

pub mod project;

/// The widget-controller binary next to this test's ctrlbench.
pub fn widget_controller() -> PathBuf {
    let p = Path::new(env!("CARGO_BIN_EXE_ctrlbench")).with_file_name("widget-controller");
    assert!(
        p.is_file(),
        "{} is missing: run the tests with `cargo test --workspace`",
        p.display()
    );
    p
}

/// `ctrlbench`, running that widget-controller for `impl = "rust"`.
pub fn ctrlbench() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ctrlbench"));
    c.env("CTRLBENCH_WIDGET_CONTROLLER", widget_controller());
    // Tests run side by side on a shared machine: what they check is not
    // whether the machine was quiet (machine.rs's test does that, with its
    // own threshold).
    c.env("CTRLBENCH_BUSY_THRESHOLD", "63");
    c
}

/// Asserts that a command exited 0, showing its stderr when it did not.
#[track_caller]
pub fn assert_success(out: &Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The one results directory under `root`.
pub fn only_results_dir(root: &Path) -> PathBuf {
    let dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    dirs[0].clone()
}

/// A results directory's manifest.json.
pub fn read_manifest(dir: &Path) -> Manifest {
    Manifest::read(&dir.join("manifest.json")).unwrap()
}

/// A results directory's verdicts.json.
pub fn read_verdicts(dir: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(dir.join("verdicts.json")).unwrap()).unwrap()
}

/// The question of verdicts.json `v` on `figure` whose A side is `a`.
#[track_caller]
pub fn question<'a>(v: &'a serde_json::Value, figure: &str, a: &str) -> &'a serde_json::Value {
    v["questions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["figure"] == figure && q["a"] == a)
        .unwrap_or_else(|| panic!("no {figure} question with A = {a} in {v}"))
}
