//! What each variant ran with, as its controller printed it
//! (--print-settings, recorded in summary.json): the same load is not enough
//! for like for like, the client limits and retry policy must be visible too.
//! Then any cluster-scoped grant a variant's identity had beyond its own
//! namespace.

use ctrlbench_record::summary::{Queue, Settings};

use super::Section;
use crate::context::ReportCtx;
use crate::figures::Group;
use crate::{Block, Table};

pub struct ControllerSettings;

impl Section for ControllerSettings {
    fn render(&self, ctx: &ReportCtx, out: &mut Vec<Block>) {
        if let Some(t) = settings_table(&ctx.groups) {
            out.push(Block::Heading(2, "Controller settings".into()));
            out.push(Block::Para(
                "As each controller resolved its flags (--print-settings, recorded in \
                 summary.json): the effective client limit includes the client library's own \
                 default; watches are never throttled."
                    .into(),
            ));
            out.push(t);
        }
        for g in first_of_each_variant(&ctx.groups) {
            if let Some(r) = g.runs.iter().find(|r| !r.cluster_grants.is_empty()) {
                out.push(Block::Para(format!(
                    "Cluster-scoped grant: {} ran with {} in every namespace (beyond its own).",
                    g.variant,
                    r.cluster_grants.join("; ")
                )));
            }
        }
    }
}

/// A variant's settings do not change with the scale: its first group.
fn first_of_each_variant(groups: &[Group]) -> Vec<&Group> {
    let mut seen: Vec<&Group> = Vec::new();
    for g in groups {
        if !seen.iter().any(|s| s.variant == g.variant) {
            seen.push(g);
        }
    }
    seen
}

fn settings_table(groups: &[Group]) -> Option<Block> {
    // A Kubernetes column only when the variants ran on different versions.
    let mut versions: Vec<&str> = groups
        .iter()
        .flat_map(|g| {
            g.runs
                .iter()
                .filter_map(|r| r.kubernetes_version.as_deref())
        })
        .collect();
    versions.sort();
    versions.dedup();
    let by_version = versions.len() > 1;
    // A feature-gates column only when the variants' planes had other gates.
    let gates_of = |g: &Group| g.runs.first().map(|r| r.feature_gates.join(", "));
    let mut gates: Vec<String> = groups.iter().filter_map(gates_of).collect();
    gates.sort();
    gates.dedup();
    let by_gates = gates.len() > 1;
    let mut rows = Vec::new();
    for g in first_of_each_variant(groups) {
        let mut row = settings_row(g);
        row.resize(8, String::new());
        if by_version {
            let v = g.runs.iter().find_map(|r| r.kubernetes_version.clone());
            row.push(v.unwrap_or_else(|| "?".into()));
        }
        if by_gates {
            let v = gates_of(g).unwrap_or_default();
            row.push(if v.is_empty() { "defaults".into() } else { v });
        }
        rows.push(row);
    }
    if rows.is_empty() {
        return None;
    }
    let width = 8 + usize::from(by_version) + usize::from(by_gates);
    for r in &mut rows {
        r.resize(width, String::new());
    }
    let mut head: Vec<String> = [
        "variant",
        "impl",
        "preset",
        "workers",
        "queue",
        "client limit (effective)",
        "clients with their own bucket",
        "retry on error",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    if by_version {
        head.push("Kubernetes".into());
    }
    if by_gates {
        head.push("apiserver feature gates".into());
    }
    Some(Block::Table(Table { head, rows }))
}

/// A variant's row; without recorded settings, why there are none.
fn settings_row(g: &Group) -> Vec<String> {
    let Some((imp, s)) = g.settings() else {
        let imp = g
            .runs
            .iter()
            .find_map(|r| r.implementation.clone())
            .unwrap_or_else(|| "?".into());
        let why = match imp.as_str() {
            "command" => "a user's command: its settings are its own",
            "external" => "already running in the cluster: not started by ctrlbench",
            _ => "not recorded",
        };
        return vec![g.variant.clone(), imp, why.into()];
    };
    // Build and instrument differences by design, beside the implementation.
    let extras: Vec<String> = s
        .allocator
        .as_deref()
        .into_iter()
        .chain(s.pprof.then_some("profiled"))
        .chain(s.managed_fields_text.then_some("managedFields as text"))
        .chain((s.list_semantic.as_deref() == Some("any")).then_some("lists at resourceVersion 0"))
        .map(String::from)
        .chain(s.tunables.set())
        .collect();
    let imp = match extras.as_slice() {
        [] => imp.to_string(),
        e => format!("{imp} ({})", e.join(", ")),
    };
    vec![
        g.variant.clone(),
        imp,
        s.preset.clone(),
        s.workers.to_string(),
        queue_cell(s),
        s.client_limit(),
        match (s.client_buckets.is_empty(), s.http_version.as_deref()) {
            (true, _) => "?".into(),
            (false, None) => s.client_buckets.join(", "),
            (false, Some(v)) => format!("{} ({})", s.client_buckets.join(", "), http_words(v)),
        },
        s.retry_policy(),
    ]
}

/// How a client speaks to the apiserver, in words.
fn http_words(v: &str) -> String {
    match v {
        "h2" => "HTTP/2".into(),
        other => other.into(),
    }
}

/// "fifo", "kube, debounce 5 ms", "fifo, priority": the queue, its
/// debounce, and whether controller-runtime's priority queue was on.
fn queue_cell(s: &Settings) -> String {
    let Some(q) = s.queue.map(Queue::as_str) else {
        return "?".into();
    };
    let mut cell = q.to_string();
    if s.debounce_ms > 0 {
        cell.push_str(&format!(", debounce {} ms", s.debounce_ms));
    }
    if s.priority_queue == Some(true) {
        cell.push_str(", priority");
    }
    cell
}
