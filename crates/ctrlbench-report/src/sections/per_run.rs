//! "Per-run detail": one row per run, its status (ok, or why it is flagged)
//! and its own figures before any median.

use super::Section;
use crate::context::ReportCtx;
use crate::metrics::Metric;
use crate::stats::fmt_duration;
use crate::{Block, Table};

pub struct PerRun;

impl Section for PerRun {
    fn render(&self, ctx: &ReportCtx, out: &mut Vec<Block>) {
        let opt = |m: Metric, v: Option<f64>| v.map(|x| m.fmt(x)).unwrap_or("—".into());
        let rows = ctx
            .groups
            .iter()
            .flat_map(|g| g.runs.iter())
            .map(|f| {
                let mut row = vec![
                    f.label(),
                    if f.problems.is_empty() {
                        "ok".into()
                    } else {
                        format!("⚠ {}", f.problems.join("; "))
                    },
                    format!("{:.0}/{}", f.get(Metric::Ready).unwrap_or(0.0), f.scale),
                    match f.get(Metric::Convergence) {
                        Some(c) => fmt_duration(c),
                        None => "not converged".into(),
                    },
                ];
                row.extend(
                    [
                        Metric::Success,
                        Metric::Errors,
                        Metric::P99,
                        Metric::ReadyPerS,
                        Metric::WritesPerS,
                    ]
                    .map(|m| opt(m, f.get(m))),
                );
                row
            })
            .collect();
        out.push(Block::Heading(2, "Per-run detail".into()));
        // Shorter headings than the group tables': a row is one run.
        out.push(Block::Table(Table {
            head: [
                "run",
                "status",
                "Ready/N",
                "convergence",
                "reconciles ok",
                "errors",
                "reconcile p99",
                "Ready/s",
                "writes/s",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        }));
    }
}
