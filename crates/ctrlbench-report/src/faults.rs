//! What a run's faults (faults.csv) mean for its figures: how the controller
//! came back from each — seconds from the fault until reconciles resumed (the
//! first scrape whose reconcile count grew, a restarted controller's reset
//! counting from 0), until Ready growth resumed (the next object to turn
//! Ready), until the queue drained (the first scrape after reconciles resumed
//! with depth 0) — and which failed scrapes a fault explains, so they do not
//! flag the run. The report's table is sections/faults.rs.

use crate::load::Run;

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
