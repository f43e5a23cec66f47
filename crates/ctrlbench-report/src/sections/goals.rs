//! Rust vs controller-runtime: for every `rust-X`/`go-X` pair of one run
//! whose variants both ran with `work_ms = 0` (our kube-rs controller against
//! our controller-runtime one), the Rust/Go ratios the goals name —
//! throughput, peak RSS, CPU per reconcile, and at N ≥ 100 000 after the
//! load the start-up's initial list — each paired over the repeats
//! with its 95 % interval, the verdict against the margin (Rust higher or
//! lower, better or worse; equivalent; undecided) and whether the goal's
//! target is met, not met or undecided; then, when the run recorded
//! `ctrlbench probe`'s figures, the Rust controller's status patch rate at
//! one worker (first writes/s, timed by our watch: one patch per object in
//! these presets) against the probe's one-writer patch rate, and the loader's
//! create rate alone (start = "after-load") against the probe's create rate
//! at the loader's concurrency, both paired by repeat; at N ≥ 100 000 the
//! harness's own peak RSS and share of a core.

use ctrlbench_record::manifest::ProbeRow;
use ctrlbench_record::summary::StartMode;

use super::Section;
use crate::context::ReportCtx;
use crate::figures::{Group, interleaved};
use crate::interval::Ratio;
use crate::load::Results;
use crate::metrics::Metric;
use crate::stats::{fmt_stat, stat};
use crate::verdict::{named, percent};
use crate::{Block, Table};

pub struct PerformanceGoals;

/// One goal on a Rust/Go ratio.
pub struct Goal {
    pub name: &'static str,
    pub metric: Metric,
    /// The target: Rust/Go ≥ target (true) or ≤ target (false).
    pub at_least: bool,
    pub target: f64,
    /// The target at N ≥ `SCALE_N` when the Rust side keeps whole objects
    /// (managedFields not stripped), where it differs.
    pub at_scale_whole: Option<f64>,
    /// Judged only at N ≥ `SCALE_N` on controllers started after the load.
    pub at_scale_after_load_only: bool,
}

impl Goal {
    /// The target for the pair `rust` / go.
    pub fn target_for(&self, rust: &Group) -> f64 {
        let whole = rust
            .settings()
            .is_some_and(|(_, s)| !s.strip_managed_fields);
        match self.at_scale_whole {
            Some(t) if rust.scale >= SCALE_N && whole => t,
            _ => self.target,
        }
    }

    /// Whether the goal speaks of the pair `rust` / `go` at all.
    pub fn applies(&self, rust: &Group, go: &Group) -> bool {
        let after_load = |g: &Group| {
            g.runs
                .iter()
                .all(|f| f.start_mode == Some(StartMode::AfterLoad))
        };
        !self.at_scale_after_load_only
            || (rust.scale >= SCALE_N && after_load(rust) && after_load(go))
    }
}

pub const GOALS: &[Goal] = &[
    Goal {
        name: "throughput (Ready/s)",
        metric: Metric::ReadyPerS,
        at_least: true,
        target: 1.1,
        at_scale_whole: None,
        at_scale_after_load_only: false,
    },
    Goal {
        name: "memory (peak RSS)",
        metric: Metric::PeakRss,
        at_least: false,
        target: 0.5,
        // 100 000 whole objects: no more than Go; stripped, half.
        at_scale_whole: Some(1.0),
        at_scale_after_load_only: false,
    },
    Goal {
        name: "CPU per reconcile",
        metric: Metric::CpuPerReconcile,
        at_least: false,
        target: 0.5,
        at_scale_whole: None,
        at_scale_after_load_only: false,
    },
    Goal {
        name: "start-up (initial list)",
        metric: Metric::StartInitialList,
        at_least: false,
        // No slower than Go's.
        target: 1.0,
        at_scale_whole: None,
        at_scale_after_load_only: true,
    },
];

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

/// "Rust higher (better); target met": the verdict on Rust/Go against the
/// margin (the goals' figures all have a better side), then the target's.
/// `target_value` is the goal's target at the pair's scale.
pub fn verdict(r: &Ratio, goal: &Goal, target_value: f64, margin: f64) -> String {
    format!(
        "{}; {}",
        named(r, margin, "Rust", Some(goal.at_least)),
        target(r, goal.at_least, target_value)
    )
}

/// Every variant of the group ran with work_ms = 0 (as it printed its settings).
fn zero_work(g: &Group) -> bool {
    g.runs
        .iter()
        .all(|r| r.settings.as_ref().is_some_and(|s| s.work_ms == 0))
}

/// The rust-X / go-X pairs (per scale) the goals apply to.
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
fn concurrency(r: &Results) -> usize {
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
type ProbeFigure = fn(&ProbeRow) -> Option<f64>;

/// Per repeat, (the probe figure it had, the geometric mean of its runs'
/// figures); the probe figures used; the runs used. A repeat is the unit:
/// its runs share one probe, so they are not independent pairs.
fn to_probe(
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

/// "368.5/s", or "368.5 [340.2–384.0]/s" over several repeats' probes.
fn probe_cell(v: &[f64]) -> String {
    stat(v.to_vec())
        .map(|s| fmt_stat(&s, |x| format!("{x:.1}/s")))
        .unwrap_or("—".into())
}

/// The figure ÷ the probe's, paired by repeat, and its verdict against `at_least`.
fn against_probe(pairs: &[(f64, f64)], at_least: f64) -> Option<(Ratio, &'static str)> {
    let r = Ratio::paired(pairs)?;
    Some((r, target(&r, true, at_least)))
}

impl Section for PerformanceGoals {
    fn render(&self, ctx: &ReportCtx, out: &mut Vec<Block>) {
        let r = &ctx.results;
        let rows = pair_rows(&ctx.groups, ctx.margin);
        // The probe's figures, when the run recorded them (probe = true).
        let probe = r.manifest.probe.as_deref().unwrap_or_default();
        let mut probe_rows = overhead_rows(&ctx.groups, probe);
        probe_rows.extend(loader_row(r, probe));
        probe_rows.extend(harness_row(r));
        probe_rows.extend(harness_cpu_row(r));
        if rows.is_empty() && probe_rows.is_empty() {
            return;
        }
        out.push(Block::Heading(2, HEADING.into()));
        out.push(Block::Para(intro(ctx.margin)));
        if !rows.is_empty() {
            out.push(Block::Table(Table {
                head: [
                    "N",
                    "pair",
                    "goal",
                    "target",
                    "Rust",
                    "Go",
                    "Rust/Go [95 %]",
                    "verdict",
                ]
                .map(String::from)
                .to_vec(),
                rows,
            }));
        }
        if !probe_rows.is_empty() {
            out.push(Block::Table(Table {
                head: [
                    "N", "variant", "goal", "target", "figures", "ratio", "verdict",
                ]
                .map(String::from)
                .to_vec(),
                rows: probe_rows,
            }));
        }
    }
}

const HEADING: &str =
    "Rust vs controller-runtime: throughput, CPU and memory; overhead against the probe";

/// The section's reading guide; `margin` is the equivalence margin.
fn intro(margin: f64) -> String {
    format!(
        "Our Rust (kube-rs) controller against our Go (controller-runtime) one, for \
         every rust-X / go-X pair of this run whose variants both ran with work_ms = 0, on \
         throughput, memory and CPU per reconcile (at N ≥ 100 000 with whole objects the \
         memory target is 1.0; for controllers started after the load there, also the \
         start-up's initial list): Rust/Go paired over the repeats (each \
         repeat's Rust run against the Go run beside it), the geometric mean of the per-repeat \
         ratios with a 95 % t interval. The verdict reads the interval against the margin \
         (±{m}): Rust higher or lower, and whether that is better or worse, only when the \
         whole interval lies beyond it; equivalent when it lies within it; otherwise \
         undecided, with the smallest difference this many repeats can detect. The target is \
         met when the whole interval is on its side, not met when wholly on the other, \
         undecided when it straddles it; one pair gives no interval. {PROBE}",
        m = percent(margin)
    )
}

const PROBE: &str = "Probe rows compare with \
     `ctrlbench probe`'s figures (probe = true), taken before each repeat: each run is \
     divided by the probe of its repeat (older results: the one probe before the first run), \
     paired by repeat (the runs of one repeat share its probe, so the repeat is the unit: \
     the geometric mean of its runs' ratios), and the ratio is the geometric mean over the \
     repeats with a 95 % t interval, met when the whole interval is at or above the target, \
     not met when wholly below, undecided otherwise (one repeat: undecided); the figures cell \
     shows the probe's median [min–max] over the repeats. The status-patch overhead against the \
     probe is judged on the runs whose controller started after the load. A controller's \
     status patches/s there is its first writes/s: (k − 1) ÷ the time from the first to the \
     last first_write_at of the k objects it wrote (objects.csv, our own watch's timestamps; \
     one patch per object at one worker), exact where the scraped writes/s is bounded by the \
     scrape interval at both ends of a short burst.";

/// Per pair and goal: the Rust and Go cells, Rust/Go with its interval, the verdict.
fn pair_rows(groups: &[Group], margin: f64) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for (rust, go) in pairs(groups) {
        for g in GOALS.iter().filter(|g| g.applies(rust, go)) {
            let ratio = interleaved(go, rust, |r| r.get(g.metric));
            let t = g.target_for(rust);
            rows.push(vec![
                rust.scale.to_string(),
                format!("{} / {}", rust.variant, go.variant),
                g.name.to_string(),
                format!("{} {t}", if g.at_least { "≥" } else { "≤" }),
                rust.cell(g.metric),
                go.cell(g.metric),
                ratio.map(|x| x.cell()).unwrap_or("—".into()),
                ratio
                    .map(|x| verdict(&x, g, t, margin))
                    .unwrap_or("—".into()),
            ]);
        }
    }
    rows
}

/// The status-patch overhead against the probe: Rust groups at one worker
/// writing status by patch whose controller started after the load (with
/// the loader writing beside it, a controller's rate is not the runtime's
/// overhead); the goal row, then the same against the probe's pass with one
/// watch open, the watch every controller holds (context, not the goal).
fn overhead_rows(groups: &[Group], probe: &[ProbeRow]) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for g in groups.iter().filter(|g| {
        g.variant.starts_with("rust-")
            && g.runs.iter().all(|f| {
                f.start_mode == Some(StartMode::AfterLoad)
                    && f.settings
                        .as_ref()
                        .is_some_and(|s| s.workers == 1 && s.status_write == "patch")
            })
    }) {
        let rates: Vec<(u64, u32, f64)> = g
            .used()
            .iter()
            .filter_map(|f| Some((f.scale, f.repeat, f.get(Metric::FirstWritesPerS)?)))
            .collect();
        let kinds: [(&str, ProbeFigure, bool); 2] = [
            (
                "status-patch overhead against the probe: status patches/s at 1 worker ÷ \
                 probe's 1-writer patch rate",
                |p| Some(p.status_patch_per_s),
                true,
            ),
            (
                "context: status patches/s at 1 worker ÷ probe's 1-writer patch rate \
                 with one watch open",
                |p| p.watched_status_patch_per_s,
                false,
            ),
        ];
        for (name, of, goal) in kinds {
            let (pairs, used, _) = to_probe(&rates, probe, 1, of);
            if let Some((ratio, met)) = against_probe(&pairs, OVERHEAD_TARGET) {
                rows.push(vec![
                    g.scale.to_string(),
                    g.variant.clone(),
                    name.into(),
                    if goal {
                        format!("≥ {OVERHEAD_TARGET}")
                    } else {
                        "—".into()
                    },
                    format!(
                        "{} ÷ {}",
                        g.cell(Metric::FirstWritesPerS),
                        probe_cell(&used)
                    ),
                    ratio.cell(),
                    if goal { met.into() } else { "—".into() },
                ]);
            }
        }
    }
    rows
}

/// The loader alone — runs whose controller started after the load —
/// against the probe's create rate at the loader's concurrency. Flagged
/// runs stay out, as from every pair (all of them when none is clean).
fn loader_row(r: &Results, probe: &[ProbeRow]) -> Option<Vec<String>> {
    let conc = concurrency(r);
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
    let loads: Vec<(u64, u32, f64)> = alone
        .into_iter()
        .filter(|a| a.3 || !any_clean)
        .map(|(scale, repeat, rate, _)| (scale, repeat, rate))
        .collect();
    let (pairs, used, runs) = to_probe(&loads, probe, conc, |p| Some(p.create_per_s));
    let (ratio, met) = against_probe(&pairs, LOADER_TARGET)?;
    Some(vec![
        "all".into(),
        format!("loader alone ({runs} after-load runs)"),
        format!("loader against the probe: creates/s ÷ probe's create rate at {conc} writers"),
        format!("≥ {LOADER_TARGET}"),
        format!("{} probe", probe_cell(&used)),
        ratio.cell(),
        met.into(),
    ])
}

/// The harness's own peak memory, at scales large enough for it to matter.
fn harness_row(r: &Results) -> Option<Vec<String>> {
    let max_scale = r.runs.iter().map(|x| x.scale).max().unwrap_or(0);
    let rss = r
        .manifest
        .harness_peak_rss_bytes
        .filter(|_| max_scale >= SCALE_N)?;
    let mib = rss as f64 / f64::from(1u32 << 20);
    Some(vec![
        max_scale.to_string(),
        "ctrlbench itself (manifest.json harness_peak_rss_bytes)".into(),
        "Scale: the harness's peak RSS over the whole experiment".into(),
        format!("≤ {HARNESS_RSS_TARGET_MIB} MiB"),
        format!("{mib:.0} MiB"),
        "—".into(),
        met_at_most(mib, HARNESS_RSS_TARGET_MIB),
    ])
}

/// A single figure's verdict against an upper bound (no interval to judge).
fn met_at_most(value: f64, target: f64) -> String {
    if value <= target { "met" } else { "not met" }.into()
}

/// The harness's share of a core while it watches N ≥ `SCALE_N` objects
/// being reconciled (after the load): the largest of those runs'.
fn harness_cpu_row(r: &Results) -> Option<Vec<String>> {
    let shares: Vec<(u64, f64)> = r
        .runs
        .iter()
        .filter(|x| x.scale >= SCALE_N)
        .filter_map(|x| {
            let s = x.summary.as_ref()?;
            Some((x.scale, s.harness_cpu.as_ref()?.after_load_core_fraction?))
        })
        .collect();
    let (scale, worst) = shares
        .iter()
        .copied()
        .reduce(|a, b| if b.1 > a.1 { b } else { a })?;
    Some(vec![
        scale.to_string(),
        format!("ctrlbench itself, after the load ({} runs)", shares.len()),
        "Scale: the harness's share of a core while it watches (summary.json harness_cpu)".into(),
        format!("≤ {HARNESS_CPU_TARGET} of a core"),
        format!("{worst:.3} (the largest)"),
        "—".into(),
        met_at_most(worst, HARNESS_CPU_TARGET),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_read_the_interval_against_the_margin_and_the_target() {
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
        let [throughput, memory, _] = [&GOALS[0], &GOALS[1], &GOALS[2]];
        assert_eq!(
            verdict(&r(1.3, 1.2, 1.4), throughput, throughput.target, 0.05),
            "Rust higher (better); target met"
        );
        assert_eq!(
            verdict(&r(1.03, 1.01, 1.04), throughput, throughput.target, 0.05),
            "equivalent within ±5 %; target not met"
        );
        assert_eq!(
            verdict(&r(0.7, 0.6, 0.8), memory, memory.target, 0.05),
            "Rust lower (better); target not met"
        );
        let one = Ratio {
            ratio: 0.4,
            interval: None,
            method: Method::Paired { pairs: 1 },
        };
        assert_eq!(
            verdict(&one, memory, memory.target, 0.05),
            "undecided (one pair); target undecided"
        );
    }

    #[test]
    fn flagged_runs_stay_out_of_the_loader_row_unless_all_are() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/results-perf-small");
        let mut r = Results::load(std::path::Path::new(dir)).unwrap();
        let probe = r.manifest.probe.clone().unwrap();
        let label = |r: &Results| loader_row(r, &probe).unwrap()[1].clone();
        // The fixture: two after-load variants, two repeats each.
        assert_eq!(label(&r), "loader alone (4 after-load runs)");
        let busy = |run: &mut crate::load::Run| {
            run.summary.as_mut().unwrap().machine = Some(ctrlbench_record::summary::MachineCheck {
                busy: true,
                ..Default::default()
            });
        };
        let after_load: Vec<usize> = (0..r.runs.len())
            .filter(|&i| r.runs[i].variant.ends_with("-al"))
            .collect();
        assert_eq!(after_load.len(), 4);
        busy(&mut r.runs[after_load[0]]);
        assert_eq!(label(&r), "loader alone (3 after-load runs)");
        for &i in &after_load {
            busy(&mut r.runs[i]);
        }
        assert_eq!(label(&r), "loader alone (4 after-load runs)");
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
        assert_eq!(probe_cell(&used), "150.0 [100.0–200.0]/s");
        // One untagged probe (older manifests) serves every run.
        let old = [row(1, None, 100.0)];
        let (pairs, used, _) = to_probe(&runs, &old, 1, |p| Some(p.status_patch_per_s));
        assert_eq!(pairs, vec![(100.0, 50.0); 3]);
        assert_eq!(probe_cell(&used), "100.0/s");
        // Two runs of one repeat share its probe: one pair, their geometric mean.
        let two = [(50, 1, 50.0), (50, 1, 200.0)];
        let (pairs, _, _) = to_probe(&two, &tagged, 1, |p| Some(p.status_patch_per_s));
        assert_eq!(pairs.len(), 1);
        assert_eq!(pairs[0].0, 100.0);
        assert!((pairs[0].1 - 100.0).abs() < 1e-9, "{pairs:?}");
        assert!(probe_at(&tagged, 4, 50, 1).is_none());
    }
}
