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
//! The goals, their pairs and the probe matching are computed below the
//! sections (`crate::goals`), since the report's questions ask the same;
//! this file only lays them out.

use ctrlbench_record::manifest::ProbeRow;

use super::Section;
use crate::context::ReportCtx;
use crate::figures::{Group, interleaved};
use crate::goals::{
    GOALS, Goal, HARNESS_CPU_TARGET, HARNESS_RSS_TARGET_MIB, LOADER_TARGET, OVERHEAD_TARGET,
    ProbeFigure, SCALE_N, against_probe, concurrency, loader_alone, overhead_groups, pairs, target,
    to_probe,
};
use crate::interval::Ratio;
use crate::load::Results;
use crate::metrics::Metric;
use crate::stats::{fmt_stat, stat};
use crate::verdict::{named, percent};
use crate::{Block, Table};

pub struct PerformanceGoals;

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

/// "368.5/s", or "368.5 [340.2–384.0]/s" over several repeats' probes.
fn probe_cell(v: &[f64]) -> String {
    stat(v.to_vec())
        .map(|s| fmt_stat(&s, |x| format!("{x:.1}/s")))
        .unwrap_or("—".into())
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

/// The status-patch overhead against the probe, on the groups
/// `overhead_groups` picks: the goal row, then the same against the probe's
/// pass with one watch open, the watch every controller holds (context,
/// not the goal).
fn overhead_rows(groups: &[Group], probe: &[ProbeRow]) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for g in overhead_groups(groups) {
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

/// The loader alone (`loader_alone`'s runs) against the probe's create
/// rate at the loader's concurrency.
fn loader_row(r: &Results, probe: &[ProbeRow]) -> Option<Vec<String>> {
    let conc = concurrency(r);
    let loads = loader_alone(r);
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

    /// The probe figures a row used: their median and range over the repeats.
    #[test]
    fn probe_cells_show_the_repeats_probes() {
        assert_eq!(probe_cell(&[100.0, 200.0]), "150.0 [100.0–200.0]/s");
        assert_eq!(probe_cell(&[100.0]), "100.0/s");
    }
}
