//! "Throughput and cost": per scale × variant, Ready/s, the time to 50, 90
//! and 100 % Ready, the controller's writes/s, conflicts, client throttle
//! wait, CPU and peak memory.

use super::{Section, metric_table};
use crate::Block;
use crate::context::ReportCtx;
use crate::metrics::Metric;

pub struct Throughput;

impl Section for Throughput {
    fn render(&self, ctx: &ReportCtx, out: &mut Vec<Block>) {
        out.push(Block::Heading(2, "Throughput and cost".into()));
        out.push(metric_table(
            &ctx.groups,
            &[
                Metric::ReadyPerS,
                Metric::T50,
                Metric::T90,
                Metric::T100,
                Metric::WritesPerS,
                Metric::Conflicts,
                Metric::ThrottleWait,
                Metric::Cpu,
                Metric::PeakRss,
            ],
        ));
    }
}
