//! `metrics-<variant>.csv`: one row per scrape of a controller's /metrics.
//! The first twelve columns are exactly the write-up's (docs/architecture.md#metric-names-and-buckets); the names
//! read are controller-runtime's, which the Rust controller shares.

use super::{Catalogue, Column, Histogram, Labels, Value, WRITE_VERBS};

const NAME: Labels = &[("name", "widget")];
const CTL: Labels = &[("controller", "widget")];

const fn sum(name: &'static str, metric: &'static str, labels: Labels) -> Column {
    Column {
        name,
        value: Value::Sum(metric, labels),
    }
}

/// The write-up's columns, in order.
pub const SEED_COLUMNS: usize = 12;

const COLUMNS: &[Column] = &[
    Column {
        name: "timestamp",
        value: Value::Timestamp,
    },
    Column {
        name: "controller",
        value: Value::Variant,
    },
    sum("queue_depth", "workqueue_depth", NAME),
    sum("queue_adds_total", "workqueue_adds_total", NAME),
    sum("queue_retries_total", "workqueue_retries_total", NAME),
    sum(
        "reconcile_success_total",
        "controller_runtime_reconcile_total",
        &[("controller", "widget"), ("result", "success")],
    ),
    sum(
        "reconcile_error_total",
        "controller_runtime_reconcile_total",
        &[("controller", "widget"), ("result", "error")],
    ),
    Column {
        name: "reconcile_requeue_total",
        value: Value::SumWhere(
            "controller_runtime_reconcile_total",
            CTL,
            "result",
            &["requeue", "requeue_after"],
        ),
    },
    sum("active_workers", "controller_runtime_active_workers", CTL),
    sum(
        "unfinished_work_s",
        "workqueue_unfinished_work_seconds",
        NAME,
    ),
    sum(
        "reconcile_latency_sum",
        "controller_runtime_reconcile_time_seconds_sum",
        CTL,
    ),
    sum(
        "reconcile_latency_count",
        "controller_runtime_reconcile_time_seconds_count",
        CTL,
    ),
    // Extras after the write-up's columns.
    Column {
        name: "scrape_ok",
        value: Value::ScrapeOk,
    },
    sum("rest_requests_total", "rest_client_requests_total", &[]),
    Column {
        name: "rest_writes_total",
        value: Value::SumWhere("rest_client_requests_total", &[], "method", WRITE_VERBS),
    },
    sum(
        "rest_409_total",
        "rest_client_requests_total",
        &[("code", "409")],
    ),
    sum(
        "throttle_wait_s_sum",
        "rest_client_rate_limiter_duration_seconds_sum",
        &[],
    ),
    sum(
        "throttle_wait_count",
        "rest_client_rate_limiter_duration_seconds_count",
        &[],
    ),
    sum("cpu_seconds", "process_cpu_seconds_total", &[]),
    sum("rss_bytes", "process_resident_memory_bytes", &[]),
    // Both our controllers' start-up gauge: process start → the cache's
    // first complete list (0 until then; empty for other controllers).
    sum("initial_list_s", "ctrlbench_initial_list_seconds", &[]),
    sum(
        "queue_wait_s_sum",
        "workqueue_queue_duration_seconds_sum",
        NAME,
    ),
    sum(
        "queue_wait_count",
        "workqueue_queue_duration_seconds_count",
        NAME,
    ),
    // client-go's request latency of the writes the controller sent, as its
    // own client measured them. client-go's clock starts before its rate
    // limiter, so this holds the writes' throttle wait (below); the Rust
    // controller's starts after its limiter and holds none.
    Column {
        name: "client_write_latency_s_sum",
        value: Value::SumWhere(
            "rest_client_request_duration_seconds_sum",
            &[],
            "verb",
            WRITE_VERBS,
        ),
    },
    Column {
        name: "client_write_latency_count",
        value: Value::SumWhere(
            "rest_client_request_duration_seconds_count",
            &[],
            "verb",
            WRITE_VERBS,
        ),
    },
    // The writes' share of the throttle wait, so that the report can take it
    // out of client-go's write latency, which holds it.
    Column {
        name: "client_write_throttle_s_sum",
        value: Value::SumWhere(
            "rest_client_rate_limiter_duration_seconds_sum",
            &[],
            "verb",
            WRITE_VERBS,
        ),
    },
    // How many replicas lead (client-go's leader election gauge): 1 under
    // leader election, 0 without it.
    sum("leaders", "leader_election_master_status", &[]),
];

/// controller-runtime's reconcile_time_seconds buckets (the Go and Rust controllers share them).
pub const RECONCILE_BUCKETS: [f64; 41] = [
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.15,
    0.2,
    0.25,
    0.3,
    0.35,
    0.4,
    0.45,
    0.5,
    0.6,
    0.7,
    0.8,
    0.9,
    1.0,
    1.25,
    1.5,
    1.75,
    2.0,
    2.5,
    3.0,
    3.5,
    4.0,
    4.5,
    5.0,
    6.0,
    7.0,
    8.0,
    9.0,
    10.0,
    15.0,
    20.0,
    25.0,
    30.0,
    40.0,
    50.0,
    60.0,
    f64::INFINITY,
];

/// Reconcile latency buckets (`reconcile_latency_le_<bound>`).
pub const RECONCILE_LATENCY: &str = "reconcile_latency";

/// The controller file's catalogue (a controller page is small: every line is parsed).
pub const CATALOGUE: Catalogue = Catalogue {
    columns: COLUMNS,
    histograms: &[Histogram {
        prefix: "reconcile_latency_",
        metric: "controller_runtime_reconcile_time_seconds",
        labels: CTL,
        only: None,
        bounds: &RECONCILE_BUCKETS,
    }],
    keep: |_| true,
};

/// How a column of several replicas' scrapes becomes the variant's one
/// value: gauges add up over the replicas that answered, counters over
/// every replica's last value (a replica that stopped answering still
/// counts what it did), the initial list is the slowest replica's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Merge {
    Gauge,
    Counter,
    Max,
    /// Not a number (timestamp, variant) or scrape_ok.
    None,
}

/// The merge of column `i` (histogram buckets are counters).
pub fn merge_of(i: usize) -> Merge {
    match COLUMNS.get(i).map(|c| (c.name, c.value)) {
        None => Merge::Counter,
        Some((_, Value::Timestamp | Value::Variant | Value::ScrapeOk)) => Merge::None,
        Some(("initial_list_s", _)) => Merge::Max,
        Some((
            "queue_depth" | "active_workers" | "unfinished_work_s" | "rss_bytes" | "leaders",
            _,
        )) => Merge::Gauge,
        Some(_) => Merge::Counter,
    }
}

/// The file name of a variant's controller samples.
pub fn file_name(variant: &str) -> String {
    format!("metrics-{variant}.csv")
}
