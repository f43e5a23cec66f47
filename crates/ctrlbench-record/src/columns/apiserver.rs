//! `apiserver.csv`: one row per scrape of kube-apiserver's /metrics. These
//! counters carry no namespace or user label: under the concurrent schedule
//! every variant's file holds the same cluster-wide page. A plane of several
//! apiservers writes `apiserver-<k>.csv` per apiserver instead (same columns).

use super::{Catalogue, Column, Histogram, Labels, UPDATE_VERBS, Value, WRITE_VERBS};

/// The loader's creates.
const CREATE_VERBS: &[&str] = &["POST"];
/// Informers' initial lists (and lists in reconcile).
const LIST_VERBS: &[&str] = &["LIST"];

const WIDGETS: Labels = &[("resource", "widgets")];
const REQ: &str = "apiserver_request_total";
const DUR_SUM: &str = "apiserver_request_duration_seconds_sum";
const DUR_COUNT: &str = "apiserver_request_duration_seconds_count";

const fn sum(name: &'static str, metric: &'static str, labels: Labels) -> Column {
    Column {
        name,
        value: Value::Sum(metric, labels),
    }
}

const fn verbs(name: &'static str, metric: &'static str, verbs: &'static [&'static str]) -> Column {
    Column {
        name,
        value: Value::SumWhere(metric, WIDGETS, "verb", verbs),
    }
}

/// Every resource's requests whose verb is one of `verbs`.
const fn all_verbs(name: &'static str, verbs: &'static [&'static str]) -> Column {
    Column {
        name,
        value: Value::SumWhere(REQ, &[], "verb", verbs),
    }
}

const COLUMNS: &[Column] = &[
    Column {
        name: "timestamp",
        value: Value::Timestamp,
    },
    Column {
        name: "scrape_ok",
        value: Value::ScrapeOk,
    },
    sum("requests_total", REQ, &[]),
    verbs("widget_writes_total", REQ, WRITE_VERBS),
    sum(
        "widget_409_total",
        REQ,
        &[("resource", "widgets"), ("code", "409")],
    ),
    verbs("widget_write_latency_sum", DUR_SUM, WRITE_VERBS),
    verbs("widget_write_latency_count", DUR_COUNT, WRITE_VERBS),
    sum(
        "inflight_requests",
        "apiserver_current_inflight_requests",
        &[],
    ),
    sum(
        "flowcontrol_inqueue",
        "apiserver_flowcontrol_current_inqueue_requests",
        &[],
    ),
    sum(
        "etcd_request_latency_sum",
        "etcd_request_duration_seconds_sum",
        &[],
    ),
    sum(
        "etcd_request_latency_count",
        "etcd_request_duration_seconds_count",
        &[],
    ),
    sum("cpu_seconds", "process_cpu_seconds_total", &[]),
    sum("rss_bytes", "process_resident_memory_bytes", &[]),
    verbs("widget_update_writes_total", REQ, UPDATE_VERBS),
    verbs("widget_update_latency_sum", DUR_SUM, UPDATE_VERBS),
    verbs("widget_update_latency_count", DUR_COUNT, UPDATE_VERBS),
    // Streaming lists the apiserver served for widgets (WatchList): one
    // per informer that started with one.
    sum(
        "widget_watch_lists_total",
        "apiserver_watch_list_duration_seconds_count",
        WIDGETS,
    ),
    sum(
        "widget_watch_list_s_sum",
        "apiserver_watch_list_duration_seconds_sum",
        WIDGETS,
    ),
    // Every resource's requests by verb and by refusal, and the objects
    // LISTs returned: cluster-wide counts, the footprint where no audit
    // log names the caller (an existing cluster).
    all_verbs("gets_total", &["GET"]),
    all_verbs("lists_total", &["LIST"]),
    all_verbs("watches_total", &["WATCH"]),
    all_verbs("writes_total", &["POST", "PUT", "PATCH", "APPLY", "DELETE"]),
    sum("code_409_total", REQ, &[("code", "409")]),
    sum("code_404_total", REQ, &[("code", "404")]),
    sum("code_429_total", REQ, &[("code", "429")]),
    sum(
        "list_returned_objects_total",
        "apiserver_storage_list_returned_objects_total",
        &[],
    ),
    sum(
        "widget_list_returned_objects_total",
        "apiserver_storage_list_returned_objects_total",
        WIDGETS,
    ),
    // The widgets' watch cache, filled from etcd when the apiserver first
    // serves them (at its start, or after a restart): this process's count
    // and seconds, so the last row holds the current process's own.
    sum(
        "widget_watch_cache_inits",
        "apiserver_watch_cache_initialization_duration_seconds_count",
        WIDGETS,
    ),
    sum(
        "widget_watch_cache_init_s_sum",
        "apiserver_watch_cache_initialization_duration_seconds_sum",
        WIDGETS,
    ),
];

/// apiserver_request_duration_seconds buckets of 1.34, +Inf last.
pub const APISERVER_BUCKETS: [f64; 24] = [
    0.005,
    0.025,
    0.05,
    0.1,
    0.2,
    0.4,
    0.6,
    0.8,
    1.0,
    1.25,
    1.5,
    2.0,
    3.0,
    4.0,
    5.0,
    6.0,
    8.0,
    10.0,
    15.0,
    20.0,
    30.0,
    45.0,
    60.0,
    f64::INFINITY,
];

/// Latency buckets of widget updates (PUT/PATCH/APPLY: what controllers
/// send) and of creates (POST: the loader's), kept apart so neither hides
/// in the other (`widget_update_latency_le_<bound>`, `widget_create_latency_le_<bound>`).
/// Results from before the split have one `widget_write_latency_le_*` set
/// over both.
pub const WIDGET_UPDATE_LATENCY: &str = "widget_update_latency";
pub const WIDGET_CREATE_LATENCY: &str = "widget_create_latency";
pub const WIDGET_WRITE_LATENCY: &str = "widget_write_latency";

/// The sample lines the columns read.
fn keep(line: &str) -> bool {
    line.starts_with("apiserver_request_total")
        || (line.starts_with("apiserver_request_duration_seconds")
            && line.contains("resource=\"widgets\""))
        || (line.starts_with("apiserver_watch_list_duration_seconds")
            && line.contains("resource=\"widgets\""))
        || (line.starts_with("apiserver_watch_cache_initialization_duration_seconds")
            && line.contains("resource=\"widgets\""))
        || line.starts_with("apiserver_storage_list_returned_objects_total")
        || line.starts_with("apiserver_current_inflight_requests")
        || line.starts_with("apiserver_flowcontrol_current_inqueue_requests")
        || line.starts_with("etcd_request_duration_seconds_sum")
        || line.starts_with("etcd_request_duration_seconds_count")
        || line.starts_with("process_")
}

pub const CATALOGUE: Catalogue = Catalogue {
    columns: COLUMNS,
    histograms: &[
        Histogram {
            prefix: "widget_update_latency_",
            metric: "apiserver_request_duration_seconds",
            labels: WIDGETS,
            only: Some(("verb", UPDATE_VERBS)),
            bounds: &APISERVER_BUCKETS,
        },
        Histogram {
            prefix: "widget_create_latency_",
            metric: "apiserver_request_duration_seconds",
            labels: WIDGETS,
            only: Some(("verb", CREATE_VERBS)),
            bounds: &APISERVER_BUCKETS,
        },
        Histogram {
            prefix: "widget_list_latency_",
            metric: "apiserver_request_duration_seconds",
            labels: WIDGETS,
            only: Some(("verb", LIST_VERBS)),
            bounds: &APISERVER_BUCKETS,
        },
    ],
    keep,
};

pub const FILE_NAME: &str = "apiserver.csv";

/// Apiserver `k`'s file in a plane of several apiservers.
pub fn member_file_name(k: usize) -> String {
    format!("apiserver-{k}.csv")
}
