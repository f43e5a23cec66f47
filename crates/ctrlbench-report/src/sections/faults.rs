//! "Faults": per fault of every run (faults.csv), when it happened and what
//! it hit, how the controller came back (crate::faults::recovery), and the
//! objects lost: created but not Ready when the run ended, counted only
//! against a fault-free run of the same controller (same implementation,
//! settings and scale; a variant with `faults = false`) that reached N —
//! without one, a slow controller would look lossy. Where replicas elect a
//! leader, "new leader after" is the first change of the Lease's holder
//! after the fault (summary.json's leader_changes, from our own watch).

use super::Section;
use crate::context::ReportCtx;
use crate::faults::recovery;
use crate::load::{Results, Run};
use crate::{Block, Table};

pub struct Faults;

impl Section for Faults {
    fn render(&self, ctx: &ReportCtx, out: &mut Vec<Block>) {
        let elected = ctx.results.runs.iter().any(|r| {
            r.summary
                .as_ref()
                .is_some_and(|s| !s.leader_changes.is_empty())
        });
        let rows = rows(&ctx.results, elected);
        if rows.is_empty() {
            return;
        }
        out.push(Block::Heading(2, "Faults".into()));
        out.push(Block::Para(
            "Per fault (faults.csv), seconds after it fired: until the controller's reconcile \
             count grew again, until the next object turned Ready (— : none did after it), until \
             the queue was empty again; lost = objects created but not Ready when the run ended, \
             counted when a fault-free run of the same controller (same implementation, settings \
             and scale: a variant with `faults = false`) reached N."
                .into(),
        ));
        out.push(Block::Table(Table {
            head: ["run", "at s", "fault", "pid", "outcome"]
                .into_iter()
                .chain(elected.then_some("new leader after s"))
                .chain([
                    "reconciles resume s",
                    "Ready growth resumes s",
                    "queue drained s",
                    "lost",
                ])
                .map(|s| s.to_string())
                .collect(),
            rows,
        }));
    }
}

/// A row per fault of every run.
fn rows(results: &Results, elected: bool) -> Vec<Vec<String>> {
    let secs = |v: Option<f64>| v.map(|x| format!("{x:.1}")).unwrap_or_else(|| "—".into());
    let mut rows = Vec::new();
    for run in &results.runs {
        let origin = run.origin();
        for f in &run.faults {
            let rec = recovery(run, origin + f.actual_s);
            let mut row = vec![
                run.dir.label(),
                format!("{:.1} (planned {:.1})", f.actual_s, f.planned_s),
                format!(
                    "{} {}{}",
                    f.action,
                    f.resolved,
                    if f.duration_s > 0.0 {
                        format!(" for {:.1} s", f.duration_s)
                    } else {
                        String::new()
                    }
                ),
                f.pid.to_string(),
                f.outcome.clone(),
            ];
            if elected {
                row.push(secs(new_leader_after(run, origin + f.actual_s)));
            }
            row.extend([
                secs(rec.reconciles_resume),
                secs(rec.ready_resumes),
                secs(rec.queue_drained),
                lost_cell(run, rec.not_ready, results),
            ]);
            rows.push(row);
        }
    }
    rows
}

/// Seconds from `t` (Unix seconds) until the Lease had a new holder.
fn new_leader_after(run: &Run, t: f64) -> Option<f64> {
    run.summary
        .as_ref()?
        .leader_changes
        .iter()
        .map(|c| c.unix_s)
        .find(|u| *u > t)
        .map(|u| u - t)
}

/// The fault-free runs of the same controller as `run`: no faults.csv rows,
/// same implementation, settings and scale.
fn baselines<'a>(run: &Run, results: &'a Results) -> Vec<&'a Run> {
    let key = |r: &Run| {
        r.summary
            .as_ref()
            .map(|s| (s.implementation.clone(), s.settings.clone(), s.scale))
    };
    let Some(k) = key(run) else {
        return Vec::new();
    };
    results
        .runs
        .iter()
        .filter(|b| b.faults.is_empty() && key(b).as_ref() == Some(&k))
        .collect()
}

/// The lost cell: created-but-not-Ready when every fault-free run of the
/// same controller reached N, otherwise why it cannot be said.
fn lost_cell(run: &Run, not_ready: usize, results: &Results) -> String {
    let base = baselines(run, results);
    if base.is_empty() {
        return format!("— (no fault-free run; {not_ready} not Ready)");
    }
    let short: Vec<String> = base
        .iter()
        .filter_map(|b| b.summary.as_ref())
        .filter(|s| s.ready < s.scale)
        .map(|s| format!("{}/{}", s.ready, s.scale))
        .collect();
    if short.is_empty() {
        not_ready.to_string()
    } else {
        format!(
            "— (fault-free run reached only {}; {not_ready} not Ready)",
            short.join(", ")
        )
    }
}
