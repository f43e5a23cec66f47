//! The machine as a measurement: what every process but ours (the plane,
//! the controllers, ctrlbench) used of the CPU during the run, the steal,
//! the load average and the governor, into each summary's `machine`. On a
//! local plane a run whose others used more than the experiment's
//! `busy_threshold` of a core is flagged busy (the report keeps it out of
//! medians and pairs); on an existing cluster the cluster's own processes
//! are not ours to tell apart, so the figures are kept and nothing is flagged.

use anyhow::Result;
use ctrlbench_record::Summary;
use ctrlbench_record::summary::MachineCheck;
use futures::future::BoxFuture;

use super::{Measurement, Run};
use crate::machine::{self, Reading};

#[derive(Default)]
pub struct Machine {
    start: Option<Reading>,
    check: Option<MachineCheck>,
}

impl Machine {
    pub fn new() -> Machine {
        Machine::default()
    }
}

impl Measurement for Machine {
    fn start<'a>(&'a mut self, _run: &'a mut Run<'_>) -> BoxFuture<'a, Result<()>> {
        self.start = Reading::now();
        Box::pin(async { Ok(()) })
    }

    fn after_window<'a>(&'a mut self, run: &'a mut Run<'_>) -> BoxFuture<'a, Result<()>> {
        let threshold = run.ctx.exp.busy_threshold;
        let local = run.ctx.cluster.plane.is_some();
        self.check = self.start.as_ref().zip(Reading::now()).map(|(a, b)| {
            let u = b.since(a);
            MachineCheck {
                other_cpu_s: u.other_cpu_s,
                other_core_fraction: u.core_fraction(),
                load_avg_1m: machine::load_avg_1m().unwrap_or(0.0),
                steal_s: u.steal_s,
                governor: machine::governor(),
                threshold_core_fraction: threshold,
                busy: local && u.core_fraction() > threshold,
            }
        });
        if let Some(c) = self.check.as_ref().filter(|c| c.busy) {
            eprintln!(
                "warning: other processes used {:.0} % of a core during this run (threshold {:.0} %): flagged \"machine busy\"",
                c.other_core_fraction * 100.0,
                threshold * 100.0
            );
        }
        Box::pin(async { Ok(()) })
    }

    fn finish<'a>(
        &'a mut self,
        _run: &'a mut Run<'_>,
        summaries: &'a mut [Summary],
    ) -> BoxFuture<'a, Result<()>> {
        for s in summaries.iter_mut() {
            s.machine = self.check.clone();
        }
        Box::pin(async { Ok(()) })
    }
}
