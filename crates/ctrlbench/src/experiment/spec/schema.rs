//! The experiment file as written: the serde types and their defaults,
//! nothing else. Values keep their `Spanned` place in the file so that a
//! check can name the line; the checks turn these into the plain types of
//! `validated.rs`. The `[[variant]]` table's type comes from the key table
//! (`keys.rs`), `[[phase]]`'s and `[workload]`'s from their own modules.

use serde::{Deserialize, Serialize};
use toml::Spanned;

pub use super::keys::VariantSpec;
use crate::experiment::phase::PhaseSpec;
use crate::experiment::workload::WorkloadSpec;

/// The types of `[[variant]]` values, which the key table uses too.
pub use super::values::{
    ConflictReread, LogLevel, Predicate, Preset, Queue, RbacRule, StartMode, StatusWrite,
};
/// One variant at a time, or all at once (the write-up's Experiment 1): the
/// record's type, so what the file says is what summary.json says.
pub use ctrlbench_record::summary::Schedule;

/// `probe_objects` when unset (and `ctrlbench probe --objects`'s default).
pub const DEFAULT_PROBE_OBJECTS: u64 = 500;

/// An experiment file as written.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    pub name: Spanned<String>,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub cluster: ClusterSpec,
    #[serde(rename = "variant")]
    pub variants: Spanned<Vec<VariantSpec>>,
    pub scales: Spanned<Vec<u64>>,
    #[serde(default = "default_window")]
    pub window_s: Spanned<f64>,
    #[serde(default)]
    pub stop_when_converged: bool,
    /// With stop_when_converged: seconds without a reconcile that count as quiet.
    #[serde(default = "default_quiet")]
    pub quiet_s: Spanned<f64>,
    /// A number of interleaved repeats, or "auto": repeats until every
    /// question of the experiment is decided (between min_repeats and max_repeats).
    #[serde(default = "default_one")]
    pub repeats: Spanned<RepeatsSpec>,
    pub min_repeats: Option<Spanned<u32>>,
    pub max_repeats: Option<Spanned<u32>>,
    /// The equivalence margin of every verdict (a fraction: 0.05 is ±5 %).
    pub margin: Option<Spanned<f64>>,
    /// The margin δ of the growth verdicts, on an exponent (0.15: within
    /// ±0.15 of 0 is flat, of 1 linear per object).
    pub growth_margin: Option<Spanned<f64>>,
    /// Other processes' CPU, as a fraction of one core, above which a run
    /// is flagged "machine busy" and kept out of medians and pairs.
    pub busy_threshold: Option<Spanned<f64>>,
    /// A new local plane (empty etcd) for every run, every repeat, or one
    /// for the whole experiment (default).
    pub fresh_plane: Option<Spanned<FreshPlane>>,
    /// One run of each variant before the first repeat, then discarded: the
    /// caches, the JIT-less but cold binaries and etcd's first compaction
    /// are not part of any repeat.
    #[serde(default)]
    pub warmup: bool,
    /// `[[compare]]`: questions of the form "is b higher, lower or the same
    /// as a on this figure?", answered first in the report.
    #[serde(rename = "compare", default)]
    pub compare: Vec<CompareSpec>,
    /// `[[goal]]`: targets on a ratio between paired variants, for the
    /// lab's files that study our own controllers (`goals.rs`).
    #[serde(rename = "goal", default)]
    pub goals: Vec<GoalSpec>,
    /// `[budget]`: limits on figures of every variant (`budget.rs`).
    pub budget: Option<super::budget::BudgetSpec>,
    #[serde(default)]
    pub schedule: Schedule,
    /// Loader: widgets created at once.
    #[serde(default = "default_concurrency")]
    pub concurrency: Spanned<u32>,
    #[serde(default = "default_one_f")]
    pub scrape_interval_s: Spanned<f64>,
    /// Run `ctrlbench probe` before each repeat (of each scale) and record
    /// its figures in the manifest, tagged with that scale and repeat.
    #[serde(default)]
    pub probe: bool,
    /// Widgets per writer level of that probe. A short burst of 500 is
    /// faster than a 5000-object load, so a like-for-like comparison sets
    /// it to the experiment's scale.
    #[serde(default = "default_probe_objects")]
    pub probe_objects: Spanned<u64>,
    /// Widgets created once in a namespace of their own before any
    /// controller starts (run/background.rs): what a cluster-wide cache holds
    /// besides the run's own objects.
    #[serde(default = "no_objects")]
    pub background_objects: Spanned<u64>,
    /// What happens after the create phase, in order (experiment/phase.rs).
    /// The built-in Widgets' size in bytes (JSON, as created; the message is
    /// padded): 0 or unset, a bare Widget.
    pub object_bytes: Option<Spanned<u64>>,
    #[serde(default, rename = "phase")]
    pub phases: Vec<PhaseSpec>,
    /// What the runs create and when an object is ready (default: widgets).
    pub workload: Option<WorkloadSpec>,
    /// `[[fault]]`: what the runner does to a process during each run.
    #[serde(rename = "fault", default)]
    pub faults: Vec<FaultSpec>,
}

/// `[[fault]]`: at `at_s` after the load starts, `action` on `target`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FaultSpec {
    pub at_s: Spanned<f64>,
    pub action: Spanned<FaultAction>,
    /// controller | apiserver:<k> | etcd:<k> | etcd:leader | etcd:follower.
    pub target: Spanned<String>,
    /// stop: seconds stopped; restart: seconds down before the new start.
    #[serde(default = "zero_f")]
    pub duration_s: Spanned<f64>,
}

/// What a fault does.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum FaultAction {
    /// SIGKILL; the process stays down.
    Kill,
    /// SIGSTOP, SIGCONT after `duration_s`.
    Stop,
    /// SIGKILL, then the same process (flags, identity, data) again after `duration_s`.
    Restart,
}

impl FaultAction {
    pub fn as_str(self) -> &'static str {
        match self {
            FaultAction::Kill => "kill",
            FaultAction::Stop => "stop",
            FaultAction::Restart => "restart",
        }
    }
}

/// `repeats` as written: a count, or "auto".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum RepeatsSpec {
    Count(u32),
    /// Written "auto".
    Auto,
}

impl<'de> Deserialize<'de> for RepeatsSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = RepeatsSpec;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a number of repeats or \"auto\"")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<RepeatsSpec, E> {
                u32::try_from(v)
                    .map(RepeatsSpec::Count)
                    .map_err(|_| E::custom(format!("{v} is not a number of repeats")))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<RepeatsSpec, E> {
                self.visit_i64(i64::try_from(v).unwrap_or(-1))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<RepeatsSpec, E> {
                match v {
                    "auto" => Ok(RepeatsSpec::Auto),
                    _ => Err(E::custom(format!("{v:?}: repeats is a number or \"auto\""))),
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// How often the local plane is started anew.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FreshPlane {
    Run,
    Repeat,
    #[default]
    Experiment,
}

/// `[[compare]]` as written.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CompareSpec {
    pub a: Spanned<String>,
    pub b: Spanned<String>,
    /// A figure of the report's catalogue ("Ready/s", "peak RSS", …).
    #[serde(default = "default_figure")]
    pub figure: Spanned<String>,
}

fn default_figure() -> Spanned<String> {
    Spanned::new(0..0, "Ready/s".to_string())
}

/// `[[goal]]` as written: B/A on `figure` for every pair `<b>-X` / `<a>-X`,
/// at least or at most a bound.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct GoalSpec {
    pub figure: Spanned<String>,
    pub a: Spanned<String>,
    pub b: Spanned<String>,
    pub at_least: Option<Spanned<f64>>,
    pub at_most: Option<Spanned<f64>>,
    pub from_scale: Option<Spanned<u64>>,
}

/// `[cluster]`: a local plane (default) or an existing cluster.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterSpec {
    pub k8s_version: Option<Spanned<String>>,
    #[serde(default)]
    pub feature_gates: Vec<String>,
    #[serde(default = "no_args")]
    pub apiserver_args: Spanned<Vec<String>>,
    #[serde(default = "no_args")]
    pub etcd_args: Spanned<Vec<String>>,
    pub etcd_fsync: Option<bool>,
    /// The apiserver's audit log of writes (local plane only):
    /// per-variant server-side latency and counts in each run's audit.csv.
    pub audit_log: Option<bool>,
    /// etcd cluster size (local plane; default 1).
    pub etcd_members: Option<Spanned<u32>>,
    /// kube-apiservers behind the front (local plane; default 1).
    pub apiservers: Option<Spanned<u32>>,
    /// kube-controller-manager's namespace and garbage-collector controllers
    /// on the local plane (default off: ctrlbench finalizes namespaces itself).
    pub controller_manager: Option<bool>,
    /// Fake nodes managed by KWOK, with kube-scheduler, on the local plane
    /// (default 0; more implies `controller_manager`).
    pub nodes: Option<Spanned<u32>>,
    /// Each fake node's pod capacity (default 110).
    pub node_pods: Option<Spanned<u32>>,
    /// kube-controller-manager's client limits (default 20 and 30).
    pub controller_manager_qps: Option<Spanned<u32>>,
    pub controller_manager_burst: Option<Spanned<u32>>,
    /// kube-scheduler's (default 50 and 100).
    pub scheduler_qps: Option<Spanned<u32>>,
    pub scheduler_burst: Option<Spanned<u32>>,
    /// kube-scheduler's PodTopologySpread default constraints (default
    /// on, as upstream; off: pods spread only where they ask to).
    pub scheduler_default_spread: Option<Spanned<bool>>,
    /// A mirror of the release downloads (http or https; local plane), under
    /// `CTRLBENCH_MIRROR` when that is set.
    pub mirror: Option<Spanned<String>>,
    /// No release downloads: missing binaries are built (local plane).
    pub offline: Option<bool>,
    pub kubeconfig: Option<Spanned<String>>,
    pub context: Option<Spanned<String>>,
    /// Where the plane, the controllers and ctrlbench run: CPU lists.
    pub cpus: Option<Spanned<CpusSpec>>,
}

/// `cpus = { plane = "0-1", controller = "2", harness = "3" }`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CpusSpec {
    pub plane: Option<String>,
    pub controller: Option<String>,
    pub harness: Option<String>,
}

impl Default for ClusterSpec {
    fn default() -> Self {
        ClusterSpec {
            k8s_version: None,
            feature_gates: Vec::new(),
            apiserver_args: no_args(),
            etcd_args: no_args(),
            etcd_fsync: None,
            audit_log: None,
            etcd_members: None,
            apiservers: None,
            controller_manager: None,
            nodes: None,
            node_pods: None,
            controller_manager_qps: None,
            controller_manager_burst: None,
            scheduler_qps: None,
            scheduler_burst: None,
            scheduler_default_spread: None,
            mirror: None,
            offline: None,
            kubeconfig: None,
            context: None,
            cpus: None,
        }
    }
}

fn zero_f() -> Spanned<f64> {
    Spanned::new(0..0, 0.0)
}
fn default_window() -> Spanned<f64> {
    Spanned::new(0..0, 60.0)
}
fn default_quiet() -> Spanned<f64> {
    Spanned::new(0..0, 3.0)
}
fn default_one() -> Spanned<RepeatsSpec> {
    Spanned::new(0..0, RepeatsSpec::Count(1))
}
fn default_one_f() -> Spanned<f64> {
    Spanned::new(0..0, 1.0)
}
fn no_objects() -> Spanned<u64> {
    Spanned::new(0..0, 0)
}
fn default_probe_objects() -> Spanned<u64> {
    Spanned::new(0..0, DEFAULT_PROBE_OBJECTS)
}
fn default_concurrency() -> Spanned<u32> {
    Spanned::new(0..0, 16)
}
fn no_args() -> Spanned<Vec<String>> {
    Spanned::new(0..0, Vec::new())
}
