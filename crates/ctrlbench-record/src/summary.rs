//! `summary.json`: what one run (one variant at one scale and repeat) did —
//! the variant's effective settings, the load, Ready counts, convergence,
//! reconcile deltas, scrape failures, why the run stopped and whether the
//! machine was busy with other work while it ran.

use std::path::Path;

use anyhow::Result;
use serde::{Deserialize, Serialize};

/// The settings a controller actually ran with, as it printed them
/// (`--print-settings`): one type with the controllers', defined once in
/// `ctrlbench-settings`, with the words it is made of.
pub use ctrlbench_settings::{
    Cache, LeaderElection, LogFormat, LogLevel, Predicate, Queue, RateLimit, Read, Settings,
    StatusWrite,
};

/// Why the measurement loop ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StopReason {
    /// The observation window ran out.
    Window,
    /// Every object Ready and the reconcile counters quiet.
    Converged,
    /// Ctrl-C or SIGTERM.
    Interrupted,
    /// Some creates failed, and every object that exists is Ready with the
    /// reconcile counters quiet: the run could not converge.
    #[serde(rename = "creates-failed")]
    CreatesFailed,
}

impl StopReason {
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Window => "window",
            StopReason::Converged => "converged",
            StopReason::Interrupted => "interrupted",
            StopReason::CreatesFailed => "creates-failed",
        }
    }
}

/// One variant at a time, or all at once (the write-up's Experiment 1).
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Schedule {
    #[default]
    Isolated,
    Concurrent,
}

impl std::fmt::Display for Schedule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Schedule::Isolated => "isolated",
            Schedule::Concurrent => "concurrent",
        })
    }
}

/// When a variant's controller starts: before the loader (objects are
/// created while it runs, the default) or once all N objects exist (the
/// restart-with-many-objects case).
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum StartMode {
    #[default]
    BeforeLoad,
    AfterLoad,
}

impl StartMode {
    pub fn as_str(self) -> &'static str {
        match self {
            StartMode::BeforeLoad => "before-load",
            StartMode::AfterLoad => "after-load",
        }
    }
}

impl std::fmt::Display for StartMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The controller's start and what followed it, in seconds from the moment
/// its process was started (the harness's clock).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Start {
    pub mode: StartMode,
    /// Controller start relative to the load start (negative: before it).
    pub controller_started_s: f64,
    /// Controller start → the first object written by anyone but the loader
    /// (our own watch: the first reconcile's write, seen).
    pub first_write_s: Option<f64>,
    /// Controller start → the last of N objects first seen Ready.
    pub all_ready_s: Option<f64>,
    /// Reconciles the controller had already counted at the baseline scrape
    /// (after-load: it starts on its own; these are outside the deltas).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconciles_at_baseline: Option<f64>,
}

/// The loader's part of a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Load {
    pub created: u64,
    pub errors: u64,
    pub seconds: f64,
    pub rate_per_s: f64,
    pub first_error: Option<String>,
    /// Creates in flight at once (the experiment's `concurrency`); absent in
    /// older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<u32>,
}

/// Controller reconcile counters, last good scrape minus the baseline.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Reconciles {
    pub total: Option<f64>,
    pub success: Option<f64>,
    pub error: Option<f64>,
    /// Requeues (controller-runtime's `requeue` and `requeue_after` results);
    /// absent in older results, where it is `total − success − error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requeue: Option<f64>,
}

/// What else the machine was doing during the run: other processes' CPU
/// (every process but ctrlbench, the plane and the controller), the load
/// average, the hypervisor's steal and the CPU frequency governor. `busy`
/// when the others used more than `threshold_core_fraction` of a core: the
/// run then measured a shared machine and is kept out of the medians.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MachineCheck {
    /// CPU seconds other processes used during the run.
    pub other_cpu_s: f64,
    /// The same as a fraction of one core over the run's wall time.
    pub other_core_fraction: f64,
    pub load_avg_1m: f64,
    pub steal_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub governor: Option<String>,
    pub threshold_core_fraction: f64,
    pub busy: bool,
}

/// Scrapes taken and failed, per source.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Scrapes {
    pub ok: u64,
    pub failed: u64,
    pub apiserver_failed: u64,
    pub etcd_failed: u64,
}

/// The harness's own CPU (seconds of user + system time): while loading,
/// then while only watching and sampling.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HarnessCpu {
    /// While the loader ran: with start = "after-load" the loader alone
    /// (before the watch and the controllers); otherwise from the first
    /// scrape until every create returned, beside the controllers.
    pub load_phase_s: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after_load_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after_load_wall_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after_load_core_fraction: Option<f64>,
}

/// The wait for a quiet cluster before the run (requests per second at the
/// apiserver, all callers).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct QuietWait {
    pub waited_s: f64,
    /// The idle level measured after the warm-up.
    pub idle_per_s: f64,
    /// The rate over the last step of the wait.
    pub rate_per_s: f64,
    /// False: the bound passed before the cluster was quiet.
    pub quiet: bool,
}

/// `summary.json` of one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub variant: String,
    #[serde(rename = "impl")]
    pub implementation: String,
    pub preset: String,
    /// The controller's command-line flags, as passed.
    pub flags: Vec<String>,
    /// What the controller ran with; absent in results from before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<Settings>,
    pub namespace: String,
    pub scale: u64,
    pub repeat: u32,
    pub schedule: Schedule,
    pub concurrent_with: Vec<String>,
    pub window_s: f64,
    pub elapsed_s: f64,
    pub stop_reason: StopReason,
    pub incomplete: bool,
    pub load: Load,
    pub ready: u64,
    pub remaining: u64,
    pub converged: bool,
    pub convergence_s: Option<f64>,
    pub throughput_ready_per_s: f64,
    pub reconciles: Reconciles,
    pub scrapes: Scrapes,
    pub controller_exit_code: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harness_cpu: Option<HarnessCpu>,
    /// How long the run waited for a quiet cluster before it started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quiet_wait: Option<QuietWait>,
    /// The preset's row in deploy/presets.toml that the report prints
    /// (absent for controllers without a preset and in older results).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset_info: Option<PresetInfo>,
    /// The phases after the create phase, in order (phases.csv has their
    /// per-object rows).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<crate::phases::PhaseSummary>,
    /// Widgets in a namespace of their own, created before any controller
    /// started (`background_objects`; 0: none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub background_objects: u64,
    /// `[workload] decoys`: objects of the workload's kind, and as many
    /// Secrets and ConfigMaps, in a namespace no controller was asked to
    /// reconcile, created before any controller started (0: none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub decoys: u64,
    /// The cluster's Kubernetes version during this run (absent in older results).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubernetes_version: Option<String>,
    /// The local plane's kube-apiserver feature gates during this run, as
    /// passed (`[cluster]`'s with the variant's over them; empty: defaults).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub feature_gates: Vec<String>,
    /// What the run created and its readiness rule ("Foo
    /// (samplecontroller.k8s.io/v1alpha1, CRD …), ready when …"); absent:
    /// the built-in Widget workload (and results from before workloads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<String>,
    /// False when the controller has no metrics URL and was not scraped
    /// (impl = "command" / "external" without `metrics`): no
    /// metrics-<variant>.csv, on purpose. Absent in older results: true.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub controller_metrics: bool,
    /// Cluster-wide RBAC the controller's identity had, one grant per line
    /// ("list, watch on apps/deployments"); empty: its namespace only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cluster_grants: Vec<String>,
    /// The controller process stopped by itself during the window (its
    /// figures cover only part of it; `controller_exit_code` says how).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub controller_exited_early: bool,
    /// The controller's start mode and start-up times; absent in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<Start>,
    /// A user's controller's framework, as its variant's `framework` says
    /// (controller-runtime, client-go, kube-rs, kopf); absent: not stated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub framework: Option<String>,
    /// Changes our own watch saw to the run's objects (each a new
    /// resourceVersion) after it first saw each, until the window's end;
    /// absent in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch_changes: Option<u64>,
    /// Objects our watch first saw Ready whose status could say which
    /// generation it describes (a `status.observedGeneration`, or the
    /// readiness condition), and of those, how many did not say it (or named
    /// an older one); absent where no status had either.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_generation_checked: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_generation_missing: Option<u64>,
    /// The machine check taken over the run; absent in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<MachineCheck>,
    /// The objects' size in bytes as created (JSON), when the experiment
    /// sized them (`object_bytes`, `{{pad N}}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object_bytes: Option<u64>,
    /// etcd refused a write for lack of space (its NOSPACE alarm): the run's
    /// figures end there.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub etcd_nospace: bool,
    /// Each replica's figures, when the controller ran more than one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replicas: Vec<ReplicaFigures>,
    /// Each apiserver's peak resident memory while the controllers started
    /// and ran (its VmHWM, reset when they started; local plane only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub apiserver_peak_rss_bytes: Vec<f64>,
    /// Each apiserver's resident memory at that reset: what it held before
    /// the controllers started (on a plane shared by runs, also what
    /// earlier runs left).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub apiserver_rss_at_start_bytes: Vec<f64>,
    /// Every change of the Lease's holder our watch saw (leader election).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub leader_changes: Vec<LeaderChange>,
    /// The load's start as a wall-clock time (RFC 3339), the origin of
    /// pods.csv's seconds; set when the run's namespace had pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_started_at: Option<String>,
    /// The controller's CPU and peak memory as the OS saw them, for a
    /// process ctrlbench started whose metrics page did not give them (a
    /// command without `metrics`, or a page without `process_*`); absent
    /// when the page gave both, for external controllers and in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller_os: Option<ControllerOs>,
    /// `[workload] field_managers`: appliers' managedFields entries each
    /// object was created with (0: none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub field_managers: u64,
    /// What the run's objects weighed as the apiserver sent them, from a
    /// sample listed at the end of the window; absent in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object_sample: Option<ObjectSample>,
}

/// The run's objects as the apiserver sent them (a LIST of a few of them
/// at the end of the window, the controller's writes included): what a
/// cache that keeps whole objects holds of each.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ObjectSample {
    /// Objects in the sample.
    pub objects: u64,
    /// The median object's JSON, managedFields included, in bytes.
    pub bytes: u64,
    /// The median object's managedFields as JSON, in bytes.
    pub managed_fields_bytes: u64,
}

/// A started controller's figures read from /proc by the harness, summed over
/// its replicas: each field only where the metrics page lacked it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ControllerOs {
    /// utime + stime of each process and its descendants (with the children
    /// they reaped), from the measurement's start to the end of the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_s: Option<f64>,
    /// The largest resident memory seen: the larger of a process's own
    /// VmHWM and the largest sampled sum of VmRSS over its process tree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_rss_bytes: Option<f64>,
}

/// One replica of a controller over the run (replicas.csv has its rows).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReplicaFigures {
    pub replica: usize,
    pub peak_rss_bytes: f64,
    pub cpu_seconds: f64,
    /// Its start → its cache's first complete list (None: never, or a
    /// controller that does not export ctrlbench_initial_list_seconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_list_s: Option<f64>,
}

/// A new holder of a controller's Lease, as our watch saw it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LeaderChange {
    pub at: String,
    pub unix_s: f64,
    pub lease: String,
    pub holder: String,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// What the preset table says about a preset, for the report: its one-sentence
/// description, the question its results answer ("throughput", "coverage",
/// "steady-state" or "memory") and the preset it is measured against ("" for none).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PresetInfo {
    pub description: String,
    pub question: String,
    pub counterpart: String,
}

fn yes() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

pub const FILE_NAME: &str = "summary.json";

impl Summary {
    pub fn read(path: &Path) -> Result<Summary> {
        crate::files::read_json(path, "summary")
    }

    /// Written whole or not at all (temp file + rename).
    pub fn write(&self, path: &Path) -> Result<()> {
        crate::files::write_json(path, self)
    }
}

#[cfg(test)]
mod machine_check {
    use super::{MachineCheck, Reconciles};

    #[test]
    fn absent_in_older_results() {
        let old: Reconciles =
            serde_json::from_str(r#"{"total":20.0,"success":18.0,"error":2.0}"#).unwrap();
        assert_eq!(old.requeue, None);
        assert!(!serde_json::to_string(&old).unwrap().contains("requeue"));
        let m: MachineCheck = serde_json::from_str(
            r#"{"other_cpu_s":4.2,"other_core_fraction":0.7,"load_avg_1m":3.1,"steal_s":0.0,
                "threshold_core_fraction":0.25,"busy":true}"#,
        )
        .unwrap();
        assert!(m.busy && m.governor.is_none());
    }

    /// The OS figures are optional field by field, and absent unless set.
    #[test]
    fn controller_os_reads_and_writes_only_what_it_has() {
        use super::ControllerOs;
        let os: ControllerOs = serde_json::from_str(r#"{"cpu_s":1.5}"#).unwrap();
        assert_eq!((os.cpu_s, os.peak_rss_bytes), (Some(1.5), None));
        assert_eq!(serde_json::to_string(&os).unwrap(), r#"{"cpu_s":1.5}"#);
    }
}
