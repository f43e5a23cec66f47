//! "Where the reconcile time goes": per scale × variant, the mean reconcile
//! split into simulated work (inferred from the configuration), client
//! rate-limiter wait and API write time (both measured) and the rest, then
//! one sentence per group naming the largest part. The split itself is
//! computed in crate::attribution.

use super::{Section, row_head};
use crate::attribution::{self, Attribution};
use crate::context::ReportCtx;
use crate::figures::Group;
use crate::stats::fmt_duration;
use crate::{Block, Table};

pub struct ReconcileTime;

impl Section for ReconcileTime {
    fn render(&self, ctx: &ReportCtx, out: &mut Vec<Block>) {
        let groups = &ctx.groups;
        let parts: Vec<Attribution> = groups
            .iter()
            .map(|g| attribution::median(g.used().iter().map(|r| &r.attribution)))
            .collect();
        let rows = groups.iter().zip(&parts).map(|(g, a)| row(g, a)).collect();
        out.push(Block::Heading(2, "Where the reconcile time goes".into()));
        let kind = groups
            .iter()
            .find_map(crate::figures::Group::kind)
            .unwrap_or("widget");
        out.push(Block::Para(format!(
            "Mean reconcile time split into: simulated work — INFERRED from the variant's \
             configuration (the recorded work_ms setting), not measured, and only in \
             ctrlbench's own controllers (a user's controller has none: its own work is in the \
             rest); client rate-limiter wait — MEASURED by the controller (throttle wait delta / \
             reconciles); API write time — MEASURED: where the controller exports client-go's \
             request latency (rest_client_request_duration_seconds), the time its own client \
             spent in write requests per reconcile, marked \"own client\" — client-go starts \
             that clock before its rate limiter, so the writes' throttle wait, already in the \
             rate-limiter column, is taken out of it (the Rust controller starts its clock after \
             its limiter); \
             else its writes per reconcile (its client counter) × the apiserver's mean {kind} \
             update latency (PUT/PATCH/APPLY, apiserver.csv deltas; cluster-wide when variants \
             share the apiserver); \
             and the rest (cache reads, client overhead, conflict back-off, scheduling), \
             which is what remains."
        )));
        out.push(Block::Table(Table {
            head: [
                "N",
                "variant",
                "mean reconcile",
                "simulated work (inferred)",
                "rate-limiter wait (measured)",
                "API write time (measured)",
                "writes/reconcile",
                "rest",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        }));
        out.push(Block::List(
            groups
                .iter()
                .zip(&parts)
                .map(|(g, a)| attribution::sentence(&format!("N={} {}", g.scale, g.variant), a))
                .collect(),
        ));
    }
}

fn row(g: &Group, a: &Attribution) -> Vec<String> {
    let opt = |v: Option<f64>| v.map(fmt_duration).unwrap_or("—".into());
    let mut r = row_head(g);
    r.extend([
        opt(a.mean),
        if !a.simulated {
            // A user's controller: ctrlbench simulated no work in it.
            "—".to_string()
        } else {
            format!(
                "{}{}",
                fmt_duration(a.work),
                if a.work_overridden { "" } else { " (default)" }
            )
        },
        opt(a.throttle),
        match a.api {
            Some(v) if a.api_by_client => format!("{} (own client)", fmt_duration(v)),
            v => opt(v),
        },
        a.writes_per_reconcile
            .map(|w| format!("{w:.2}"))
            .unwrap_or("—".into()),
        opt(a.rest()),
    ]);
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::RunFigures;

    /// No simulated work is shown for a user's controller; ours keeps its
    /// "(default)".
    #[test]
    fn a_users_controller_shows_no_simulated_work() {
        let g = Group {
            scale: 20,
            variant: "op".into(),
            runs: vec![RunFigures::empty(20, "op", 1)],
        };
        let theirs = Attribution {
            mean: Some(0.02),
            ..Attribution::default()
        };
        assert_eq!(row(&g, &theirs)[3], "—");
        let ours = Attribution {
            simulated: true,
            work: 0.01,
            ..theirs
        };
        assert_eq!(row(&g, &ours)[3], "10.0 ms (default)");
    }
}
