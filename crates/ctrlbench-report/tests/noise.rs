//! The machine's noise from an A/A run (`noise::noise` and the report's
//! "Machine noise (A/A)" section) on tests/data/results-noise — a and b are
//! results-perf-small's rust-good-single-patch runs, b with known factors
//! applied per repeat (tests/data/make_results_noise.py) — and on copies of
//! it and of results-perf-small altered at run time: a run flagged busy,
//! a third repeat, settings that differ, pairs that are not A/A. The
//! expected spreads and projections are worked out here from the factors
//! and the formula, with t from a table in this file.

mod common;

use common::{data, edit_json, scratch};

use ctrlbench_report::figures::groups;
use ctrlbench_report::load::Results;
use ctrlbench_report::metrics::Metric;
use ctrlbench_report::noise::{NoiseRow, noise};
use ctrlbench_report::questions::questions;
use ctrlbench_report::{Options, render, render_with};
use serde_json::Value;

/// t(0.975, K − 1) for K = 2 … 10, as printed in any statistics table.
fn t975(k: usize) -> f64 {
    [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262,
    ][k - 2]
}

/// s of per-repeat ratios, from the definition.
fn sd_of_logs(ratios: &[f64]) -> f64 {
    let logs: Vec<f64> = ratios.iter().map(|r| r.ln()).collect();
    let k = logs.len() as f64;
    let mean = logs.iter().sum::<f64>() / k;
    (logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / (k - 1.0)).sqrt()
}

fn projection(s: f64, k: usize) -> f64 {
    (t975(k) * s / (k as f64).sqrt()).exp() - 1.0
}

fn find(rows: &[NoiseRow], m: Metric) -> &NoiseRow {
    rows.iter().find(|r| r.metric == m).expect("row")
}

/// b's factors per repeat (make_results_noise.py): CPU, RSS and the
/// reconcile latency sum are multiplied exactly; rates through the
/// timestamps, to the millisecond objects.csv keeps.
const CPU: [f64; 2] = [0.97, 1.02];
const RSS: [f64; 2] = [1.01, 0.995];
const LAT: [f64; 2] = [1.03, 0.96];
const RATE: [f64; 2] = [1.04, 0.99];

fn check_projections(row: &NoiseRow, s: f64) {
    let ks: Vec<usize> = row.projections.iter().map(|p| p.repeats).collect();
    assert_eq!(ks, [3, 6, 10], "{}", row.figure);
    for p in &row.projections {
        let want = projection(s, p.repeats);
        assert!(
            (p.half_width - want).abs() < 1e-6,
            "{} K={}: {} vs {want}",
            row.figure,
            p.repeats,
            p.half_width
        );
        assert_eq!(p.within_margin, want <= row.margin);
    }
}

#[test]
fn an_aa_run_gives_each_figure_its_spread_and_projections() {
    let rows = noise(&data("results-noise")).unwrap();
    let figures: Vec<&str> = rows.iter().map(|r| r.figure.as_str()).collect();
    assert_eq!(
        figures,
        [
            "Ready/s",
            "T50",
            "T100",
            "reconcile p50",
            "reconcile p99",
            "mean reconcile",
            "controller CPU",
            "CPU per reconcile",
            "peak RSS"
        ]
    );
    assert!(
        rows.iter().all(
            |r| (r.scale, r.a.as_str(), r.b.as_str(), r.pairs) == (30, "a", "b", 2)
                && r.margin == 0.05
        )
    );
    // The factors applied exactly: s from them alone.
    for (m, f) in [
        (Metric::Cpu, CPU),
        (Metric::CpuPerReconcile, CPU),
        (Metric::PeakRss, RSS),
        (Metric::MeanLatency, LAT),
    ] {
        let row = find(&rows, m);
        let s = sd_of_logs(&f);
        let got = row.log_sd.unwrap();
        assert!((got - s).abs() < 1e-5, "{}: s {got} vs {s}", row.figure);
        assert!((row.spread.unwrap() - (got.exp() - 1.0)).abs() < 1e-12);
        check_projections(row, got);
    }
    // CPU × 0.97 and × 1.02: s = ln(1.02/0.97)/√2 = 0.035540.
    assert!((find(&rows, Metric::Cpu).log_sd.unwrap() - 0.035_540).abs() < 1e-5);
    // The buckets were not moved: no spread, every projection ±0.
    for m in [Metric::P50, Metric::P99] {
        let row = find(&rows, m);
        assert_eq!(row.log_sd, Some(0.0));
        assert!(
            row.projections
                .iter()
                .all(|p| p.half_width == 0.0 && p.within_margin)
        );
    }
    // Ready/s moved with the timestamps: the ratios within the millisecond
    // rounding of a 158 ms convergence of the factors, and s exactly that
    // of the per-run figures.
    let gs = groups(&Results::load(&data("results-noise")).unwrap());
    let ratios: Vec<f64> = (0..2)
        .map(|k| {
            gs[1].runs[k].get(Metric::ReadyPerS).unwrap()
                / gs[0].runs[k].get(Metric::ReadyPerS).unwrap()
        })
        .collect();
    for (r, f) in ratios.iter().zip(RATE) {
        assert!((r - f).abs() < 0.01, "Ready/s × {r}, want × {f}");
    }
    let ready = find(&rows, Metric::ReadyPerS);
    let s = sd_of_logs(&ratios);
    assert!((ready.log_sd.unwrap() - s).abs() < 1e-12);
    check_projections(ready, s);
    // The interval now: the answers' paired one; its half-width the formula's at K = 2.
    let answer = questions(&data("results-noise"), 0.05)
        .unwrap()
        .into_iter()
        .find(|a| a.figure == "Ready/s")
        .unwrap();
    assert_eq!((ready.lo, ready.hi), (answer.lo, answer.hi));
    assert_eq!(ready.pairs, answer.pairs);
    assert!((ready.half_width.unwrap() - projection(s, 2)).abs() < 1e-9);
}

/// The section as rendered: its place, its columns, the ✓ and the sentence.
#[test]
fn the_report_shows_the_noise_after_the_answers() {
    let (md, html) = render(&data("results-noise")).unwrap();
    let answers = md.find("## Questions, answered").unwrap();
    let at = md.find("## Machine noise (A/A)").unwrap();
    let next = md[at + 3..].find("\n## ").unwrap() + at + 3;
    assert!(answers < at && md[answers..at].matches("\n## ").count() == 0);
    let section = &md[at..next];
    assert!(section.contains("### N=30: b / a"));
    assert!(section.contains(
        "| figure | spread (e^s − 1) | K | B/A [95 %] | half-width now | at K = 3 | at K = 6 \
         | at K = 10 |"
    ));
    // CPU: s = 0.035540 → 3.6 %; K = 3: e^(4.303·s/√3) − 1 = 9.2 %; K = 6:
    // 3.8 % ✓; K = 10: 2.6 % ✓.
    assert!(
        section.contains("| controller CPU | 3.6 % | 2 | 0.99 [0.72–1.37] | ±37.6 % | ±9.2 % | ±3.8 % ✓ | ±2.6 % ✓ |"),
        "{section}"
    );
    // Ready/s, K = 4: e^(3.182·s/2) − 1 with s = 0.036716 is 6.0 %; K = 5: 4.7 %.
    let s = find(&noise(&data("results-noise")).unwrap(), Metric::ReadyPerS)
        .log_sd
        .unwrap();
    assert!(projection(s, 4) > 0.05 && projection(s, 5) <= 0.05);
    assert!(
        section.contains(
            "At this spread, deciding a 5 % difference in Ready/s takes 5 paired repeats."
        )
    );
    assert!(html.contains("Machine noise (A/A)"));
    // A wider margin: decided sooner (the manifest's margin, or --margin).
    let (wide, _) = render_with(&data("results-noise"), &Options { margin: Some(0.10) }).unwrap();
    assert!(wide.contains("deciding a 10 % difference in Ready/s takes 3 paired repeats."));
    assert!(wide.contains("| Ready/s | 3.7 % | 2 | 1.02 [0.73–1.41] | ±39.1 % | ±9.6 % ✓ |"));
    let (_tmp, dir) = scratch("results-noise");
    edit_json(&dir.join("manifest.json"), |v| v["margin"] = 0.01.into());
    let tight = noise(&dir).unwrap();
    assert!(tight.iter().all(|r| r.margin == 0.01));
    let (md, _) = render(&dir).unwrap();
    assert!(md.contains("deciding a 1 % difference in Ready/s takes more than 10 paired repeats."));
}

/// A third repeat (rep1 again on both sides: its ratio twice), then that
/// repeat's b run flagged busy: the pair drops out of the noise as it does
/// out of the answers.
#[test]
fn flagged_runs_leave_their_pairs_out_as_the_answers_do() {
    let (_tmp, dir) = scratch("results-noise");
    for v in ["a", "b"] {
        let from = dir.join("N30").join(v).join("rep1");
        let to = dir.join("N30").join(v).join("rep3");
        std::fs::create_dir_all(&to).unwrap();
        for e in std::fs::read_dir(&from).unwrap() {
            let p = e.unwrap().path();
            std::fs::copy(&p, to.join(p.file_name().unwrap())).unwrap();
        }
    }
    let rows = noise(&dir).unwrap();
    let cpu = find(&rows, Metric::Cpu);
    assert_eq!(cpu.pairs, 3);
    let s = sd_of_logs(&[CPU[0], CPU[1], CPU[0]]);
    assert!((cpu.log_sd.unwrap() - s).abs() < 1e-5);
    check_projections(cpu, cpu.log_sd.unwrap());
    edit_json(&dir.join("N30/b/rep2/summary.json"), |v| {
        v["machine"] = serde_json::json!({
            "other_cpu_s": 9.1, "other_core_fraction": 0.46, "load_avg_1m": 3.2,
            "steal_s": 0.0, "threshold_core_fraction": 0.25, "busy": true
        })
    });
    let rows = noise(&dir).unwrap();
    let answers = questions(&dir, 0.05).unwrap();
    for r in &rows {
        assert_eq!(r.pairs, 2, "{}", r.figure);
    }
    assert_eq!(answers[0].pairs, 2);
    // Repeats 1 and 3 are the same pair: no spread at all.
    let cpu = find(&rows, Metric::Cpu);
    assert!(cpu.log_sd.unwrap().abs() < 1e-9, "{:?}", cpu.log_sd);
    // Only repeat 1 left on both sides: one pair, no spread, no projections.
    edit_json(&dir.join("N30/a/rep3/summary.json"), |v| {
        v["load"]["errors"] = 1.into();
    });
    let rows = noise(&dir).unwrap();
    let ready = find(&rows, Metric::ReadyPerS);
    assert_eq!(
        (ready.pairs, ready.log_sd, ready.half_width),
        (1, None, None)
    );
    assert!(ready.projections.is_empty());
    assert!(ready.cell().ends_with("(one pair)"));
    let (md, _) = render(&dir).unwrap();
    assert!(md.contains("| Ready/s | — | 1 |"), "{md}");
    assert!(md.contains("Ready/s has no spread yet"));
}

/// Different flags, settings or start mode in any run: not an A/A, no
/// section; nor a pair of different presets, implementations or start
/// modes in results-perf-small, nor a variant against itself.
#[test]
fn pairs_that_are_not_aa_have_no_noise() {
    type Edit = fn(&mut Value);
    let edits: [(&str, Edit); 4] = [
        ("flags", |v| {
            v["flags"]
                .as_array_mut()
                .unwrap()
                .push("--workers=2".into())
        }),
        ("settings", |v| v["settings"]["workers"] = 2.into()),
        ("start", |v| v["start"]["mode"] = "after-load".into()),
        ("impl", |v| v["impl"] = "go@v0.22".into()),
    ];
    for (what, edit) in edits {
        let (_tmp, dir) = scratch("results-noise");
        edit_json(&dir.join("N30/b/rep2/summary.json"), edit);
        assert!(noise(&dir).unwrap().is_empty(), "{what}");
        let (md, _) = render(&dir).unwrap();
        assert!(!md.contains("Machine noise"), "{what}");
    }
    // Settings recorded on one side only: not known to be equal.
    let (_tmp, dir) = scratch("results-noise");
    for rep in ["rep1", "rep2"] {
        edit_json(&dir.join("N30/b").join(rep).join("summary.json"), |v| {
            v.as_object_mut().unwrap().remove("settings");
        });
    }
    assert!(noise(&dir).unwrap().is_empty());
    // No [[compare]]: no pair at all.
    let (_tmp, dir) = scratch("results-noise");
    edit_json(&dir.join("manifest.json"), |v| {
        v.as_object_mut().unwrap().remove("compare");
    });
    assert!(noise(&dir).unwrap().is_empty());
    let (_tmp, dir) = scratch("results-perf-small");
    edit_json(&dir.join("manifest.json"), |v| {
        let q = |a: &str, b: &str| serde_json::json!({"a": a, "b": b, "figure": "Ready/s"});
        v["compare"] = serde_json::json!([
            q("rust-good-single-patch", "rust-good-single-patch-al"),
            q("go-good-single-patch", "rust-good-single-patch"),
            q("rust-good-single-patch", "rust-good-single-patch"),
        ]);
    });
    assert!(noise(&dir).unwrap().is_empty());
    let (md, _) = render(&dir).unwrap();
    assert!(md.contains("## Questions, answered") && !md.contains("Machine noise"));
    // The fixtures without an A/A pair: none.
    for name in [
        "results-small",
        "results-small-b",
        "results-mixed",
        "results-concurrent",
        "results-perf-small",
    ] {
        assert!(noise(&data(name)).unwrap().is_empty(), "{name}");
    }
}
