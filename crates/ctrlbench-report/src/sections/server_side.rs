//! "Server side": the apiserver's update and create p99 of the workload's
//! kind (headed by its name) and etcd's WAL fsync p99. Their metrics carry no caller, so when the variants of a
//! scale ran together they are one cluster-wide row per scale, never
//! per-variant rows that each describe all of them. Then, where the
//! apiserver kept an audit log, each variant's own updates as the server saw
//! them: each audit event names the ServiceAccount that sent the request.

use super::{Section, metric_table, row_head};
use crate::context::ReportCtx;
use crate::figures::Group;
use crate::metrics::Metric;
use crate::{Block, Table};

pub struct ServerSide;

const CLUSTER: &[Metric] = &[Metric::ApiP99, Metric::ApiCreateP99, Metric::FsyncP99];
const OWN: &[Metric] = &[
    Metric::OwnUpdates,
    Metric::OwnUpdateP50,
    Metric::OwnUpdateP99,
];

impl Section for ServerSide {
    fn render(&self, ctx: &ReportCtx, out: &mut Vec<Block>) {
        let groups = &ctx.groups;
        out.push(Block::Heading(2, "Server side".into()));
        out.push(cluster_table(groups));
        let audited: Vec<&Group> = groups
            .iter()
            .filter(|g| g.runs.iter().any(|r| r.get(Metric::OwnUpdates).is_some()))
            .collect();
        if !audited.is_empty() {
            out.push(Block::Para(
                "Per variant, from the apiserver's audit log (audit.csv: each completed write \
                 of the workload's kind with its caller and the apiserver's receive → complete time), so these are \
                 this variant's own requests even when variants shared the apiserver:"
                    .into(),
            ));
            out.push(metric_table(audited, OWN));
        }
    }
}

/// A row per group that ran alone, one per scale whose variants ran together.
fn cluster_table(groups: &[Group]) -> Block {
    let cells = |g: &Group| CLUSTER.iter().map(|m| g.cell(*m)).collect::<Vec<_>>();
    let (shared, own): (Vec<&Group>, Vec<&Group>) = groups
        .iter()
        .partition(|g| g.runs.iter().any(|r| r.concurrent));
    let mut rows = Vec::new();
    for g in own {
        let mut r = row_head(g);
        r.extend(cells(g));
        rows.push(r);
    }
    let mut scales: Vec<u64> = shared.iter().map(|g| g.scale).collect();
    scales.dedup();
    for scale in scales {
        let at: Vec<&&Group> = shared.iter().filter(|g| g.scale == scale).collect();
        // The group's one apiserver/etcd scrape is written into every
        // variant's files: the first variant's stand for the cluster.
        let mut r = vec![
            scale.to_string(),
            format!(
                "cluster-wide: {} together{}",
                at.iter()
                    .map(|g| g.variant.as_str())
                    .collect::<Vec<_>>()
                    .join(" + "),
                at[0].marker()
            ),
        ];
        r.extend(cells(at[0]));
        rows.push(r);
    }
    let mut head = vec!["N".to_string(), "variant".to_string()];
    let kind = groups.iter().find_map(Group::kind);
    head.extend(CLUSTER.iter().map(|m| m.column_of(kind)));
    Block::Table(Table { head, rows })
}
