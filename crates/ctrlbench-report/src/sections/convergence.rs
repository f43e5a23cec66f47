//! "Convergence and reconciles": per scale × variant, Ready and the objects
//! written out of N, when Ready reached N, the reconciles (ok, error and
//! requeue, which add up to every reconcile) and their mean time; then, for each variant that wrote to fewer than N objects, why its
//! queue setting lets that happen.

use ctrlbench_record::summary::Queue;

use super::{Section, table};
use crate::Block;
use crate::context::ReportCtx;
use crate::figures::Group;
use crate::metrics::Metric;
use crate::stats::{fmt_count, fmt_stat};

pub struct Convergence;

impl Section for Convergence {
    fn render(&self, ctx: &ReportCtx, out: &mut Vec<Block>) {
        out.push(Block::Heading(2, "Convergence and reconciles".into()));
        out.push(table(
            &ctx.groups,
            &[
                Metric::Ready.column(),
                Metric::Coverage.column(),
                Metric::Convergence.column(),
                "reconciles ok / error / requeue",
                Metric::Retries.column(),
                Metric::MeanLatency.column(),
            ],
            |g| {
                vec![
                    of_n(g, Metric::Ready),
                    of_n(g, Metric::Coverage),
                    g.convergence_cell(),
                    format!(
                        "{} / {} / {}",
                        g.cell(Metric::Success),
                        g.cell(Metric::Errors),
                        g.cell(Metric::Requeues)
                    ),
                    g.cell(Metric::Retries),
                    g.cell(Metric::MeanLatency),
                ]
            },
        ));
        let notes = coverage_notes(&ctx.groups);
        if !notes.is_empty() {
            out.push(Block::List(notes));
        }
    }
}

/// "18/20": a count of objects out of N.
fn of_n(g: &Group, m: Metric) -> String {
    match g.stat(m) {
        Some(s) => format!("{}/{}", fmt_stat(&s, fmt_count), g.scale),
        None => "—".into(),
    }
}

/// Why a variant wrote to fewer than N objects, from its queue setting.
fn coverage_notes(groups: &[Group]) -> Vec<String> {
    groups
        .iter()
        .filter_map(|g| {
            let s = g.stat(Metric::Coverage)?;
            if s.median >= g.scale as f64 {
                return None;
            }
            let queue = g.settings().and_then(|(_, s)| s.queue);
            let exited = g.runs.iter().any(|r| r.exited_early);
            let why = match queue.map(Queue::as_str) {
                _ if exited => {
                    "Its controller exited during the window (see controller.log): the queue \
                     order had no part in it."
                }
                Some("kube") => {
                    "Its queue is kube-runtime's scheduler (queue = \"kube\"): when every worker is \
                     busy, due keys wait in a hash set and a freed worker takes one in hash order, so \
                     a key that re-triggers itself (a looping preset) is served again before keys \
                     never processed. queue = \"fifo\" (client-go's order) serves keys in arrival \
                     order; compare the two to separate the queue from the pattern."
                }
                Some("fifo") => {
                    "Its queue is FIFO (client-go's order), so the others were still waiting \
                     behind earlier keys or failing when the window ended: see retries, errors and \
                     the client throttle wait."
                }
                _ => "The controller did not report its queue order.",
            };
            Some(format!(
                "N={} {}: the controller wrote to {} of {} objects. {why}",
                g.scale,
                g.variant,
                fmt_stat(&s, fmt_count),
                g.scale
            ))
        })
        .collect()
}
