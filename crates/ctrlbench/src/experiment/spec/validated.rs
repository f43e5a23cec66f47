//! A checked experiment in plain types: what everything after the spec
//! (plan, run, commands) reads. No `Spanned` here: a value that reaches
//! these types has passed every check of its section.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::faults::Fault;
use super::keys::VariantKeys;
use super::schema::{FreshPlane, RbacRule, Schedule, StartMode};
pub use super::top::Repeats;
use crate::controllers::Impl;
use crate::experiment::phase::Phase;
use crate::experiment::workload::Workload;
use ctrlbench_plane::options::ClientLimits;

/// `[cluster]`, checked: the local plane's settings (defaults filled in) or
/// the existing cluster's kubeconfig and context.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Cluster {
    pub k8s_version: Option<String>,
    pub feature_gates: Vec<String>,
    pub apiserver_args: Vec<String>,
    pub etcd_args: Vec<String>,
    pub etcd_fsync: bool,
    pub audit_log: bool,
    pub etcd_members: usize,
    pub apiservers: usize,
    pub controller_manager: bool,
    /// Fake nodes (0: none; more runs the controller manager too).
    pub nodes: usize,
    /// Each fake node's pod capacity.
    pub node_pods: usize,
    /// The plane's kube-controller-manager's and kube-scheduler's client
    /// limits (None: the component's own defaults).
    pub controller_manager_client: Option<ClientLimits>,
    pub scheduler_client: Option<ClientLimits>,
    /// `scheduler_default_spread = false`: kube-scheduler without
    /// PodTopologySpread's default constraints.
    pub scheduler_without_default_spread: bool,
    /// The release downloads' mirror and whether downloads are off.
    pub mirror: Option<String>,
    pub offline: bool,
    pub kubeconfig: Option<String>,
    pub context: Option<String>,
    /// `[cluster] cpus`, as sets (None: not given).
    pub cpus: Option<Cpus>,
}

impl Cluster {
    /// What the file says of release downloads (the environment's settings
    /// are added when the binaries are installed).
    pub fn downloads(&self) -> ctrlbench_plane::fetch::Downloads {
        ctrlbench_plane::fetch::Downloads {
            mirror: self.mirror.clone(),
            offline: self.offline,
        }
    }
}

/// CPU sets, disjoint; None: that role is not placed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Cpus {
    pub plane: Option<Vec<usize>>,
    pub controller: Option<Vec<usize>>,
    pub harness: Option<Vec<usize>>,
}

impl Cpus {
    /// Two roles whose sets share a CPU, and that CPU, if any.
    pub fn overlap(&self) -> Option<(&'static str, &'static str, usize)> {
        let sets = [
            ("plane", &self.plane),
            ("controller", &self.controller),
            ("harness", &self.harness),
        ];
        for (i, (a, x)) in sets.iter().enumerate() {
            for (b, y) in &sets[i + 1..] {
                if let (Some(x), Some(y)) = (x, y)
                    && let Some(c) = x.iter().find(|c| y.contains(c))
                {
                    return Some((a, b, *c));
                }
            }
        }
        None
    }
}

/// One `[[compare]]` question: is `b` higher, lower or the same as `a` on `figure`?
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compare {
    pub a: String,
    pub b: String,
    pub figure: String,
}

/// A checked variant.
#[derive(Debug, Clone)]
pub struct Variant {
    pub name: String,
    pub implementation: Impl,
    /// Every key as given (None: not given); see keys.rs.
    pub keys: VariantKeys,
}

/// A checked experiment.
#[derive(Debug, Clone)]
pub struct Experiment {
    pub file: PathBuf,
    /// The file's text, as run (the manifest keeps it).
    pub text: String,
    pub name: String,
    pub description: String,
    pub cluster: Cluster,
    pub variants: Vec<Variant>,
    pub scales: Vec<u64>,
    pub window_s: f64,
    pub stop_when_converged: bool,
    pub quiet_s: f64,
    pub repeats: Repeats,
    /// The equivalence margin of every verdict (a fraction).
    pub margin: f64,
    /// The growth verdicts' margin δ on an exponent (`growth_margin`).
    pub growth_margin: f64,
    /// Other processes' share of a core above which a run is "machine busy".
    pub busy_threshold: f64,
    /// How often the local plane is started anew.
    pub fresh_plane: FreshPlane,
    /// A discarded warm-up run of each variant first (repeat 0 of the plan).
    pub warmup: bool,
    /// `[[compare]]` questions: (a, b, figure).
    pub compare: Vec<Compare>,
    /// `[[goal]]` targets, as the manifest records them.
    pub goals: Vec<ctrlbench_record::manifest::Goal>,
    /// `[budget]` limits, as the manifest records them.
    pub budgets: Vec<ctrlbench_record::manifest::Budget>,
    pub schedule: Schedule,
    pub concurrency: u32,
    pub scrape_interval_s: f64,
    pub probe: bool,
    pub probe_objects: u64,
    pub background_objects: u64,
    /// `[workload] decoys`: K objects of the workload's kind, K Secrets and
    /// K ConfigMaps in a namespace no controller reconciles (0: none).
    pub decoys: u64,
    /// `[workload] source`, relative to the experiment file resolved: the
    /// operator's source, where findings' likely lines are looked for.
    pub source: Option<std::path::PathBuf>,
    /// The `[[phase]]` entries after the create phase.
    pub phases: Vec<Phase>,
    /// `[workload]`, or the built-in Widget workload.
    pub workload: Workload,
    /// The objects' size as created, when the file sizes them
    /// (`object_bytes`, or `{{pad N}}` in a template).
    pub object_bytes: Option<u64>,
    pub faults: Vec<Fault>,
    /// `run --grow`: the rounds run across the scales (round-major) and,
    /// with a time budget, the runner re-estimates after the first.
    pub grow: Option<crate::experiment::grow::Grow>,
}

impl Variant {
    /// The preset of ctrlbench's own controllers ("" for command and external).
    pub fn preset(&self) -> &str {
        self.keys.preset.as_ref().map_or("", |p| p.as_str())
    }

    /// Whether ctrlbench starts one of its own controllers for this variant.
    pub fn is_own(&self) -> bool {
        matches!(self.implementation, Impl::Rust | Impl::Go(_))
    }

    /// When the controller starts relative to the load.
    pub fn start(&self) -> StartMode {
        self.keys.start.unwrap_or_default()
    }

    /// The preset's row, for ctrlbench's own controllers.
    fn preset_row(&self) -> Option<&'static widget_api::presets::Preset> {
        widget_api::presets::get(self.preset())
    }

    /// How many processes of the controller run (≥ 1): the `replicas` key,
    /// else the preset's.
    /// Its CPU quota in millicores (`cpu_limit`; checked when parsed).
    pub fn cpu_limit(&self) -> Option<u32> {
        self.keys
            .cpu_limit
            .as_deref()
            .and_then(|l| ctrlbench_plane::quota::parse_millicores(l).ok())
    }

    pub fn replicas(&self) -> usize {
        let preset = self.preset_row().map_or(1, |p| u32::from(p.replicas));
        self.keys.replicas.unwrap_or(preset) as usize
    }

    /// The Lease the replicas elect a leader on, if they do: ours when
    /// `leader_election = true` or the preset elects, a command's `lease`.
    pub fn lease(&self) -> Option<&str> {
        let elects = self.keys.leader_election == Some(true)
            || self.preset_row().is_some_and(|p| p.leader_elect);
        match elects {
            true => Some(widget_api::presets::leader_election::LEASE_NAME),
            false => self.keys.lease.as_deref(),
        }
    }

    /// Whether this variant's runs get the `[[fault]]` schedule.
    pub fn faulted(&self) -> bool {
        self.keys.faults != Some(false)
    }

    /// The controller's flags (ctrlbench's own controllers; none otherwise),
    /// besides namespace, metrics address and log format, which the runner
    /// sets: the keys given, and always the queue and, for Go builds that
    /// have one, the priority queue, so every recorded run names its queue.
    pub fn flags(&self) -> Vec<String> {
        if !self.is_own() {
            return Vec::new();
        }
        self.keys.flags(&self.implementation)
    }

    pub fn env(&self) -> &BTreeMap<String, String> {
        static NONE: BTreeMap<String, String> = BTreeMap::new();
        self.keys.env.as_ref().unwrap_or(&NONE)
    }

    pub fn command(&self) -> &[String] {
        self.keys.command.as_deref().unwrap_or_default()
    }

    pub fn rbac(&self) -> &[RbacRule] {
        self.keys.rbac.as_deref().unwrap_or_default()
    }

    pub fn cluster_rbac(&self) -> &[RbacRule] {
        self.keys.cluster_rbac.as_deref().unwrap_or_default()
    }
}

/// A variant's own local plane: what differs from `[cluster]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PlaneOf {
    pub k8s_version: Option<String>,
    pub feature_gates: Vec<String>,
    /// The audit log on or off, over `[cluster] audit_log`.
    pub audit_log: Option<bool>,
}

impl PlaneOf {
    /// How progress names it: "Kubernetes 1.37.2, WatchList=false".
    pub fn describe(&self, version: &str) -> String {
        let v = self.k8s_version.as_deref().unwrap_or(version);
        std::iter::once(format!("Kubernetes {v}"))
            .chain(self.feature_gates.iter().cloned())
            .chain(
                self.audit_log
                    .map(|on| format!("audit log {}", if on { "on" } else { "off" })),
            )
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl Experiment {
    /// The seed of the variants' order (`plan::order`): from the file's
    /// text (FNV-1a), so one file always runs in one recorded order and an
    /// edited one in another.
    pub fn order_seed(&self) -> u64 {
        self.text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
    }

    /// The Kubernetes version `variant`'s runs need, when variants differ
    /// (None: the experiment's one cluster).
    pub fn variant_k8s_version(&self, variant: usize) -> Option<String> {
        self.variants[variant]
            .keys
            .k8s_version
            .as_ref()
            .and_then(|v| ctrlbench_plane::binaries::normalize_version(v).ok())
    }

    /// The `[[fault]]` schedule `variant`'s runs get: none for a variant
    /// with `faults = false` (the fault-free baseline).
    pub fn faults_for(&self, variant: usize) -> &[Fault] {
        if self.variants[variant].faulted() {
            &self.faults
        } else {
            &[]
        }
    }

    /// The local plane `variant`'s runs need when it names one (a version,
    /// feature gates); None: the `[cluster]`'s.
    pub fn variant_plane(&self, variant: usize) -> Option<PlaneOf> {
        let k8s_version = self.variant_k8s_version(variant);
        let feature_gates = self.variants[variant]
            .keys
            .feature_gates
            .clone()
            .unwrap_or_default();
        let audit_log = self.variants[variant].keys.audit_log;
        (k8s_version.is_some() || !feature_gates.is_empty() || audit_log.is_some()).then_some(
            PlaneOf {
                k8s_version,
                feature_gates,
                audit_log,
            },
        )
    }

    /// This experiment on the plane `p` (for variants that name one): its
    /// version, and its gates over the `[cluster]`'s of the same name.
    pub fn on_plane(&self, p: &PlaneOf) -> Experiment {
        let mut e = self.clone();
        if let Some(on) = p.audit_log {
            e.cluster.audit_log = on;
        }
        if let Some(v) = &p.k8s_version {
            e.cluster.k8s_version = Some(v.clone());
        }
        let name = |g: &String| g.split_once('=').map_or(g.clone(), |(n, _)| n.to_string());
        e.cluster
            .feature_gates
            .retain(|g| !p.feature_gates.iter().any(|o| name(o) == name(g)));
        e.cluster
            .feature_gates
            .extend(p.feature_gates.iter().cloned());
        e
    }

    pub fn is_local(&self) -> bool {
        self.cluster.kubeconfig.is_none() && self.cluster.context.is_none()
    }
}
