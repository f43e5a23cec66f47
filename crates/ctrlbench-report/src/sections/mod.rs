//! The report as a list of sections. Each section reads the shared
//! `ReportCtx` and appends its blocks (nothing when it has nothing to say);
//! `document` runs them in the report's order. Blocks rather than text,
//! because the same document is rendered twice, as Markdown and as HTML.
//! The table helpers every section's scale × variant tables share live here.

mod answers;
mod attribution;
mod budgets;
mod convergence;
mod counterparts;
mod faults;
mod fix;
mod footprint;
mod goals;
mod growth;
mod header;
mod legend;
mod method;
mod noise;
mod per_run;
mod percentiles;
mod phases;
mod plane_processes;
mod plots;
mod pod_start;
mod profiles;
mod server_side;
mod settings;
mod start;
mod storm;
mod throughput;
mod warnings;

use crate::context::ReportCtx;
use crate::figures::Group;
use crate::metrics::Metric;
use crate::{Block, Table};

/// One section of the report.
pub trait Section {
    fn render(&self, ctx: &ReportCtx, out: &mut Vec<Block>);
}

/// The whole report, section by section.
/// The "What to fix" section alone (`ctrlbench diagnose`).
pub fn what_to_fix(ctx: &ReportCtx, out: &mut Vec<Block>) {
    fix::WhatToFix.render(ctx, out);
}

pub fn document(ctx: &ReportCtx) -> Vec<Block> {
    let sections: &[&dyn Section] = &[
        &header::Header,
        &warnings::Warnings,
        &fix::WhatToFix,
        &budgets::Budgets,
        &answers::Answers,
        &growth::GrowthWithN,
        &noise::MachineNoise,
        &legend::Legend,
        &settings::ControllerSettings,
        &counterparts::Counterparts,
        &convergence::Convergence,
        &percentiles::Percentiles,
        &throughput::Throughput,
        &start::ControllerStart,
        &server_side::ServerSide,
        &footprint::Footprint,
        &phases::Phases,
        &pod_start::PodStart,
        &plane_processes::PlaneProcesses,
        &goals::PerformanceGoals,
        &attribution::ReconcileTime,
        &faults::Faults,
        &storm::Storm,
        &profiles::Profiles,
        &plots::Plots,
        &per_run::PerRun,
        &method::Method,
    ];
    let mut out = Vec::new();
    for s in sections {
        s.render(ctx, &mut out);
    }
    out
}

/// The first two cells of a group's row: N, and the variant with its ⚠ marker.
fn row_head(g: &Group) -> Vec<String> {
    vec![g.scale.to_string(), format!("{}{}", g.variant, g.marker())]
}

/// A table with a row per group: N, variant, then `head` and `cells`.
fn table<'a>(
    groups: impl IntoIterator<Item = &'a Group>,
    head: &[&str],
    cells: impl Fn(&Group) -> Vec<String>,
) -> Block {
    let mut h = vec!["N".to_string(), "variant".to_string()];
    h.extend(head.iter().map(|s| s.to_string()));
    Block::Table(Table {
        head: h,
        rows: groups
            .into_iter()
            .map(|g| {
                let mut r = row_head(g);
                r.extend(cells(g));
                r
            })
            .collect(),
    })
}

/// A table with a row per group and a column per metric, headed as the
/// catalogue names its column.
fn metric_table<'a>(groups: impl IntoIterator<Item = &'a Group>, metrics: &[Metric]) -> Block {
    let head: Vec<&str> = metrics.iter().map(|m| m.column()).collect();
    table(groups, &head, |g| {
        metrics.iter().map(|m| g.cell(*m)).collect()
    })
}
