//! The numbers: per-run figures computed from the CSVs (counters as deltas
//! from the baseline row to the last good row), the problems that keep a run
//! out of the medians, and per scale × variant aggregation over repeats.

use ctrlbench_record::columns::apiserver::{WIDGET_CREATE_LATENCY, WIDGET_UPDATE_LATENCY};
use ctrlbench_record::phases::{PhaseRecord, PhaseSummary};
use ctrlbench_record::series::Series;
use ctrlbench_record::summary::{PresetInfo, Schedule, Settings, StartMode};
use ctrlbench_record::time::parse_time;

use crate::attribution::{self, Attribution};
use crate::load::{Results, Run};
use crate::quantile::{histogram_quantile, percentile};
use crate::stats::{Stat, fmt_count, fmt_duration, fmt_stat, stat};

/// A headline figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    Ready,
    Coverage,
    Convergence,
    Success,
    Errors,
    Retries,
    MeanLatency,
    P50,
    P90,
    P99,
    TtrP50,
    TtrP99,
    T50,
    T90,
    T100,
    ReadyPerS,
    WritesPerS,
    Conflicts,
    ThrottleWait,
    Cpu,
    PeakRss,
    ApiP99,
    ApiCreateP99,
    FsyncP99,
    OwnUpdates,
    OwnUpdateP50,
    OwnUpdateP99,
    /// Controller start → the end of its initial list (its own
    /// ctrlbench_initial_list_seconds gauge, metrics-<variant>.csv).
    StartInitialList,
    /// Controller start → first object written (summary.json's start).
    StartFirstWrite,
    /// Controller start → Ready == N.
    StartAllReady,
    /// Controller CPU seconds per reconcile.
    CpuPerReconcile,
    /// Mean time a key waited in the work queue before its reconcile began.
    QueueWait,
    /// Objects written per second from our own watch's timestamps: (k − 1)
    /// ÷ (last first_write_at − first first_write_at) over the k objects
    /// written (objects.csv). Exact to the millisecond where writes/s is
    /// bounded by the scrape interval at each end of the writing span.
    FirstWritesPerS,
}

enum Unit {
    Count,
    Duration,
    Rate,
    Bytes,
    Seconds,
}

impl Metric {
    pub const ALL: [Metric; 33] = [
        Metric::Ready,
        Metric::Coverage,
        Metric::Convergence,
        Metric::Success,
        Metric::Errors,
        Metric::Retries,
        Metric::MeanLatency,
        Metric::P50,
        Metric::P90,
        Metric::P99,
        Metric::TtrP50,
        Metric::TtrP99,
        Metric::T50,
        Metric::T90,
        Metric::T100,
        Metric::ReadyPerS,
        Metric::WritesPerS,
        Metric::Conflicts,
        Metric::ThrottleWait,
        Metric::Cpu,
        Metric::PeakRss,
        Metric::ApiP99,
        Metric::ApiCreateP99,
        Metric::FsyncP99,
        Metric::OwnUpdates,
        Metric::OwnUpdateP50,
        Metric::OwnUpdateP99,
        Metric::StartInitialList,
        Metric::StartFirstWrite,
        Metric::StartAllReady,
        Metric::CpuPerReconcile,
        Metric::QueueWait,
        Metric::FirstWritesPerS,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Metric::Ready => "Ready at window end",
            Metric::Coverage => "objects written",
            Metric::Convergence => "convergence",
            Metric::Success => "reconciles ok",
            Metric::Errors => "reconcile errors",
            Metric::Retries => "retries",
            Metric::MeanLatency => "mean reconcile",
            Metric::P50 => "reconcile p50",
            Metric::P90 => "reconcile p90",
            Metric::P99 => "reconcile p99",
            Metric::TtrP50 => "time-to-Ready p50",
            Metric::TtrP99 => "time-to-Ready p99",
            Metric::T50 => "T50",
            Metric::T90 => "T90",
            Metric::T100 => "T100",
            Metric::ReadyPerS => "Ready/s",
            Metric::WritesPerS => "writes/s",
            Metric::Conflicts => "409s",
            Metric::ThrottleWait => "throttle wait",
            Metric::Cpu => "CPU",
            Metric::PeakRss => "peak RSS",
            Metric::ApiP99 => "apiserver update p99",
            Metric::ApiCreateP99 => "apiserver create p99",
            Metric::FsyncP99 => "etcd fsync p99",
            Metric::OwnUpdates => "own updates (server-side)",
            Metric::OwnUpdateP50 => "own update p50 (server-side)",
            Metric::OwnUpdateP99 => "own update p99 (server-side)",
            Metric::StartInitialList => "start → initial list",
            Metric::StartFirstWrite => "start → first write",
            Metric::StartAllReady => "start → Ready==N",
            Metric::CpuPerReconcile => "CPU per reconcile",
            Metric::QueueWait => "queue wait (mean)",
            Metric::FirstWritesPerS => "first writes/s",
        }
    }

    fn unit(self) -> Unit {
        match self {
            Metric::Ready
            | Metric::Coverage
            | Metric::OwnUpdates
            | Metric::Success
            | Metric::Errors
            | Metric::Retries
            | Metric::Conflicts => Unit::Count,
            Metric::ReadyPerS | Metric::WritesPerS | Metric::FirstWritesPerS => Unit::Rate,
            Metric::PeakRss => Unit::Bytes,
            Metric::Cpu => Unit::Seconds,
            _ => Unit::Duration,
        }
    }

    pub fn fmt(self, v: f64) -> String {
        if v == f64::INFINITY {
            return "> window".into();
        }
        match self.unit() {
            Unit::Count => fmt_count(v),
            Unit::Rate => format!("{v:.1}/s"),
            Unit::Bytes => format!("{:.1} MiB", v / (1024.0 * 1024.0)),
            Unit::Seconds => format!("{v:.2} s"),
            Unit::Duration => fmt_duration(v),
        }
    }
}

/// What one run measured.
pub struct RunFigures {
    pub scale: u64,
    pub variant: String,
    pub repeat: u32,
    /// Why this run stays out of the medians (empty: it counts).
    pub problems: Vec<String>,
    /// Load start (epoch seconds): the last create minus the loader's duration.
    pub origin: f64,
    values: [Option<f64>; Metric::ALL.len()],
    pub attribution: Attribution,
    /// The implementation and the settings the controller ran with (summary.json).
    pub implementation: Option<String>,
    pub settings: Option<Settings>,
    /// The preset's description, question and counterpart (summary.json).
    pub preset_info: Option<PresetInfo>,
    /// The phases after the create phase.
    pub phases: Vec<PhaseFigures>,
    /// The cluster's Kubernetes version during the run.
    pub kubernetes_version: Option<String>,
    /// Cluster-wide RBAC grants of the controller's identity (summary.json).
    pub cluster_grants: Vec<String>,
    /// The workload when not the built-in Widget one (summary.json).
    pub workload: Option<String>,
    /// Whether the variants of this run shared the cluster (server-side
    /// figures are then cluster-wide).
    pub concurrent: bool,
    /// When the controller started (summary.json; None in older results).
    pub start_mode: Option<StartMode>,
}

impl RunFigures {
    pub fn get(&self, m: Metric) -> Option<f64> {
        self.values[m as usize]
    }

    /// A run with no figures yet (for tests that build groups by hand).
    #[cfg(test)]
    pub(crate) fn empty(scale: u64, variant: &str, repeat: u32) -> RunFigures {
        RunFigures {
            scale,
            variant: variant.to_string(),
            repeat,
            problems: Vec::new(),
            origin: 0.0,
            values: [None; Metric::ALL.len()],
            attribution: Attribution::default(),
            implementation: None,
            settings: None,
            preset_info: None,
            phases: Vec::new(),
            kubernetes_version: None,
            cluster_grants: Vec::new(),
            workload: None,
            concurrent: false,
            start_mode: None,
        }
    }

    pub(crate) fn set(&mut self, m: Metric, v: Option<f64>) {
        // +∞ is kept only where it means "censored at the window end".
        let censorable = matches!(m, Metric::TtrP50 | Metric::TtrP99);
        self.values[m as usize] =
            v.filter(|x| x.is_finite() || (censorable && *x == f64::INFINITY));
    }

    pub fn label(&self) -> String {
        format!("N{}/{}/rep{}", self.scale, self.variant, self.repeat)
    }
}

pub fn run_figures(run: &Run) -> RunFigures {
    let mut f = RunFigures {
        scale: run.scale,
        variant: run.variant.clone(),
        repeat: run.repeat,
        problems: problems(run),
        origin: run.origin(),
        values: [None; Metric::ALL.len()],
        attribution: attribution::of(run),
        implementation: run.summary.as_ref().map(|s| s.implementation.clone()),
        settings: run.summary.as_ref().and_then(|s| s.settings.clone()),
        preset_info: run.summary.as_ref().and_then(|s| s.preset_info.clone()),
        phases: phase_figures(run),
        kubernetes_version: run
            .summary
            .as_ref()
            .and_then(|s| s.kubernetes_version.clone()),
        cluster_grants: run
            .summary
            .as_ref()
            .map(|s| s.cluster_grants.clone())
            .unwrap_or_default(),
        workload: run.summary.as_ref().and_then(|s| s.workload.clone()),
        concurrent: run
            .summary
            .as_ref()
            .is_some_and(|s| s.schedule == Schedule::Concurrent),
        start_mode: run
            .summary
            .as_ref()
            .and_then(|s| s.start.as_ref())
            .map(|s| s.mode),
    };
    let n = run.scale;
    let ready_times: Vec<f64> = run.objects.iter().filter_map(|o| o.ready).collect();
    let ready = ready_times.len() as u64;
    f.set(Metric::Ready, Some(ready as f64));
    // Coverage: objects the controller ever wrote (status or annotation),
    // seen by our own watch; unknown in results without the column.
    f.set(
        Metric::Coverage,
        run.records_first_writes.then(|| {
            run.objects
                .iter()
                .filter(|o| o.first_write.is_some())
                .count() as f64
        }),
    );
    // First writes/s: how fast the controller reached new objects, timed by
    // our watch (ms) rather than by the 1 s scrapes that bound writes/s.
    let mut first_writes: Vec<f64> = run.objects.iter().filter_map(|o| o.first_write).collect();
    first_writes.sort_by(f64::total_cmp);
    f.set(
        Metric::FirstWritesPerS,
        match (first_writes.first(), first_writes.last()) {
            (Some(a), Some(b)) if b > a && run.records_first_writes => {
                Some((first_writes.len() - 1) as f64 / (b - a))
            }
            _ => None,
        },
    );
    let convergence = (n > 0 && ready >= n)
        .then(|| ready_times.iter().copied().reduce(f64::max))
        .flatten()
        .map(|t| t - f.origin);
    f.set(Metric::Convergence, convergence);
    // Time-to-Ready over every created object: one never seen Ready is
    // censored at the window end (+∞), so a percentile that falls on it reads
    // "> window" instead of quietly describing only the lucky objects.
    let ttr: Vec<f64> = run
        .objects
        .iter()
        .filter_map(|o| {
            let c = o.created?;
            Some(o.ready.map_or(f64::INFINITY, |r| r - c))
        })
        .collect();
    // T50/T90/T100: first create → the moment 50/90/100 % of N were Ready
    // (the k-th Ready, k = ⌈q·N⌉); unset when not reached.
    let first_create = run
        .objects
        .iter()
        .filter_map(|o| o.created)
        .reduce(f64::min);
    let mut in_order = ready_times.clone();
    in_order.sort_by(f64::total_cmp);
    for (m, q) in [(Metric::T50, 0.5), (Metric::T90, 0.9), (Metric::T100, 1.0)] {
        let k = ((q * n as f64).ceil() as usize).max(1);
        f.set(
            m,
            first_create.and_then(|c| in_order.get(k - 1).map(|t| t - c)),
        );
    }
    f.set(Metric::TtrP50, percentile(&ttr, 0.5));
    f.set(Metric::TtrP99, percentile(&ttr, 0.99));

    if let Some(m) = &run.metrics {
        f.set(Metric::Success, m.delta("reconcile_success_total"));
        f.set(Metric::Errors, m.delta("reconcile_error_total"));
        f.set(Metric::Retries, m.delta("queue_retries_total"));
        let count = m.delta("reconcile_latency_count");
        f.set(
            Metric::MeanLatency,
            m.delta("reconcile_latency_sum")
                .zip(count.filter(|c| *c > 0.0))
                .map(|(s, c)| s / c),
        );
        let b = m.bucket_delta("reconcile_latency");
        f.set(Metric::P50, Some(histogram_quantile(0.5, &b)));
        f.set(Metric::P90, Some(histogram_quantile(0.9, &b)));
        f.set(Metric::P99, Some(histogram_quantile(0.99, &b)));
        f.set(Metric::Conflicts, m.delta("rest_409_total"));
        f.set(Metric::ThrottleWait, m.delta("throttle_wait_s_sum"));
        f.set(Metric::Cpu, m.delta("cpu_seconds"));
        f.set(Metric::PeakRss, m.max("rss_bytes"));
        f.set(
            Metric::CpuPerReconcile,
            m.delta("cpu_seconds")
                .zip(count.filter(|c| *c > 0.0))
                .map(|(s, c)| s / c),
        );
        f.set(
            Metric::QueueWait,
            m.delta("queue_wait_s_sum")
                .zip(m.delta("queue_wait_count").filter(|c| *c > 0.0))
                .map(|(s, c)| s / c),
        );
    }
    // Ready per second: to convergence, else over the whole observed window
    // (the controller's last good scrape; without controller metrics, the
    // apiserver's); from the controller's start when it started after the
    // load (the load is not its time).
    let started = after_load_start(run).unwrap_or(0.0);
    let window = run
        .metrics
        .as_ref()
        .or(run.apiserver.as_ref())
        .and_then(|m| m.last_good())
        .map(|r| r.t - f.origin - started);
    if run.metrics.is_some() || convergence.is_some() || window.is_some() {
        f.set(
            Metric::ReadyPerS,
            match convergence.map(|c| c - started) {
                Some(c) if c > 0.0 => Some(n as f64 / c),
                _ => window.filter(|w| *w > 0.0).map(|w| ready as f64 / w),
            },
        );
    }
    if let Some(st) = run.summary.as_ref().and_then(|s| s.start.as_ref()) {
        f.set(Metric::StartFirstWrite, st.first_write_s);
        // The gauge is set once, when the list completes (0 before).
        f.set(
            Metric::StartInitialList,
            run.metrics_all
                .as_ref()
                .or(run.metrics.as_ref())
                .and_then(|m| m.max("initial_list_s"))
                .filter(|v| *v > 0.0),
        );
        f.set(Metric::StartAllReady, st.all_ready_s);
    }
    if let Some(a) = &run.apiserver {
        f.set(Metric::WritesPerS, controller_writes_per_s(run));
        // Updates only (what controllers send). Results from before the
        // split have one histogram over creates and updates: it fits
        // neither label, so both stay unmeasured (—).
        f.set(
            Metric::ApiP99,
            Some(histogram_quantile(
                0.99,
                &a.bucket_delta(WIDGET_UPDATE_LATENCY),
            )),
        );
        f.set(
            Metric::ApiCreateP99,
            Some(histogram_quantile(
                0.99,
                &a.bucket_delta(WIDGET_CREATE_LATENCY),
            )),
        );
    }
    // The audit log names each request's caller: server-side figures of
    // this variant's own writes, whatever ran beside it.
    // Counted over the controller's scrape span (baseline → last good row),
    // like every counter here: the controller writes on until it is stopped.
    if let Some(rows) = &run.audit {
        let span = run
            .metrics
            .as_ref()
            .and_then(|m| Some((m.first_good()?.t, m.last_good()?.t)));
        let lat: Vec<f64> = rows
            .iter()
            .filter(|r| r.is_update())
            .filter(|r| match (span, parse_time(&r.received_at)) {
                (Some((a, b)), Some(t)) => t >= a && t <= b,
                _ => true,
            })
            .map(|r| r.latency_s)
            .collect();
        f.set(Metric::OwnUpdates, Some(lat.len() as f64));
        f.set(Metric::OwnUpdateP50, percentile(&lat, 0.5));
        f.set(Metric::OwnUpdateP99, percentile(&lat, 0.99));
    }
    if let Some(e) = &run.etcd {
        f.set(
            Metric::FsyncP99,
            Some(histogram_quantile(0.99, &e.bucket_delta("wal_fsync"))),
        );
    }
    f
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
fn controller_writes_per_s(run: &Run) -> Option<f64> {
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

/// Why a run must not be averaged in: incomplete, failed scrapes, missing files.
fn problems(run: &Run) -> Vec<String> {
    let mut p = Vec::new();
    match &run.summary {
        None => p.push(match &run.summary_error {
            Some(e) => format!("unreadable summary.json: {e}"),
            None => "no summary.json (the run failed or was interrupted)".to_string(),
        }),
        Some(s) => {
            // The load is part of the experiment: a run whose loader failed
            // or did not finish measured a different workload.
            if s.load.errors > 0 {
                p.push(format!(
                    "loader errors: {} (first: {})",
                    s.load.errors,
                    s.load.first_error.as_deref().unwrap_or("?")
                ));
            } else if s.load.created < s.scale && !s.incomplete {
                p.push(format!(
                    "unfinished load: {} of {} created",
                    s.load.created, s.scale
                ));
            }
            if s.controller_exited_early {
                p.push(format!(
                    "the controller exited during the window (exit code {}; see controller.log)",
                    s.controller_exit_code
                        .map(|c| c.to_string())
                        .unwrap_or("?".into())
                ));
            }
            if s.incomplete {
                p.push(format!(
                    "incomplete (stop reason: {})",
                    s.stop_reason.as_str()
                ));
            }
        }
    }
    let mut failed = Vec::new();
    for (name, s) in [
        ("controller", &run.metrics),
        ("apiserver", &run.apiserver),
        ("etcd", &run.etcd),
    ] {
        // Scrapes of a process that a fault took down were expected to fail.
        let unexpected = s.as_ref().map_or(0, |s| {
            s.rows
                .iter()
                .filter(|r| !r.ok && !crate::faults::excused(run, name, r.t))
                .count()
        });
        match s {
            Some(_) if unexpected > 0 => failed.push(format!("{name} {unexpected}")),
            Some(s) if s.first_good().is_none() => {
                p.push(format!("no successful {name} scrape"));
            }
            // A controller without a metrics URL is not scraped, on purpose.
            None if name == "controller"
                && run.summary.as_ref().is_none_or(|s| s.controller_metrics) =>
            {
                p.push(format!("no metrics-{}.csv", run.variant))
            }
            _ => {}
        }
    }
    if !failed.is_empty() {
        p.push(format!("failed scrapes: {}", failed.join(", ")));
    }
    p
}

impl Group {
    /// The settings of the group's first run that recorded them (a variant's
    /// settings do not change between repeats).
    pub fn settings(&self) -> Option<(&str, &Settings)> {
        self.runs.iter().find_map(|r| {
            Some((
                r.implementation.as_deref().unwrap_or("?"),
                r.settings.as_ref()?,
            ))
        })
    }
}

/// A scale × variant cell: its runs, and which of them count.
pub struct Group {
    pub scale: u64,
    pub variant: String,
    pub runs: Vec<RunFigures>,
}

impl Group {
    /// The runs the medians use: those without problems, or, when every run
    /// has one, all of them (and the tables say so).
    pub fn used(&self) -> Vec<&RunFigures> {
        let clean: Vec<&RunFigures> = self.runs.iter().filter(|r| r.problems.is_empty()).collect();
        if clean.is_empty() {
            self.runs.iter().collect()
        } else {
            clean
        }
    }

    pub fn flagged_only(&self) -> bool {
        self.runs.iter().all(|r| !r.problems.is_empty())
    }

    pub fn excluded(&self) -> usize {
        if self.flagged_only() {
            0
        } else {
            self.runs.iter().filter(|r| !r.problems.is_empty()).count()
        }
    }

    /// "⚠" when the figures rest on flagged runs or some runs were left out.
    pub fn marker(&self) -> &'static str {
        if self.flagged_only() {
            " ⚠ flagged runs only"
        } else if self.excluded() > 0 {
            " ⚠ runs excluded"
        } else {
            ""
        }
    }

    pub fn stat(&self, m: Metric) -> Option<Stat> {
        stat(self.used().iter().filter_map(|r| r.get(m)).collect())
    }

    /// "median [min–max]" (just the value for one run); "—" when unmeasured.
    pub fn cell(&self, m: Metric) -> String {
        match self.stat(m) {
            None => "—".into(),
            Some(s) => fmt_stat(&s, |v| m.fmt(v)),
        }
    }

    /// "2.37 s", "not converged: 8 left", or a mix of both over repeats.
    pub fn convergence_cell(&self) -> String {
        let used = self.used();
        let conv: Vec<f64> = used
            .iter()
            .filter_map(|r| r.get(Metric::Convergence))
            .collect();
        let left: Vec<f64> = used
            .iter()
            .filter(|r| r.get(Metric::Convergence).is_none())
            .map(|r| r.scale as f64 - r.get(Metric::Ready).unwrap_or(0.0))
            .collect();
        let fmt_left = |l: Vec<f64>| stat(l).map(|s| fmt_stat(&s, fmt_count)).unwrap_or_default();
        match (conv.len(), left.len()) {
            (_, 0) => self.cell(Metric::Convergence),
            (0, _) => format!("not converged: {} left", fmt_left(left)),
            (c, l) => format!(
                "{} ({c} of {} runs converged; others {} left)",
                self.cell(Metric::Convergence),
                c + l,
                fmt_left(left)
            ),
        }
    }
}

/// Every run's figures, grouped by scale × variant in the experiment's order.
pub fn groups(results: &Results) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    for run in &results.runs {
        let f = run_figures(run);
        match groups
            .iter_mut()
            .find(|g| g.scale == run.scale && g.variant == run.variant)
        {
            Some(g) => g.runs.push(f),
            None => groups.push(Group {
                scale: run.scale,
                variant: run.variant.clone(),
                runs: vec![f],
            }),
        }
    }
    groups
}

/// One phase of one run.
#[derive(Clone, Debug, Default)]
pub struct PhaseFigures {
    pub summary: PhaseSummary,
    pub p50: Option<f64>,
    pub p99: Option<f64>,
    pub seconds: Option<f64>,
    pub controller_requests_per_s: Option<f64>,
    pub reconciles_per_s: Option<f64>,
    pub controller_cores: Option<f64>,
    pub apiserver_requests_per_s: Option<f64>,
}

/// Rate of counter `col` over `span`.
fn rate(s: Option<&Series>, col: &str, (t0, t1): (f64, f64)) -> Option<f64> {
    let (d, secs) = s?.delta_between(col, t0, t1)?;
    Some(d / secs)
}

/// Every phase of one run (after the create phase; report section in phases.rs).
pub fn phase_figures(run: &Run) -> Vec<PhaseFigures> {
    let Some(s) = &run.summary else {
        return Vec::new();
    };
    s.phases
        .iter()
        .map(|p| {
            let rows: Vec<&PhaseRecord> =
                run.phases.iter().filter(|r| r.phase == p.phase).collect();
            // Steps without a row (never sent) and rows never done: censored.
            let mut lat: Vec<f64> = rows
                .iter()
                .map(|r| r.latency().unwrap_or(f64::INFINITY))
                .collect();
            lat.extend((rows.len() as u64..p.steps).map(|_| f64::INFINITY));
            let span = p.span();
            let m = run.metrics_all.as_ref();
            PhaseFigures {
                summary: p.clone(),
                p50: percentile(&lat, 0.5),
                p99: percentile(&lat, 0.99),
                seconds: span.map(|(a, b)| b - a),
                controller_requests_per_s: span.and_then(|sp| rate(m, "rest_requests_total", sp)),
                // Every result counts: a requeue-after reconcile is one too.
                reconciles_per_s: span.and_then(|sp| {
                    let r = |c| rate(m, c, sp);
                    Some(
                        r("reconcile_success_total")?
                            + r("reconcile_error_total").unwrap_or(0.0)
                            + r("reconcile_requeue_total").unwrap_or(0.0),
                    )
                }),
                controller_cores: span.and_then(|sp| rate(m, "cpu_seconds", sp)),
                apiserver_requests_per_s: span
                    .and_then(|sp| rate(run.apiserver_all.as_ref(), "requests_total", sp)),
            }
        })
        .collect()
}
