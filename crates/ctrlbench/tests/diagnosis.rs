//! The diagnosis against the lab's ground truth, on a real local plane:
//! `experiments/lab/diagnosis.toml` runs every anti-pattern preset and its
//! good counterparts, in Rust and Go, at once. Each preset must get exactly
//! its own rule and each good one none. The expected rule of each preset
//! is written here from what the preset is (deploy/presets.toml's
//! descriptions), not read from the code under test. The confusion table
//! is printed whole, so the CI log shows it. The file's 500 decoys (in a
//! namespace no controller reconciles) must show in the cluster-wide
//! caches' evidence, and change nothing for the others.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::{assert_success, ctrlbench, only_results_dir};

/// Each preset and the one rule it must get (None: nothing to fix).
const TRUTH: &[(&str, Option<&str>)] = &[
    ("good", None),
    ("good-single", None),
    ("good-patch", None),
    ("conditional-status", None),
    ("finalizer", None),
    ("bad-fix", Some("self-triggered-loop")),
    ("bad", Some("status-dropped")),
    ("uncached-read", Some("uncached-reads")),
    ("metadata-only", Some("uncached-reads")),
    ("list-in-reconcile", Some("list-per-reconcile")),
    ("requeue-after", Some("requeue-loop")),
    ("unconditional-status", Some("status-every-reconcile")),
    ("cache-cluster-wide", Some("cluster-wide-cache")),
    ("no-leader-election", Some("replicas-without-election")),
];

#[test]
fn every_lab_preset_gets_its_own_diagnosis_and_the_good_ones_none() {
    let tmp = tempfile::tempdir().unwrap();
    let results = tmp.path().join("results");
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments/lab/diagnosis.toml");
    let out = ctrlbench()
        .arg("run")
        .arg(&file)
        .args(["--no-progress", "--results"])
        .arg(&results)
        .output()
        .unwrap();
    assert_success(&out);
    let dir = only_results_dir(&results);
    let verdicts = common::read_verdicts(&dir);
    // variant -> the rules it got.
    let mut got: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for f in verdicts["diagnosis"].as_array().unwrap() {
        got.entry(f["variant"].as_str().unwrap().to_string())
            .or_default()
            .push(f["rule"].as_str().unwrap().to_string());
    }
    let mut table = String::from("preset | expected | rust | go\n---|---|---|---\n");
    let mut wrong = Vec::new();
    for (preset, want) in TRUTH {
        let mut cells = Vec::new();
        for lang in ["rust", "go"] {
            let v = format!("{lang}-{preset}");
            let rules = got.get(&v).cloned().unwrap_or_default();
            let exact = match want {
                Some(w) => rules == [w.to_string()],
                None => rules.is_empty(),
            };
            if !exact {
                wrong.push(format!("{v}: got {rules:?}, want {want:?}"));
            }
            cells.push(format!(
                "{}{}",
                if rules.is_empty() {
                    "—".to_string()
                } else {
                    rules.join(", ")
                },
                if exact { "" } else { " ✗" }
            ));
        }
        table.push_str(&format!(
            "{preset} | {} | {} | {}\n",
            want.unwrap_or("—"),
            cells[0],
            cells[1]
        ));
    }
    // Past the test harness's capture: CI's log shows the table.
    let _ = std::io::Write::write_all(
        &mut std::io::stderr(),
        format!("The diagnosis against the lab's presets (N=20, one concurrent run):\n{table}")
            .as_bytes(),
    );
    assert!(wrong.is_empty(), "{}\n{table}", wrong.join("\n"));
    // The decoys: every run recorded them, and the cluster-wide caches'
    // evidence names them as what their lists returned.
    for f in verdicts["diagnosis"].as_array().unwrap() {
        if f["rule"] == "cluster-wide-cache" {
            let ev = f["evidence"].as_str().unwrap();
            let _ = std::io::Write::write_all(
                &mut std::io::stderr(),
                format!("{}: {ev}\n", f["variant"].as_str().unwrap_or("?")).as_bytes(),
            );
            assert!(
                ev.contains("with 500 decoys in a namespace it was not asked to reconcile, its lists of benchmark.example.com/widgets returned them: peak RSS"),
                "{ev}"
            );
        }
    }
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("N20/rust-good/rep1/summary.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(summary["decoys"], 500);
    // The report opens with it, and `diagnose` prints it again.
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    let fix = report
        .find("## What to fix")
        .expect("a What to fix section");
    assert!(
        report
            .find("## Questions, answered")
            .is_none_or(|q| fix < q),
        "What to fix comes first"
    );
    let out = ctrlbench().arg("diagnose").arg(&dir).output().unwrap();
    assert_success(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("**rust-bad-fix** (N=20): **a self-triggered loop**"),
        "{text}"
    );
    // Every run has its footprint.
    for preset in TRUTH.iter().map(|t| t.0) {
        assert!(
            dir.join(format!("N20/go-{preset}/rep1/footprint.csv"))
                .is_file()
        );
    }
}
