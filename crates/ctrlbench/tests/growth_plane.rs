//! The growth rule on a real local plane: `experiments/lab/growth.toml`
//! runs the good Rust controller and list-in-reconcile at N = 50, 150 and
//! 500 in two rounds. What each must get is written here from what the
//! presets do, not read from the code under test: a LIST of the whole
//! namespace in every reconcile returns about N objects per reconcile, so
//! its objects returned per object grow linearly (b ≈ 1); the good
//! controller's requests per object do not depend on N (b ≈ 0). Both
//! verdicts are printed, so the CI log shows them.

mod common;

use std::path::Path;

use common::{assert_success, ctrlbench, only_results_dir};

fn verdict<'a>(v: &'a serde_json::Value, variant: &str, figure: &str) -> &'a serde_json::Value {
    v["growth"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["variant"] == variant && g["figure"] == figure)
        .unwrap_or_else(|| {
            panic!(
                "no growth verdict for {variant}'s {figure} in {}",
                v["growth"]
            )
        })
}

#[test]
fn list_in_reconcile_grows_linearly_and_good_stays_flat() {
    let tmp = tempfile::tempdir().unwrap();
    let results = tmp.path().join("results");
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments/lab/growth.toml");
    let out = ctrlbench()
        .arg("run")
        .arg(&file)
        .args(["--no-progress", "--results"])
        .arg(&results)
        .output()
        .unwrap();
    assert_success(&out);
    let dir = only_results_dir(&results);
    let v = common::read_verdicts(&dir);
    let lists = verdict(
        &v,
        "rust-list-in-reconcile",
        "objects returned by LISTs per object",
    );
    let flat = verdict(&v, "rust-good", "requests per object");
    let line = |g: &serde_json::Value| {
        format!(
            "{} {}: {} (b = {:.3} [{:.3}, {:.3}] over N = {:.0}–{:.0})",
            g["variant"].as_str().unwrap_or("?"),
            g["figure"].as_str().unwrap_or("?"),
            g["verdict"].as_str().unwrap_or("?"),
            g["b"].as_f64().unwrap_or(f64::NAN),
            g["lo"].as_f64().unwrap_or(f64::NAN),
            g["hi"].as_f64().unwrap_or(f64::NAN),
            g["range"][0].as_f64().unwrap_or(f64::NAN),
            g["range"][1].as_f64().unwrap_or(f64::NAN),
        )
    };
    // Past the test harness's capture: CI's log shows them.
    let _ = std::io::Write::write_all(
        &mut std::io::stderr(),
        format!(
            "Growth on the real plane (N = 50, 150, 500; 2 rounds):\n  {}\n  {}\n",
            line(lists),
            line(flat)
        )
        .as_bytes(),
    );
    assert_eq!(lists["verdict"], "linear", "{}", line(lists));
    assert_eq!(flat["verdict"], "flat", "{}", line(flat));
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(report.contains("## Growth with N"), "no Growth section");
    // The LIST-per-reconcile finding says how its LISTs grow.
    assert!(
        report.contains("the objects its LISTs return: linear per object"),
        "{report}"
    );
    assert!(
        report.contains("### objects returned by LISTs per object"),
        "the Growth section has no table of the LIST objects:\n{report}"
    );
}
