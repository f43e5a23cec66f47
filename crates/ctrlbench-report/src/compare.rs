//! `ctrlbench compare A B`: the headline figures of two results directories
//! side by side, per scale × variant present in both, with the ratio B/A, as
//! one Markdown table.

use std::path::Path;

use anyhow::Result;

use crate::Table;
use crate::figures::{Group, groups};
use crate::interval::Ratio;
use crate::load::Results;
use crate::metrics::Metric;

/// The figures compared (the throughput, latency and cost headline).
pub const HEADLINE: &[Metric] = &[
    Metric::Ready,
    Metric::Convergence,
    Metric::Success,
    Metric::Errors,
    Metric::Retries,
    Metric::MeanLatency,
    Metric::P50,
    Metric::P99,
    Metric::TtrP99,
    Metric::T50,
    Metric::T90,
    Metric::T100,
    Metric::ReadyPerS,
    Metric::WritesPerS,
    Metric::Conflicts,
    Metric::ThrottleWait,
    Metric::Cpu,
    Metric::PeakRss,
    Metric::ApiP99,
    Metric::ApiCreateP99,
    Metric::FsyncP99,
    Metric::OwnUpdateP99,
];

/// Figures from the apiserver's and etcd's own metrics, which name no caller.
fn server_side(m: Metric) -> bool {
    matches!(m, Metric::ApiP99 | Metric::ApiCreateP99 | Metric::FsyncP99)
}

/// B/A; None when undefined (a missing value, or A = 0).
pub fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    let (a, b) = (a?, b?);
    (a != 0.0).then(|| b / a)
}

/// The scale × variant groups present on both sides, in A's order.
fn pairs<'a>(ga: &'a [Group], gb: &'a [Group]) -> Vec<(&'a Group, &'a Group)> {
    ga.iter()
        .filter_map(|x| {
            let y = gb
                .iter()
                .find(|y| y.scale == x.scale && y.variant == x.variant)?;
            Some((x, y))
        })
        .collect()
}

/// The figures the regression gate watches, and whether higher is better.
pub const GATE: &[(Metric, bool)] = &[
    (Metric::T100, false),
    (Metric::ReadyPerS, true),
    (Metric::P99, false),
    (Metric::WritesPerS, false),
    (Metric::PeakRss, false),
];

/// Headline figures of `b` worse than `a`'s by more than `threshold`
/// (0.10 = 10 %) *and* outside the noise interval, one line each.
pub fn regressions(a: &Path, b: &Path, threshold: f64) -> Result<Vec<String>> {
    let (ga, gb) = (groups(&Results::load(a)?), groups(&Results::load(b)?));
    let mut out = Vec::new();
    for (x, y) in pairs(&ga, &gb) {
        for &(m, higher_is_better) in GATE {
            let Some(r) = Ratio::of(&x.values(m), &y.values(m)) else {
                continue;
            };
            let worse = if higher_is_better {
                r.ratio < 1.0 - threshold
            } else {
                r.ratio > 1.0 + threshold
            };
            if worse && r.within_noise() == Some(false) {
                out.push(format!(
                    "N{} {}: {} {} → {} (B/A {})",
                    x.scale,
                    x.variant,
                    m.label(),
                    cell(x, m),
                    cell(y, m),
                    r.cell()
                ));
            }
        }
    }
    Ok(out)
}

fn cell(g: &Group, m: Metric) -> String {
    let flag = if g.flagged_only() { " ⚠" } else { "" };
    match (m, g.stat(m)) {
        (_, Some(s)) => format!("{}{flag}", m.fmt(s.median)),
        (Metric::Convergence, None) => "not converged".into(),
        (_, None) => "—".into(),
    }
}

/// The comparison as Markdown.
pub fn compare(a: &Path, b: &Path) -> Result<String> {
    let (ra, rb) = (Results::load(a)?, Results::load(b)?);
    let (ga, gb) = (groups(&ra), groups(&rb));
    let mut out = format!(
        "# ctrlbench compare\n\nA: {} ({}, {} runs{})\n\nB: {} ({}, {} runs{})\n\n{INTERVALS}\n\n",
        a.display(),
        ra.experiment(),
        ra.runs.len(),
        if ra.complete() { "" } else { ", INCOMPLETE" },
        b.display(),
        rb.experiment(),
        rb.runs.len(),
        if rb.complete() { "" } else { ", INCOMPLETE" },
    );
    let rows = pairs(&ga, &gb);
    if rows.is_empty() {
        out.push_str("No scale × variant is present in both directories.\n");
    } else {
        out.push_str(&ratio_table(&rows, |x, _| x.variant.clone()));
    }
    let only = |g: &[Group], other: &[Group]| -> Vec<String> {
        g.iter()
            .filter(|x| {
                !other
                    .iter()
                    .any(|y| y.scale == x.scale && y.variant == x.variant)
            })
            .map(|x| format!("N{}/{}", x.scale, x.variant))
            .collect()
    };
    for (side, v) in [("A", only(&ga, &gb)), ("B", only(&gb, &ga))] {
        if !v.is_empty() {
            out.push_str(&format!("\nOnly in {side}: {}\n", v.join(", ")));
        }
    }
    Ok(out)
}

/// How ratios and their intervals are read (both kinds of comparison).
const INTERVALS: &str = "Medians over each side's runs without problems (⚠: only flagged runs); ratio = B/A \
     with a 95 % bootstrap interval over the repeats of both sides (percentile method, \
     2000 resamples, fixed seed); \"within noise\" when it includes 1. Few repeats give \
     wide, approximate intervals; one run on a side gives no interval.";

/// Variant pairs of one directory: each `rust-X` with `go-X` when present.
pub fn default_variant_pairs(dir: &Path) -> Result<Vec<(String, String)>> {
    let r = Results::load(dir)?;
    let mut names: Vec<String> = r.runs.iter().map(|x| x.variant.clone()).collect();
    names.dedup();
    Ok(names
        .iter()
        .filter_map(|n| {
            let rest = n.strip_prefix("rust-")?;
            let go = format!("go-{rest}");
            names.contains(&go).then(|| (n.clone(), go))
        })
        .collect())
}

/// Variants of one results directory against each other (A = the first of
/// each pair, B = the second), per scale: ratios from one run whose variants
/// were interleaved, which is where ratios between variants belong.
pub fn compare_variants(dir: &Path, pairs: &[(String, String)]) -> Result<String> {
    let r = Results::load(dir)?;
    let g = groups(&r);
    let mut out = format!(
        "# ctrlbench compare (variants of one run)\n\n{} ({}, {} runs{})\n\n{INTERVALS}\n\n",
        dir.display(),
        r.experiment(),
        r.runs.len(),
        if r.complete() { "" } else { ", INCOMPLETE" },
    );
    let mut rows = Vec::new();
    let mut missing = Vec::new();
    for (a, b) in pairs {
        let mut found = false;
        for x in g.iter().filter(|x| &x.variant == a) {
            if let Some(y) = g.iter().find(|y| y.scale == x.scale && &y.variant == b) {
                rows.push((x, y));
                found = true;
            }
        }
        if !found {
            missing.push(format!("{a} vs {b}"));
        }
    }
    if rows.is_empty() {
        anyhow::bail!(
            "{}: no scale has both variants of {} (variants here: {})",
            dir.display(),
            missing.join(", "),
            g.iter()
                .map(|x| x.variant.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    out.push_str(&ratio_table(&rows, |x, y| {
        format!("{} → {}", x.variant, y.variant)
    }));
    if !missing.is_empty() {
        out.push_str(&format!(
            "\nNot found at any scale: {}\n",
            missing.join(", ")
        ));
    }
    Ok(out)
}

/// One row per pair × headline figure: A, B, B/A with its interval, verdict.
fn ratio_table(pairs: &[(&Group, &Group)], label: impl Fn(&Group, &Group) -> String) -> String {
    let mut t = Table {
        head: ["N", "variant", "figure", "A", "B", "B/A [95 %]", "verdict"]
            .map(String::from)
            .to_vec(),
        rows: vec![],
    };
    for (x, y) in pairs {
        let shared = [x, y].iter().any(|g| g.runs.iter().any(|r| r.concurrent));
        for &m in HEADLINE {
            let r = Ratio::of(&x.values(m), &y.values(m));
            // Under the concurrent schedule these cover every variant that
            // ran alongside: say so on the row instead of crediting one.
            let figure = if shared && server_side(m) {
                format!("{} (cluster-wide: all variants together)", m.label())
            } else {
                m.label().to_string()
            };
            t.rows.push(vec![
                x.scale.to_string(),
                label(x, y),
                figure,
                cell(x, m),
                cell(y, m),
                r.map(|r| r.cell()).unwrap_or("—".into()),
                r.map(|r| r.verdict().to_string()).unwrap_or("—".into()),
            ]);
        }
    }
    t.markdown()
}
