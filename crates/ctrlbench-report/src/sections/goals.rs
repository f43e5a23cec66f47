//! The goals section: only in a report whose manifest declares goals (an
//! experiment file's `[[goal]]`, the lab's files on our own controllers),
//! never in a user's. For every pair `<b>-X` / `<a>-X` a goal speaks of,
//! B/A on its figure paired over the repeats with its 95 % interval, the
//! verdict against the margin (B higher or lower, better or worse;
//! equivalent; undecided) and whether the goal's bound is met, not met or
//! undecided; then, when the run recorded `ctrlbench probe`'s figures, the
//! Rust controller's status patch rate at one worker (first writes/s, timed
//! by our watch: one patch per object in these presets) against the probe's
//! one-writer patch rate, and the loader's create rate alone (start =
//! "after-load") against the probe's create rate at the loader's
//! concurrency, both paired by repeat; at N ≥ 100 000 the harness's own
//! peak RSS and share of a core. The goals' pairs and the probe matching
//! are computed below the sections (`crate::goals`), since the report's
//! questions ask the same; this file only lays them out.

use ctrlbench_record::manifest::ProbeRow;

use super::Section;
use crate::context::ReportCtx;
use crate::figures::{Group, interleaved};
use crate::goals::{
    GoalPair, HARNESS_CPU_TARGET, HARNESS_RSS_TARGET_MIB, LOADER_TARGET, OVERHEAD_TARGET,
    ProbeFigure, SCALE_N, against_probe, concurrency, declared, loader_alone, overhead_groups,
    target, to_probe,
};
use crate::interval::Ratio;
use crate::load::Results;
use crate::metrics::Metric;
use crate::stats::{fmt_stat, stat};
use crate::verdict::{named, percent};
use crate::{Block, Table};

pub struct PerformanceGoals;

/// "rust higher (better); target met": the verdict on B/A against the
/// margin, named by B's prefix (a goal's figure has the better side its
/// bound says), then the bound's.
pub fn verdict(r: &Ratio, side: &str, at_least: bool, bound: f64, margin: f64) -> String {
    format!(
        "{}; {}",
        named(r, margin, side, Some(at_least)),
        target(r, at_least, bound)
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
        // The probe's figures, when the run recorded them: `probe = true`
        // asks for them whether or not the file declares goals; the
        // harness's own targets come only with goals.
        let probe = r.manifest.probe.as_deref().unwrap_or_default();
        let goals = !r.manifest.goals.is_empty();
        if !goals && probe.is_empty() {
            return;
        }
        let rows = if goals {
            pair_rows(&declared(&r.manifest.goals, &ctx.groups), ctx.margin)
        } else {
            Vec::new()
        };
        let mut probe_rows = overhead_rows(&ctx.groups, probe);
        probe_rows.extend(loader_row(r, probe));
        if goals {
            probe_rows.extend(harness_row(r));
            probe_rows.extend(harness_cpu_row(r));
        }
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
                    "B",
                    "A",
                    "B/A [95 %]",
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

const HEADING: &str = "Goals: the experiment's targets; overhead against the probe";

/// The section's reading guide; `margin` is the equivalence margin.
fn intro(margin: f64) -> String {
    format!(
        "The targets this experiment's file declares ([[goal]]): for every pair B / A of a \
         scale a goal names (variants <b>-X and <a>-X), B/A on the goal's figure paired over \
         the repeats (each repeat's B run against the A run beside it), the geometric mean of \
         the per-repeat ratios with a 95 % t interval. The verdict reads the interval against \
         the margin (±{m}): B higher or lower, and whether that is better or worse (the side \
         the bound favours), only when the whole interval lies beyond it; equivalent when it \
         lies within it; otherwise undecided, with the smallest difference this many repeats \
         can detect. The target is met when the whole interval is on its side, not met when \
         wholly on the other, undecided when it straddles it; one pair gives no interval. \
         {PROBE}",
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

/// Per goal and pair: the B and A cells, B/A with its interval, the verdict.
fn pair_rows(pairs: &[GoalPair], margin: f64) -> Vec<Vec<String>> {
    pairs
        .iter()
        .map(|p| {
            let (g, m) = (p.goal, p.metric);
            let ratio = interleaved(p.a, p.b, |r| r.get(m));
            vec![
                p.b.scale.to_string(),
                format!("{} / {}", p.b.variant, p.a.variant),
                m.label().to_string(),
                format!("{} {}", if g.at_least { "≥" } else { "≤" }, g.bound),
                p.b.cell(m),
                p.a.cell(m),
                ratio.map(|x| x.cell()).unwrap_or("—".into()),
                ratio
                    .map(|x| verdict(&x, &g.b, g.at_least, g.bound, margin))
                    .unwrap_or("—".into()),
            ]
        })
        .collect()
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
        assert_eq!(
            verdict(&r(1.3, 1.2, 1.4), "rust", true, 1.1, 0.05),
            "rust higher (better); target met"
        );
        assert_eq!(
            verdict(&r(1.03, 1.01, 1.04), "rust", true, 1.1, 0.05),
            "equivalent within ±5 %; target not met"
        );
        assert_eq!(
            verdict(&r(0.7, 0.6, 0.8), "rust", false, 0.5, 0.05),
            "rust lower (better); target not met"
        );
        let one = Ratio {
            ratio: 0.4,
            interval: None,
            method: Method::Paired { pairs: 1 },
        };
        assert_eq!(
            verdict(&one, "rust", false, 0.5, 0.05),
            "undecided (one pair); target undecided"
        );
    }

    /// The section only where the manifest declares goals, one row per goal
    /// and pair it names.
    #[test]
    fn only_declared_goals_make_the_section() {
        use ctrlbench_record::manifest::Goal;
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/results-perf-small");
        let render = |goals: Vec<Goal>| {
            let mut ctx =
                ReportCtx::load(std::path::Path::new(dir), &crate::Options::default()).unwrap();
            ctx.results.manifest.goals = goals;
            let mut out = Vec::new();
            PerformanceGoals.render(&ctx, &mut out);
            out
        };
        // Without goals: no goal rows and none of the harness's own
        // targets, but the probe's figures this fixture's run asked for.
        let none = render(Vec::new());
        let tables: Vec<&Table> = none
            .iter()
            .filter_map(|b| match b {
                Block::Table(t) => Some(t),
                _ => None,
            })
            .collect();
        assert!(tables.iter().all(|t| t.head[1] != "pair"));
        let cells: Vec<&String> = tables
            .iter()
            .flat_map(|t| t.rows.iter().flatten())
            .collect();
        assert!(cells.iter().any(|c| c.starts_with("status-patch overhead")));
        assert!(!cells.iter().any(|c| c.starts_with("ctrlbench itself")));
        let goal = |figure: &str, from_scale| Goal {
            figure: figure.into(),
            a: "go".into(),
            b: "rust".into(),
            at_least: false,
            bound: 0.5,
            from_scale,
        };
        let out = render(vec![goal("peak RSS", None), goal("CPU", Some(1000))]);
        let rows: Vec<&Vec<String>> = out
            .iter()
            .filter_map(|b| match b {
                Block::Table(t) if t.head[1] == "pair" => Some(&t.rows),
                _ => None,
            })
            .flatten()
            .collect();
        // The fixture's two rust-X / go-X pairs at N=30; the CPU goal starts
        // above its one scale.
        let pairs: Vec<(&str, &str)> = rows
            .iter()
            .map(|r| (r[1].as_str(), r[2].as_str()))
            .collect();
        assert_eq!(
            pairs,
            [
                ("rust-good-single-patch / go-good-single-patch", "peak RSS"),
                (
                    "rust-good-single-patch-al / go-good-single-patch-al",
                    "peak RSS"
                ),
            ]
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
