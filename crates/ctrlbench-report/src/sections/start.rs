//! "Controller start", for results that record it: when the controller
//! started relative to the load, and the time from its start to the end of
//! its initial list, to its first write and to Ready == N, with its Ready/s,
//! queue wait and CPU per reconcile.

use super::{Section, table};
use crate::Block;
use crate::context::ReportCtx;
use crate::metrics::Metric;

pub struct ControllerStart;

const FIGURES: &[Metric] = &[
    Metric::StartInitialList,
    Metric::StartFirstWrite,
    Metric::StartAllReady,
    Metric::ReadyPerS,
    Metric::QueueWait,
    Metric::CpuPerReconcile,
];

impl Section for ControllerStart {
    fn render(&self, ctx: &ReportCtx, out: &mut Vec<Block>) {
        let groups = &ctx.groups;
        if !groups
            .iter()
            .any(|g| g.stat(Metric::StartAllReady).is_some())
        {
            return;
        }
        out.push(Block::Heading(2, "Controller start".into()));
        out.push(Block::Para(
            "From the controller process's start (summary.json's start): the end of its \
             initial list (its own ctrlbench_initial_list_seconds gauge: the watch cache first \
             held the whole list; our Rust and Go controllers export it), the first object \
             our own watch saw written by it (its first reconcile's write), and the last of N \
             first seen Ready. start = \"after-load\" starts the controller once all N objects \
             exist (its Ready/s is counted from its start); \"before-load\" before the loader \
             (these times then include the load). Queue wait: the mean time a key waited in the \
             work queue before its reconcile began (workqueue_queue_duration_seconds); CPU per \
             reconcile: the controller's CPU seconds over its reconciles (deltas)."
                .into(),
        ));
        let mut head = vec!["start"];
        head.extend(FIGURES.iter().map(|m| m.column()));
        out.push(table(groups, &head, |g| {
            let mode = g
                .runs
                .iter()
                .find_map(|r| r.start_mode)
                .map(|m| m.as_str().to_string())
                .unwrap_or("—".into());
            let mut v = vec![mode];
            v.extend(FIGURES.iter().map(|m| g.cell(*m)));
            v
        }));
    }
}
