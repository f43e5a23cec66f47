//! The controller's /metrics, under controller-runtime's names, label sets and
//! buckets (docs/architecture.md#metric-names-and-buckets), so the same sampler and queries read Rust and Go.
//!
//! kube-runtime exposes no work-queue hooks, so `queue` tracks the queue the
//! way client-go's workqueue counts it and this module publishes the numbers.

use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

use crate::queue::Queue;

/// The controller name every metric carries (controller="widget" / name="widget").
pub const CONTROLLER: &str = "widget";

/// controller-runtime's reconcile_time_seconds buckets (v0.15 and later).
const RECONCILE_BUCKETS: [f64; 40] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9,
    1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 15.0, 20.0,
    25.0, 30.0, 40.0, 50.0, 60.0,
];

/// client-go's rest_client_rate_limiter_duration_seconds and
/// rest_client_request_duration_seconds buckets.
const RATE_LIMITER_BUCKETS: [f64; 12] = [
    0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0,
];

/// client-go's workqueue duration buckets (1 ns … 10 s, ×10).
const QUEUE_BUCKETS: [f64; 11] = [
    1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0,
];

type Labels = Vec<(String, String)>;
type F64Gauge = Gauge<f64, AtomicU64>;

/// Every metric the controller exports.
pub struct Metrics {
    registry: Registry,
    pub queue: Arc<Queue>,
    queue_depth: Gauge,
    queue_adds: Counter,
    queue_retries: Counter,
    unfinished_work: F64Gauge,
    longest_running: F64Gauge,
    pub queue_duration: Histogram,
    reconcile_total: Family<Labels, Counter>,
    reconcile_errors: Counter,
    pub reconcile_time: Histogram,
    pub active_workers: Gauge,
    requests: Family<Labels, Counter>,
    rate_limiter_wait: Family<Labels, Histogram>,
    request_latency: Family<Labels, Histogram>,
    /// ctrlbench_initial_list_seconds: these metrics' creation (right after
    /// the flags are read, before any client exists) → the watcher's first InitDone.
    initial_list: F64Gauge,
    /// client-go's leader_election_master_status{name}: 1 while this
    /// replica leads (registered only with --leader-elect).
    pub leader: Gauge,
    started: std::time::Instant,
}

/// How a reconcile ended, as controller-runtime labels it.
#[derive(Clone, Copy)]
pub enum Outcome {
    Success,
    Error,
    /// Success with a requeue after a delay (controller-runtime's result="requeue_after").
    RequeueAfter,
}

/// A sub-registry whose metrics all carry `l`.
fn sub<'a>(r: &'a mut Registry, l: &Labels) -> &'a mut Registry {
    r.sub_registry_with_labels(l.iter().map(|(k, v)| (k.clone().into(), v.clone().into())))
}

fn labels(pairs: &[(&str, &str)]) -> Labels {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

impl Metrics {
    #[cfg(test)]
    pub fn new(workers: u16) -> Metrics {
        Metrics::with_queue(workers, Queue::default(), false)
    }

    /// Metrics over `queue` (a scheduling one for `--queue fifo`).
    pub fn with_queue(workers: u16, queue: Queue, leader_election: bool) -> Metrics {
        let mut registry = Registry::default();
        let queue = Arc::new(queue);
        let name = labels(&[("name", CONTROLLER)]);
        let ctl = labels(&[("controller", CONTROLLER)]);

        let queue_depth = Gauge::default();
        let queue_adds = Counter::default();
        let queue_retries = Counter::default();
        let unfinished_work = F64Gauge::default();
        let longest_running = F64Gauge::default();
        let queue_duration = Histogram::new(QUEUE_BUCKETS);
        {
            let r = sub(&mut registry, &name);
            r.register(
                "workqueue_depth",
                "Current depth of workqueue",
                queue_depth.clone(),
            );
            r.register(
                "workqueue_adds",
                "Total number of adds handled by workqueue",
                queue_adds.clone(),
            );
            r.register(
                "workqueue_retries",
                "Total number of retries handled by workqueue",
                queue_retries.clone(),
            );
            r.register(
                "workqueue_unfinished_work_seconds",
                "How many seconds of work has been done that is in progress and hasn't been observed by work_duration",
                unfinished_work.clone(),
            );
            r.register(
                "workqueue_longest_running_processor_seconds",
                "How many seconds has the longest running processor for workqueue been running",
                longest_running.clone(),
            );
            r.register(
                "workqueue_queue_duration_seconds",
                "How long in seconds an item stays in workqueue before being requested",
                queue_duration.clone(),
            );
        }
        let reconcile_total = Family::<Labels, Counter>::default();
        for result in ["success", "error", "requeue", "requeue_after"] {
            let _ = reconcile_total
                .get_or_create(&labels(&[("controller", CONTROLLER), ("result", result)]));
        }
        registry.register(
            "controller_runtime_reconcile",
            "Total number of reconciliations per controller",
            reconcile_total.clone(),
        );
        let reconcile_errors = Counter::default();
        let reconcile_time = Histogram::new(RECONCILE_BUCKETS);
        let active_workers = Gauge::default();
        let max_workers: Gauge = Gauge::default();
        max_workers.set(workers as i64);
        {
            let r = sub(&mut registry, &ctl);
            r.register(
                "controller_runtime_reconcile_errors",
                "Total number of reconciliation errors per controller",
                reconcile_errors.clone(),
            );
            r.register(
                "controller_runtime_reconcile_time_seconds",
                "Length of time per reconciliation per controller",
                reconcile_time.clone(),
            );
            r.register(
                "controller_runtime_active_workers",
                "Number of currently used workers per controller",
                active_workers.clone(),
            );
            r.register(
                "controller_runtime_max_concurrent_reconciles",
                "Maximum number of concurrent reconciles per controller",
                max_workers,
            );
        }
        let requests = Family::<Labels, Counter>::default();
        registry.register(
            "rest_client_requests",
            "Number of HTTP requests, partitioned by status code, method, and host.",
            requests.clone(),
        );
        let rate_limiter_wait = Family::<Labels, Histogram>::new_with_constructor(|| {
            Histogram::new(RATE_LIMITER_BUCKETS)
        });
        registry.register(
            "rest_client_rate_limiter_duration_seconds",
            "Client side rate limiter latency in seconds. Broken down by verb, and host.",
            rate_limiter_wait.clone(),
        );
        // client-go's rest_client_request_duration_seconds by name, timed after
        // the rate limiter (client.rs), where client-go's clock starts before it.
        let request_latency = Family::<Labels, Histogram>::new_with_constructor(|| {
            Histogram::new(RATE_LIMITER_BUCKETS)
        });
        registry.register(
            "rest_client_request_duration_seconds",
            "Request latency in seconds. Broken down by verb, and host.",
            request_latency.clone(),
        );
        // Start-up with many existing objects: when the cache first held the
        // whole list (0 until then). The Go controller exports the same name.
        let initial_list = F64Gauge::default();
        registry.register(
            "ctrlbench_initial_list_seconds",
            "Seconds from process start until the watch cache first held the complete initial list (0 until then)",
            initial_list.clone(),
        );
        registry.register_collector(Box::new(ProcessCollector::new()));
        let leader = Gauge::default();
        if leader_election {
            sub(
                &mut registry,
                &labels(&[("name", widget_api::presets::leader_election::LEASE_NAME)]),
            )
            .register(
                "leader_election_master_status",
                "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease.",
                leader.clone(),
            );
        }
        Metrics {
            initial_list,
            leader,
            started: std::time::Instant::now(),
            registry,
            queue,
            queue_depth,
            queue_adds,
            queue_retries,
            unfinished_work,
            longest_running,
            queue_duration,
            reconcile_total,
            reconcile_errors,
            reconcile_time,
            active_workers,
            requests,
            rate_limiter_wait,
            request_latency,
        }
    }

    /// The watcher's InitDone: the first one sets the gauge, re-lists after
    /// a broken watch do not.
    pub fn record_initial_list(&self) {
        if self.initial_list.get() == 0.0 {
            self.initial_list
                .set(self.started.elapsed().as_secs_f64().max(f64::MIN_POSITIVE));
        }
    }

    pub fn record_add(&self, counted: bool) {
        if counted {
            self.queue_adds.inc();
        }
        self.queue_depth.set(self.queue.depth() as i64);
    }

    pub fn record_start(&self) {
        self.queue_depth.set(self.queue.depth() as i64);
        self.active_workers.inc();
    }

    pub fn record_end(&self, outcome: Outcome, seconds: f64) {
        self.active_workers.dec();
        self.reconcile_time.observe(seconds);
        let result = match outcome {
            Outcome::Success => "success",
            Outcome::RequeueAfter => "requeue_after",
            Outcome::Error => {
                self.reconcile_errors.inc();
                "error"
            }
        };
        self.reconcile_total
            .get_or_create(&labels(&[("controller", CONTROLLER), ("result", result)]))
            .inc();
    }

    pub fn record_retry(&self) {
        self.queue_retries.inc();
    }

    pub fn record_request(&self, code: &str, method: &str, host: &str) {
        self.requests
            .get_or_create(&labels(&[
                ("code", code),
                ("host", host),
                ("method", method),
            ]))
            .inc();
    }

    pub fn record_latency(&self, verb: &str, host: &str, seconds: f64) {
        self.request_latency
            .get_or_create(&labels(&[("host", host), ("verb", verb)]))
            .observe(seconds);
    }

    pub fn record_throttle(&self, verb: &str, host: &str, seconds: f64) {
        self.rate_limiter_wait
            .get_or_create(&labels(&[("host", host), ("verb", verb)]))
            .observe(seconds);
    }

    /// Makes sure the throttle histogram exists even when nothing waited yet.
    pub fn touch_throttle(&self, host: &str) {
        let _ = self
            .rate_limiter_wait
            .get_or_create(&labels(&[("host", host), ("verb", "GET")]));
    }

    /// The exposition text (OpenMetrics), with the in-progress figures taken now.
    pub fn encode(&self) -> String {
        let (unfinished, longest) = self.queue.in_progress_seconds();
        self.unfinished_work.set(unfinished);
        self.longest_running.set(longest);
        self.queue_depth.set(self.queue.depth() as i64);
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &self.registry)
            .expect("encoding to a String");
        out
    }
}

/// process_cpu_seconds_total, process_resident_memory_bytes and
/// process_start_time_seconds from /proc, read at scrape time.
#[derive(Debug)]
struct ProcessCollector {
    ticks: f64,
    page: f64,
    boot: f64,
}

impl ProcessCollector {
    fn new() -> ProcessCollector {
        // SAFETY: sysconf has no preconditions.
        let (ticks, page) = unsafe {
            (
                libc::sysconf(libc::_SC_CLK_TCK),
                libc::sysconf(libc::_SC_PAGESIZE),
            )
        };
        let boot = std::fs::read_to_string("/proc/stat")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("btime ")?.trim().parse().ok())
            })
            .unwrap_or(0.0);
        ProcessCollector {
            ticks: ticks as f64,
            page: page as f64,
            boot,
        }
    }
}

impl Collector for ProcessCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
        let fields: Vec<&str> = stat
            .rfind(')')
            .map(|i| stat[i + 2..].split_whitespace().collect())
            .unwrap_or_default();
        let num = |i: usize| {
            fields
                .get(i)
                .and_then(|f| f.parse::<f64>().ok())
                .unwrap_or(0.0)
        };
        // Fields counted from 3 (state): utime=14, stime=15, starttime=22, rss=24.
        let cpu = (num(11) + num(12)) / self.ticks;
        let start = self.boot + num(19) / self.ticks;
        let rss = num(21) * self.page;

        let c = ConstCounter::new(cpu);
        c.encode(encoder.encode_descriptor(
            "process_cpu_seconds",
            "Total user and system CPU time spent in seconds.",
            None,
            c.metric_type(),
        )?)?;
        let g = ConstGauge::new(rss);
        g.encode(encoder.encode_descriptor(
            "process_resident_memory_bytes",
            "Resident memory size in bytes.",
            None,
            g.metric_type(),
        )?)?;
        let s = ConstGauge::new(start);
        s.encode(encoder.encode_descriptor(
            "process_start_time_seconds",
            "Start time of the process since unix epoch in seconds.",
            None,
            s.metric_type(),
        )?)?;
        Ok(())
    }
}
