//! The numbers: each run's figures (the metric catalogue's values, its
//! settings and phases), the problems that keep a run out of the medians
//! (and out of the repeat pairs), the scale × variant groups that aggregate
//! repeats, and the ratio of two groups of one results directory, paired by
//! repeat.

use ctrlbench_record::phases::{PhaseRecord, PhaseSummary};
use ctrlbench_record::series::Series;
use ctrlbench_record::summary::{ObjectSample, PresetInfo, Schedule, Settings, StartMode};

use crate::attribution::{self, Attribution};
use crate::interval::Ratio;
use crate::load::{Results, Run};
use crate::metrics::Inputs;
use crate::metrics::Metric;
use crate::quantile::percentile;
use crate::stats::{Stat, fmt_count, fmt_stat, stat};

/// What one run measured.
pub struct RunFigures {
    pub scale: u64,
    pub variant: String,
    pub repeat: u32,
    /// Why this run stays out of the medians (empty: it counts).
    pub problems: Vec<String>,
    /// The controller exited during the window (one of the problems).
    pub exited_early: bool,
    /// Load start (epoch seconds): the last create minus the loader's duration.
    pub origin: f64,
    values: [Option<f64>; Metric::ALL.len()],
    pub attribution: Attribution,
    /// The implementation and the settings the controller ran with (summary.json).
    pub implementation: Option<String>,
    /// A user's controller's framework, where its variant states it.
    pub framework: Option<String>,
    pub settings: Option<Settings>,
    /// The preset's description, question and counterpart (summary.json).
    pub preset_info: Option<PresetInfo>,
    /// The phases after the create phase.
    pub phases: Vec<PhaseFigures>,
    /// The cluster's Kubernetes version during the run.
    pub kubernetes_version: Option<String>,
    /// The local plane's apiserver feature gates during the run.
    pub feature_gates: Vec<String>,
    /// Cluster-wide RBAC grants of the controller's identity (summary.json).
    pub cluster_grants: Vec<String>,
    /// The workload when not the built-in Widget one (summary.json).
    pub workload: Option<String>,
    /// Whether the variants of this run shared the cluster (server-side
    /// figures are then cluster-wide).
    pub concurrent: bool,
    /// When the controller started (summary.json; None in older results).
    pub start_mode: Option<StartMode>,
    /// The plane's processes (name, CPU seconds, peak RSS bytes) when the
    /// run recorded plane.csv: etcd and kube-apiserver from their own
    /// files, then the others.
    pub plane_processes: Vec<(String, Option<f64>, Option<f64>)>,
    /// Pod start times (pods.csv; None: no pod in the run's namespace).
    pub pods: Option<crate::pods::PodFigures>,
    /// The create phase's API footprint (footprint.csv; None: no audit log).
    pub footprint: Option<crate::footprint::Footprint>,
    /// Controller replicas (1 unless the variant ran several).
    pub replicas: usize,
    /// Objects first seen Ready by the window end.
    pub ready: u64,
    /// `[workload] decoys` of the run (summary.json; 0: none).
    pub decoys: u64,
    /// What the run's objects weighed as the apiserver sent them (summary.json).
    pub object_sample: Option<ObjectSample>,
    /// How much the controller's resident memory grew over the create
    /// phase: its peak less its first scrape's, in bytes (one replica
    /// scraped for `rss_bytes`; None otherwise).
    pub rss_growth: Option<f64>,
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
            exited_early: false,
            origin: 0.0,
            values: [None; Metric::ALL.len()],
            attribution: Attribution::default(),
            implementation: None,
            framework: None,
            settings: None,
            preset_info: None,
            phases: Vec::new(),
            kubernetes_version: None,
            feature_gates: Vec::new(),
            cluster_grants: Vec::new(),
            workload: None,
            concurrent: false,
            start_mode: None,
            plane_processes: Vec::new(),
            pods: None,
            footprint: None,
            replicas: 1,
            ready: 0,
            decoys: 0,
            object_sample: None,
            rss_growth: None,
        }
    }

    pub(crate) fn set(&mut self, m: Metric, v: Option<f64>) {
        self.values[m as usize] = m.keep(v);
    }

    pub fn label(&self) -> String {
        format!("N{}/{}/rep{}", self.scale, self.variant, self.repeat)
    }
}

/// Every figure of one run, from its files.
pub fn run_figures(run: &Run) -> RunFigures {
    let summary = run.summary.as_ref();
    let inputs = Inputs::of(run);
    let mut f = RunFigures {
        scale: run.scale,
        variant: run.variant.clone(),
        repeat: run.repeat,
        problems: problems(run),
        exited_early: summary.is_some_and(|s| s.controller_exited_early),
        origin: inputs.origin,
        values: [None; Metric::ALL.len()],
        attribution: attribution::of(run),
        implementation: summary.map(|s| s.implementation.clone()),
        framework: summary.and_then(|s| s.framework.clone()),
        settings: summary.and_then(|s| s.settings.clone()),
        preset_info: summary.and_then(|s| s.preset_info.clone()),
        phases: phase_figures(run),
        kubernetes_version: summary.and_then(|s| s.kubernetes_version.clone()),
        feature_gates: summary.map(|s| s.feature_gates.clone()).unwrap_or_default(),
        cluster_grants: summary
            .map(|s| s.cluster_grants.clone())
            .unwrap_or_default(),
        workload: summary.and_then(|s| s.workload.clone()),
        concurrent: summary.is_some_and(|s| s.schedule == Schedule::Concurrent),
        start_mode: summary.and_then(|s| s.start.as_ref()).map(|s| s.mode),
        plane_processes: plane_processes(run),
        pods: crate::pods::of(run),
        footprint: run
            .footprint
            .as_deref()
            .map(crate::footprint::Footprint::of),
        replicas: summary.map_or(1, |s| s.replicas.len().max(1)),
        ready: summary.map_or(0, |s| s.ready),
        decoys: summary.map_or(0, |s| s.decoys),
        object_sample: summary.and_then(|s| s.object_sample.clone()),
        rss_growth: rss_growth(run),
    };
    for &m in Metric::ALL {
        f.set(m, m.of(&inputs));
    }
    f
}

/// The controller's peak RSS less its first scrape's: what the objects
/// (and the work) added. A controller that started after the load had its
/// cache filled before the first scrape, so it shows less; several
/// replicas have no one first scrape.
fn rss_growth(run: &Run) -> Option<f64> {
    if run.summary.as_ref().is_some_and(|s| s.replicas.len() > 1) {
        return None;
    }
    let m = run.metrics.as_ref()?;
    let first = m.get(m.first_good()?, "rss_bytes")?;
    Some((m.max("rss_bytes")? - first).max(0.0))
}

/// The plane's processes' CPU (counter delta) and peak RSS, when the run
/// recorded plane.csv.
fn plane_processes(run: &Run) -> Vec<(String, Option<f64>, Option<f64>)> {
    let Some(plane) = run.plane.as_ref() else {
        return Vec::new();
    };
    let of = |s: Option<&Series>, cpu: &str, rss: &str| {
        (s.and_then(|s| s.delta(cpu)), s.and_then(|s| s.max(rss)))
    };
    let mut out = Vec::new();
    for (name, s) in [
        ("etcd", run.etcd.as_ref()),
        ("kube-apiserver", run.apiserver.as_ref()),
    ] {
        let (cpu, rss) = of(s, "cpu_seconds", "rss_bytes");
        out.push((name.to_string(), cpu, rss));
    }
    for name in ctrlbench_record::plane::PROCESSES {
        let (cpu_col, rss_col) = (
            ctrlbench_record::plane::cpu_column(name),
            ctrlbench_record::plane::rss_column(name),
        );
        let (cpu, rss) = of(Some(plane), &cpu_col, &rss_col);
        if cpu.is_some() || rss.is_some() {
            out.push((name.to_string(), cpu, rss));
        }
    }
    out
}

/// Why a run must not be averaged in: incomplete, failed scrapes, missing files.
pub(crate) fn problems(run: &Run) -> Vec<String> {
    let mut p = Vec::new();
    match &run.summary {
        None => p.push(match &run.summary_error {
            Some(e) => format!("unreadable summary.json: {e}"),
            None => "no summary.json (the run failed or was interrupted)".to_string(),
        }),
        Some(s) => {
            // The load is part of the experiment: a run whose loader failed
            // or did not finish measured a different workload.
            if s.etcd_nospace {
                p.push(format!(
                    "etcd ran out of space (its NOSPACE alarm): {} creates refused, the plane could not hold N objects of this size (first: {})",
                    s.load.errors,
                    s.load.first_error.as_deref().unwrap_or("?")
                ));
            } else if s.load.errors > 0 {
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
            // Other processes took CPU the controller and the plane would
            // have had: the run measured a shared machine.
            if let Some(m) = s.machine.as_ref().filter(|m| m.busy) {
                p.push(format!(
                    "machine busy: other processes used {:.0} % of a core ({:.1} CPU s; \
                     threshold {:.0} %), load average {:.1}",
                    m.other_core_fraction * 100.0,
                    m.other_cpu_s,
                    m.threshold_core_fraction * 100.0,
                    m.load_avg_1m
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

/// A scale × variant cell: its runs, and which of them count.
pub struct Group {
    pub scale: u64,
    pub variant: String,
    pub runs: Vec<RunFigures>,
}

impl Group {
    /// The workload's kind when it is not the built-in Widget: the first
    /// word of its description ("Memcached (cache.example.com/v1alpha1, …)").
    pub fn kind(&self) -> Option<&str> {
        self.runs
            .iter()
            .find_map(|r| r.workload.as_deref())
            .and_then(|w| w.split_whitespace().next())
    }

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

    /// The figure of every run the medians use.
    pub fn values(&self, m: Metric) -> Vec<f64> {
        self.used().iter().filter_map(|r| r.get(m)).collect()
    }

    pub fn stat(&self, m: Metric) -> Option<Stat> {
        stat(self.values(m))
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

/// (A_k, B_k) for every repeat k that both groups' medians use (flagged
/// runs are left out of pairs as they are of medians), where `f` measured both.
pub fn repeat_pairs(
    a: &Group,
    b: &Group,
    f: impl Fn(&RunFigures) -> Option<f64>,
) -> Vec<(f64, f64)> {
    let bs = b.used();
    a.used()
        .iter()
        .filter_map(|x| {
            let y = bs.iter().find(|y| y.repeat == x.repeat)?;
            Some((f(x)?, f(y)?))
        })
        .collect()
}

/// B/A of two groups of one results directory, whose variants ran
/// interleaved: paired by repeat (unpaired only where a zero leaves the
/// per-repeat log ratio undefined).
pub fn interleaved(a: &Group, b: &Group, f: impl Fn(&RunFigures) -> Option<f64>) -> Option<Ratio> {
    let pairs = repeat_pairs(a, b, &f);
    let values = |g: &Group| -> Vec<f64> { g.used().iter().filter_map(|r| f(r)).collect() };
    Ratio::interleaved(&pairs, &values(a), &values(b))
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
    /// The controller's requests in the phase as the audit log saw them
    /// (footprint.csv), per object per minute: what it costs while idle.
    pub api_requests_per_object_min: Option<f64>,
}

/// Rate of counter `col` over `span`.
fn rate(s: Option<&Series>, col: &str, (t0, t1): (f64, f64)) -> Option<f64> {
    let (d, secs) = s?.delta_between(col, t0, t1)?;
    Some(d / secs)
}

/// Every phase of one run after the create phase (shown by sections/phases.rs).
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
                api_requests_per_object_min: span.and_then(|(a, b)| {
                    let label = format!("phase-{}", p.phase);
                    let n: f64 = run
                        .footprint
                        .as_ref()?
                        .iter()
                        .filter(|r| r.phase == label)
                        .map(|r| r.count as f64)
                        .sum();
                    let (objects, minutes) = (run.scale as f64, (b - a) / 60.0);
                    (objects > 0.0 && minutes > 0.0).then(|| n / objects / minutes)
                }),
            }
        })
        .collect()
}
