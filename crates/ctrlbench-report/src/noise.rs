//! This machine's noise, from an A/A run: a `[[compare]]` pair whose two
//! variants ran with identical settings, interleaved, so every difference
//! between them is the machine's and none is the controllers'. Per headline
//! figure: the spread of the per-repeat B/A ratios (s, the standard
//! deviation of their logarithms), the paired 95 % interval at the repeats
//! run, and the half-width the same spread gives at K = 3, 6 and 10 repeats,
//! e^(t(0.975, K − 1)·s/√K) − 1 — the smallest difference an experiment on
//! this machine can decide at K repeats. The numbers only; the report's
//! section is `sections/noise.rs`.

use std::path::Path;

use anyhow::Result;
use ctrlbench_record::Settings;
use ctrlbench_record::manifest::Spread;
use ctrlbench_record::summary::StartMode;

use crate::context;
use crate::figures::{self, Group, repeat_pairs};
use crate::interval::Ratio;
use crate::load::{Results, Run};
use crate::metrics::Metric;
use crate::student::t975;
use crate::verdict::mde;
use crate::{Options, verdict};

/// The figures whose noise is shown: throughput, the time to all Ready,
/// reconcile latency, cost. The catalogue has no headline list of its own
/// (`compare::HEADLINE` is compare's, with counts an A/A cannot spread and
/// without CPU per reconcile); these are the figures questions are asked on.
pub const FIGURES: &[Metric] = &[
    Metric::ReadyPerS,
    Metric::T50,
    Metric::T100,
    Metric::P50,
    Metric::P99,
    Metric::MeanLatency,
    Metric::Cpu,
    Metric::CpuPerReconcile,
    Metric::PeakRss,
];

/// The repeat counts the half-width is projected to.
pub const PROJECTED: [usize; 3] = [3, 6, 10];

/// The most repeats the "takes K repeats" sentence looks at.
pub const MAX_REPEATS: usize = 10;

/// The half-width one spread gives at a number of repeats.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Projection {
    pub repeats: usize,
    /// e^(t(0.975, K − 1)·s/√K) − 1, a fraction.
    pub half_width: f64,
    /// At or below the margin: a difference of the margin is decidable.
    pub within_margin: bool,
}

/// One A/A pair's noise on one figure at one scale.
#[derive(Clone, Debug, PartialEq)]
pub struct NoiseRow {
    pub scale: u64,
    pub a: String,
    pub b: String,
    pub metric: Metric,
    /// The figure as the report's tables head it ("Ready/s", "controller CPU").
    pub figure: String,
    /// Repeat pairs, flagged runs left out as the answers leave them out.
    pub pairs: usize,
    /// s: the sample standard deviation of ln(B_k/A_k); None with fewer
    /// than two pairs or a zero on either side (no log ratio).
    pub log_sd: Option<f64>,
    /// e^s − 1: the spread as a fraction.
    pub spread: Option<f64>,
    /// B/A, the geometric mean of the per-repeat ratios, and its paired 95 %
    /// interval (None: a zero, or one pair for the interval).
    pub ratio: Option<f64>,
    pub lo: Option<f64>,
    pub hi: Option<f64>,
    /// The interval's half-width now, √(hi/lo) − 1.
    pub half_width: Option<f64>,
    /// At each of `PROJECTED`; empty without s.
    pub projections: Vec<Projection>,
    /// The margin the projections are marked against.
    pub margin: f64,
}

impl NoiseRow {
    /// The interval cell as the answers print it: "1.01 [0.97–1.05]".
    pub fn cell(&self) -> String {
        match (self.ratio, self.lo, self.hi) {
            (Some(r), Some(lo), Some(hi)) => format!("{r:.2} [{lo:.2}–{hi:.2}]"),
            (Some(r), _, _) => format!("{r:.2} (one pair)"),
            _ => "—".into(),
        }
    }
}

/// The noise of every A/A pair of a results directory (see `is_aa`), per
/// scale and figure of `FIGURES`, against the manifest's margin (else
/// ±5 %). Empty when the experiment has no A/A pair.
pub fn noise(dir: &Path) -> Result<Vec<NoiseRow>> {
    let results = Results::load(dir)?;
    let groups = figures::groups(&results);
    let (margin, _) = context::margin(&Options::default(), &results);
    Ok(rows(&results, &groups, margin))
}

/// The rows of every A/A pair, in the manifest's `[[compare]]` order (a
/// pair asked on several figures counts once), scale by scale.
pub(crate) fn rows(results: &Results, groups: &[Group], margin: f64) -> Vec<NoiseRow> {
    aa_pairs(results, groups)
        .into_iter()
        .flat_map(|(a, b)| FIGURES.iter().filter_map(move |&m| row(a, b, m, margin)))
        .collect()
}

/// Every (A, B) group pair of a `[[compare]]` entry that ran as an A/A, per scale.
pub(crate) fn aa_pairs<'a>(results: &Results, groups: &'a [Group]) -> Vec<(&'a Group, &'a Group)> {
    let mut seen: Vec<(&str, &str)> = Vec::new();
    let mut out = Vec::new();
    for q in &results.manifest.compare {
        if q.a == q.b || seen.contains(&(q.a.as_str(), q.b.as_str())) {
            continue;
        }
        seen.push((&q.a, &q.b));
        for a in groups.iter().filter(|g| g.variant == q.a) {
            let b = groups
                .iter()
                .find(|g| g.scale == a.scale && g.variant == q.b);
            if let Some(b) = b.filter(|b| is_aa(results, a, b)) {
                out.push((a, b));
            }
        }
    }
    out
}

/// How a run was set up, as its summary.json records it: what makes two
/// variants the same experiment under two names. The name, namespace and
/// everything measured are left out.
#[derive(PartialEq)]
struct Setup<'a> {
    implementation: &'a str,
    preset: &'a str,
    flags: &'a [String],
    /// Compared as recorded: one side without them is not known to be equal.
    settings: Option<&'a Settings>,
    start: Option<StartMode>,
    workload: Option<&'a str>,
    kubernetes_version: Option<&'a str>,
    cluster_grants: &'a [String],
    controller_metrics: bool,
}

fn setup(run: &Run) -> Option<Setup<'_>> {
    let s = run.summary.as_ref()?;
    Some(Setup {
        implementation: &s.implementation,
        preset: &s.preset,
        flags: &s.flags,
        settings: s.settings.as_ref(),
        start: s.start.as_ref().map(|st| st.mode),
        workload: s.workload.as_deref(),
        kubernetes_version: s.kubernetes_version.as_deref(),
        cluster_grants: &s.cluster_grants,
        controller_metrics: s.controller_metrics,
    })
}

/// True when every run of A and of B that has a summary was set up alike
/// (and each side has one): the same implementation, flags, preset and
/// recorded settings, start mode, workload, Kubernetes version and grants.
fn is_aa(results: &Results, a: &Group, b: &Group) -> bool {
    let of = |g: &Group| -> Vec<Setup<'_>> {
        results
            .runs
            .iter()
            .filter(|r| r.scale == g.scale && r.variant == g.variant)
            .filter_map(setup)
            .collect()
    };
    let (sa, sb) = (of(a), of(b));
    match sa.first() {
        Some(first) => !sb.is_empty() && sa.iter().chain(&sb).all(|s| s == first),
        None => false,
    }
}

/// One figure's row; None when no repeat pair measured it.
fn row(a: &Group, b: &Group, m: Metric, margin: f64) -> Option<NoiseRow> {
    let pairs = repeat_pairs(a, b, |f| f.get(m));
    if pairs.is_empty() {
        return None;
    }
    let paired = Ratio::paired(&pairs);
    let ratios: Vec<f64> = pairs.iter().map(|(x, y)| y / x).collect();
    // Ratio::paired is None exactly when a zero leaves a log undefined.
    let log_sd = paired.and_then(|_| log_sd(&ratios));
    let projections = log_sd
        .map(|s| {
            PROJECTED
                .iter()
                .filter_map(|&k| {
                    let half_width = projected(s, k)?;
                    Some(Projection {
                        repeats: k,
                        half_width,
                        within_margin: half_width <= margin,
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    Some(NoiseRow {
        scale: a.scale,
        a: a.variant.clone(),
        b: b.variant.clone(),
        metric: m,
        figure: m.column().to_string(),
        pairs: pairs.len(),
        log_sd,
        spread: log_sd.map(f64::exp_m1),
        ratio: paired.map(|r| r.ratio),
        lo: paired.and_then(|r| r.interval).map(|i| i.0),
        hi: paired.and_then(|r| r.interval).map(|i| i.1),
        half_width: paired.and_then(|r| mde(r.interval)),
        projections,
        margin,
    })
}

/// What running second does to a figure: each repeat's later run of the
/// pair over its earlier one (by load start), whichever variant that was.
/// Both variants are the same controller, so a ratio away from 1 is the
/// position itself (a warmer cache, a plane that drifts, a namespace
/// deleted just before): the bias a fixed order would put into B/A, which
/// counterbalancing cancels.
#[derive(Clone, Debug, PartialEq)]
pub struct Position {
    /// later / earlier, its geometric mean and paired 95 % interval.
    pub ratio: Ratio,
    /// Repeats in which B ran second, of `ratio`'s pairs.
    pub b_second: usize,
}

/// The position effect of an A/A pair on `m`; None without a pair.
pub fn position(a: &Group, b: &Group, m: Metric) -> Option<Position> {
    let bs = b.used();
    let mut pairs = Vec::new();
    let mut b_second = 0;
    for x in a.used() {
        let Some(y) = bs.iter().find(|y| y.repeat == x.repeat) else {
            continue;
        };
        let (Some(vx), Some(vy)) = (x.get(m), y.get(m)) else {
            continue;
        };
        if y.origin > x.origin {
            b_second += 1;
            pairs.push((vx, vy));
        } else {
            pairs.push((vy, vx));
        }
    }
    Some(Position {
        ratio: Ratio::paired(&pairs)?,
        b_second,
    })
}

/// s: the sample standard deviation (K − 1 in the denominator) of the
/// ratios' logarithms; None with fewer than two or a ratio not positive.
pub fn log_sd(ratios: &[f64]) -> Option<f64> {
    if ratios.len() < 2 || ratios.iter().any(|r| !(*r > 0.0 && r.is_finite())) {
        return None;
    }
    let logs: Vec<f64> = ratios.iter().map(|r| r.ln()).collect();
    let k = logs.len() as f64;
    let mean = logs.iter().sum::<f64>() / k;
    let var = logs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (k - 1.0);
    Some(var.sqrt())
}

/// The half-width of the paired 95 % interval that spread `s` gives at
/// `repeats` pairs, e^(t(0.975, K − 1)·s/√K) − 1; None below two repeats.
pub fn projected(s: f64, repeats: usize) -> Option<f64> {
    let t = t975(repeats.checked_sub(1)?)?;
    Some((t * s / (repeats as f64).sqrt()).exp_m1())
}

/// The fewest repeats (2 to `MAX_REPEATS`) whose projected half-width is at
/// or below `margin`; None when even `MAX_REPEATS` is not enough.
pub fn repeats_to_decide(s: f64, margin: f64) -> Option<usize> {
    (2..=MAX_REPEATS).find(|&k| projected(s, k).is_some_and(|h| h <= margin))
}

/// "±4.2 %": a half-width, always to one decimal (the projections are
/// compared with each other and with the margin, so one precision for all).
pub fn plus_minus(half_width: f64) -> String {
    if half_width.is_finite() {
        format!("±{:.1} %", half_width * 100.0)
    } else {
        verdict::plus_minus(half_width)
    }
}

/// This machine's spread per figure label from an A/A results directory's
/// noise rows: each figure's pairs' sample variances pooled (weighted by
/// their degrees of freedom, repeats − 1). Figures without two pairs are
/// left out (they keep the default).
pub fn calibration(rows: &[NoiseRow]) -> std::collections::BTreeMap<String, Spread> {
    let mut sums: std::collections::BTreeMap<String, (f64, f64)> = Default::default();
    for r in rows {
        if let Some(s) = r.log_sd.filter(|s| s.is_finite())
            && r.pairs >= 2
        {
            let df = (r.pairs - 1) as f64;
            let e = sums.entry(r.metric.label().to_string()).or_default();
            e.0 += df * s * s;
            e.1 += df;
        }
    }
    sums.into_iter()
        .map(|(k, (ss, df))| {
            (
                k,
                Spread {
                    s: (ss / df).sqrt(),
                    df,
                },
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::RunFigures;

    /// t(0.975, ν) from a printed table (ν = 1 … 9), kept here so the test
    /// does not lean on student.rs.
    const T: [f64; 9] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262,
    ];

    fn by_hand(s: f64, k: usize) -> f64 {
        (T[k - 2] * s / (k as f64).sqrt()).exp() - 1.0
    }

    /// Five pairs whose B/A ratios are known: s and every projection are
    /// worked out here from the definition, then compared.
    #[test]
    fn spread_and_projections_follow_the_formula() {
        let ratios = [1.02, 0.97, 1.05, 0.99, 1.01];
        let logs: Vec<f64> = ratios.iter().map(|r: &f64| r.ln()).collect();
        let mean = logs.iter().sum::<f64>() / 5.0;
        let s = (logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / 4.0).sqrt();
        // ln: 0.019803, −0.030459, 0.048790, −0.010050, 0.009950; mean
        // 0.007607; s = √(0.0036111 / 4) = 0.030046.
        assert!((s - 0.030_046).abs() < 1e-5, "{s}");
        let got = log_sd(&ratios).unwrap();
        assert!((got - s).abs() < 1e-12);
        for k in 2..=10 {
            let want = by_hand(s, k);
            let h = projected(s, k).unwrap();
            assert!((h - want).abs() < 1e-12, "K={k}: {h} vs {want}");
        }
        // K = 6: e^(2.571 × 0.030046 / √6) − 1 = 3.20 %.
        assert_eq!(plus_minus(projected(s, 6).unwrap()), "±3.2 %");
        // At ±5 %: K = 4 gives e^(3.182·s/2) − 1 = 4.90 %, K = 3 7.75 %.
        assert!(by_hand(s, 3) > 0.05 && by_hand(s, 4) <= 0.05);
        assert_eq!(repeats_to_decide(s, 0.05), Some(4));
        assert_eq!(repeats_to_decide(s, 0.01), None);
        assert_eq!(repeats_to_decide(0.0, 0.01), Some(2));
        assert_eq!(projected(s, 1), None);
        assert_eq!(log_sd(&[1.1]), None);
        assert_eq!(log_sd(&[1.1, 0.0]), None);
    }

    fn group(variant: &str, vals: &[f64]) -> Group {
        let runs = vals
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let mut r = RunFigures::empty(30, variant, i as u32 + 1);
                r.set(Metric::ReadyPerS, Some(*v));
                r.set(Metric::Cpu, Some(0.0));
                r
            })
            .collect();
        Group {
            scale: 30,
            variant: variant.into(),
            runs,
        }
    }

    /// A row's interval is the answers' paired one, its half-width the
    /// projection formula at the current K; a flagged run leaves its pair
    /// out; a zero leaves the spread unknown.
    #[test]
    fn rows_use_the_answers_pairs_and_interval() {
        let ratios = [1.04, 0.98, 1.01, 1.03];
        let a = group("a", &[100.0, 120.0, 90.0, 110.0]);
        let mut b = group("b", &[0.0; 4]);
        for (k, r) in b.runs.iter_mut().enumerate() {
            r.set(
                Metric::ReadyPerS,
                Some(a.runs[k].get(Metric::ReadyPerS).unwrap() * ratios[k]),
            );
        }
        let row = row(&a, &b, Metric::ReadyPerS, 0.05).unwrap();
        let s = log_sd(&ratios).unwrap();
        assert_eq!(row.pairs, 4);
        assert!((row.log_sd.unwrap() - s).abs() < 1e-9);
        assert!((row.spread.unwrap() - (s.exp() - 1.0)).abs() < 1e-9);
        assert!((row.half_width.unwrap() - by_hand(s, 4)).abs() < 1e-9);
        let want: Vec<usize> = vec![3, 6, 10];
        let ks: Vec<usize> = row.projections.iter().map(|p| p.repeats).collect();
        assert_eq!(ks, want);
        for p in &row.projections {
            assert!((p.half_width - by_hand(s, p.repeats)).abs() < 1e-9);
            assert_eq!(p.within_margin, by_hand(s, p.repeats) <= 0.05);
        }
        assert!(row.cell().starts_with("1.01 ["), "{}", row.cell());
        // Repeat 2 of B flagged: three pairs.
        b.runs[1].problems.push("machine busy".into());
        let three = super::row(&a, &b, Metric::ReadyPerS, 0.05).unwrap();
        assert_eq!(three.pairs, 3);
        let s3 = log_sd(&[1.04, 1.01, 1.03]).unwrap();
        assert!((three.log_sd.unwrap() - s3).abs() < 1e-9);
        // CPU 0 on both sides: a row, no spread, no projections.
        let z = super::row(&a, &b, Metric::Cpu, 0.05).unwrap();
        assert_eq!(
            (z.log_sd, z.projections.len(), z.cell()),
            (None, 0, "—".into())
        );
        // Not measured at all: no row.
        assert!(super::row(&a, &b, Metric::PeakRss, 0.05).is_none());
    }
}
