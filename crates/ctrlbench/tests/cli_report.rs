//! The `report`, `compare` and `export` subcommands on the report crate's
//! recorded fixtures: files written, ratios printed, one error line for a
//! directory that is not a results directory.

mod common;
use common::assert_success;

use std::path::{Path, PathBuf};
use std::process::Command;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../ctrlbench-report/tests/data")
        .join(name)
}

/// A copy of a fixture in a temp dir, so the command can write into it.
fn scratch(name: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let ok = Command::new("cp")
        .arg("-r")
        .arg(data(name))
        .arg(tmp.path())
        .status()
        .unwrap()
        .success();
    assert!(ok, "cannot copy the fixture {name}");
    let dir = tmp.path().join(name);
    (tmp, dir)
}

#[test]
fn cli_report_and_compare() {
    let (_tmp, dir) = scratch("results-small");
    let out = Command::new(env!("CARGO_BIN_EXE_ctrlbench"))
        .arg("report")
        .arg(&dir)
        .output()
        .unwrap();
    assert_success(&out);
    assert!(dir.join("report.html").is_file() && dir.join("report.md").is_file());

    let out = Command::new(env!("CARGO_BIN_EXE_ctrlbench"))
        .args(["compare"])
        .arg(&dir)
        .arg(data("results-small-b"))
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("| N | variant | figure | A | B | B/A [95 %] | verdict |")
    );

    let out = Command::new(env!("CARGO_BIN_EXE_ctrlbench"))
        .arg("report")
        .arg(dir.join("N20"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("not a ctrlbench results directory:") && err.contains("has no manifest.json")
    );
}

/// The regression gate: a directory against itself passes; a threshold that
/// is not a percentage is one error line (clap's, exit 2).
#[test]
fn cli_regression_gate() {
    let out = Command::new(env!("CARGO_BIN_EXE_ctrlbench"))
        .args(["compare", "--fail-on-regression", "10%"])
        .arg(data("results-small"))
        .arg(data("results-small"))
        .output()
        .unwrap();
    assert_success(&out);
    assert!(!String::from_utf8_lossy(&out.stdout).contains("REGRESSION"));
    let out = Command::new(env!("CARGO_BIN_EXE_ctrlbench"))
        .args(["compare", "--fail-on-regression", "lots"])
        .arg(data("results-small"))
        .arg(data("results-small"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// Variants of one results directory against each other: rust-X with go-X
/// by default, or the pairs asked for; a pair that is not there is one
/// error line.
#[test]
fn cli_compare_variants_of_one_run() {
    let bin = env!("CARGO_BIN_EXE_ctrlbench");
    let dir = data("results-concurrent");
    let out = Command::new(bin).arg("compare").arg(&dir).output().unwrap();
    assert_success(&out);
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(
        md.starts_with("# ctrlbench compare (variants of one run)"),
        "{md}"
    );
    assert!(
        md.contains("| 20 | rust-good → go-good | Ready/s |"),
        "{md}"
    );
    // Server-side figures of a concurrent run cover both variants.
    assert!(
        md.contains("apiserver update p99 (cluster-wide: all variants together)"),
        "{md}"
    );
    let out = Command::new(bin)
        .arg("compare")
        .arg(&dir)
        .args(["--pair", "go-good:rust-good"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("| 20 | go-good → rust-good | T100 |"));
    let out = Command::new(bin)
        .arg("compare")
        .arg(&dir)
        .args(["--pair", "rust-good:go-bad"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no scale has both variants of rust-good vs go-bad"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

/// A reader that goes away (`ctrlbench experiments | grep -q x`) ends the
/// output quietly: exit 0, no panic.
#[test]
fn a_closed_stdout_is_not_a_panic() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ctrlbench"))
        .arg("compare")
        .arg(data("results-concurrent"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert!(out.status.success(), "{} {err}", out.status);
}

/// github-action-benchmark takes one direction per file: Ready/s (and the
/// rust / go ratio on it) where bigger is better, the costs where smaller
/// is; each file printed with its `tool:`, and by default in the results
/// directory.
#[test]
fn cli_export_github_action_benchmark_writes_one_file_per_side() {
    let bin = env!("CARGO_BIN_EXE_ctrlbench");
    let (tmp, dir) = scratch("results-perf-small");
    let prefix = tmp.path().join("bench");
    let out = Command::new(bin)
        .arg("export")
        .arg(&dir)
        .args(["--format", "github-action-benchmark", "--out"])
        .arg(&prefix)
        .output()
        .unwrap();
    assert_success(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let read = |side: &str| -> Vec<serde_json::Value> {
        let path = tmp.path().join(format!("bench-{side}.json"));
        let text = std::fs::read_to_string(&path).unwrap();
        serde_json::from_str(&text).unwrap()
    };
    let (bigger, smaller) = (read("bigger"), read("smaller"));
    for (side, tool, n) in [
        ("bigger", "customBiggerIsBetter", bigger.len()),
        ("smaller", "customSmallerIsBetter", smaller.len()),
    ] {
        let line = format!(
            "{}: tool: {tool} ({n} entries)",
            prefix.display().to_string() + "-" + side + ".json"
        );
        assert!(stdout.contains(&line), "{line} not in:\n{stdout}");
    }
    let names = |v: &[serde_json::Value]| -> Vec<String> {
        v.iter()
            .map(|e| e["name"].as_str().unwrap().to_string())
            .collect()
    };
    let (b, s) = (names(&bigger), names(&smaller));
    assert!(!b.is_empty() && !s.is_empty(), "{b:?} {s:?}");
    assert!(
        b.iter().all(|n| n.contains("Ready/s")),
        "bigger is better: {b:?}"
    );
    assert!(
        b.iter().any(|n| n.ends_with("Ready/s ratio")),
        "the rust / go Ready/s ratio: {b:?}"
    );
    for want in ["peak RSS", "T100", "writes per object", "CPU per reconcile"] {
        assert!(s.iter().any(|n| n.contains(want)), "{want} not in {s:?}");
    }
    assert!(
        s.iter()
            .all(|n| !n.contains("Ready/s") && !n.contains("writes/s")),
        "{s:?}"
    );
    // Without --out, beside the results.
    let out = Command::new(bin)
        .arg("export")
        .arg(&dir)
        .args(["--format", "github-action-benchmark"])
        .output()
        .unwrap();
    assert_success(&out);
    for side in ["bigger", "smaller"] {
        assert!(
            dir.join(format!("github-action-benchmark-{side}.json"))
                .is_file()
        );
    }
}
