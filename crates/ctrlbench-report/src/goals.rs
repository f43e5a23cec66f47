//! The goals an experiment file declares (`[[goal]]`, recorded in the
//! manifest: none in older results and in every file but the lab's) and
//! what judging them takes: each goal's pairs of variants; whether an
//! interval meets a bound; the `rust-X` / `go-X` pairs of one run and the
//! figures they are compared on (ordinary paired comparisons, asked with or
//! without goals); and matching each run to the `ctrlbench probe` figures
//! of its repeat. Computed here, below the sections, because the report's
//! questions (`questions`), the goals section (`sections/goals.rs`) and the
//! probe normalisation of `compare` (`normalise`) all read it.

use ctrlbench_record::manifest::{Goal, ProbeRow};
use ctrlbench_record::summary::{StartMode, StatusWrite};

use crate::figures::Group;
use crate::interval::Ratio;
use crate::load::Results;
use crate::metrics::Metric;

/// The figures a `rust-X` / `go-X` pair whose variants both ran with
/// `work_ms = 0` is compared on; which side is better is `gate::better`'s.
pub const RUST_GO_FIGURES: &[Metric] = &[
    Metric::ReadyPerS,
    Metric::PeakRss,
    Metric::CpuPerReconcile,
    Metric::StartInitialList,
];

/// Whether the pair `rust` / `go` is compared on `metric`: the start-up's
/// initial list only at N ≥ `SCALE_N` on controllers started after the
/// load, where a start-up is the whole cache's list.
pub fn rust_go_asks(metric: Metric, rust: &Group, go: &Group) -> bool {
    let after_load = |g: &Group| {
        g.runs
            .iter()
            .all(|f| f.start_mode == Some(StartMode::AfterLoad))
    };
    metric != Metric::StartInitialList
        || (rust.scale >= SCALE_N && after_load(rust) && after_load(go))
}

/// One declared goal at one scale: B/A on `metric` for the pair `b` / `a`.
pub struct GoalPair<'a> {
    pub goal: &'a Goal,
    pub metric: Metric,
    pub a: &'a Group,
    pub b: &'a Group,
}

/// Every pair `<b>-X` / `<a>-X` of a scale a goal speaks of (N at least its
/// `from_scale`), goal by goal in the file's order; a goal whose figure the
/// metric catalogue does not name has none (the experiment file's check
/// refuses it).
pub fn declared<'a>(goals: &'a [Goal], groups: &'a [Group]) -> Vec<GoalPair<'a>> {
    let mut out = Vec::new();
    for goal in goals {
        let Some(metric) = Metric::named(&goal.figure) else {
            continue;
        };
        for b in groups {
            let Some(rest) = b
                .variant
                .strip_prefix(goal.b.as_str())
                .and_then(|r| r.strip_prefix('-'))
            else {
                continue;
            };
            let other = format!("{}-{rest}", goal.a);
            if goal.from_scale.is_some_and(|n| b.scale < n) {
                continue;
            }
            if let Some(a) = groups
                .iter()
                .find(|g| g.scale == b.scale && g.variant == other)
            {
                out.push(GoalPair { goal, metric, a, b });
            }
        }
    }
    out
}

// The lab's targets on the probe and on the harness itself: shown in the
// goals section, which only a report whose experiment declares goals has.

/// Status-patch overhead: the rate at 1 worker ≥ 85 % of the probe's 1-writer rate.
pub const OVERHEAD_TARGET: f64 = 0.85;
/// Loader: its create rate alone ≥ 95 % of the probe's at the same concurrency.
pub const LOADER_TARGET: f64 = 0.95;
/// Scale: at N ≥ 100 000 the harness's own peak RSS stays ≤ 300 MiB.
pub const SCALE_N: u64 = 100_000;
pub const HARNESS_RSS_TARGET_MIB: f64 = 300.0;
/// …and uses ≤ 5 % of a core while it watches the controllers work.
pub const HARNESS_CPU_TARGET: f64 = 0.05;

/// The target met when the whole interval is on its side, not met when the
/// whole interval is on the other, else undecided (as is a ratio without an
/// interval: one pair cannot tell).
pub fn target(r: &Ratio, at_least: bool, target: f64) -> &'static str {
    let meets = |v: f64| if at_least { v >= target } else { v <= target };
    match r.interval {
        Some((lo, hi)) => {
            let (worst, best) = if at_least { (lo, hi) } else { (hi, lo) };
            if meets(worst) {
                "target met"
            } else if !meets(best) {
                "target not met"
            } else {
                "target undecided"
            }
        }
        None => "target undecided",
    }
}

/// Every variant of the group ran with work_ms = 0 (as it printed its settings).
fn zero_work(g: &Group) -> bool {
    g.runs
        .iter()
        .all(|r| r.settings.as_ref().is_some_and(|s| s.work_ms == 0))
}

/// The rust-X / go-X pairs (per scale) of zero work per reconcile, compared
/// on `RUST_GO_FIGURES`.
pub fn pairs(groups: &[Group]) -> Vec<(&Group, &Group)> {
    rust_go(groups)
        .into_iter()
        .filter(|(r, go)| zero_work(r) && zero_work(go))
        .collect()
}

/// Every rust-X / go-X pair of a scale, whatever its work per reconcile.
pub fn rust_go(groups: &[Group]) -> Vec<(&Group, &Group)> {
    groups
        .iter()
        .filter_map(|r| {
            let rest = r.variant.strip_prefix("rust-")?;
            let go = groups
                .iter()
                .find(|g| g.scale == r.scale && g.variant == format!("go-{rest}"))?;
            Some((r, go))
        })
        .collect()
}

/// The loader's concurrency the experiment ran with: as its summaries
/// recorded it, else (older results) the experiment file's top-level
/// `concurrency = n` line, else the default, 16.
pub(crate) fn concurrency(r: &Results) -> usize {
    let recorded = r
        .manifest
        .runs
        .iter()
        .find_map(|s| s.load.concurrency)
        .map(|c| c as usize);
    recorded.unwrap_or_else(|| {
        r.manifest
            .experiment_text
            .lines()
            .take_while(|l| !l.trim_start().starts_with('['))
            .find_map(|l| {
                let (k, v) = l.split_once('=')?;
                (k.trim() == "concurrency").then(|| v.split('#').next()?.trim().parse().ok())?
            })
            .unwrap_or(16)
    })
}

/// The probe row at `writers` that preceded the runs of (scale, repeat): an
/// experiment probes before each repeat; older manifests and `ctrlbench
/// probe` have one untagged probe, which then serves every run.
pub(crate) fn probe_at(
    probe: &[ProbeRow],
    writers: usize,
    scale: u64,
    repeat: u32,
) -> Option<&ProbeRow> {
    let at = |p: &&ProbeRow| p.writers == writers;
    if probe.iter().any(|p| p.repeat.is_some()) {
        probe
            .iter()
            .filter(at)
            .find(|p| p.scale == Some(scale) && p.repeat == Some(repeat))
    } else {
        probe.iter().find(at)
    }
}

/// One figure of a probe row.
pub(crate) type ProbeFigure = fn(&ProbeRow) -> Option<f64>;

/// Per repeat, (the probe figure it had, the geometric mean of its runs'
/// figures); the probe figures used; the runs used. A repeat is the unit:
/// its runs share one probe, so they are not independent pairs.
pub(crate) fn to_probe(
    runs: &[(u64, u32, f64)],
    probe: &[ProbeRow],
    writers: usize,
    of: impl Fn(&ProbeRow) -> Option<f64>,
) -> (Vec<(f64, f64)>, Vec<f64>, usize) {
    let mut runs_used = 0;
    let mut repeats: Vec<((u64, u32), f64, Vec<f64>)> = Vec::new();
    for &(scale, repeat, v) in runs {
        if let Some(p) = probe_at(probe, writers, scale, repeat)
            .and_then(&of)
            .filter(|p| *p > 0.0)
            && v > 0.0
        {
            runs_used += 1;
            match repeats.iter_mut().find(|r| r.0 == (scale, repeat)) {
                Some(r) => r.2.push(v),
                None => repeats.push(((scale, repeat), p, vec![v])),
            }
        }
    }
    let mut used = Vec::new();
    let pairs = repeats
        .into_iter()
        .map(|(_, p, vs)| {
            if !used.contains(&p) {
                used.push(p);
            }
            let mean = vs.iter().map(|v| v.ln()).sum::<f64>() / vs.len() as f64;
            (p, if vs.len() == 1 { vs[0] } else { mean.exp() })
        })
        .collect();
    (pairs, used, runs_used)
}

/// The figure ÷ the probe's, paired by repeat, and its verdict against `at_least`.
pub(crate) fn against_probe(pairs: &[(f64, f64)], at_least: f64) -> Option<(Ratio, &'static str)> {
    let r = Ratio::paired(pairs)?;
    Some((r, target(&r, true, at_least)))
}

/// The Rust groups the status-patch overhead is judged on: one worker,
/// status written by patch, the controller started after the load (with
/// the loader writing beside it, a controller's rate is not the runtime's
/// overhead).
pub(crate) fn overhead_groups(groups: &[Group]) -> impl Iterator<Item = &Group> {
    groups.iter().filter(|g| {
        g.variant.starts_with("rust-")
            && g.runs.iter().all(|f| {
                f.start_mode == Some(StartMode::AfterLoad)
                    && f.settings
                        .as_ref()
                        .is_some_and(|s| s.workers == 1 && s.status_write == StatusWrite::Patch)
            })
    })
}

/// (scale, repeat, creates/s) of the loader alone: the runs whose
/// controller started after the load, without load errors. Flagged runs
/// stay out, as from every pair (all of them when none is clean).
pub(crate) fn loader_alone(r: &Results) -> Vec<(u64, u32, f64)> {
    // (scale, repeat, creates/s, clean) of each after-load run.
    let alone: Vec<(u64, u32, f64, bool)> = r
        .runs
        .iter()
        .filter_map(|x| {
            let s = x.summary.as_ref()?;
            let alone = s
                .start
                .as_ref()
                .is_some_and(|t| t.mode == StartMode::AfterLoad)
                && s.load.errors == 0
                && s.load.rate_per_s > 0.0;
            let clean = crate::figures::problems(x).is_empty();
            alone.then_some((x.scale, x.repeat, s.load.rate_per_s, clean))
        })
        .collect();
    let any_clean = alone.iter().any(|a| a.3);
    alone
        .into_iter()
        .filter(|a| a.3 || !any_clean)
        .map(|(scale, repeat, rate, _)| (scale, repeat, rate))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_read_the_whole_interval() {
        use crate::interval::Method;
        let r = |ratio, lo, hi| Ratio {
            ratio,
            interval: Some((lo, hi)),
            method: Method::Paired { pairs: 3 },
        };
        assert_eq!(target(&r(1.3, 1.2, 1.4), true, 1.1), "target met");
        assert_eq!(target(&r(1.0, 0.9, 1.05), true, 1.1), "target not met");
        assert_eq!(target(&r(1.1, 1.0, 1.2), true, 1.1), "target undecided");
        assert_eq!(target(&r(0.4, 0.35, 0.45), false, 0.5), "target met");
        assert_eq!(target(&r(0.7, 0.6, 0.8), false, 0.5), "target not met");
        assert_eq!(target(&r(0.5, 0.4, 0.6), false, 0.5), "target undecided");
    }

    fn row(writers: usize, at: Option<(u64, u32)>, patch: f64) -> ProbeRow {
        ProbeRow {
            writers,
            status_patch_per_s: patch,
            scale: at.map(|a| a.0),
            repeat: at.map(|a| a.1),
            ..ProbeRow::default()
        }
    }

    #[test]
    fn each_run_is_divided_by_the_probe_of_its_repeat() {
        let tagged = [
            row(1, Some((50, 1)), 100.0),
            row(16, Some((50, 1)), 900.0),
            row(1, Some((50, 2)), 200.0),
        ];
        let runs = [(50, 1, 50.0), (50, 2, 50.0), (50, 3, 50.0)];
        let (pairs, used, n) = to_probe(&runs, &tagged, 1, |p| Some(p.status_patch_per_s));
        // Repeat 3 had no probe: left out, not divided by another repeat's.
        assert_eq!(pairs, vec![(100.0, 50.0), (200.0, 50.0)]);
        assert_eq!(n, 2);
        assert_eq!(used, vec![100.0, 200.0]);
        // One untagged probe (older manifests) serves every run.
        let old = [row(1, None, 100.0)];
        let (pairs, used, _) = to_probe(&runs, &old, 1, |p| Some(p.status_patch_per_s));
        assert_eq!(pairs, vec![(100.0, 50.0); 3]);
        assert_eq!(used, vec![100.0]);
        // Two runs of one repeat share its probe: one pair, their geometric mean.
        let two = [(50, 1, 50.0), (50, 1, 200.0)];
        let (pairs, _, _) = to_probe(&two, &tagged, 1, |p| Some(p.status_patch_per_s));
        assert_eq!(pairs.len(), 1);
        assert_eq!(pairs[0].0, 100.0);
        assert!((pairs[0].1 - 100.0).abs() < 1e-9, "{pairs:?}");
        assert!(probe_at(&tagged, 4, 50, 1).is_none());
    }
}
