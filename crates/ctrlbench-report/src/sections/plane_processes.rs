//! "The plane's processes" (plane.csv, etcd.csv, apiserver.csv): per scale
//! × variant, the CPU seconds over the run and the peak resident memory of
//! each process of the local plane — etcd and kube-apiserver from their
//! metrics pages, kube-controller-manager, kube-scheduler and kwok from
//! /proc — so that what fake nodes and the plane's own controllers cost
//! stands beside the rest. Shown only when some run recorded plane.csv.

use super::Section;
use crate::context::ReportCtx;
use crate::metrics::Metric;
use crate::stats::{fmt_stat, stat};
use crate::{Block, Table};

pub struct PlaneProcesses;

impl Section for PlaneProcesses {
    fn render(&self, ctx: &ReportCtx, out: &mut Vec<Block>) {
        let mut rows = Vec::new();
        for g in &ctx.groups {
            let used = g.used();
            let mut names: Vec<&str> = Vec::new();
            for r in &used {
                for (n, _, _) in &r.plane_processes {
                    if !names.contains(&n.as_str()) {
                        names.push(n);
                    }
                }
            }
            for name in names {
                let pick = |k: usize| -> Vec<f64> {
                    used.iter()
                        .filter_map(|r| r.plane_processes.iter().find(|p| p.0 == name))
                        .filter_map(|p| if k == 0 { p.1 } else { p.2 })
                        .collect()
                };
                let cell = |v: Vec<f64>, m: Metric| {
                    stat(v).map_or("—".into(), |s| fmt_stat(&s, |x| m.fmt(x)))
                };
                rows.push(vec![
                    g.scale.to_string(),
                    format!("{}{}", g.variant, g.marker()),
                    name.to_string(),
                    cell(pick(0), Metric::Cpu),
                    cell(pick(1), Metric::PeakRss),
                ]);
            }
        }
        if rows.is_empty() {
            return;
        }
        out.push(Block::Heading(2, "The plane's processes".into()));
        out.push(Block::Para(
            "The local plane's own processes over each run, not the controller's: CPU seconds \
             from the baseline to the last sample and peak resident memory, etcd and \
             kube-apiserver from their metrics pages (every member summed), \
             kube-controller-manager, kube-scheduler and kwok (the fake nodes) from /proc \
             (plane.csv). Variants that ran together shared one plane."
                .into(),
        ));
        out.push(Block::Table(Table {
            head: ["N", "variant", "plane process", "CPU", "peak RSS"]
                .map(String::from)
                .to_vec(),
            rows,
        }));
    }
}
