//! What the metric catalogue computes its figures from: a run's files,
//! and the pieces several metrics share (first-Ready times, convergence,
//! time-to-Ready, the controller's own figures), worked out once per run.

use ctrlbench_record::series::Series;
use ctrlbench_record::summary::{ControllerOs, Start, StartMode};
use ctrlbench_record::time::parse_time;

use crate::load::Run;
use crate::quantile::histogram_quantile;

/// What a run's metrics are computed from: the run, and the pieces several
/// metrics share, worked out once.
pub struct Inputs<'a> {
    pub run: &'a Run,
    /// The load start (epoch seconds): the last create minus the loader's duration.
    pub origin: f64,
    /// First-Ready times, ascending.
    pub(super) ready: Vec<f64>,
    /// First writes by anyone but the loader, ascending.
    pub(super) first_writes: Vec<f64>,
    pub(super) convergence: Option<f64>,
    /// Time-to-Ready of every created object; one never seen Ready is
    /// censored at the window end (+∞), so a percentile that falls on it
    /// reads "> window" instead of quietly describing only the lucky objects.
    pub(super) ttr: Vec<f64>,
    pub(super) first_create: Option<f64>,
    /// Latencies of this variant's own updates (audit.csv), when audited.
    pub(super) own_updates: Option<Vec<f64>>,
}

impl<'a> Inputs<'a> {
    /// The run's create-phase footprint, when it has one.
    pub(super) fn footprint(&self) -> Option<crate::footprint::Footprint> {
        self.run
            .footprint
            .as_deref()
            .map(crate::footprint::Footprint::of)
    }

    /// An apiserver.csv counter's increase over the run, per object.
    pub(super) fn apiserver_per_object(&self, col: &str) -> Option<f64> {
        self.per_object(self.run.apiserver.as_ref()?.delta(col)?)
    }

    pub(super) fn per_object(&self, v: f64) -> Option<f64> {
        let n = self.run.scale as f64;
        (n > 0.0).then(|| v / n)
    }

    pub fn of(run: &'a Run) -> Inputs<'a> {
        let origin = run.origin();
        let n = run.scale;
        let mut ready: Vec<f64> = run.objects.iter().filter_map(|o| o.ready).collect();
        let convergence = (n > 0 && ready.len() as u64 >= n)
            .then(|| ready.iter().copied().reduce(f64::max))
            .flatten()
            .map(|t| t - origin);
        ready.sort_by(f64::total_cmp);
        let mut first_writes: Vec<f64> = run.objects.iter().filter_map(|o| o.first_write).collect();
        first_writes.sort_by(f64::total_cmp);
        let ttr = run
            .objects
            .iter()
            .filter_map(|o| {
                let c = o.created?;
                Some(o.ready.map_or(f64::INFINITY, |r| r - c))
            })
            .collect();
        let first_create = run
            .objects
            .iter()
            .filter_map(|o| o.created)
            .reduce(f64::min);
        Inputs {
            run,
            origin,
            ready,
            first_writes,
            convergence,
            ttr,
            first_create,
            own_updates: own_update_latencies(run),
        }
    }

    pub(super) fn metrics(&self) -> Option<&'a Series> {
        self.run.metrics.as_ref()
    }

    pub(super) fn start(&self) -> Option<&'a Start> {
        self.run.summary.as_ref()?.start.as_ref()
    }

    /// A counter delta per reconcile (reconcile_latency_count's delta).
    pub(super) fn per_reconcile(&self, v: Option<f64>) -> Option<f64> {
        let count = self.metrics()?.delta("reconcile_latency_count");
        v.zip(count.filter(|c| *c > 0.0)).map(|(s, c)| s / c)
    }

    pub(super) fn reconcile_quantile(&self, q: f64) -> Option<f64> {
        let b = self.metrics()?.bucket_delta("reconcile_latency");
        Some(histogram_quantile(q, &b))
    }

    pub(super) fn apiserver_p99(&self, histogram: &str) -> Option<f64> {
        let a = self.run.apiserver.as_ref()?;
        Some(histogram_quantile(0.99, &a.bucket_delta(histogram)))
    }

    /// First create → the moment the fraction `q` of N was Ready (the k-th
    /// Ready, k = ⌈q·N⌉); None when not reached.
    pub(super) fn time_to_fraction(&self, q: f64) -> Option<f64> {
        let k = ((q * self.run.scale as f64).ceil() as usize).max(1);
        self.first_create
            .and_then(|c| self.ready.get(k - 1).map(|t| t - c))
    }

    /// Ready per second: to convergence, else over the whole observed window
    /// (the controller's last good scrape; without controller metrics, the
    /// apiserver's); from the controller's start when it started after the
    /// load (the load is not its time).
    pub(super) fn ready_per_s(&self) -> Option<f64> {
        let run = self.run;
        let started = after_load_start(run).unwrap_or(0.0);
        let window = run
            .metrics
            .as_ref()
            .or(run.apiserver.as_ref())
            .and_then(|m| m.last_good())
            .map(|r| r.t - self.origin - started);
        match self.convergence.map(|c| c - started) {
            Some(c) if c > 0.0 => Some(run.scale as f64 / c),
            _ => window
                .filter(|w| *w > 0.0)
                .map(|w| self.ready.len() as f64 / w),
        }
    }
}

/// The controller's CPU seconds over the run, and whether they were read
/// from /proc (summary.json's `controller_os`) rather than from its metrics
/// page's counter. The harness records the /proc figure for a process it
/// started only where the page had none (no page, or one without
/// process_cpu_seconds_total, whose column then reads 0): where present, it
/// is the figure.
pub fn controller_cpu(run: &Run) -> Option<(f64, bool)> {
    match os_figures(run).and_then(|o| o.cpu_s) {
        Some(v) => Some((v, true)),
        None => Some((run.metrics.as_ref()?.delta("cpu_seconds")?, false)),
    }
}

/// The controller's peak resident memory, and whether it was read from
/// /proc, as [`controller_cpu`].
pub fn controller_peak_rss(run: &Run) -> Option<(f64, bool)> {
    match os_figures(run).and_then(|o| o.peak_rss_bytes) {
        Some(v) => Some((v, true)),
        None => Some((run.metrics.as_ref()?.max("rss_bytes")?, false)),
    }
}

fn os_figures(run: &Run) -> Option<&ControllerOs> {
    run.summary.as_ref()?.controller_os.as_ref()
}

/// The requeue counter's delta; without the column, summary.json's
/// `requeue`, else (older summaries) `total − success − error`.
pub(super) fn requeues(x: &Inputs) -> Option<f64> {
    if let Some(v) = x.metrics().and_then(|m| m.delta("reconcile_requeue_total")) {
        return Some(v);
    }
    let r = &x.run.summary.as_ref()?.reconciles;
    r.requeue.or_else(|| Some(r.total? - r.success? - r.error?))
}

/// When the controller started after the load: its start, in seconds from the load start.
fn after_load_start(run: &Run) -> Option<f64> {
    let st = run.summary.as_ref()?.start.as_ref()?;
    (st.mode == StartMode::AfterLoad).then_some(st.controller_started_s)
}

/// The controller's own writes — its client's request counter
/// (rest_writes_total: POST/PUT/PATCH/APPLY it sent, any response), so the
/// figure is this variant's even when variants share the apiserver — per
/// second of its writing span: from the last scrape before its first write
/// to the first scrape that shows its final count (real timestamps).
pub(super) fn controller_writes_per_s(run: &Run) -> Option<f64> {
    const COL: &str = "rest_writes_total";
    let m = run.metrics.as_ref()?;
    let good: Vec<_> = m.good().collect();
    let base = m.get(good.first()?, COL)?;
    let last = m.get(good.last()?, COL)?;
    let writes = last - base;
    if writes <= 0.0 {
        return Some(0.0);
    }
    let first = good
        .iter()
        .position(|r| m.get(r, COL).is_some_and(|v| v > base))?;
    let start = good[first.saturating_sub(1)].t;
    let end = good.iter().find(|r| m.get(r, COL) == Some(last))?.t;
    (end > start).then(|| writes / (end - start))
}

/// The audit log names each request's caller: the latencies of this
/// variant's own updates, whatever ran beside it, counted over the
/// controller's scrape span (baseline → last good row) like every counter
/// here, since the controller writes on until it is stopped.
fn own_update_latencies(run: &Run) -> Option<Vec<f64>> {
    let rows = run.audit.as_ref()?;
    let span = run
        .metrics
        .as_ref()
        .and_then(|m| Some((m.first_good()?.t, m.last_good()?.t)));
    Some(
        rows.iter()
            .filter(|r| r.is_update())
            .filter(|r| match (span, parse_time(&r.received_at)) {
                (Some((a, b)), Some(t)) => t >= a && t <= b,
                _ => true,
            })
            .map(|r| r.latency_s)
            .collect(),
    )
}
