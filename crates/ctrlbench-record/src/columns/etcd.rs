//! `etcd.csv`: one row per scrape of etcd's metrics listener (local plane
//! only). A plane of several members writes `etcd-<k>.csv` per member
//! instead, with the same columns and then `is_leader`
//! (`etcd_server_is_leader`: 1 on the member that led at that scrape).

use super::{Catalogue, Column, Histogram, Value};

const fn sum(name: &'static str, metric: &'static str) -> Column {
    Column {
        name,
        value: Value::Sum(metric, &[]),
    }
}

const COLUMNS: &[Column] = &BASE;

const BASE: [Column; 11] = [
    Column {
        name: "timestamp",
        value: Value::Timestamp,
    },
    Column {
        name: "scrape_ok",
        value: Value::ScrapeOk,
    },
    sum("wal_fsync_sum", "etcd_disk_wal_fsync_duration_seconds_sum"),
    sum(
        "wal_fsync_count",
        "etcd_disk_wal_fsync_duration_seconds_count",
    ),
    sum(
        "backend_commit_sum",
        "etcd_disk_backend_commit_duration_seconds_sum",
    ),
    sum(
        "backend_commit_count",
        "etcd_disk_backend_commit_duration_seconds_count",
    ),
    sum(
        "proposals_committed_total",
        "etcd_server_proposals_committed_total",
    ),
    sum("cpu_seconds", "process_cpu_seconds_total"),
    sum("rss_bytes", "process_resident_memory_bytes"),
    // A gauge: the bytes of etcd's database its keys and their retained
    // history occupy, which falls when the apiserver compacts.
    sum("db_in_use_bytes", "etcd_mvcc_db_total_size_in_use_in_bytes"),
    // The revision up to which history was last compacted (-1: never): a
    // change within a run means bytes in use fell by history that earlier
    // runs left, so the run's bytes added are not its own.
    sum("compact_revision", "etcd_debugging_mvcc_compact_revision"),
];

/// A member's file: the same columns, then the leader flag.
const MEMBER_COLUMNS: [Column; 12] = {
    let mut out = [sum("is_leader", "etcd_server_is_leader"); 12];
    let mut i = 0;
    while i < BASE.len() {
        out[i] = BASE[i];
        i += 1;
    }
    out
};

/// etcd_disk_wal_fsync_duration_seconds buckets.
pub const FSYNC_BUCKETS: [f64; 15] = [
    0.001,
    0.002,
    0.004,
    0.008,
    0.016,
    0.032,
    0.064,
    0.128,
    0.256,
    0.512,
    1.024,
    2.048,
    4.096,
    8.192,
    f64::INFINITY,
];

/// WAL fsync buckets (`wal_fsync_le_<bound>`).
pub const WAL_FSYNC: &str = "wal_fsync";

fn keep(line: &str) -> bool {
    line.starts_with("etcd_disk_")
        || line.starts_with("etcd_server_proposals_committed_total")
        || line.starts_with("etcd_server_is_leader")
        || line.starts_with("etcd_mvcc_db_total_size_in_use_in_bytes")
        || line.starts_with("etcd_debugging_mvcc_compact_revision")
        || line.starts_with("process_")
}

const HISTOGRAMS: &[Histogram] = &[Histogram {
    prefix: "wal_fsync_",
    metric: "etcd_disk_wal_fsync_duration_seconds",
    labels: &[],
    only: None,
    bounds: &FSYNC_BUCKETS,
}];

pub const CATALOGUE: Catalogue = Catalogue {
    columns: COLUMNS,
    histograms: HISTOGRAMS,
    keep,
};

/// One member of several: `etcd-<k>.csv`, with `is_leader` after the columns.
pub const MEMBER_CATALOGUE: Catalogue = Catalogue {
    columns: &MEMBER_COLUMNS,
    histograms: HISTOGRAMS,
    keep,
};

pub const FILE_NAME: &str = "etcd.csv";

/// Member `k`'s file in a plane of several members.
pub fn member_file_name(k: usize) -> String {
    format!("etcd-{k}.csv")
}
