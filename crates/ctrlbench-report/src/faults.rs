//! Faults in the report: per fault of every run (faults.csv), when it
//! happened and what it hit, then how the controller came back — seconds from
//! the fault until reconciles resumed (the first scrape whose reconcile count
//! grew, a restarted controller's reset counting from 0), until Ready growth
//! resumed (the next object to turn Ready), until the queue drained (the
//! first scrape after reconciles resumed with depth 0), and the objects lost:
//! created but not Ready when the run ended, counted only against a
//! fault-free run of the same controller (same implementation, settings and
//! scale; a variant with `faults = false`) that reached N — without one, a
//! slow controller would look lossy.

use crate::load::{Results, Run};
use crate::{Block, Table};

/// Recovery figures of one fault, in seconds after it fired.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Recovery {
    pub reconciles_resume: Option<f64>,
    pub ready_resumes: Option<f64>,
    pub queue_drained: Option<f64>,
    /// Objects created but never Ready (the whole run's).
    pub not_ready: usize,
}

/// How the run recovered from a fault that fired at `t` (Unix seconds).
pub fn recovery(run: &Run, t: f64) -> Recovery {
    let mut r = Recovery {
        not_ready: run
            .objects
            .iter()
            .filter(|o| o.created.is_some() && o.ready.is_none())
            .count(),
        ..Recovery::default()
    };
    r.ready_resumes = run
        .objects
        .iter()
        .filter_map(|o| o.ready)
        .filter(|x| *x > t)
        .reduce(f64::min)
        .map(|x| x - t);
    if let Some(m) = &run.metrics {
        let total = |row| {
            Some(
                m.get(row, "reconcile_success_total")?
                    + m.get(row, "reconcile_error_total")?
                    + m.get(row, "reconcile_requeue_total").unwrap_or(0.0),
            )
        };
        let mut prev: Option<f64> = None;
        for row in m.good() {
            let Some(v) = total(row) else { continue };
            if row.t > t && r.reconciles_resume.is_none() {
                // Growth, or a restarted counter that already counts again.
                let grew = match prev {
                    Some(p) => v > p || (v < p && v > 0.0),
                    None => v > 0.0,
                };
                if grew {
                    r.reconciles_resume = Some(row.t - t);
                }
            }
            if r.reconciles_resume.is_some()
                && r.queue_drained.is_none()
                && m.get(row, "queue_depth") == Some(0.0)
            {
                r.queue_drained = Some(row.t - t);
            }
            prev = Some(v);
        }
    }
    r
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

/// Slack after a fault's planned downtime for the process to answer again.
const RECOVERY_SLACK_S: f64 = 10.0;

/// Whether a failed scrape of `source` (controller, apiserver, etcd) at `t`
/// falls while a fault had that process (or, for the apiserver and etcd, any
/// plane process) down: planned, so it does not flag the run.
pub fn excused(run: &Run, source: &str, t: f64) -> bool {
    let origin = run.origin();
    run.faults.iter().any(|f| {
        let on_controller = f.resolved == "controller" || f.target == "controller";
        let hits = if source == "controller" {
            on_controller
        } else {
            !on_controller
        };
        let start = origin + f.actual_s;
        let end = if f.action == "kill" {
            f64::INFINITY
        } else {
            start + f.duration_s + RECOVERY_SLACK_S
        };
        hits && t >= start - 0.5 && t <= end
    })
}

/// The "Faults" section, or nothing when no run had faults.
pub fn section(results: &Results) -> Vec<Block> {
    let secs = |v: Option<f64>| v.map(|x| format!("{x:.1}")).unwrap_or_else(|| "—".into());
    let mut rows = Vec::new();
    for run in &results.runs {
        let origin = run.origin();
        for f in &run.faults {
            let rec = recovery(run, origin + f.actual_s);
            rows.push(vec![
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
                secs(rec.reconciles_resume),
                secs(rec.ready_resumes),
                secs(rec.queue_drained),
                lost_cell(run, rec.not_ready, results),
            ]);
        }
    }
    if rows.is_empty() {
        return Vec::new();
    }
    vec![
        Block::Heading(2, "Faults".into()),
        Block::Para(
            "Per fault (faults.csv), seconds after it fired: until the controller's reconcile count grew again, until the next object turned Ready (— : none did after it), until the queue was empty again; lost = objects created but not Ready when the run ended, counted when a fault-free run of the same controller (same implementation, settings and scale: a variant with `faults = false`) reached N.".into(),
        ),
        Block::Table(Table {
            head: [
                "run",
                "at s",
                "fault",
                "pid",
                "outcome",
                "reconciles resume s",
                "Ready growth resumes s",
                "queue drained s",
                "lost",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect(),
            rows,
        }),
    ]
}
