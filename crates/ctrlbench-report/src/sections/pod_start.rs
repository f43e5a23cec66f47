//! "Pod start" (pods.csv; each run's figures from `crate::pods`): per scale
//! × variant, how long pods took from our watch's first sighting to
//! scheduled, Running and Ready, and per owner that is an object of the
//! run, its creation → all of its pods Ready — p50, p90, p99 and max, each
//! the median [min–max] over the group's runs like every other cell, with
//! the count of pods. Shown only when some run had pods.

use super::Section;
use crate::context::ReportCtx;
use crate::figures::{Group, RunFigures};
use crate::pods::{PodFigures, STAGES, quantiles};
use crate::stats::{fmt_count, fmt_duration, fmt_stat, stat};
use crate::{Block, Table};

pub struct PodStart;

impl Section for PodStart {
    fn render(&self, ctx: &ReportCtx, out: &mut Vec<Block>) {
        out.extend(blocks(&ctx.groups));
    }
}

fn time(v: f64) -> String {
    if v == f64::INFINITY {
        "> window".into()
    } else {
        fmt_duration(v)
    }
}

/// One row: per-run (count, samples) → the count cell and the four quantiles'.
fn row(g: &Group, what: &str, per_run: &[(String, Vec<f64>)]) -> Vec<String> {
    let q: Vec<[f64; 4]> = per_run.iter().filter_map(|(_, v)| quantiles(v)).collect();
    let mut counts: Vec<&str> = per_run.iter().map(|(c, _)| c.as_str()).collect();
    counts.dedup();
    let mut r = vec![
        g.scale.to_string(),
        format!("{}{}", g.variant, g.marker()),
        what.to_string(),
        counts.join(", "),
    ];
    for k in 0..4 {
        let v: Vec<f64> = q.iter().map(|x| x[k]).collect();
        r.push(stat(v).map_or("—".into(), |s| fmt_stat(&s, time)));
    }
    r
}

/// The section's blocks, or none when no run had pods.
fn blocks(groups: &[Group]) -> Vec<Block> {
    let mut rows = Vec::new();
    for g in groups {
        let used: Vec<(&RunFigures, &PodFigures)> = g
            .used()
            .into_iter()
            .filter_map(|r| Some((r, r.pods.as_ref()?)))
            .collect();
        if used.is_empty() {
            continue;
        }
        for (k, stage) in STAGES.iter().enumerate() {
            let per_run: Vec<(String, Vec<f64>)> = used
                .iter()
                .map(|(_, p)| (fmt_count(p.stages[k].len() as f64), p.stages[k].clone()))
                .collect();
            rows.push(row(g, stage, &per_run));
        }
        let owners: Vec<(String, Vec<f64>)> = used
            .iter()
            .filter(|(_, p)| !p.owners.is_empty())
            .map(|(_, p)| {
                (
                    format!("{} ({} pods)", p.owners.len(), p.owner_pods),
                    p.owners.clone(),
                )
            })
            .collect();
        if !owners.is_empty() {
            rows.push(row(g, "object created → all its pods ready", &owners));
        }
    }
    if rows.is_empty() {
        return Vec::new();
    }
    vec![
        Block::Heading(2, "Pod start".into()),
        Block::Para(
            "From ctrlbench's own watch of the pods in each run's namespace (pods.csv), not from \
             Events: per pod, the time from the watch's first sighting of it to the PodScheduled \
             condition (or spec.nodeName), to phase Running and to the Ready condition; then, \
             per owner that is an object of the run (the pod's controller, a ReplicaSet followed \
             to its Deployment), the time from the object's creation (objects.csv) to the last \
             of its pods Ready. A stage that never came counts as beyond the window. Counts are \
             pods (owners and their pods in the last row); with several repeats, each cell is \
             the median [min–max] of the runs' own quantiles."
                .into(),
        ),
        Block::Table(Table {
            head: [
                "N",
                "variant",
                "from → to",
                "pods",
                "p50",
                "p90",
                "p99",
                "max",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        }),
    ]
}
