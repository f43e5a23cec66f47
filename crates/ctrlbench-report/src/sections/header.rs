//! The report's title and where its numbers come from: the results
//! directory, when it ran, the cluster and machine, the schedule, window and
//! repeats, the tool's version, and the workload when not the built-in one.

use super::Section;
use crate::Block;
use crate::context::ReportCtx;

pub struct Header;

impl Section for Header {
    fn render(&self, ctx: &ReportCtx, out: &mut Vec<Block>) {
        let r = &ctx.results;
        let m = &r.manifest;
        // Missing (empty) manifest fields show as "?".
        let s = |v: &str| {
            if v.is_empty() {
                "?".to_string()
            } else {
                v.to_string()
            }
        };
        let first = r.runs.iter().find_map(|x| x.summary.as_ref());
        let schedule = first.map(|s| s.schedule.to_string()).unwrap_or("?".into());
        let window = first.map(|s| s.window_s);
        let repeats = r.runs.iter().map(|x| x.repeat).max().unwrap_or(0);
        let background = match first.map_or(0, |s| s.background_objects) {
            0 => String::new(),
            k => format!(
                " {k} background widgets in a namespace of their own, created before any controller started."
            ),
        };
        let name = r
            .dir
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        out.push(Block::Heading(
            1,
            format!("ctrlbench report: {}", r.experiment()),
        ));
        out.push(Block::Para(format!(
            "Results {name}, started {} and finished {}. Kubernetes {}, etcd {}, {}. \
             Machine: {} cores, {:.1} GiB. Schedule {schedule}, window {}, {repeats} repeat(s), \
             {} run(s). ctrlbench {} (git {}).{background}",
            s(&m.started_at),
            m.finished_at.as_deref().unwrap_or("never"),
            s(&m.kubernetes_version),
            s(&m.etcd_version),
            if m.local_plane && m.controller_manager {
                "local control plane with kube-controller-manager (namespace and garbage-collector controllers)"
            } else if m.local_plane {
                "local control plane"
            } else {
                "existing cluster"
            },
            m.machine.cores,
            m.machine.memory_bytes as f64 / f64::from(1u32 << 30),
            window.map(|w| format!("{w} s")).unwrap_or("?".into()),
            r.runs.len(),
            s(&m.tool_version),
            m.git_revision
                .as_deref()
                .map(|g| &g[..g.len().min(12)])
                .unwrap_or("unknown"),
        )));
        if let Some(w) = first.and_then(|s| s.workload.as_deref()) {
            out.push(Block::Para(format!(
                "Workload: {w}. \"Ready\" below means this rule held, as our own watch saw it."
            )));
        }
    }
}
