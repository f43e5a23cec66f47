//! "API footprint": what each variant's controller asked of the apiserver,
//! per object, from footprint.csv (its every request, named by the audit
//! log): the headline counts, then its requests by verb and resource over
//! the create phase. Per variant even when variants shared the apiserver.
//! Without an audit log (an existing cluster): the controller's own client
//! counter, and the apiserver's counters labelled cluster-wide.

use std::collections::BTreeMap;

use super::{Section, metric_table};
use crate::context::ReportCtx;
use crate::figures::Group;
use crate::metrics::Metric;
use crate::{Block, Table};

pub struct Footprint;

const HEADLINE: &[Metric] = &[
    Metric::RequestsPerObject,
    Metric::GetsPerObject,
    Metric::ListsPerObject,
    Metric::WatchesOpened,
    Metric::ApiWritesPerObject,
    Metric::WatchesAfterStart,
    Metric::NoopWritesPerObject,
    Metric::ConflictsPerObject,
    Metric::AlreadyExistedPerObject,
    Metric::NotFoundPerObject,
    Metric::TooManyPerObject,
    Metric::EventsPerObject,
    Metric::IdleRequestsPerObjectMin,
];

/// An existing cluster's footprint: the apiserver's counts, every caller's.
const CLUSTER_WIDE: &[Metric] = &[
    Metric::ClusterGetsPerObject,
    Metric::ClusterListsPerObject,
    Metric::ListReturnedPerObject,
    Metric::ClusterWatches,
    Metric::ClusterWritesPerObject,
    Metric::Cluster409PerObject,
    Metric::Cluster404PerObject,
    Metric::Cluster429PerObject,
];

impl Section for Footprint {
    fn render(&self, ctx: &ReportCtx, out: &mut Vec<Block>) {
        let with: Vec<&Group> = ctx
            .groups
            .iter()
            .filter(|g| g.runs.iter().any(|r| r.footprint.is_some()))
            .collect();
        let without = |m: Metric| -> Vec<&Group> {
            ctx.groups
                .iter()
                .filter(|g| g.runs.iter().all(|r| r.footprint.is_none()))
                .filter(|g| g.runs.iter().any(|r| r.get(m).is_some()))
                .collect()
        };
        let client_only = without(Metric::RequestsPerObject);
        let cluster_only = without(Metric::ClusterGetsPerObject);
        if with.is_empty() && client_only.is_empty() && cluster_only.is_empty() {
            return;
        }
        out.push(Block::Heading(2, "API footprint".into()));
        if !client_only.is_empty() {
            out.push(Block::Para(
                "Without the apiserver's audit log (an existing cluster, or a run with `audit_log = false`), \
                 from each controller's own client counter (rest_client_requests_total): its requests \
                 per object, every verb together."
                    .into(),
            ));
            out.push(metric_table(client_only, &[Metric::RequestsPerObject]));
        }
        if !cluster_only.is_empty() {
            out.push(Block::Para(
                "Without the audit log, cluster-wide, from the apiserver's own counters \
                 (apiserver_request_total and its list metrics, deltas over each run): every caller's \
                 requests per object, ctrlbench's included (the loader's one create per object among the \
                 writes, our watch's list among the LISTs)."
                    .into(),
            ));
            out.push(metric_table(cluster_only, CLUSTER_WIDE));
        }
        if with.is_empty() {
            return;
        }
        out.push(Block::Para(
            "Every request each controller sent in the create phase, from the apiserver's audit log \
             (footprint.csv), per object of the run (medians over the repeats); LISTs beyond the one each \
             watch starts with."
                .into(),
        ));
        // The first five always; a refusal or no-op column only where some
        // variant has one.
        let shown: Vec<Metric> = HEADLINE
            .iter()
            .enumerate()
            .filter(|(i, m)| *i < 5 || with.iter().any(|g| g.values(**m).iter().any(|v| *v > 0.0)))
            .map(|(_, m)| *m)
            .collect();
        out.push(metric_table(with.iter().copied(), &shown));
        out.push(Block::Para(
            "By request (per object, summed over the repeats and divided by their objects):".into(),
        ));
        let mut rows = Vec::new();
        for g in &with {
            let objects: f64 = g
                .runs
                .iter()
                .filter(|r| r.footprint.is_some())
                .map(|r| r.scale as f64)
                .sum();
            let mut by: BTreeMap<(String, String, String), f64> = BTreeMap::new();
            for r in g.runs.iter().filter_map(|r| r.footprint.as_ref()) {
                for row in &r.rows {
                    let scope = match (row.verb.as_str(), row.namespaced) {
                        ("list" | "watch", false) => " (all namespaces)",
                        _ => "",
                    };
                    let code = if (200..300).contains(&row.code) {
                        String::new()
                    } else {
                        row.code.to_string()
                    };
                    *by.entry((format!("{}{scope}", row.verb), row.target(), code))
                        .or_default() += row.count as f64;
                }
            }
            for ((verb, target, code), n) in by {
                rows.push(vec![
                    g.scale.to_string(),
                    g.variant.clone(),
                    verb,
                    target,
                    code,
                    format!("{:.2}", n / objects.max(1.0)),
                ]);
            }
        }
        out.push(Block::Table(Table {
            head: ["N", "variant", "verb", "resource", "code", "per object"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            rows,
        }));
    }
}
