//! "Latency percentiles": per scale × variant, the reconcile latency p50,
//! p90 and p99 (from the controller's histogram buckets) and the
//! time-to-Ready p50 and p99 (from our own watch, per object).

use super::{Section, metric_table};
use crate::Block;
use crate::context::ReportCtx;
use crate::metrics::Metric;

pub struct Percentiles;

impl Section for Percentiles {
    fn render(&self, ctx: &ReportCtx, out: &mut Vec<Block>) {
        out.push(Block::Heading(2, "Latency percentiles".into()));
        out.push(metric_table(
            &ctx.groups,
            &[
                Metric::P50,
                Metric::P90,
                Metric::P99,
                Metric::TtrP50,
                Metric::TtrP99,
            ],
        ));
    }
}
