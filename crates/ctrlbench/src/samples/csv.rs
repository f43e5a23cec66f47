//! The CSV files a run writes, one flushed row per scrape. The first columns
//! of the controller file are exactly DESIGN §4's; extras follow. A failed
//! scrape writes a row with `scrape_ok=0` and empty values, never zeros.

use std::fs::File;
use std::path::Path;

use anyhow::Result;

use super::prom::{Page, bucket_column};

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

/// The seed's columns, in order (DESIGN §4).
pub const CONTROLLER_COLUMNS: [&str; 12] = [
    "timestamp",
    "controller",
    "queue_depth",
    "queue_adds_total",
    "queue_retries_total",
    "reconcile_success_total",
    "reconcile_error_total",
    "reconcile_requeue_total",
    "active_workers",
    "unfinished_work_s",
    "reconcile_latency_sum",
    "reconcile_latency_count",
];

const CONTROLLER_EXTRA: [&str; 10] = [
    "scrape_ok",
    "rest_requests_total",
    "rest_writes_total",
    "rest_409_total",
    "throttle_wait_s_sum",
    "throttle_wait_count",
    "cpu_seconds",
    "rss_bytes",
    "queue_wait_s_sum",
    "queue_wait_count",
];

const APISERVER_COLUMNS: [&str; 16] = [
    "timestamp",
    "scrape_ok",
    "requests_total",
    "widget_writes_total",
    "widget_409_total",
    "widget_write_latency_sum",
    "widget_write_latency_count",
    "inflight_requests",
    "flowcontrol_inqueue",
    "etcd_request_latency_sum",
    "etcd_request_latency_count",
    "cpu_seconds",
    "rss_bytes",
    "widget_update_writes_total",
    "widget_update_latency_sum",
    "widget_update_latency_count",
];

/// apiserver_request_duration_seconds buckets of 1.34.
pub const APISERVER_BUCKETS: [f64; 23] = [
    0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0,
    10.0, 15.0, 20.0, 30.0, 45.0, 60.0,
];

const ETCD_COLUMNS: [&str; 9] = [
    "timestamp",
    "scrape_ok",
    "wal_fsync_sum",
    "wal_fsync_count",
    "backend_commit_sum",
    "backend_commit_count",
    "proposals_committed_total",
    "cpu_seconds",
    "rss_bytes",
];

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

const WRITE_VERBS: [&str; 4] = ["POST", "PUT", "PATCH", "APPLY"];
/// Writes to existing objects: what controllers do (the loader only creates).
const UPDATE_VERBS: [&str; 3] = ["PUT", "PATCH", "APPLY"];

/// One CSV file, flushed after every row.
pub struct Table {
    w: csv::Writer<File>,
    width: usize,
}

impl Table {
    fn create(path: &Path, header: Vec<String>) -> Result<Table> {
        let mut w = csv::Writer::from_path(path)?;
        w.write_record(&header)?;
        w.flush()?;
        Ok(Table {
            w,
            width: header.len(),
        })
    }

    fn row(&mut self, mut cells: Vec<String>) -> Result<()> {
        cells.resize(self.width, String::new());
        self.w.write_record(&cells)?;
        self.w.flush()?;
        Ok(())
    }
}

fn num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

fn bucket_cells(
    page: &Page,
    name: &str,
    filter: &[(&str, &str)],
    only: Option<(&str, &[&str])>,
    bounds: &[f64],
) -> Vec<String> {
    let b = page.buckets(name, filter, only);
    bounds
        .iter()
        .map(|le| {
            b.iter()
                .find(|(k, _)| k.0 == *le || (k.0.is_infinite() && le.is_infinite()))
                .map(|(_, v)| num(*v))
                .unwrap_or_default()
        })
        .collect()
}

/// `metrics-<variant>.csv`.
pub fn controller_table(path: &Path) -> Result<Table> {
    let mut h: Vec<String> = CONTROLLER_COLUMNS.iter().map(|s| s.to_string()).collect();
    h.extend(CONTROLLER_EXTRA.iter().map(|s| s.to_string()));
    h.extend(
        RECONCILE_BUCKETS
            .iter()
            .map(|le| bucket_column("reconcile_latency_", *le)),
    );
    Table::create(path, h)
}

/// The values the runner and report read back from a controller row.
#[derive(Debug, Clone, Copy, Default)]
pub struct ControllerRow {
    pub reconciles: f64,
    pub success: f64,
    pub errors: f64,
    pub depth: f64,
}

/// Writes one controller row; `page` is None when the scrape failed.
pub fn controller_row(
    t: &mut Table,
    ts: &str,
    controller: &str,
    page: Option<&Page>,
) -> Result<Option<ControllerRow>> {
    let Some(p) = page else {
        let mut cells = vec![ts.to_string(), controller.to_string()];
        cells.resize(CONTROLLER_COLUMNS.len(), String::new());
        cells.push("0".into());
        t.row(cells)?;
        return Ok(None);
    };
    let name = [("name", "widget")];
    let ctl = [("controller", "widget")];
    let result = |r: &str| {
        p.sum(
            "controller_runtime_reconcile_total",
            &[("controller", "widget"), ("result", r)],
        )
    };
    let requeue = result("requeue") + result("requeue_after");
    let row = ControllerRow {
        reconciles: result("success") + result("error") + requeue,
        success: result("success"),
        errors: result("error"),
        depth: p.sum("workqueue_depth", &name),
    };
    let mut cells = vec![
        ts.to_string(),
        controller.to_string(),
        num(row.depth),
        num(p.sum("workqueue_adds_total", &name)),
        num(p.sum("workqueue_retries_total", &name)),
        num(row.success),
        num(row.errors),
        num(requeue),
        num(p.sum("controller_runtime_active_workers", &ctl)),
        num(p.sum("workqueue_unfinished_work_seconds", &name)),
        num(p.sum("controller_runtime_reconcile_time_seconds_sum", &ctl)),
        num(p.sum("controller_runtime_reconcile_time_seconds_count", &ctl)),
        "1".into(),
        num(p.sum("rest_client_requests_total", &[])),
        num(p.sum_where("rest_client_requests_total", &[], "method", &WRITE_VERBS)),
        num(p.sum("rest_client_requests_total", &[("code", "409")])),
        num(p.sum("rest_client_rate_limiter_duration_seconds_sum", &[])),
        num(p.sum("rest_client_rate_limiter_duration_seconds_count", &[])),
        num(p.sum("process_cpu_seconds_total", &[])),
        num(p.sum("process_resident_memory_bytes", &[])),
        num(p.sum("workqueue_queue_duration_seconds_sum", &name)),
        num(p.sum("workqueue_queue_duration_seconds_count", &name)),
    ];
    cells.extend(bucket_cells(
        p,
        "controller_runtime_reconcile_time_seconds",
        &ctl,
        None,
        &RECONCILE_BUCKETS,
    ));
    t.row(cells)?;
    Ok(Some(row))
}

/// `apiserver.csv`.
pub fn apiserver_table(path: &Path) -> Result<Table> {
    let mut h: Vec<String> = APISERVER_COLUMNS.iter().map(|s| s.to_string()).collect();
    h.extend(
        APISERVER_BUCKETS
            .iter()
            .map(|le| bucket_column("widget_write_latency_", *le)),
    );
    h.push("widget_write_latency_le_+Inf".into());
    Table::create(path, h)
}

/// The apiserver sample lines `apiserver_row` reads.
pub fn apiserver_keep(line: &str) -> bool {
    line.starts_with("apiserver_request_total")
        || (line.starts_with("apiserver_request_duration_seconds")
            && line.contains("resource=\"widgets\""))
        || line.starts_with("apiserver_current_inflight_requests")
        || line.starts_with("apiserver_flowcontrol_current_inqueue_requests")
        || line.starts_with("etcd_request_duration_seconds_sum")
        || line.starts_with("etcd_request_duration_seconds_count")
        || line.starts_with("process_")
}

pub fn apiserver_row(t: &mut Table, ts: &str, page: Option<&Page>) -> Result<()> {
    let Some(p) = page else {
        return t.row(vec![ts.to_string(), "0".into()]);
    };
    let widgets = [("resource", "widgets")];
    let mut cells = vec![
        ts.to_string(),
        "1".into(),
        num(p.sum("apiserver_request_total", &[])),
        num(p.sum_where("apiserver_request_total", &widgets, "verb", &WRITE_VERBS)),
        num(p.sum(
            "apiserver_request_total",
            &[("resource", "widgets"), ("code", "409")],
        )),
        num(p.sum_where(
            "apiserver_request_duration_seconds_sum",
            &widgets,
            "verb",
            &WRITE_VERBS,
        )),
        num(p.sum_where(
            "apiserver_request_duration_seconds_count",
            &widgets,
            "verb",
            &WRITE_VERBS,
        )),
        num(p.sum("apiserver_current_inflight_requests", &[])),
        num(p.sum("apiserver_flowcontrol_current_inqueue_requests", &[])),
        num(p.sum("etcd_request_duration_seconds_sum", &[])),
        num(p.sum("etcd_request_duration_seconds_count", &[])),
        num(p.sum("process_cpu_seconds_total", &[])),
        num(p.sum("process_resident_memory_bytes", &[])),
        num(p.sum_where("apiserver_request_total", &widgets, "verb", &UPDATE_VERBS)),
        num(p.sum_where(
            "apiserver_request_duration_seconds_sum",
            &widgets,
            "verb",
            &UPDATE_VERBS,
        )),
        num(p.sum_where(
            "apiserver_request_duration_seconds_count",
            &widgets,
            "verb",
            &UPDATE_VERBS,
        )),
    ];
    let mut bounds = APISERVER_BUCKETS.to_vec();
    bounds.push(f64::INFINITY);
    cells.extend(bucket_cells(
        p,
        "apiserver_request_duration_seconds",
        &widgets,
        Some(("verb", &WRITE_VERBS)),
        &bounds,
    ));
    t.row(cells)
}

/// `etcd.csv`.
pub fn etcd_table(path: &Path) -> Result<Table> {
    let mut h: Vec<String> = ETCD_COLUMNS.iter().map(|s| s.to_string()).collect();
    h.extend(
        FSYNC_BUCKETS
            .iter()
            .map(|le| bucket_column("wal_fsync_", *le)),
    );
    Table::create(path, h)
}

/// The etcd sample lines `etcd_row` reads.
pub fn etcd_keep(line: &str) -> bool {
    line.starts_with("etcd_disk_")
        || line.starts_with("etcd_server_proposals_committed_total")
        || line.starts_with("process_")
}

pub fn etcd_row(t: &mut Table, ts: &str, page: Option<&Page>) -> Result<()> {
    let Some(p) = page else {
        return t.row(vec![ts.to_string(), "0".into()]);
    };
    let mut cells = vec![
        ts.to_string(),
        "1".into(),
        num(p.sum("etcd_disk_wal_fsync_duration_seconds_sum", &[])),
        num(p.sum("etcd_disk_wal_fsync_duration_seconds_count", &[])),
        num(p.sum("etcd_disk_backend_commit_duration_seconds_sum", &[])),
        num(p.sum("etcd_disk_backend_commit_duration_seconds_count", &[])),
        num(p.sum("etcd_server_proposals_committed_total", &[])),
        num(p.sum("process_cpu_seconds_total", &[])),
        num(p.sum("process_resident_memory_bytes", &[])),
    ];
    cells.extend(bucket_cells(
        p,
        "etcd_disk_wal_fsync_duration_seconds",
        &[],
        None,
        &FSYNC_BUCKETS,
    ));
    t.row(cells)
}

/// `objects.csv`: name, created_at, ready_at (empty when never Ready).
pub fn write_objects(path: &Path, rows: &[(String, Option<String>, Option<String>)]) -> Result<()> {
    let mut w = csv::Writer::from_path(path)?;
    w.write_record(["name", "created_at", "ready_at"])?;
    for (n, c, r) in rows {
        w.write_record([
            n.as_str(),
            c.as_deref().unwrap_or(""),
            r.as_deref().unwrap_or(""),
        ])?;
    }
    w.flush()?;
    Ok(())
}
