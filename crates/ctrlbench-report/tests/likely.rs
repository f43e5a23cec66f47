//! The likely lines under a finding: a results directory with likely.csv
//! (what the harness writes when the experiment names the operator's
//! source) prints at most three lines of the finding's rule under a
//! finding of the operator's own code, none under our reference
//! controllers', and nothing at all without the file.

mod common;

use common::{edit_json, scratch};
use ctrlbench_record::likely::{LikelyRow, write};

fn row(rule: &str, path: &str, line: u64, text: &str) -> LikelyRow {
    LikelyRow {
        rule: rule.into(),
        path: path.into(),
        line,
        text: text.into(),
    }
}

#[test]
fn a_finding_of_the_operators_code_gets_three_likely_lines_of_its_rule() {
    let (_tmp, dir) = scratch("results-mixed");
    let throttled = "**rust-good-throttled** (N=20): **client-side throttling**";
    let item = |text: &str| {
        text.lines()
            .find(|l| l.contains(throttled))
            .unwrap_or_else(|| panic!("no finding in:\n{text}"))
            .to_string()
    };
    let before = item(&ctrlbench_report::diagnose_text(&dir).unwrap());
    assert!(!before.contains("likely:"), "{before}");
    let rl = "client-throttling";
    write(
        &dir.join("likely.csv"),
        &[
            row("event-spam", "a.go", 3, "r.Recorder.Eventf(x)"),
            row(rl, "cmd/main.go", 40, "cfg.QPS = 5"),
            row(rl, "cmd/main.go", 41, "cfg.Burst = `10`"),
            row(rl, "pkg/client.go", 7, "c.QPS = 1"),
            row(rl, "pkg/client.go", 8, "c.Burst = 2"),
        ],
    )
    .unwrap();
    // Our reference controller (impl rust): its code is not the source.
    assert_eq!(
        item(&ctrlbench_report::diagnose_text(&dir).unwrap()),
        before
    );
    edit_json(
        &dir.join("N20/rust-good-throttled/rep1/summary.json"),
        |v| v["impl"] = "command".into(),
    );
    let after = item(&ctrlbench_report::diagnose_text(&dir).unwrap());
    assert!(
        after.ends_with(
            " likely: cmd/main.go:40 `cfg.QPS = 5`; likely: cmd/main.go:41 `cfg.Burst = '10'`; likely: pkg/client.go:7 `c.QPS = 1` (pointers, not evidence)."
        ),
        "{after}"
    );
    assert!(!after.contains("Eventf"), "{after}");
}
