//! The numbers: per-run figures computed from the CSVs (counters as deltas
//! from the baseline row to the last good row), the problems that keep a run
//! out of the medians, and per scale × variant aggregation over repeats.

use super::attribution::{self, Attribution};
use super::load::{Results, Run};
use super::quantile::{histogram_quantile, median, percentile};

/// A headline figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    Ready,
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
    ReadyPerS,
    WritesPerS,
    Conflicts,
    ThrottleWait,
    Cpu,
    PeakRss,
    ApiP99,
    FsyncP99,
}

enum Unit {
    Count,
    Duration,
    Rate,
    Bytes,
    Seconds,
}

impl Metric {
    pub const ALL: [Metric; 19] = [
        Metric::Ready,
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
        Metric::ReadyPerS,
        Metric::WritesPerS,
        Metric::Conflicts,
        Metric::ThrottleWait,
        Metric::Cpu,
        Metric::PeakRss,
        Metric::ApiP99,
        Metric::FsyncP99,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Metric::Ready => "Ready at window end",
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
            Metric::ReadyPerS => "Ready/s",
            Metric::WritesPerS => "writes/s",
            Metric::Conflicts => "409s",
            Metric::ThrottleWait => "throttle wait",
            Metric::Cpu => "CPU",
            Metric::PeakRss => "peak RSS",
            Metric::ApiP99 => "apiserver write p99",
            Metric::FsyncP99 => "etcd fsync p99",
        }
    }

    fn unit(self) -> Unit {
        match self {
            Metric::Ready
            | Metric::Success
            | Metric::Errors
            | Metric::Retries
            | Metric::Conflicts => Unit::Count,
            Metric::ReadyPerS | Metric::WritesPerS => Unit::Rate,
            Metric::PeakRss => Unit::Bytes,
            Metric::Cpu => Unit::Seconds,
            _ => Unit::Duration,
        }
    }

    pub fn fmt(self, v: f64) -> String {
        match self.unit() {
            Unit::Count => fmt_count(v),
            Unit::Rate => format!("{v:.1}/s"),
            Unit::Bytes => format!("{:.1} MiB", v / (1024.0 * 1024.0)),
            Unit::Seconds => format!("{v:.2} s"),
            Unit::Duration => fmt_duration(v),
        }
    }
}

/// Whole counts as integers; a median between two counts keeps its half.
pub fn fmt_count(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// Seconds, shown as ms below one second.
pub fn fmt_duration(v: f64) -> String {
    let ms = v * 1000.0;
    if v.abs() >= 1.0 {
        format!("{v:.2} s")
    } else if ms.abs() >= 10.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{ms:.2} ms")
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
}

impl RunFigures {
    pub fn get(&self, m: Metric) -> Option<f64> {
        self.values[m as usize]
    }

    fn set(&mut self, m: Metric, v: Option<f64>) {
        self.values[m as usize] = v.filter(|x| x.is_finite());
    }

    pub fn label(&self) -> String {
        format!("N{}/{}/rep{}", self.scale, self.variant, self.repeat)
    }
}

/// The load start: objects.csv's last `created_at` minus summary.load.seconds
/// (the loader's clock starts with it); else the baseline scrape.
pub fn origin(run: &Run) -> f64 {
    let last_create = run
        .objects
        .iter()
        .filter_map(|o| o.created)
        .reduce(f64::max);
    match (last_create, run.summary_f64(&["load", "seconds"])) {
        (Some(c), Some(s)) => c - s,
        _ => run
            .metrics
            .as_ref()
            .and_then(|m| m.first_good())
            .map(|r| r.t)
            .or_else(|| {
                run.objects
                    .iter()
                    .filter_map(|o| o.created)
                    .reduce(f64::min)
            })
            .unwrap_or(0.0),
    }
}

pub fn run_figures(run: &Run) -> RunFigures {
    let mut f = RunFigures {
        scale: run.scale,
        variant: run.variant.clone(),
        repeat: run.repeat,
        problems: problems(run),
        origin: origin(run),
        values: [None; Metric::ALL.len()],
        attribution: attribution::of(run),
    };
    let n = run.scale;
    let ready_times: Vec<f64> = run.objects.iter().filter_map(|o| o.ready).collect();
    let ready = ready_times.len() as u64;
    f.set(Metric::Ready, Some(ready as f64));
    let convergence = (n > 0 && ready >= n)
        .then(|| ready_times.iter().copied().reduce(f64::max))
        .flatten()
        .map(|t| t - f.origin);
    f.set(Metric::Convergence, convergence);
    let ttr: Vec<f64> = run
        .objects
        .iter()
        .filter_map(|o| Some(o.ready? - o.created?))
        .collect();
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
        // Ready per second: to convergence, else over the whole observed window.
        let window = m.last_good().map(|r| r.t - f.origin);
        f.set(
            Metric::ReadyPerS,
            match convergence {
                Some(c) if c > 0.0 => Some(n as f64 / c),
                _ => window.filter(|w| *w > 0.0).map(|w| ready as f64 / w),
            },
        );
    }
    if let Some(a) = &run.apiserver {
        f.set(Metric::WritesPerS, controller_writes_per_s(run, f.origin));
        f.set(
            Metric::ApiP99,
            Some(histogram_quantile(
                0.99,
                &a.bucket_delta("widget_write_latency"),
            )),
        );
    }
    if let Some(e) = &run.etcd {
        f.set(
            Metric::FsyncP99,
            Some(histogram_quantile(0.99, &e.bucket_delta("wal_fsync"))),
        );
    }
    f
}

/// Objects the loader created (summary.load.created, else objects.csv).
pub fn created(run: &Run) -> f64 {
    run.summary_f64(&["load", "created"])
        .unwrap_or_else(|| run.objects.iter().filter(|o| o.created.is_some()).count() as f64)
}

/// The controller's widget writes as the apiserver counted them (all write
/// verbs on widgets, /status included, minus the loader's creates), per
/// second of the active period: load start → the row where the counter
/// reached its final value.
fn controller_writes_per_s(run: &Run, origin: f64) -> Option<f64> {
    let a = run.apiserver.as_ref()?;
    let writes = (a.delta("widget_writes_total")? - created(run)).max(0.0);
    if writes == 0.0 {
        return Some(0.0);
    }
    let last = a.get(a.last_good()?, "widget_writes_total")?;
    let done = a
        .good()
        .find(|r| a.get(r, "widget_writes_total") == Some(last))?;
    let span = done.t - origin;
    (span > 0.0).then(|| writes / span)
}

/// Why a run must not be averaged in: incomplete, failed scrapes, missing files.
fn problems(run: &Run) -> Vec<String> {
    let mut p = Vec::new();
    match &run.summary {
        None => p.push("no summary.json (the run failed or was interrupted)".to_string()),
        Some(s) => {
            if s["incomplete"].as_bool().unwrap_or(false) {
                p.push(format!(
                    "incomplete (stop reason: {})",
                    s["stop_reason"].as_str().unwrap_or("?")
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
        match s {
            Some(s) if s.failed() > 0 => failed.push(format!("{name} {}", s.failed())),
            Some(s) if s.first_good().is_none() => {
                p.push(format!("no successful {name} scrape"));
            }
            None if name == "controller" => p.push(format!("no metrics-{}.csv", run.variant)),
            _ => {}
        }
    }
    if !failed.is_empty() {
        p.push(format!("failed scrapes: {}", failed.join(", ")));
    }
    p
}

/// A scale × variant cell: its runs, and which of them count.
pub struct Group {
    pub scale: u64,
    pub variant: String,
    pub runs: Vec<RunFigures>,
}

/// Median, range and provenance of one figure over a group's runs.
pub struct Stat {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub n: usize,
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

pub fn stat(mut v: Vec<f64>) -> Option<Stat> {
    v.retain(|x| x.is_finite());
    Some(Stat {
        median: median(&v)?,
        min: v.iter().copied().reduce(f64::min)?,
        max: v.iter().copied().reduce(f64::max)?,
        n: v.len(),
    })
}

/// "47.0 [22.5–71.4] ms" (unit once when all three share it).
pub fn fmt_stat(s: &Stat, f: impl Fn(f64) -> String) -> String {
    if s.n <= 1 || s.min == s.max {
        return f(s.median);
    }
    let [m, lo, hi] = [s.median, s.min, s.max].map(&f);
    let unit = |x: &str| {
        let i = x.rfind(|c: char| c.is_ascii_digit()).map_or(0, |i| i + 1);
        x[i..].to_string()
    };
    let u = unit(&m);
    if !u.is_empty() && unit(&lo) == u && unit(&hi) == u {
        let strip = |x: &str| x[..x.len() - u.len()].to_string();
        format!("{} [{}–{}]{u}", strip(&m), strip(&lo), strip(&hi))
    } else {
        format!("{m} [{lo}–{hi}]")
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(fmt_duration(0.0042), "4.20 ms");
        assert_eq!(fmt_duration(0.0517), "51.7 ms");
        assert_eq!(fmt_duration(2.3652), "2.37 s");
        assert_eq!(fmt_count(11.5), "11.5");
        assert_eq!(Metric::PeakRss.fmt(23068672.0), "22.0 MiB");
        let s = stat(vec![0.0225, 0.0714, 0.047]).unwrap();
        assert_eq!(fmt_stat(&s, fmt_duration), "47.0 [22.5–71.4] ms");
        let s = stat(vec![0.157, 2.37]).unwrap();
        assert_eq!(fmt_stat(&s, fmt_duration), "1.26 s [157.0 ms–2.37 s]");
        assert!(stat(vec![f64::NAN]).is_none());
    }
}
