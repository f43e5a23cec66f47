//! Verdicts on recorded fixtures: the questions a runner asks after each
//! repeat (`questions::questions`), machine-busy runs kept out of medians
//! and pairs, the header's repeats and placement, the margin from the
//! command line or the manifest, and the regression gate on copies of
//! results-perf-small altered at run time: every variant slowed by the same
//! factor (a machine that slowed: no regression once normalised by a
//! reference variant or the probe), or one variant alone (a regression).

mod common;

use std::path::{Path, PathBuf};

use common::{data, edit_json, scratch};

use ctrlbench_record::objects;
use ctrlbench_report::compare::{self, gate};
use ctrlbench_report::figures::groups;
use ctrlbench_report::load::Results;
use ctrlbench_report::metrics::Metric;
use ctrlbench_report::normalise::Reference;
use ctrlbench_report::questions::{Source, all_decided, questions};
use ctrlbench_report::verdict::Verdict;
use ctrlbench_report::{Options, render, render_with};
use serde_json::Value;

const PERF: &str = "results-perf-small";
const VARIANTS: [&str; 4] = [
    "rust-good-single-patch",
    "go-good-single-patch",
    "rust-good-single-patch-al",
    "go-good-single-patch-al",
];

/// A run as on a machine `1/rate` times slower: every moment after its
/// load start (objects.csv, the controller's scrapes) stretched by `1/rate`
/// around it, and summary.json's durations with them, so every rate of the
/// run (Ready/s, writes/s) is multiplied by `rate`.
fn slow_down(run: &Path, rate: f64) {
    let stretch = 1.0 / rate;
    let summary = run.join("summary.json");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    let load_s = v["load"]["seconds"].as_f64().unwrap();
    let path = run.join("objects.csv");
    let mut rows = objects::read(&path).unwrap();
    let ms = |s: &str| s.parse::<jiff::Timestamp>().unwrap().as_millisecond() as f64;
    let last = rows
        .iter()
        .filter_map(|r| r.created_at.as_deref().map(ms))
        .fold(f64::MIN, f64::max);
    let t0 = last - load_s * 1000.0;
    let moved = |s: &str| -> String {
        let t = t0 + (ms(s) - t0) * stretch;
        jiff::Timestamp::from_millisecond(t.round() as i64)
            .unwrap()
            .strftime("%Y-%m-%dT%H:%M:%S%.3fZ")
            .to_string()
    };
    for r in &mut rows {
        for t in [&mut r.created_at, &mut r.ready_at, &mut r.first_write_at] {
            if let Some(s) = t.as_mut() {
                *s = moved(s);
            }
        }
    }
    objects::write(&path, &rows).unwrap();
    let variant = run.parent().unwrap().file_name().unwrap().to_string_lossy();
    let csv = run.join(format!("metrics-{variant}.csv"));
    let text = std::fs::read_to_string(&csv).unwrap();
    let out: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(i, l)| match l.split_once(',') {
            Some((t, rest)) if i > 0 => format!("{},{rest}", moved(t)),
            _ => l.to_string(),
        })
        .collect();
    std::fs::write(&csv, out.join("\n") + "\n").unwrap();
    edit_json(&summary, |v| {
        v["load"]["seconds"] = (load_s * stretch).into();
        let rate_per_s = v["load"]["rate_per_s"].as_f64().unwrap();
        v["load"]["rate_per_s"] = (rate_per_s * rate).into();
        for k in ["controller_started_s", "first_write_s", "all_ready_s"] {
            if let Some(x) = v["start"][k].as_f64() {
                v["start"][k] = (x * stretch).into();
            }
        }
    });
}

/// A copy of results-perf-small with `variants` slowed to `rate`.
fn slowed(variants: &[&str], rate: f64) -> (tempfile::TempDir, PathBuf) {
    let (tmp, dir) = scratch(PERF);
    for v in variants {
        for rep in ["rep1", "rep2"] {
            slow_down(&dir.join("N30").join(v).join(rep), rate);
        }
    }
    (tmp, dir)
}

#[test]
fn slowing_a_run_scales_its_rates_and_nothing_else() {
    let (_tmp, dir) = slowed(&VARIANTS[..1], 0.85);
    let (a, b) = (
        groups(&Results::load(&data(PERF)).unwrap()),
        groups(&Results::load(&dir).unwrap()),
    );
    for k in 0..2 {
        let (x, y) = (&a[0].runs[k], &b[0].runs[k]);
        let r = y.get(Metric::ReadyPerS).unwrap() / x.get(Metric::ReadyPerS).unwrap();
        assert!((r - 0.85).abs() < 0.005, "Ready/s × {r}");
        let t = y.get(Metric::T100).unwrap() / x.get(Metric::T100).unwrap();
        assert!((t - 1.0 / 0.85).abs() < 0.01, "T100 × {t}");
        assert_eq!(y.get(Metric::PeakRss), x.get(Metric::PeakRss));
        assert!(y.problems.is_empty(), "{:?}", y.problems);
    }
    // The other variants are untouched.
    assert_eq!(
        a[1].runs[0].get(Metric::ReadyPerS),
        b[1].runs[0].get(Metric::ReadyPerS)
    );
}

#[test]
fn a_machine_that_slowed_is_a_regression_until_normalised() {
    let base = data(PERF);
    let (_tmp, slow) = slowed(&VARIANTS, 0.85);
    // Raw: every variant's Ready/s is 15 % down, decidedly beyond 10 %.
    let raw = gate(&base, &slow, 0.10, None).unwrap();
    assert!(
        raw.regressions
            .iter()
            .any(|w| w.starts_with("N30 rust-good-single-patch: Ready/s")),
        "{raw:?}"
    );
    assert_eq!(raw.normalised, "not normalised");
    // Divided by a reference variant slowed alike: nothing is a regression
    // (the reference's own rows are left out).
    let by = Reference::Variant("go-good-single-patch".into());
    let norm = gate(&base, &slow, 0.10, Some(&by)).unwrap();
    assert!(norm.regressions.is_empty(), "{norm:?}");
    assert!(
        norm.normalised
            .contains("divided by go-good-single-patch's")
    );
    assert!(
        norm.undecided
            .iter()
            .all(|u| !u.contains("N30 go-good-single-patch:"))
    );
    // By the probe. The recorded probes vary by almost 2× between repeats
    // (a 30-object burst), which would leave every normalised figure
    // undecided; here every repeat's probe measured the same speed, 300/s
    // on A's machine: first the probe on B's did not slow (a regression),
    // then it slowed like everything else (none).
    let probe_at = |dir: &Path, rate: f64| {
        edit_json(&dir.join("manifest.json"), |v| {
            for p in v["probe"].as_array_mut().unwrap() {
                p["status_patch_per_s"] = (300.0 * rate).into();
            }
        })
    };
    let (_tmp_a, base) = scratch(PERF);
    probe_at(&base, 1.0);
    probe_at(&slow, 1.0);
    let probe = gate(&base, &slow, 0.10, Some(&Reference::Probe)).unwrap();
    assert!(
        probe
            .regressions
            .iter()
            .any(|w| w.starts_with("N30 rust-good-single-patch: Ready/s")),
        "the probe did not slow: {probe:?}"
    );
    // Only the rates are normalised by the probe: T100 is not compared.
    assert!(probe.regressions.iter().all(|w| !w.contains("T100")));
    probe_at(&slow, 0.85);
    let probe = gate(&base, &slow, 0.10, Some(&Reference::Probe)).unwrap();
    assert!(probe.regressions.is_empty(), "{probe:?}");
    // The output says which normalisation it used.
    let opts = compare::Options {
        margin: None,
        reference: Some(by),
    };
    let out = compare::compare_with(&base, &slow, &opts).unwrap();
    assert!(out.contains("divided by go-good-single-patch's"), "{out}");
    assert!(out.contains("the table shows the raw figures"), "{out}");
}

#[test]
fn one_variant_slowed_is_a_regression_even_normalised() {
    let base = data(PERF);
    let (_tmp, slow) = slowed(&VARIANTS[2..3], 0.85);
    let by = Reference::Variant("go-good-single-patch".into());
    let g = gate(&base, &slow, 0.10, Some(&by)).unwrap();
    assert!(
        g.regressions
            .iter()
            .any(|w| w.starts_with("N30 rust-good-single-patch-al: Ready/s")),
        "{g:?}"
    );
    // The variants left alone are not regressions.
    assert!(
        g.regressions
            .iter()
            .all(|w| w.starts_with("N30 rust-good-single-patch-al:")),
        "{g:?}"
    );
    // Undecided rows are printed with what they could have detected, and
    // never fail the gate.
    assert!(
        g.undecided
            .iter()
            .all(|u| u.contains("undecided against ±10 %")),
        "{g:?}"
    );
    // A reference that is not there is one error.
    let e = gate(&base, &slow, 0.10, Some(&Reference::Variant("x".into())))
        .unwrap_err()
        .to_string();
    assert!(e.contains("no variant x to normalise by"), "{e}");
}

#[test]
fn questions_answer_goals_and_compare_pairs_per_scale() {
    let answers = questions(&data(PERF), 0.05).unwrap();
    // Two rust-X / go-X pairs, three goal figures each.
    assert_eq!(answers.len(), 6);
    assert!(answers.iter().all(|a| a.source == Source::RustGo));
    // Paired, except where a run's 0.00 ms CPU per reconcile leaves a log
    // ratio undefined.
    let paired: Vec<bool> = answers.iter().map(|a| a.paired).collect();
    assert_eq!(paired, [true, true, true, true, true, false]);
    let rss = &answers[1];
    assert_eq!(
        (rss.a.as_str(), rss.b.as_str(), rss.figure.as_str()),
        ("go-good-single-patch", "rust-good-single-patch", "peak RSS")
    );
    assert_eq!((rss.verdict, rss.pairs), (Verdict::Lower, 2));
    // Two repeats: t(0.975, 1) = 12.7 leaves Ready/s undecided, with its MDE.
    let tput = &answers[0];
    assert_eq!(tput.verdict, Verdict::Undecided);
    assert!(tput.mde.unwrap() > 1.0, "{tput:?}");
    assert!(!all_decided(&answers));
    // A [[compare]] question in the manifest; a figure by its column name.
    let (_tmp, dir) = scratch(PERF);
    edit_json(&dir.join("manifest.json"), |v| {
        v["margin"] = 0.5.into();
        v["compare"] = serde_json::json!([
            {"a": "rust-good-single-patch", "b": "rust-good-single-patch-al", "figure": "peak rss"},
            {"a": "rust-good-single-patch", "b": "nowhere", "figure": "Ready/s"},
        ]);
    });
    let answers = questions(&dir, 0.05).unwrap();
    assert_eq!(answers.len(), 8);
    let c = &answers[6];
    assert_eq!((c.source, c.figure.as_str()), (Source::Compare, "peak RSS"));
    // 10.9 and 10.8 MiB: equivalent within ±5 %.
    assert_eq!(c.verdict, Verdict::Equivalent, "{c:?}");
    assert_eq!(answers[7].verdict, Verdict::Undecided);
    assert!(answers[7].words.contains("no runs of nowhere"));
    // The report uses the manifest's margin (±50 %) unless told otherwise.
    let (md, _) = render(&dir).unwrap();
    assert!(
        md.contains("±50 % (the experiment's, manifest.json margin)"),
        "{md}"
    );
    assert!(md.contains("equivalent within ±50 %"));
    let (md, _) = render_with(&dir, &Options { margin: Some(0.02) }).unwrap();
    assert!(md.contains("±2 % (set with --margin)"));
    // An unknown figure is an error for the runner, a warning in the report.
    edit_json(&dir.join("manifest.json"), |v| {
        v["compare"][0]["figure"] = "speed".into();
    });
    let e = questions(&dir, 0.05).unwrap_err().to_string();
    assert!(e.contains("no figure named \"speed\""), "{e}");
    let (md, _) = render(&dir).unwrap();
    assert!(md.contains("> ⚠ [[compare]] rust-good-single-patch vs rust-good-single-patch-al"));
}

#[test]
fn the_report_opens_with_the_answers_and_their_forest_plot() {
    let (md, html) = render(&data(PERF)).unwrap();
    let answers = md
        .find("## Questions, answered")
        .expect("no answers section");
    assert!(answers < md.find("## Controller settings").unwrap());
    assert!(md.contains(
        "- N=30 peak RSS: rust-good-single-patch / go-good-single-patch = 0.28 [0.25–0.31] — \
         rust-good-single-patch lower (better), paired over 2 repeats"
    ));
    assert!(md.contains("*Plot: Answers: B/A per question"));
    // The forest plot: one row label per question, drawn as inline SVG.
    let forest = html
        .split("<figure>")
        .find(|f| f.contains("Answers: B/A per question"))
        .and_then(|f| f.split("</figure>").next())
        .expect("no forest plot in report.html");
    assert!(forest.contains("<svg") && forest.contains("</svg>"));
    assert_eq!(forest.matches("N=30 ").count(), 6, "one label per question");
    assert!(forest.contains("shaded: ±5 %"));
    // Fixtures without questions have no such section.
    let (md, _) = render(&data("results-small")).unwrap();
    assert!(!md.contains("Questions, answered"));
}

/// verdicts.json says what the report says: each question's line (whose
/// figures expected/independent.py checks against the rows) carries the
/// JSON's label, ratio and words, and its counts add up.
#[test]
fn verdicts_json_is_written_beside_the_report_and_says_the_same() {
    let (_tmp, dir) = scratch(PERF);
    let w = ctrlbench_report::write(&dir).unwrap();
    assert_eq!(w.verdicts, dir.join("verdicts.json"));
    let md = std::fs::read_to_string(&w.markdown).unwrap();
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&w.verdicts).unwrap()).unwrap();
    assert_eq!(v["format"], "ctrlbench-verdicts/1");
    let qs = v["questions"].as_array().unwrap();
    assert_eq!(qs.len(), 6, "{v:#}");
    assert_eq!(v["asked"], 6);
    let mut decided = 0;
    for q in qs {
        let label = q["question"].as_str().unwrap();
        let line = md
            .lines()
            .find(|l| l.starts_with(&format!("- {label} = ")))
            .unwrap_or_else(|| panic!("no report line for {label}"));
        let ratio = q["ratio"].as_f64().unwrap();
        assert!(
            line.contains(&format!("= {ratio:.2} [")),
            "{line} vs {ratio}"
        );
        assert!(line.ends_with(q["words"].as_str().unwrap()), "{line}");
        assert!(q["lower"].as_f64().unwrap() <= ratio && ratio <= q["upper"].as_f64().unwrap());
        let word = q["verdict"].as_str().unwrap();
        assert!(["higher", "lower", "equivalent", "undecided"].contains(&word));
        decided += usize::from(word != "undecided");
        assert!(!q["evidence"].as_str().unwrap().is_empty(), "{q}");
    }
    assert_eq!(v["decided"], decided);
    // The peak RSS question, decided lower (better) for B.
    let rss = qs
        .iter()
        .find(|q| q["figure"] == "peak RSS")
        .expect("a peak RSS question");
    assert_eq!(
        (rss["verdict"].as_str(), rss["b_worse"].as_bool()),
        (Some("lower"), Some(false))
    );
    // Every variant with its tracked figures.
    let variants = v["variants"].as_array().unwrap();
    assert!(
        variants
            .iter()
            .all(|g| g["figures"]["Ready/s"]["median"].is_number())
    );
}

#[test]
fn a_busy_machine_flags_the_run_and_keeps_it_out_of_medians_and_pairs() {
    let (_tmp, dir) = scratch(PERF);
    edit_json(
        &dir.join("N30/go-good-single-patch/rep2/summary.json"),
        |v| {
            v["machine"] = serde_json::json!({
                "other_cpu_s": 9.1, "other_core_fraction": 0.46, "load_avg_1m": 3.2,
                "steal_s": 0.0, "governor": "performance", "threshold_core_fraction": 0.25,
                "busy": true
            });
        },
    );
    edit_json(
        &dir.join("N30/rust-good-single-patch/rep2/summary.json"),
        |v| {
            v["machine"] = serde_json::json!({
                "other_cpu_s": 0.2, "other_core_fraction": 0.01, "load_avg_1m": 0.4,
                "steal_s": 0.0, "threshold_core_fraction": 0.25, "busy": false
            });
        },
    );
    let gs = groups(&Results::load(&dir).unwrap());
    let go = gs
        .iter()
        .find(|g| g.variant == "go-good-single-patch")
        .unwrap();
    assert_eq!(
        go.runs[1].problems,
        vec![
            "machine busy: other processes used 46 % of a core (9.1 CPU s; threshold 25 %), \
             load average 3.2"
        ]
    );
    assert!(
        gs[0].runs[1].problems.is_empty(),
        "a quiet machine is no problem"
    );
    assert_eq!(go.values(Metric::ReadyPerS).len(), 1);
    // The pair of repeat 2 is gone: one pair left, no interval.
    let answers = questions(&dir, 0.05).unwrap();
    assert_eq!((answers[0].pairs, answers[0].lo), (1, None));
    let (md, _) = render(&dir).unwrap();
    assert!(md.contains(
        "> ⚠ N30/go-good-single-patch/rep2: machine busy: other processes used 46 % of a core"
    ));
    assert!(md.contains("| 30 | go-good-single-patch ⚠ runs excluded |"));
}

#[test]
fn the_header_says_how_many_repeats_ran_why_and_where_processes_were_placed() {
    let (_tmp, dir) = scratch(PERF);
    edit_json(&dir.join("manifest.json"), |v| {
        v["repeats"] = serde_json::json!(
            {"mode": "auto", "done": 2, "min": 2, "max": 6, "stopped": "all decided"});
        v["placement"] = serde_json::json!({"plane": "0", "controller": "1", "note": ""});
    });
    let (md, _) = render(&dir).unwrap();
    assert!(
        md.contains("CPU placement: plane 0, controller 1, harness unpinned."),
        "{md}"
    );
    assert!(
        md.contains("2 repeats (auto, 2–6: all questions decided), 8 run(s)"),
        "{md}"
    );
    let (md, _) = render(&data(PERF)).unwrap();
    assert!(md.contains("CPU placement: none (2 cores)."));
}

#[test]
fn reconciles_are_shown_whole_ok_error_requeue() {
    let (md, _) = render(&data("results-mixed")).unwrap();
    assert!(md.contains("reconciles ok / error / requeue"));
    assert!(md.contains("| 763 / 37 / 0 |"), "{md}");
    // Without the CSV column, summary.json's requeue; without that, total − ok − error.
    let (_tmp, dir) = scratch("results-mixed");
    let run = dir.join("N20/rust-bad-fix/rep1");
    let csv = run.join("metrics-rust-bad-fix.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    std::fs::write(
        &csv,
        text.replace("reconcile_requeue_total", "renamed_away"),
    )
    .unwrap();
    edit_json(&run.join("summary.json"), |v| {
        v["reconciles"]["total"] = 805.0.into();
    });
    let r = Results::load(&dir).unwrap();
    let gs = groups(&r);
    let bad = gs.iter().find(|g| g.variant == "rust-bad-fix").unwrap();
    assert_eq!(bad.runs[0].get(Metric::Requeues), Some(5.0));
    edit_json(&run.join("summary.json"), |v| {
        v["reconciles"]["requeue"] = 4.0.into();
    });
    let gs = groups(&Results::load(&dir).unwrap());
    let bad = gs.iter().find(|g| g.variant == "rust-bad-fix").unwrap();
    assert_eq!(bad.runs[0].get(Metric::Requeues), Some(4.0));
}
