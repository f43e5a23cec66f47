//! "Phases after the create phase" (summary.json `phases`, phases.csv; each
//! run's figures come from `figures::phase_figures`): per scale × variant ×
//! phase, how many steps completed (objects ready again after a patch, or
//! gone after a delete), the per-object time p50 and p99 (a step that never
//! completed counts as +∞, so a percentile that reaches one reads
//! "> phase"), and what the phase cost — the controller's requests/s,
//! reconciles/s (every result) and CPU over the phase's span from its own
//! counters, and the apiserver's requests/s from all callers — then a
//! warning for each run whose phase did not complete.

use ctrlbench_record::phases::PhaseSummary;

use super::Section;
use crate::context::ReportCtx;
use crate::figures::{Group, PhaseFigures};
use crate::stats::{fmt_duration, fmt_stat, stat};
use crate::{Block, Table};

pub struct Phases;

impl Section for Phases {
    fn render(&self, ctx: &ReportCtx, out: &mut Vec<Block>) {
        out.extend(blocks(&ctx.groups));
    }
}

fn cell(vals: Vec<f64>, f: impl Fn(f64) -> String) -> String {
    stat(vals).map_or("—".into(), |s| fmt_stat(&s, f))
}

fn time(v: f64) -> String {
    if v == f64::INFINITY {
        "> phase".into()
    } else {
        fmt_duration(v)
    }
}

/// The section's blocks, or none when no run had phases.
fn blocks(groups: &[Group]) -> Vec<Block> {
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    for g in groups {
        let used = g.used();
        let phases: Vec<&PhaseSummary> = used
            .iter()
            .flat_map(|r| r.phases.iter().map(|p| &p.summary))
            .fold(Vec::new(), |mut v, p| {
                if !v.iter().any(|q: &&PhaseSummary| q.phase == p.phase) {
                    v.push(p);
                }
                v
            });
        for p in phases {
            let per_run: Vec<&PhaseFigures> = used
                .iter()
                .filter_map(|r| r.phases.iter().find(|f| f.summary.phase == p.phase))
                .collect();
            let pick = |f: fn(&PhaseFigures) -> Option<f64>| -> Vec<f64> {
                per_run.iter().filter_map(|x| f(x)).collect()
            };
            let idle = p.kind == "idle";
            let done = if idle {
                "—".to_string()
            } else {
                per_run
                    .iter()
                    .map(|f| format!("{}/{}", f.summary.done, f.summary.steps))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            for r in &used {
                if let Some(f) = r.phases.iter().find(|f| f.summary.phase == p.phase)
                    && !idle
                {
                    notes.extend(unfinished(g, r.repeat, &f.summary));
                }
            }
            let rate = |v: f64| format!("{v:.1}/s");
            rows.push(vec![
                g.scale.to_string(),
                format!("{}{}", g.variant, g.marker()),
                format!("{} {}", p.phase, p.kind),
                done,
                if idle {
                    "—".into()
                } else {
                    cell(pick(|f| f.p50), time)
                },
                if idle {
                    "—".into()
                } else {
                    cell(pick(|f| f.p99), time)
                },
                cell(pick(|f| f.seconds), fmt_duration),
                cell(pick(|f| f.controller_requests_per_s), rate),
                cell(pick(|f| f.reconciles_per_s), rate),
                cell(pick(|f| f.controller_cores), |v| format!("{v:.3}")),
                cell(pick(|f| f.apiserver_requests_per_s), rate),
            ]);
        }
    }
    if rows.is_empty() {
        return Vec::new();
    }
    let mut out = vec![
        Block::Heading(2, "Phases after the create phase".into()),
        Block::Para(
            "Every other table covers the create phase only. Here each phase of the experiment \
             file: steps done (objects ready again after their patch — the controller acted on \
             the patched generation — or gone after their delete, finalizers included), the time \
             from each patch or delete returning to that moment (a step never completed counts \
             as beyond the phase), the phase's length, and its cost from counters over its \
             span: the controller's own requests/s, reconciles/s and CPU (cores), and the \
             apiserver's requests/s from all callers (cluster-wide)."
                .into(),
        ),
        Block::Table(Table {
            head: [
                "N",
                "variant",
                "phase",
                "done",
                "time p50",
                "time p99",
                "length",
                "controller requests/s",
                "reconciles/s",
                "controller CPU (cores)",
                "apiserver requests/s (all callers)",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        }),
    ];
    if !notes.is_empty() {
        out.push(Block::Warning(notes));
    }
    out
}

/// Why one run's phase did not complete, or None when it did.
fn unfinished(g: &Group, repeat: u32, s: &PhaseSummary) -> Option<String> {
    if s.done >= s.steps {
        return None;
    }
    let why = if s.interrupted {
        "interrupted"
    } else if s.timed_out {
        "the phase timed out"
    } else {
        "the phase ended"
    };
    let what = if s.kind == "delete" {
        "gone"
    } else {
        "ready again after its patch"
    };
    let refused = if s.errors > 0 {
        format!(", {} requests refused", s.errors)
    } else {
        String::new()
    };
    Some(format!(
        "N={} {} rep{repeat}: {} phase {} did not complete — {} of {} objects {what} ({why}{refused})",
        g.scale, g.variant, s.kind, s.phase, s.done, s.steps
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quantile::percentile;
    use ctrlbench_record::phases::PhaseRecord;

    #[test]
    fn unfinished_steps_are_censored() {
        // Four steps: two done after 1 s and 3 s, one sent and never done,
        // one never sent. Type-7 percentiles over [1, 3, ∞, ∞]: p50 lies
        // between 3 and ∞, so beyond the phase; over [1, 3] alone it is 2.
        let rows = [1.0, 3.0].map(|d| {
            let mut r = PhaseRecord {
                started_at: Some("2026-11-30T10:00:00Z".into()),
                ..PhaseRecord::default()
            };
            r.done_at = Some(format!("2026-11-30T10:00:0{d}Z"));
            r
        });
        let mut lat: Vec<f64> = rows.iter().map(|r| r.latency().unwrap()).collect();
        assert_eq!(percentile(&lat, 0.5), Some(2.0));
        lat.extend([f64::INFINITY, f64::INFINITY]);
        assert_eq!(percentile(&lat, 0.5), Some(f64::INFINITY));
        assert_eq!(time(f64::INFINITY), "> phase");
    }
}
