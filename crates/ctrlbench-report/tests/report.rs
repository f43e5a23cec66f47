//! `ctrlbench report` and `compare` on results recorded from real runs
//! (tests/data/results-small: rust good + bad-fix, N=20, 8 s, 2 repeats;
//! results-small-b: the same with --work-ms=30, 1 repeat; results-mixed: Go
//! good, Rust good with client_qps 5, Rust bad-fix; results-concurrent: Rust
//! and Go good at once; results-noise: an A/A pair derived from
//! results-perf-small; tests/data/README.md says how each was made). The
//! expected numbers were computed by hand from the CSVs with separate scripts
//! (writes/s: tests/data/expected/writes_per_s.py; every figure of the report
//! tables: tests/data/expected/independent.py).

mod common;

use std::path::Path;

use common::{data, edit_json, scratch};

use ctrlbench_report::compare::{HEADLINE, compare, ratio, regressions};
use ctrlbench_report::figures::{Group, groups};
use ctrlbench_report::load::Results;
use ctrlbench_report::metrics::Metric;
use ctrlbench_report::{render, write};

fn close(what: &str, got: Option<f64>, want: f64) {
    let got = got.unwrap_or_else(|| panic!("{what}: no value, want {want}"));
    let tol = 1e-6 * want.abs().max(1.0);
    assert!((got - want).abs() <= tol, "{what}: got {got}, want {want}");
}

fn group<'a>(gs: &'a [Group], variant: &str) -> &'a Group {
    gs.iter().find(|g| g.variant == variant).expect("variant")
}

#[test]
fn per_run_figures_match_hand_computed_values() {
    let r = Results::load(&data("results-small")).unwrap();
    let gs = groups(&r);
    assert_eq!(gs.len(), 2);
    let good = group(&gs, "rust-good");
    let bad = group(&gs, "rust-bad-fix");
    assert_eq!(good.runs.len(), 2);
    assert!(good.runs.iter().all(|f| f.problems.is_empty()));

    let g1 = &good.runs[0];
    close("good rep1 Ready", g1.get(Metric::Ready), 20.0);
    // objects.csv's last ready_at minus (last created_at − load.seconds).
    close(
        "good rep1 convergence",
        g1.get(Metric::Convergence),
        2.365282,
    );
    close("good rep1 success", g1.get(Metric::Success), 20.0);
    close("good rep1 mean", g1.get(Metric::MeanLatency), 0.07438241995);
    close("good rep1 p50", g1.get(Metric::P50), 0.07142857142857144);
    close("good rep1 p90", g1.get(Metric::P90), 0.13333333333333333);
    close("good rep1 p99", g1.get(Metric::P99), 0.14833333333333334);
    close("good rep1 ttr p50", g1.get(Metric::TtrP50), 0.159);
    close("good rep1 ttr p99", g1.get(Metric::TtrP99), 0.30601);
    close("good rep1 Ready/s", g1.get(Metric::ReadyPerS), 8.455649);
    close("good rep1 writes/s", g1.get(Metric::WritesPerS), 19.286404);
    close("good rep1 cpu", g1.get(Metric::Cpu), 0.06);
    close("good rep1 peak rss", g1.get(Metric::PeakRss), 22941696.0);
    // This fixture predates the update/create split of the apiserver's
    // histogram: its one histogram over both fits neither label.
    assert_eq!(g1.get(Metric::ApiP99), None);
    assert_eq!(g1.get(Metric::ApiCreateP99), None);
    close("good rep1 fsync p99", g1.get(Metric::FsyncP99), 0.11648);

    let g2 = &good.runs[1];
    close(
        "good rep2 convergence",
        g2.get(Metric::Convergence),
        0.157328,
    );
    close("good rep2 Ready/s", g2.get(Metric::ReadyPerS), 127.122657);
    close("good rep2 writes/s", g2.get(Metric::WritesPerS), 9.153318);
    close("good rep2 p99", g2.get(Metric::P99), 0.09);

    let b1 = &bad.runs[0];
    close("bad rep1 Ready", b1.get(Metric::Ready), 10.0);
    assert_eq!(b1.get(Metric::Convergence), None, "bad-fix never converges");
    close("bad rep1 success", b1.get(Metric::Success), 625.0);
    close("bad rep1 errors", b1.get(Metric::Errors), 28.0);
    close("bad rep1 retries", b1.get(Metric::Retries), 28.0);
    close("bad rep1 409s", b1.get(Metric::Conflicts), 28.0);
    close(
        "bad rep1 mean",
        b1.get(Metric::MeanLatency),
        0.0626485738101072,
    );
    close("bad rep1 p50", b1.get(Metric::P50), 0.05989096573208723);
    close("bad rep1 p90", b1.get(Metric::P90), 0.1034905660377359);
    close("bad rep1 p99", b1.get(Metric::P99), 0.18642307692307702);
    // 10 of 20 never Ready: both percentiles fall on censored objects.
    assert_eq!(b1.get(Metric::TtrP50), Some(f64::INFINITY));
    assert_eq!(b1.get(Metric::TtrP99), Some(f64::INFINITY));
    assert_eq!(Metric::TtrP99.fmt(f64::INFINITY), "> window");
    close("bad rep1 Ready/s", b1.get(Metric::ReadyPerS), 1.201723);
    close("bad rep1 writes/s", b1.get(Metric::WritesPerS), 140.702408);
    close("bad rep1 throttle", b1.get(Metric::ThrottleWait), 0.0);
    close("bad rep1 cpu", b1.get(Metric::Cpu), 1.85);
    close(
        "bad rep1 fsync p99",
        b1.get(Metric::FsyncP99),
        0.01586105263157893,
    );
    let a = b1.attribution;
    close("bad rep1 work", Some(a.work), 0.01);
    assert!(
        !a.work_overridden,
        "no --work-ms flag: the default is inferred"
    );
    close("bad rep1 throttle/reconcile", a.throttle, 0.0);
    close(
        "bad rep1 writes/reconcile",
        a.writes_per_reconcile,
        1.9571209800918836,
    );
    close("bad rep1 api/reconcile", a.api, 0.031846241859144836);
    close("bad rep1 rest", a.rest(), 0.020802331950962365);
}

#[test]
fn repeats_are_median_min_max() {
    let r = Results::load(&data("results-small")).unwrap();
    let gs = groups(&r);
    let good = group(&gs, "rust-good");
    let s = good.stat(Metric::ReadyPerS).unwrap();
    close("median Ready/s", Some(s.median), 67.789153);
    close("min Ready/s", Some(s.min), 8.455649);
    close("max Ready/s", Some(s.max), 127.122657);
    assert_eq!(good.cell(Metric::ReadyPerS), "67.8 [8.5–127.1]/s");
    close(
        "median convergence",
        good.stat(Metric::Convergence).map(|s| s.median),
        1.261305,
    );
    let bad = group(&gs, "rust-bad-fix");
    assert_eq!(bad.convergence_cell(), "not converged: 8.5 [7–10] left");
    assert_eq!(bad.cell(Metric::Success), "692 [625–759]");
    assert_eq!(bad.cell(Metric::Errors), "27.5 [27–28]");
}

/// results-mixed and results-concurrent against tests/data/expected/independent.py
/// (standard-library Python over the raw files, no ctrlbench code). The Go
/// runs' baseline rows have empty reconcile_latency_le_* cells
/// (controller-runtime registers the histogram at the first reconcile): they
/// count as 0, so the bucket deltas hold all 20 reconciles. Both fixtures
/// have the apiserver's update/create split (widget_update_latency_le_*,
/// widget_create_latency_le_*) and objects.csv's first_write_at.
#[test]
fn go_throttled_and_concurrent_runs_match_independent_values() {
    let r = Results::load(&data("results-mixed")).unwrap();
    let gs = groups(&r);
    assert_eq!(gs.len(), 3);
    assert!(gs.iter().all(|g| g.runs[0].problems.is_empty()));
    let go = &group(&gs, "go-good").runs[0];
    close("go Ready", go.get(Metric::Ready), 20.0);
    close("go coverage", go.get(Metric::Coverage), 20.0);
    close("go convergence", go.get(Metric::Convergence), 0.158781767);
    close("go T100", go.get(Metric::T100), 0.138000011);
    close("go ttr p99", go.get(Metric::TtrP99), 0.120810065);
    close("go mean", go.get(Metric::MeanLatency), 0.02334674115);
    close("go p50", go.get(Metric::P50), 0.02153846153846154);
    close("go p90", go.get(Metric::P90), 0.04285714285714286);
    close("go p99", go.get(Metric::P99), 0.049285714285714294);
    close(
        "go writes/s",
        go.get(Metric::WritesPerS),
        18.198358578435467,
    );
    close("go Ready/s", go.get(Metric::ReadyPerS), 125.959046757);
    close(
        "go update p99",
        go.get(Metric::ApiP99),
        0.024764705882352942,
    );
    close("go create p99", go.get(Metric::ApiCreateP99), 0.045);
    close("go fsync p99", go.get(Metric::FsyncP99), 0.01448);

    let th = &group(&gs, "rust-good-throttled").runs[0];
    close("throttled coverage", th.get(Metric::Coverage), 20.0);
    close(
        "throttled convergence",
        th.get(Metric::Convergence),
        2.04177618,
    );
    close("throttled wait", th.get(Metric::ThrottleWait), 7.568412178);
    close("throttled mean", th.get(Metric::MeanLatency), 0.4042704145);
    close("throttled p50", th.get(Metric::P50), 0.05);
    close("throttled p99", th.get(Metric::P99), 1.2333333333333334);
    close("throttled T50", th.get(Metric::T50), 0.075000048);
    close("throttled T90", th.get(Metric::T90), 1.626000166);
    close("throttled T100", th.get(Metric::T100), 2.025000095);
    close(
        "throttled writes/s",
        th.get(Metric::WritesPerS),
        9.35016389466513,
    );
    close(
        "throttled wait/reconcile",
        th.attribution.throttle,
        0.3784206089,
    );
    close(
        "throttled update p99",
        th.get(Metric::ApiP99),
        0.024692307692307694,
    );
    close(
        "throttled create p99",
        th.get(Metric::ApiCreateP99),
        0.04875,
    );

    let bad = &group(&gs, "rust-bad-fix").runs[0];
    close("bad Ready", bad.get(Metric::Ready), 9.0);
    // Coverage below N: kube-runtime's scheduler serves the looping keys
    // again before the never-processed ones.
    close("bad coverage", bad.get(Metric::Coverage), 9.0);
    assert_eq!(bad.get(Metric::Convergence), None);
    close("bad ok", bad.get(Metric::Success), 763.0);
    close("bad errors", bad.get(Metric::Errors), 37.0);
    close("bad retries", bad.get(Metric::Retries), 37.0);
    close("bad p99", bad.get(Metric::P99), 0.26666666666666666);
    // 9 of 20 Ready: not even half, so no T50.
    assert_eq!(bad.get(Metric::T50), None);
    assert_eq!(bad.get(Metric::T90), None);
    assert_eq!(bad.get(Metric::TtrP50), Some(f64::INFINITY));
    close("bad Ready/s", bad.get(Metric::ReadyPerS), 0.896195718);
    close(
        "bad writes/s",
        bad.get(Metric::WritesPerS),
        154.07348994912203,
    );
    close("bad update p99", bad.get(Metric::ApiP99), 0.169);
    close("bad create p99", bad.get(Metric::ApiCreateP99), 0.045);

    let r = Results::load(&data("results-concurrent")).unwrap();
    let gs = groups(&r);
    let rust = &group(&gs, "rust-good").runs[0];
    let go = &group(&gs, "go-good").runs[0];
    close(
        "conc rust convergence",
        rust.get(Metric::Convergence),
        0.280779123,
    );
    close(
        "conc go convergence",
        go.get(Metric::Convergence),
        0.288214684,
    );
    close("conc rust p99", rust.get(Metric::P99), 0.14);
    close("conc go p50", go.get(Metric::P50), 0.05);
    close("conc go p99", go.get(Metric::P99), 0.099);
    close("conc go mean", go.get(Metric::MeanLatency), 0.0500536124);
    close("conc rust coverage", rust.get(Metric::Coverage), 20.0);
    close("conc go coverage", go.get(Metric::Coverage), 20.0);
    // Writes/s from each controller's own client: per variant even though
    // both share the apiserver (whose series is the same in both runs).
    close(
        "conc rust writes/s",
        rust.get(Metric::WritesPerS),
        18.535681251814655,
    );
    close(
        "conc go writes/s",
        go.get(Metric::WritesPerS),
        18.639329779348373,
    );
    // Server side: one cluster-wide figure (both files hold the same series;
    // the report's one row shows the first variant's).
    close(
        "conc update p99",
        rust.get(Metric::ApiP99),
        0.09666666666666668,
    );
    close("conc create p99", rust.get(Metric::ApiCreateP99), 0.096);
    close("conc fsync p99", rust.get(Metric::FsyncP99), 0.05728);
    for m in [Metric::ApiP99, Metric::ApiCreateP99, Metric::FsyncP99] {
        assert_eq!(rust.get(m), go.get(m), "{m:?}");
    }
}

/// Every element opened is closed, in order (void tags self-close).
fn assert_balanced(html: &str) {
    let mut stack: Vec<String> = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find('<') {
        rest = &rest[i + 1..];
        let end = rest.find('>').expect("unterminated tag");
        let tag = &rest[..end];
        rest = &rest[end + 1..];
        if tag.starts_with('!') || tag.starts_with('?') {
            continue;
        }
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        if let Some(closing) = tag.strip_prefix('/') {
            let _ = closing;
            let open = stack
                .pop()
                .unwrap_or_else(|| panic!("</{name}> closes nothing"));
            assert_eq!(open, name, "</{name}> closes <{open}>");
        } else if !tag.ends_with('/') {
            stack.push(name);
        }
    }
    assert!(stack.is_empty(), "unclosed: {stack:?}");
}

#[test]
fn html_is_one_self_contained_well_formed_file() {
    let (md, html) = render(&data("results-small")).unwrap();
    let svgs = html.matches("<svg").count();
    assert!(svgs >= 4, "{svgs} inline SVGs");
    assert_eq!(svgs, html.matches("</svg>").count());
    assert_balanced(&html);
    for bad in ["src=", "href=", "<script", "<link", "@import", "url("] {
        assert!(!html.contains(bad), "report.html contains {bad}");
    }
    assert!(html.contains("<style>"), "the style is inline");
    // The seed's table shapes and the percentiles.
    for want in [
        "Ready/N at window end",
        "convergence (Ready==N)",
        "reconciles ok / error / requeue",
        "reconcile p50",
        "reconcile p99",
        "time-to-Ready p99",
        "| 20 | rust-good | 20/20 | — | 1.26 s [157.3 ms–2.37 s] | 20 / 0 / 0 | 0 | 51.7 [28.9–74.4] ms |",
        "not converged: 8.5 [7–10] left",
        "67.8 [8.5–127.1]/s",
        "INFERRED",
        "MEASURED",
    ] {
        assert!(md.contains(want), "report.md lacks {want:?}");
    }
    assert!(
        !md.contains("## Warnings"),
        "a clean fixture has no warnings"
    );
    assert!(md.contains(
        "N=20 rust-bad-fix: API write time (measured server-side) dominates, 30.2 ms of the \
         58.6 ms mean reconcile (52%)."
    ));
}

#[test]
fn write_puts_both_files_in_the_results_dir() {
    let (_tmp, dir) = scratch("results-small");
    let w = write(&dir).unwrap();
    assert_eq!(w.markdown, dir.join("report.md"));
    assert!(
        std::fs::read_to_string(&w.html)
            .unwrap()
            .starts_with("<!DOCTYPE html>")
    );
    assert!(std::fs::metadata(&w.markdown).unwrap().len() > 1000);
}

/// Appends a scrape_ok=0 row (empty values) to a CSV, as the sampler does.
fn add_failed_scrape(path: &Path) {
    let text = std::fs::read_to_string(path).unwrap();
    let header = text.lines().next().unwrap();
    let cols = header.split(',').count();
    let ok = header.split(',').position(|c| c == "scrape_ok").unwrap();
    let mut cells = vec![String::new(); cols];
    cells[0] = "2026-11-30T01:13:00.000Z".into();
    cells[ok] = "0".into();
    std::fs::write(path, format!("{text}{}\n", cells.join(","))).unwrap();
}

#[test]
fn flagged_runs_are_marked_and_kept_out_of_medians() {
    let (_tmp, dir) = scratch("results-small");
    add_failed_scrape(&dir.join("N20/rust-bad-fix/rep2/metrics-rust-bad-fix.csv"));
    edit_json(&dir.join("N20/rust-good/rep1/summary.json"), |v| {
        v["incomplete"] = true.into();
        v["stop_reason"] = "interrupted".into();
    });
    edit_json(&dir.join("manifest.json"), |v| v["complete"] = false.into());

    let r = Results::load(&dir).unwrap();
    let gs = groups(&r);
    let bad = group(&gs, "rust-bad-fix");
    assert_eq!(bad.runs[1].problems, vec!["failed scrapes: controller 1"]);
    // The failed row is skipped, not read as zeros: rep2's deltas are intact …
    close("bad rep2 success", bad.runs[1].get(Metric::Success), 759.0);
    // … and the median is rep1's alone.
    assert_eq!(bad.cell(Metric::Success), "625");
    assert_eq!(bad.marker(), " ⚠ runs excluded");
    let good = group(&gs, "rust-good");
    assert!(good.runs[0].problems[0].starts_with("incomplete"));
    close(
        "good convergence without rep1",
        good.stat(Metric::Convergence).map(|s| s.median),
        0.157328,
    );

    let (md, html) = render(&dir).unwrap();
    assert!(md.contains("## Warnings"));
    assert!(md.contains("complete=false"));
    assert!(md.contains("N20/rust-bad-fix/rep2: failed scrapes: controller 1"));
    assert!(md.contains("| 20 | rust-good ⚠ runs excluded |"));
    assert!(html.contains("class=\"warn\""));
}

#[test]
fn a_group_of_flagged_runs_only_is_shown_marked() {
    let (_tmp, dir) = scratch("results-small-b");
    add_failed_scrape(&dir.join("N20/rust-good/rep1/apiserver.csv"));
    let gs = groups(&Results::load(&dir).unwrap());
    let good = group(&gs, "rust-good");
    assert!(good.flagged_only());
    assert_eq!(good.cell(Metric::Success), "20");
    // A run that left no summary.json (failed mid-way) is still shown, flagged.
    std::fs::remove_file(dir.join("N20/rust-bad-fix/rep1/summary.json")).unwrap();
    let (md, _) = render(&dir).unwrap();
    assert!(md.contains("rust-good ⚠ flagged runs only"));
    assert!(md.contains("N20/rust-bad-fix/rep1: no summary.json"));
}

#[test]
fn compare_gives_ratios_b_over_a() {
    let out = compare(&data("results-small"), &data("results-small-b")).unwrap();
    // One Markdown table: a row per scale × variant × headline figure.
    let rows: Vec<Vec<&str>> = out
        .lines()
        .filter(|l| l.starts_with("| 20 |"))
        .map(|l| l.trim_matches('|').split(" | ").map(str::trim).collect())
        .collect();
    assert_eq!(rows.len(), 2 * HEADLINE.len());
    let cell = |variant: &str, figure: &str| -> Vec<String> {
        rows.iter()
            .find(|r| r[1] == variant && r[2] == figure)
            .unwrap_or_else(|| panic!("no row {variant} {figure}"))
            .iter()
            .map(|s| s.to_string())
            .collect()
    };
    // "1.85 (single sample)" or "1.85 [1.10–2.30]": the ratio comes first.
    let r = |variant: &str, figure: &str| {
        cell(variant, figure)[5]
            .split_whitespace()
            .next()?
            .parse::<f64>()
            .ok()
    };
    // Hand-computed: medians of A's two repeats against B's single run.
    for (variant, figure, want) in [
        ("rust-good", "convergence", 1.85),
        ("rust-good", "Ready/s", 0.13),
        ("rust-good", "writes/s", 1.51),
        ("rust-good", "mean reconcile", 1.11),
        ("rust-good", "reconcile p99", 1.59),
        ("rust-good", "CPU", 1.50),
        ("rust-bad-fix", "mean reconcile", 1.13),
        ("rust-bad-fix", "reconcile p50", 1.24),
        ("rust-bad-fix", "Ready at window end", 0.96),
        ("rust-bad-fix", "reconciles ok", 0.93),
        ("rust-bad-fix", "writes/s", 0.90),
        // rest_writes_total's increase ÷ N: (63.9, 77.3) → 70.6 against 65.75.
        ("rust-bad-fix", "writes per object", 0.93),
        ("rust-bad-fix", "etcd fsync p99", 1.76),
    ] {
        close(&format!("{variant} {figure}"), r(variant, figure), want);
    }
    // Writes/s has no better side, so it is no answer (writes per object is).
    for variant in ["rust-good", "rust-bad-fix"] {
        assert!(out.contains(&format!("- N20 {variant} writes per object:")));
        assert!(
            !out.contains(&format!("- N20 {variant} writes/s:")),
            "writes/s is no answer on a figure with a better side:\n{out}"
        );
    }
    // Undefined ratios: 0 errors on both sides, and no convergence.
    assert_eq!(cell("rust-good", "reconcile errors")[5], "—");
    assert_eq!(cell("rust-bad-fix", "convergence")[3], "not converged");
    assert_eq!(cell("rust-bad-fix", "convergence")[5], "—");
    assert_eq!(cell("rust-good", "Ready/s")[3], "67.8/s");
    assert_eq!(ratio(Some(2.0), Some(3.0)), Some(1.5));
    assert_eq!(ratio(Some(0.0), Some(3.0)), None);
}

/// The report of each fixture is byte-identical to tests/data/expected: any
/// change to the report's text fails here, and an intended one updates the
/// expected file in the same commit (git log of tests/data/expected says why
/// each changed). tests/data/expected/independent.py re-computes their table
/// cells without ctrlbench code (tests/data/README.md says which).
#[test]
fn reports_are_byte_identical_to_the_recorded_expectation() {
    for name in [
        "results-small",
        "results-small-b",
        "results-mixed",
        "results-concurrent",
        "results-perf-small",
        "results-noise",
        "results-pods",
    ] {
        let (md, _) = render(&data(name)).unwrap();
        let want =
            std::fs::read_to_string(data("expected").join(format!("{name}.report.md"))).unwrap();
        assert!(md == want, "{name}: report.md changed:\n{md}");
    }
    // The expectation was written with relative paths.
    let out = compare(&data("results-small"), &data("results-small-b"))
        .unwrap()
        .replace(&format!("{}/", data("x").parent().unwrap().display()), "");
    let want =
        std::fs::read_to_string(data("expected").join("compare-small-vs-small-b.md")).unwrap();
    assert_eq!(out, want);
}

/// A torn summary.json (a run killed while writing it) flags that run and
/// keeps it out of the medians; the report is still written.
#[test]
fn a_torn_summary_flags_its_run_instead_of_failing_the_report() {
    let (_tmp, dir) = scratch("results-small");
    let s = dir.join("N20/rust-good/rep1/summary.json");
    let text = std::fs::read_to_string(&s).unwrap();
    std::fs::write(&s, &text[..text.len() / 2]).unwrap();
    let r = Results::load(&dir).unwrap();
    let gs = groups(&r);
    let good = group(&gs, "rust-good");
    assert!(
        good.runs[0].problems[0].starts_with("unreadable summary.json:"),
        "{:?}",
        good.runs[0].problems
    );
    assert!(good.runs[1].problems.is_empty());
    let (md, _) = render(&dir).unwrap();
    assert!(md.contains("N20/rust-good/rep1: unreadable summary.json"));
}

/// A run whose loader failed for some objects measured another workload: it
/// is flagged and kept out of the medians.
#[test]
fn loader_errors_flag_the_run() {
    let (_tmp, dir) = scratch("results-small");
    edit_json(&dir.join("N20/rust-good/rep2/summary.json"), |v| {
        v["load"]["errors"] = 3.into();
        v["load"]["created"] = 17.into();
        v["load"]["first_error"] = "forbidden".into();
    });
    let r = Results::load(&dir).unwrap();
    let gs = groups(&r);
    let good = group(&gs, "rust-good");
    assert_eq!(
        good.runs[1].problems,
        vec!["loader errors: 3 (first: forbidden)"]
    );
    assert!(good.runs[0].problems.is_empty());
    assert_eq!(good.marker(), " ⚠ runs excluded");
    // The median rests on rep1 alone now.
    let conv = good.stat(Metric::Convergence).unwrap();
    assert_eq!(conv.n, 1);
}

/// T50/T90/T100 from objects.csv: first created_at → the ⌈q·N⌉-th ready_at.
/// Expected values computed by hand (a few lines of Python over the same
/// objects.csv files: min(created_at), sorted ready_at, N = 20).
#[test]
fn time_to_fraction_ready() {
    let r = Results::load(&data("results-small")).unwrap();
    let gs = groups(&r);
    let g1 = &group(&gs, "rust-good").runs[0];
    close("good T50", g1.get(Metric::T50), 0.191);
    close("good T90", g1.get(Metric::T90), 0.315);
    close("good T100", g1.get(Metric::T100), 0.336);
    // bad-fix rep1: 10 of 20 Ready, so only T50 is reached.
    let b1 = &group(&gs, "rust-bad-fix").runs[0];
    close("bad T50", b1.get(Metric::T50), 0.307);
    assert_eq!(b1.get(Metric::T90), None);
    assert_eq!(b1.get(Metric::T100), None);
}

/// A copy of results-small in which every object became Ready one second
/// later: T100 of the converging variant is worse in both repeats — its
/// whole interval beyond the threshold, a decided regression, so the gate
/// reports it; against itself nothing is reported.
#[test]
fn the_regression_gate_needs_a_decided_regression() {
    use ctrlbench_record::objects;
    let (_tmp, slow) = scratch("results-small");
    for run in [
        "rust-good/rep1",
        "rust-good/rep2",
        "rust-bad-fix/rep1",
        "rust-bad-fix/rep2",
    ] {
        let p = slow.join("N20").join(run).join("objects.csv");
        let mut rows = objects::read(&p).unwrap();
        for r in &mut rows {
            if let Some(t) = &r.ready_at {
                let ts: jiff::Timestamp = t.parse().unwrap();
                let later = ts.checked_add(jiff::SignedDuration::from_secs(1)).unwrap();
                r.ready_at = Some(later.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string());
            }
        }
        objects::write(&p, &rows).unwrap();
    }
    let base = data("results-small");
    assert!(regressions(&base, &base, 0.10).unwrap().is_empty());
    let worse = regressions(&base, &slow, 0.10).unwrap();
    assert!(
        worse.iter().any(|w| w.starts_with("N20 rust-good: T100")),
        "{worse:?}"
    );
    // Ready/s is N / convergence from the load start: with two repeats this
    // far apart (8.5/s and 127/s before, 5.9/s and 17/s after) the resampled
    // ratios straddle the threshold, so it is undecided and not reported.
    assert!(
        !worse
            .iter()
            .any(|w| w.starts_with("N20 rust-good: Ready/s")),
        "{worse:?}"
    );
    // A threshold above the change reports nothing.
    assert!(regressions(&base, &slow, 100.0).unwrap().is_empty());
    // The table gives each ratio its interval and verdict.
    let out = compare(&base, &slow).unwrap();
    assert!(out.contains("| N | variant | figure | A | B | B/A [95 %] | verdict |"));
    assert!(out.contains("| B higher |"), "{out}");
}

/// results-pods (results-small-b with a hand-written pods.csv in
/// rust-good's run and its summary's load_started_at = 01:13:16.000): the
/// Pod start section's cells, worked out by hand from the file.
#[test]
fn pod_start_quantiles_match_hand_computed_values() {
    let r = Results::load(&data("results-pods")).unwrap();
    let gs = groups(&r);
    let p = group(&gs, "rust-good").runs[0].pods.clone().expect("pods");
    assert!(group(&gs, "rust-bad-fix").runs[0].pods.is_none());
    // created → scheduled per pod (lonely, eee, aaa, bbb, ccc, ddd):
    // 0.1, 0.1, 0.05, 0.18, 0.01, 0.2; sorted 0.01 0.05 0.1 0.1 0.18 0.2.
    // Type-7 ranks (n − 1)·q = 2.5, 4.5, 4.95.
    let q = ctrlbench_report::pods::quantiles(&p.stages[0]).unwrap();
    for (got, want) in q.iter().zip([0.1, 0.19, 0.199, 0.2]) {
        close("scheduled", Some(*got), want);
    }
    // → running: 0.2, 0.3, 0.3, 0.4, 0.4, 0.75 sorted.
    let q = ctrlbench_report::pods::quantiles(&p.stages[1]).unwrap();
    for (got, want) in q.iter().zip([0.35, 0.575, 0.7325, 0.75]) {
        close("running", Some(*got), want);
    }
    // → ready: 0.4 (eee), 0.4 (aaa), 0.78, 1.0, 1.2, and lonely never:
    // the p90 rank 4.5 reaches the censored one.
    let q = ctrlbench_report::pods::quantiles(&p.stages[2]).unwrap();
    close("ready p50", Some(q[0]), 0.89);
    assert!(q[1..].iter().all(|v| *v == f64::INFINITY), "{q:?}");
    // Owners among the objects: widget-000001 (created 16.072, pods Ready
    // at 16.5 and 16.9) 0.828 s; widget-000002 (16.159; 17.2, 17.45)
    // 1.291 s. other-rs is no object of the run; lonely has no owner.
    assert_eq!(p.owner_pods, 4);
    assert_eq!(p.owners.len(), 2);
    close("owner 1", Some(p.owners[0]), 0.828);
    close("owner 2", Some(p.owners[1]), 1.291);
    let (md, _) = render(&data("results-pods")).unwrap();
    let section = md
        .split("## Pod start")
        .nth(1)
        .expect("a Pod start section");
    let table = section.split("\n## ").next().unwrap();
    for row in [
        "| 20 | rust-good | created → scheduled | 6 | 100.0 ms | 190.0 ms | 199.0 ms | 200.0 ms |",
        "| 20 | rust-good | created → running | 6 | 350.0 ms | 575.0 ms | 732.5 ms | 750.0 ms |",
        "| 20 | rust-good | created → ready | 6 | 890.0 ms | > window | > window | > window |",
        // 0.828 + 0.463·{0.5, 0.9, 0.99}, and the max.
        "| 20 | rust-good | object created → all its pods ready | 2 (4 pods) | 1.06 s | 1.24 s | 1.29 s | 1.29 s |",
    ] {
        assert!(table.contains(row), "missing {row} in:\n{table}");
    }
    assert!(!table.contains("rust-bad-fix"), "{table}");
    // Results without pods.csv have no such section.
    let (md, _) = render(&data("results-small-b")).unwrap();
    assert!(!md.contains("## Pod start"));
}

/// results-pods' hand-written plane.csv: each process's CPU is its last
/// row's seconds less its first's, its peak RSS the largest row.
#[test]
fn the_planes_processes_are_rows_of_their_own() {
    let (md, _) = render(&data("results-pods")).unwrap();
    let section = md
        .split("## The plane's processes")
        .nth(1)
        .expect("a plane section");
    let table = section.split("\n## ").next().unwrap();
    for row in [
        // 1.95 − 1.2 s; 62914560 B = 60 MiB.
        "| 20 | rust-good | kube-controller-manager | 0.75 s | 60.0 MiB |",
        // 1.3 − 0.8 s; 46137344 B = 44 MiB.
        "| 20 | rust-good | kube-scheduler | 0.50 s | 44.0 MiB |",
        // 1.2 − 0.5 s; 33554432 B = 32 MiB.
        "| 20 | rust-good | kwok | 0.70 s | 32.0 MiB |",
    ] {
        assert!(table.contains(row), "missing {row} in:\n{table}");
    }
    for p in ["| etcd |", "| kube-apiserver |"] {
        assert!(table.contains(p), "no {p} row in:\n{table}");
    }
    assert!(!table.contains("rust-bad-fix"), "{table}");
    let (md, _) = render(&data("results-small-b")).unwrap();
    assert!(!md.contains("## The plane's processes"));
}

/// etcd's bytes in use is a gauge that a compaction lowers: the run adds
/// its last scrape less its baseline, not a counter's increase (which
/// would count the drop as a restart). The column is appended by hand to a
/// run recorded before etcd.csv had it: 100 000 bytes at the baseline,
/// 10 000 more per scrape, 50 000 at the fifth (a compaction), 180 000 at
/// the ninth and last: 80 000 added, unless etcd's compact revision
/// moved within the run.
#[test]
fn etcd_bytes_added_is_the_last_scrape_less_the_baseline() {
    let (_tmp, dir) = common::scratch("results-small");
    let file = dir.join("N20/rust-good/rep1/etcd.csv");
    let text = std::fs::read_to_string(&file).unwrap();
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        let cell = match i {
            0 => "db_in_use_bytes".to_string(),
            5 => "50000".to_string(),
            _ => (100_000 + (i - 1) * 10_000).to_string(),
        };
        out.push_str(&format!("{line},{cell}\n"));
    }
    assert_eq!(text.lines().count(), 10, "the fixture's rows changed");
    std::fs::write(&file, &out).unwrap();
    let r = Results::load(&dir).unwrap();
    let gs = groups(&r);
    let good = group(&gs, "rust-good");
    close(
        "etcd bytes added",
        good.runs[0].get(Metric::EtcdBytesAdded),
        80_000.0,
    );
    // The repeat without the column has none.
    assert_eq!(good.runs[1].get(Metric::EtcdBytesAdded), None);
    // With etcd's compact revision recorded: unchanged (−1, never
    // compacted) keeps the figure; moved at the fifth scrape (the
    // apiserver compacted within the run) leaves it out.
    for (moved, want) in [(false, Some(80_000.0)), (true, None)] {
        let mut with = String::new();
        for (i, line) in out.lines().enumerate() {
            let cell = match i {
                0 => "compact_revision",
                5.. if moved => "1234",
                _ => "-1",
            };
            with.push_str(&format!("{line},{cell}\n"));
        }
        std::fs::write(&file, &with).unwrap();
        let r = Results::load(&dir).unwrap();
        let gs = groups(&r);
        let got = group(&gs, "rust-good").runs[0].get(Metric::EtcdBytesAdded);
        assert_eq!(got.map(f64::round), want, "compaction moved: {moved}");
    }
}
