//! Experiment files (TOML): parsing and validation. Unknown keys are
//! rejected, and every error names the file, the line and the key.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::phase::{Phase, PhaseSpec};

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
    #[serde(default = "default_one")]
    pub repeats: Spanned<u32>,
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
    /// faster than a 5000-object load, so a like-for-like P2 sets it to the
    /// experiment's scale.
    #[serde(default = "default_probe_objects")]
    pub probe_objects: Spanned<u64>,
    /// Widgets created once in a namespace of their own before any
    /// controller starts (run/background.rs): what a cluster-wide cache holds
    /// besides the run's own objects.
    #[serde(default = "no_objects")]
    pub background_objects: Spanned<u64>,
    /// What happens after the create phase, in order (experiment/phase.rs).
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

fn zero_f() -> Spanned<f64> {
    Spanned::new(0..0, 0.0)
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

/// Which process a fault hits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultTarget {
    /// The run's controller (every controller of a concurrent group).
    Controller,
    ApiServer(usize),
    Etcd(usize),
    /// Whichever member leads when the fault fires.
    EtcdLeader,
    /// The first member that does not lead when the fault fires.
    EtcdFollower,
}

impl FaultTarget {
    pub fn parse(s: &str) -> Option<FaultTarget> {
        Some(match s {
            "controller" => FaultTarget::Controller,
            "etcd:leader" => FaultTarget::EtcdLeader,
            "etcd:follower" => FaultTarget::EtcdFollower,
            _ => {
                let (kind, k) = s.split_once(':')?;
                let k: usize = k.parse().ok()?;
                match kind {
                    "apiserver" => FaultTarget::ApiServer(k),
                    "etcd" => FaultTarget::Etcd(k),
                    _ => return None,
                }
            }
        })
    }
}

fn default_window() -> Spanned<f64> {
    Spanned::new(0..0, 60.0)
}
fn default_quiet() -> Spanned<f64> {
    Spanned::new(0..0, 3.0)
}
fn default_one() -> Spanned<u32> {
    Spanned::new(0..0, 1)
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

/// One variant at a time, or all at once (the seed's Experiment 1): the
/// record's type, so what the file says is what summary.json says.
pub use ctrlbench_record::summary::Schedule;
/// When a variant's controller starts (the record's type too).
pub use ctrlbench_record::summary::StartMode;

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
    /// The apiserver's audit log of widget writes (local plane only):
    /// per-variant server-side latency and counts in each run's audit.csv.
    pub audit_log: Option<bool>,
    /// etcd cluster size (local plane; default 1).
    pub etcd_members: Option<Spanned<u32>>,
    /// kube-apiservers behind the front (local plane; default 1).
    pub apiservers: Option<Spanned<u32>>,
    /// kube-controller-manager's namespace and garbage-collector controllers
    /// on the local plane (default off: ctrlbench finalizes namespaces itself).
    pub controller_manager: Option<bool>,
    pub kubeconfig: Option<Spanned<String>>,
    pub context: Option<Spanned<String>>,
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
            kubeconfig: None,
            context: None,
        }
    }
}

/// `[[variant]]`: a controller and its flags.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct VariantSpec {
    pub name: Spanned<String>,
    #[serde(rename = "impl", default = "default_impl")]
    pub implementation: Spanned<String>,
    /// ctrlbench's controllers (rust, go@…) only: required there.
    pub preset: Option<Spanned<Preset>>,
    pub workers: Option<Spanned<u32>>,
    pub predicate: Option<Predicate>,
    pub status_write: Option<StatusWrite>,
    pub annotate: Option<bool>,
    pub work_ms: Option<u64>,
    pub client_qps: Option<f64>,
    pub client_burst: Option<Spanned<i64>>,
    #[serde(default)]
    pub watch_list: bool,
    /// managedFields dropped before objects enter the controller's cache
    /// (both runtimes' documented way to shrink it).
    #[serde(default)]
    pub strip_managed_fields: bool,
    pub log_level: Option<LogLevel>,
    pub conflict_reread: Option<ConflictReread>,
    /// Work-queue order: kube (kube-runtime's scheduler; Rust only, its
    /// default) or fifo (client-go's; Go's only queue).
    pub queue: Option<Spanned<Queue>>,
    /// Debounce of triggers per object (Rust only): kube-runtime's, or the
    /// same delay-and-reset before the fifo queue.
    pub debounce_ms: Option<Spanned<u64>>,
    /// controller-runtime's priority queue (Go builds v0.20 and later):
    /// unset = the build's default, off in v0.22, on in v0.25.
    pub priority_queue: Option<Spanned<bool>>,
    /// When the controller starts: "before-load" (default: objects are
    /// created while it runs) or "after-load" (all N objects exist first).
    pub start: Option<Spanned<StartMode>>,
    #[serde(default = "no_env")]
    pub env: Spanned<BTreeMap<String, String>>,
    /// This variant's runs on a local plane of this Kubernetes version
    /// (the `versions` experiment): the plane is restarted whenever the
    /// next run needs another version.
    pub k8s_version: Option<Spanned<String>>,
    /// impl = "command": the program and its arguments, with `{port}`,
    /// `{namespace}` and `{kubeconfig}` replaced.
    pub command: Option<Spanned<Vec<String>>>,
    /// impl = "command" / "external": the controller's metrics URL
    /// (loopback only; `{port}` as in the command). Without it, no controller scrape.
    pub metrics: Option<Spanned<String>>,
    /// impl = "command": the rules of its namespaced Role.
    pub rbac: Option<Spanned<Vec<RbacRule>>>,
    /// impl = "command": read-only cluster-wide rules (a ClusterRole).
    pub cluster_rbac: Option<Spanned<Vec<RbacRule>>>,
    /// impl = "external": the namespace the running controller watches
    /// (used as is; created and deleted by ctrlbench only if it was missing).
    pub namespace: Option<Spanned<String>>,
    /// `false`: this variant's runs skip the `[[fault]]` schedule — the
    /// fault-free baseline against which the report counts objects lost.
    pub faults: Option<Spanned<bool>>,
}

/// One RBAC rule of a command controller's Role or ClusterRole.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RbacRule {
    #[serde(default)]
    pub api_groups: Vec<String>,
    pub resources: Vec<String>,
    pub verbs: Vec<String>,
}

/// Verbs no experiment file may grant: they would let a controller give
/// itself or others more than the file says.
const DENIED_VERBS: &[&str] = &["*", "escalate", "bind", "impersonate"];
/// The verbs a cluster-wide grant may have: reads only.
const CLUSTER_VERBS: &[&str] = &["get", "list", "watch"];

/// What is wrong with a rule list, if anything.
pub fn check_rbac(rules: &[RbacRule], cluster: bool) -> Result<(), String> {
    for r in rules {
        if r.resources.is_empty() || r.verbs.is_empty() {
            return Err("every rule needs resources and verbs".into());
        }
        if let Some(v) = r.verbs.iter().find(|v| DENIED_VERBS.contains(&v.as_str())) {
            return Err(format!(
                "verb {v:?} cannot be granted by an experiment file (name the verbs)"
            ));
        }
        if cluster {
            if let Some(v) = r
                .verbs
                .iter()
                .find(|v| !CLUSTER_VERBS.contains(&v.as_str()))
            {
                return Err(format!(
                    "verb {v:?}: a cluster-wide grant may only read (get, list, watch); writes belong in rbac, in the run's namespace"
                ));
            }
            if r.resources
                .iter()
                .chain(&r.api_groups)
                .any(|x| x.contains('*'))
            {
                return Err(
                    "a cluster-wide grant must name its api_groups and resources (no *)".into(),
                );
            }
            if r.resources
                .iter()
                .any(|x| x == "secrets" || x.starts_with("secrets/"))
            {
                return Err("secrets cannot be read cluster-wide".into());
            }
        }
    }
    Ok(())
}

/// The placeholders a command may use.
pub const COMMAND_PLACEHOLDERS: [&str; 3] = ["{port}", "{namespace}", "{kubeconfig}"];

/// What is wrong with a metrics URL (after `{port}` is replaced), if anything:
/// plain HTTP to a loopback address.
pub fn check_metrics_url(url: &str) -> Result<(), String> {
    let u = reqwest::Url::parse(&url.replace("{port}", "1"))
        .map_err(|e| format!("{url:?} is not a URL: {e}"))?;
    let host = u.host_str().unwrap_or_default();
    let loopback = host == "localhost"
        || host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|a| a.is_loopback());
    if u.scheme() != "http" || !loopback {
        return Err(format!(
            "{url:?}: metrics are scraped over plain HTTP from a loopback address only (http://127.0.0.1:PORT/metrics)"
        ));
    }
    Ok(())
}

fn no_args() -> Spanned<Vec<String>> {
    Spanned::new(0..0, Vec::new())
}

fn no_env() -> Spanned<BTreeMap<String, String>> {
    Spanned::new(0..0, BTreeMap::new())
}

/// Environment variables an experiment file may not set for a controller:
/// they would point it at another cluster or credentials, load code into it,
/// or route its traffic elsewhere.
fn env_denied(key: &str) -> bool {
    const EXACT: &[&str] = &[
        "KUBECONFIG",
        "KUBERNETES_SERVICE_HOST",
        "KUBERNETES_SERVICE_PORT",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "NO_PROXY",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "GODEBUG",
        "PATH",
        "HOME",
    ];
    let k = key.to_ascii_uppercase();
    EXACT.contains(&k.as_str()) || k.starts_with("LD_") || k.starts_with("DYLD_")
}

fn default_impl() -> Spanned<String> {
    Spanned::new(0..0, "rust".to_string())
}

/// A preset name, one of `deploy/presets.toml`'s (`widget_api::presets::names`).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(transparent)]
pub struct Preset(String);

impl<'de> Deserialize<'de> for Preset {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        let names = widget_api::presets::names();
        if names.contains(&name.as_str()) {
            Ok(Preset(name))
        } else {
            Err(serde::de::Error::custom(format!(
                "unknown preset {name:?}, expected one of {}",
                names.join(", ")
            )))
        }
    }
}

/// The controllers' own setting types: what the file accepts is what they accept.
pub use widget_api::presets::{LogLevel, Predicate, Queue, StatusWrite};

#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ConflictReread {
    Api,
    Cache,
}

/// Which controller implementation runs a variant (the controllers' own type).
pub use crate::controllers::Impl;

use super::workload::{self, ReadyRule, Workload, WorkloadError, WorkloadSpec};

impl Preset {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// An error in an experiment file: `file:line: key `k`: message`.
#[derive(Debug, thiserror::Error)]
#[error("{file}:{line}: key `{key}`: {message}")]
pub struct SpecError {
    pub file: String,
    pub line: usize,
    pub key: String,
    pub message: String,
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())]
        .bytes()
        .filter(|b| *b == b'\n')
        .count()
        + 1
}

/// The key a serde/TOML error is about, from its message or the text at its span.
fn key_of(text: &str, span: Option<std::ops::Range<usize>>, message: &str) -> String {
    if let Some(start) = message.find('`')
        && let Some(len) = message[start + 1..].find('`')
        && (message.starts_with("unknown field")
            || message.starts_with("missing field")
            || message.starts_with("duplicate"))
    {
        return message[start + 1..start + 1 + len].to_string();
    }
    if let Some(r) = span {
        // The key that starts the line holding the span.
        let line_start = text[..r.start.min(text.len())]
            .rfind('\n')
            .map(|i| i + 1)
            .unwrap_or(0);
        let line = &text[line_start..];
        let line = line.lines().next().unwrap_or_default();
        if let Some((k, _)) = line.split_once('=') {
            return k.trim().to_string();
        }
        return line
            .trim()
            .trim_matches(|c| c == '[' || c == ']')
            .to_string();
    }
    "(file)".to_string()
}

/// A resolved variant.
#[derive(Debug, Clone, Serialize)]
pub struct Variant {
    pub name: String,
    pub implementation: Impl,
    pub spec: VariantSpec,
}

/// A validated experiment.
#[derive(Debug, Clone)]
pub struct Experiment {
    pub file: PathBuf,
    pub text: String,
    pub spec: Spec,
    pub variants: Vec<Variant>,
    /// The validated `[[phase]]` entries.
    pub phases: Vec<Phase>,
    /// `[workload]`, or the built-in Widget workload.
    pub workload: Workload,
}

/// Parses and validates an experiment file's text.
/// An experiment's name becomes a directory name and a label value: it must
/// be a valid Kubernetes label value (≤ 63 of letters, digits, '-', '_',
/// '.', starting and ending alphanumeric), which also keeps it one path component.
pub fn check_name(name: &str) -> Result<(), String> {
    let b = name.as_bytes();
    let ok = !b.is_empty()
        && b.len() <= 63
        && b.first().is_some_and(u8::is_ascii_alphanumeric)
        && b.last().is_some_and(u8::is_ascii_alphanumeric)
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'));
    if !ok {
        return Err(format!(
            "{name:?} is not a valid name: use ≤ 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit (it names the results directory)"
        ));
    }
    Ok(())
}

/// The most widgets one run may create.
pub const MAX_SCALE: u64 = 1_000_000;
/// `probe_objects` when unset (and `ctrlbench probe --objects`'s default).
pub const DEFAULT_PROBE_OBJECTS: u64 = 500;
/// Upper bound of `probe_objects`.
pub const MAX_PROBE_OBJECTS: u64 = 100_000;
/// Upper bound of `background_objects`.
pub const MAX_BACKGROUND: u64 = 1_000_000;
/// The most creates the loader keeps in flight.
pub const MAX_CONCURRENCY: u32 = 1024;
/// Bounds of `window_s` (and `--window`): up to a week.
pub const WINDOW_S: (f64, f64) = (0.001, 7.0 * 86_400.0);
/// Bounds of `quiet_s`.
pub const QUIET_S: (f64, f64) = (0.001, 3_600.0);
/// Bounds of `scrape_interval_s`.
pub const SCRAPE_INTERVAL_S: (f64, f64) = (0.1, 60.0);

/// `scales`: at least one, each within bounds (also for `--scales`).
pub fn check_scales(v: &[u64]) -> Result<(), String> {
    if v.is_empty() || v.iter().any(|n| !(1..=MAX_SCALE).contains(n)) {
        return Err(format!(
            "needs at least one scale, each from 1 to {MAX_SCALE}"
        ));
    }
    Ok(())
}

/// A duration in seconds (`window_s`, `quiet_s`, `scrape_interval_s`, `--window`).
pub fn check_seconds(v: f64, (min, max): (f64, f64)) -> Result<(), String> {
    if !(v > 0.0 && v.is_finite()) {
        return Err(format!("must be a positive number of seconds, not {v}"));
    }
    if !(min..=max).contains(&v) {
        return Err(format!("must be from {min} to {max} seconds, not {v}"));
    }
    Ok(())
}

/// `background_objects` (also `--background-objects`).
pub fn check_background(k: u64) -> Result<(), String> {
    if k > MAX_BACKGROUND {
        return Err(format!("must be at most {MAX_BACKGROUND}"));
    }
    Ok(())
}

/// `repeats` (also `--repeats`).
pub fn check_repeats(v: u32) -> Result<(), String> {
    if v == 0 {
        return Err("must be at least 1".into());
    }
    Ok(())
}

/// Parses an experiment file; `[workload]` files are read from disk,
/// relative to `file`.
pub fn parse(file: &Path, text: &str) -> Result<Experiment, SpecError> {
    parse_with(file, text, &|p: &Path| std::fs::read_to_string(p))
}

/// `parse`, reading the workload's files with `read` (built-in experiments
/// read theirs from the binary).
pub fn parse_with(
    file: &Path,
    text: &str,
    read: &dyn Fn(&Path) -> std::io::Result<String>,
) -> Result<Experiment, SpecError> {
    let fname = file.display().to_string();
    let spec: Spec = toml::from_str(text).map_err(|e| {
        let span = e.span();
        let message = e.message().trim().to_string();
        SpecError {
            file: fname.clone(),
            line: span.clone().map(|r| line_of(text, r.start)).unwrap_or(1),
            key: key_of(text, span, &message),
            message,
        }
    })?;
    let err = |key: &str, span: std::ops::Range<usize>, message: String| SpecError {
        file: fname.clone(),
        line: if span == (0..0) {
            1
        } else {
            line_of(text, span.start)
        },
        key: key.to_string(),
        message,
    };
    if let Err(m) = check_name(spec.name.get_ref()) {
        return Err(err("name", spec.name.span(), m));
    }
    if let Err(m) = check_scales(spec.scales.get_ref()) {
        return Err(err("scales", spec.scales.span(), m));
    }
    for (key, v, bounds) in [
        ("window_s", &spec.window_s, WINDOW_S),
        (
            "scrape_interval_s",
            &spec.scrape_interval_s,
            SCRAPE_INTERVAL_S,
        ),
        ("quiet_s", &spec.quiet_s, QUIET_S),
    ] {
        if let Err(m) = check_seconds(*v.get_ref(), bounds) {
            return Err(err(key, v.span(), m));
        }
    }
    if let Err(m) = check_repeats(*spec.repeats.get_ref()) {
        return Err(err("repeats", spec.repeats.span(), m));
    }
    if !(1..=MAX_CONCURRENCY).contains(spec.concurrency.get_ref()) {
        return Err(err(
            "concurrency",
            spec.concurrency.span(),
            format!("must be from 1 to {MAX_CONCURRENCY}"),
        ));
    }
    if !(1..=MAX_PROBE_OBJECTS).contains(spec.probe_objects.get_ref()) {
        return Err(err(
            "probe_objects",
            spec.probe_objects.span(),
            format!("must be from 1 to {MAX_PROBE_OBJECTS}"),
        ));
    }
    if let Err(m) = check_background(*spec.background_objects.get_ref()) {
        return Err(err("background_objects", spec.background_objects.span(), m));
    }
    let c = &spec.cluster;
    if let Some(kc) = c.kubeconfig.as_ref().or(c.context.as_ref())
        && (c.k8s_version.is_some()
            || !c.feature_gates.is_empty()
            || !c.apiserver_args.get_ref().is_empty()
            || c.etcd_fsync.is_some()
            || c.audit_log.is_some()
            || c.etcd_members.is_some()
            || c.apiservers.is_some()
            || c.controller_manager.is_some())
    {
        return Err(err(
            "cluster",
            kc.span(),
            "an existing cluster (kubeconfig/context) cannot take local-plane settings (k8s_version, feature_gates, apiserver_args, etcd_fsync, audit_log, etcd_members, apiservers, controller_manager)".into(),
        ));
    }
    for (key, v, max) in [
        (
            "etcd_members",
            &c.etcd_members,
            ctrlbench_plane::plane::MAX_ETCD_MEMBERS,
        ),
        (
            "apiservers",
            &c.apiservers,
            ctrlbench_plane::plane::MAX_APISERVERS,
        ),
    ] {
        if let Some(v) = v
            && !(1..=max as u32).contains(v.get_ref())
        {
            return Err(err(key, v.span(), format!("must be from 1 to {max}")));
        }
    }
    if let Some(a) = &c.apiservers
        && *a.get_ref() > 1
        && c.audit_log == Some(true)
    {
        return Err(err(
            "apiservers",
            a.span(),
            "the audit log needs a single apiserver (each would log a part of the writes)".into(),
        ));
    }
    for (key, args, protected) in [
        (
            "apiserver_args",
            &c.apiserver_args,
            ctrlbench_plane::flags::APISERVER_PROTECTED,
        ),
        (
            "etcd_args",
            &c.etcd_args,
            ctrlbench_plane::flags::ETCD_PROTECTED,
        ),
    ] {
        if let Some(a) = ctrlbench_plane::flags::first_protected(args.get_ref(), protected) {
            return Err(err(
                key,
                args.span(),
                format!(
                    "{a:?} would change how the plane is secured or reached; an experiment file cannot set it"
                ),
            ));
        }
    }
    let local = c.kubeconfig.is_none() && c.context.is_none();
    let members = c.etcd_members.as_ref().map_or(1, |v| *v.get_ref() as usize);
    let apiservers = c.apiservers.as_ref().map_or(1, |v| *v.get_ref() as usize);
    for f in &spec.faults {
        let Some(target) = FaultTarget::parse(f.target.get_ref()) else {
            return Err(err(
                "target",
                f.target.span(),
                format!(
                    "unknown fault target {:?}: use controller, apiserver:<k>, etcd:<k>, etcd:leader or etcd:follower",
                    f.target.get_ref()
                ),
            ));
        };
        let plane_only = |what: &str| -> Result<(), SpecError> {
            if local {
                Ok(())
            } else {
                Err(err(
                    "target",
                    f.target.span(),
                    format!("{what} faults need the local plane, not an existing cluster"),
                ))
            }
        };
        match target {
            FaultTarget::Controller => {}
            FaultTarget::ApiServer(k) => {
                plane_only("apiserver")?;
                if k >= apiservers {
                    return Err(err(
                        "target",
                        f.target.span(),
                        format!(
                            "apiserver:{k} does not exist: the plane has {apiservers} apiserver(s), numbered from 0 ([cluster] apiservers)"
                        ),
                    ));
                }
            }
            FaultTarget::Etcd(k) => {
                plane_only("etcd")?;
                if k >= members {
                    return Err(err(
                        "target",
                        f.target.span(),
                        format!(
                            "etcd:{k} does not exist: the plane has {members} etcd member(s), numbered from 0 ([cluster] etcd_members)"
                        ),
                    ));
                }
            }
            FaultTarget::EtcdLeader => plane_only("etcd")?,
            FaultTarget::EtcdFollower => {
                plane_only("etcd")?;
                if members < 2 {
                    return Err(err(
                        "target",
                        f.target.span(),
                        "etcd:follower needs at least 2 etcd members ([cluster] etcd_members)"
                            .into(),
                    ));
                }
            }
        }
        let at = *f.at_s.get_ref();
        if !(at >= 0.0 && at.is_finite()) {
            return Err(err(
                "at_s",
                f.at_s.span(),
                format!("must be a number of seconds ≥ 0, not {at}"),
            ));
        }
        if at >= *spec.window_s.get_ref() {
            return Err(err(
                "at_s",
                f.at_s.span(),
                format!(
                    "the fault at {at} s comes after the window ({} s): it would never run",
                    spec.window_s.get_ref()
                ),
            ));
        }
        let d = *f.duration_s.get_ref();
        if !(d >= 0.0 && d <= WINDOW_S.1) {
            return Err(err(
                "duration_s",
                f.duration_s.span(),
                format!("must be from 0 to {} seconds, not {d}", WINDOW_S.1),
            ));
        }
        if *f.action.get_ref() == FaultAction::Stop && d <= 0.0 {
            return Err(err(
                "duration_s",
                f.action.span(),
                "a stop needs duration_s > 0 (how long the process stays stopped)".into(),
            ));
        }
    }
    if spec.variants.get_ref().is_empty() {
        return Err(err(
            "variant",
            spec.variants.span(),
            "at least one [[variant]] is needed".into(),
        ));
    }
    let workload = match &spec.workload {
        None => Workload::widgets(),
        Some(w) => {
            let ready = ReadyRule::from_spec(w.ready.get_ref())
                .map_err(|m| err("ready", w.ready.span(), m))?;
            let crd_path = workload::relative_to(file, w.crd.get_ref());
            let crd_text = read(&crd_path).map_err(|e| {
                err(
                    "crd",
                    w.crd.span(),
                    format!("cannot read {}: {e}", crd_path.display()),
                )
            })?;
            let crd = workload::read_crd(&crd_text)
                .map_err(|m| err("crd", w.crd.span(), format!("{}: {m}", crd_path.display())))?;
            let obj_path = workload::relative_to(file, w.object.get_ref());
            let template = read(&obj_path).map_err(|e| {
                err(
                    "object",
                    w.object.span(),
                    format!("cannot read {}: {e}", obj_path.display()),
                )
            })?;
            Workload::new(
                Some(crd_path.clone()),
                crd,
                Some(obj_path.clone()),
                template,
                ready,
            )
            .map_err(|e| match e {
                WorkloadError::Crd(_) => {
                    err("crd", w.crd.span(), format!("{}: {e}", crd_path.display()))
                }
                WorkloadError::Template(_) => err(
                    "object",
                    w.object.span(),
                    format!("{}: {e}", obj_path.display()),
                ),
            })?
        }
    };
    let mut variants = Vec::new();
    for v in spec.variants.get_ref() {
        let name = v.name.get_ref();
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            || name.len() > 40
        {
            return Err(err(
                "name",
                v.name.span(),
                format!("variant name {name:?} must be lowercase letters, digits and '-' (≤ 40)"),
            ));
        }
        if variants.iter().any(|x: &Variant| &x.name == name) {
            return Err(err(
                "name",
                v.name.span(),
                format!("variant name {name:?} is used twice"),
            ));
        }
        let Some(implementation) = Impl::parse(v.implementation.get_ref()) else {
            return Err(err(
                "impl",
                v.implementation.span(),
                format!(
                    "unknown implementation {:?}: use rust, {}, command or external",
                    v.implementation.get_ref(),
                    crate::controllers::go_labels()
                ),
            ));
        };
        check_foreign(v, &implementation, &err)?;
        if let Some(w) = &v.workers
            && *w.get_ref() == 0
        {
            return Err(err("workers", w.span(), "must be at least 1".into()));
        }
        // deploy/presets.toml's rule: a burst needs a token bucket (client_qps > 0).
        if let Some(b) = &v.client_burst {
            if !v.client_qps.is_some_and(|q| q > 0.0) {
                return Err(err(
                    "client_burst",
                    b.span(),
                    "needs client_qps > 0 (without it no token bucket is configured)".into(),
                ));
            }
            if *b.get_ref() < 1 {
                return Err(err(
                    "client_burst",
                    b.span(),
                    "must be at least 1 when client_qps > 0".into(),
                ));
            }
        }
        if let Some(k) = v.env.get_ref().keys().find(|k| env_denied(k)) {
            return Err(err(
                "env",
                v.env.span(),
                format!(
                    "{k} cannot be set by an experiment file (it would redirect or alter the controller)"
                ),
            ));
        }
        if v.conflict_reread.is_some() && implementation == Impl::Rust {
            return Err(err(
                "conflict_reread",
                v.name.span(),
                "only the Go controller has --conflict-reread".into(),
            ));
        }
        if let Some(q) = &v.queue
            && *q.get_ref() == Queue::Kube
            && implementation != Impl::Rust
        {
            return Err(err(
                "queue",
                q.span(),
                "\"kube\" is kube-runtime's scheduler, which only the Rust controller has; the Go controller's queue is \"fifo\"".into(),
            ));
        }
        if let Some(d) = &v.debounce_ms
            && implementation != Impl::Rust
        {
            return Err(err(
                "debounce_ms",
                d.span(),
                "only the Rust controller (kube-runtime) has a debounce".into(),
            ));
        }
        if let Some(p) = &v.priority_queue
            && implementation.priority_queue_default().is_none()
        {
            let with: Vec<String> = crate::controllers::GO_BUILDS
                .iter()
                .filter(|b| b.priority_queue_default.is_some())
                .map(|b| format!("go@{}", b.label))
                .collect();
            return Err(err(
                "priority_queue",
                p.span(),
                format!(
                    "{implementation} has no priority queue: it is controller-runtime's (v0.20 and later), in {}",
                    with.join(" and ")
                ),
            ));
        }
        if let Some(k) = &v.k8s_version {
            let why = if spec.cluster.kubeconfig.is_some() || spec.cluster.context.is_some() {
                Some("needs the local plane (no kubeconfig or context)".to_string())
            } else if spec.cluster.k8s_version.is_some() {
                Some("cannot be combined with [cluster] k8s_version".to_string())
            } else if spec.schedule == Schedule::Concurrent {
                Some("needs schedule = \"isolated\" (variants on different planes cannot run together)".to_string())
            } else if spec.probe || *spec.background_objects.get_ref() > 0 {
                Some(
                    "cannot be combined with probe or background_objects, which are per plane"
                        .to_string(),
                )
            } else {
                ctrlbench_plane::binaries::normalize_version(k.get_ref())
                    .err()
                    .map(|e| format!("{e:#}"))
            };
            if let Some(m) = why {
                return Err(err("k8s_version", k.span(), m));
            }
        }
        if let Some(f) = &v.faults {
            let why = if spec.faults.is_empty() {
                Some("there is no [[fault]] schedule to opt out of")
            } else if spec.schedule == Schedule::Concurrent {
                Some(
                    "needs schedule = \"isolated\" (plane faults hit every variant of a concurrent run)",
                )
            } else {
                None
            };
            if let Some(m) = why {
                return Err(err("faults", f.span(), m.to_string()));
            }
        }
        // Variants that run together share one loader phase: they start alike.
        if spec.schedule == Schedule::Concurrent
            && let Some(first) = variants.first()
            && first.start() != v.start_mode()
        {
            let span = v.start.as_ref().map_or(v.name.span(), |s| s.span());
            return Err(err(
                "start",
                span,
                format!(
                    "with schedule = \"concurrent\" every variant starts alike: {:?} is {}, {:?} is {}",
                    first.name,
                    first.start(),
                    name,
                    v.start_mode()
                ),
            ));
        }
        variants.push(Variant {
            name: name.clone(),
            implementation,
            spec: v.clone(),
        });
    }
    let phases = super::phase::validate(file, &spec.phases, *spec.window_s.get_ref())
        .map_err(|(key, span, m)| err(key, span, m))?;
    if let Some(i) = phases
        .iter()
        .position(|p| matches!(p, Phase::Delete { .. }))
        && let Some(after) = phases[i + 1..]
            .iter()
            .position(|p| !matches!(p, Phase::Idle { .. }))
    {
        let s = &spec.phases[i + 1 + after];
        return Err(err(
            "kind",
            s.kind.span(),
            "nothing is left to change after a delete phase: only idle may follow it".into(),
        ));
    }
    // Only Widgets have a built-in patch; another kind's spec is unknown to us.
    if !workload.is_builtin()
        && let Some(i) = phases
            .iter()
            .position(|p| matches!(p, Phase::Update { patch: None, .. }))
    {
        return Err(err(
            "patch",
            spec.phases[i].kind.span(),
            "an update phase on a [workload] needs patch = \"file.yaml\" (a merge-patch template of the object's spec)".into(),
        ));
    }
    Ok(Experiment {
        file: file.to_path_buf(),
        text: text.to_string(),
        spec,
        variants,
        phases,
        workload,
    })
}

/// The keys of a variant that only ctrlbench's own controllers (rust, go@…)
/// understand, present in `v`: (key, span).
fn own_controller_keys(v: &VariantSpec) -> Vec<(&'static str, std::ops::Range<usize>)> {
    let mut k = Vec::new();
    if let Some(p) = &v.preset {
        k.push(("preset", p.span()));
    }
    if let Some(w) = &v.workers {
        k.push(("workers", w.span()));
    }
    if let Some(q) = &v.queue {
        k.push(("queue", q.span()));
    }
    if let Some(d) = &v.debounce_ms {
        k.push(("debounce_ms", d.span()));
    }
    if let Some(p) = &v.priority_queue {
        k.push(("priority_queue", p.span()));
    }
    if let Some(b) = &v.client_burst {
        k.push(("client_burst", b.span()));
    }
    for (set, key) in [
        (v.predicate.is_some(), "predicate"),
        (v.status_write.is_some(), "status_write"),
        (v.annotate.is_some(), "annotate"),
        (v.work_ms.is_some(), "work_ms"),
        (v.client_qps.is_some(), "client_qps"),
        (v.watch_list, "watch_list"),
        (v.strip_managed_fields, "strip_managed_fields"),
        (v.log_level.is_some(), "log_level"),
        (v.conflict_reread.is_some(), "conflict_reread"),
    ] {
        if set {
            k.push((key, v.name.span()));
        }
    }
    k
}

/// The rules that tell ctrlbench's controllers from a user's command or an
/// external controller: which keys each takes.
fn check_foreign(
    v: &VariantSpec,
    imp: &Impl,
    err: &dyn Fn(&str, std::ops::Range<usize>, String) -> SpecError,
) -> Result<(), SpecError> {
    let only = |key: &str, span: std::ops::Range<usize>, who: &str| {
        Err(err(key, span, format!("only {who} takes `{key}`")))
    };
    match imp {
        Impl::Rust | Impl::Go(_) => {
            if v.preset.is_none() {
                return Err(err(
                    "preset",
                    v.name.span(),
                    format!("missing field `preset` (impl = \"{imp}\" needs one)"),
                ));
            }
            for (key, span) in [
                ("command", v.command.as_ref().map(Spanned::span)),
                ("metrics", v.metrics.as_ref().map(Spanned::span)),
                ("rbac", v.rbac.as_ref().map(Spanned::span)),
                ("cluster_rbac", v.cluster_rbac.as_ref().map(Spanned::span)),
                ("namespace", v.namespace.as_ref().map(Spanned::span)),
            ] {
                if let Some(span) = span {
                    return only(key, span, "impl = \"command\" or \"external\"");
                }
            }
        }
        Impl::Command | Impl::External => {
            if let Some((key, span)) = own_controller_keys(v).into_iter().next() {
                return Err(err(
                    key,
                    span,
                    format!(
                        "`{key}` is a setting of ctrlbench's own controllers (rust, go@…), not of impl = \"{imp}\""
                    ),
                ));
            }
            if let Some(m) = &v.metrics {
                check_metrics_url(m.get_ref()).map_err(|e| err("metrics", m.span(), e))?;
            }
        }
    }
    if *imp == Impl::Command {
        let Some(cmd) = &v.command else {
            return Err(err(
                "command",
                v.name.span(),
                "missing field `command` (impl = \"command\" runs it)".into(),
            ));
        };
        if cmd.get_ref().first().is_none_or(|p| p.trim().is_empty()) {
            return Err(err(
                "command",
                cmd.span(),
                "needs at least the program".into(),
            ));
        }
        if let Some(m) = &v.metrics
            && m.get_ref().contains("{port}")
            && !cmd.get_ref().iter().any(|a| a.contains("{port}"))
        {
            return Err(err(
                "metrics",
                m.span(),
                "uses {port}, but the command never passes {port} to the controller".into(),
            ));
        }
        for (key, rules, cluster) in [
            ("rbac", &v.rbac, false),
            ("cluster_rbac", &v.cluster_rbac, true),
        ] {
            if let Some(r) = rules {
                check_rbac(r.get_ref(), cluster).map_err(|e| err(key, r.span(), e))?;
            }
        }
        if let Some(n) = &v.namespace {
            return only("namespace", n.span(), "impl = \"external\"");
        }
    }
    if *imp == Impl::External {
        for (key, span) in [
            ("command", v.command.as_ref().map(Spanned::span)),
            ("rbac", v.rbac.as_ref().map(Spanned::span)),
            ("cluster_rbac", v.cluster_rbac.as_ref().map(Spanned::span)),
        ] {
            if let Some(span) = span {
                return Err(err(
                    key,
                    span,
                    format!(
                        "impl = \"external\" starts nothing and grants nothing: `{key}` belongs to impl = \"command\""
                    ),
                ));
            }
        }
        if let Some(st) = &v.start
            && *st.get_ref() == StartMode::AfterLoad
        {
            return Err(err(
                "start",
                st.span(),
                "impl = \"external\" is already running: ctrlbench cannot start it after the load"
                    .into(),
            ));
        }
        if !v.env.get_ref().is_empty() {
            return Err(err(
                "env",
                v.env.span(),
                "impl = \"external\" starts nothing: no env".into(),
            ));
        }
        if let Some(n) = &v.namespace {
            let ok = !n.get_ref().is_empty()
                && n.get_ref().len() <= 63
                && n.get_ref()
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !n.get_ref().starts_with('-')
                && !n.get_ref().ends_with('-');
            if !ok || n.get_ref().starts_with("kube-") || n.get_ref() == "default" {
                return Err(err(
                    "namespace",
                    n.span(),
                    format!(
                        "{:?} is not a namespace a run may use (a DNS label, not default or kube-*)",
                        n.get_ref()
                    ),
                ));
            }
        }
    }
    Ok(())
}

impl Variant {
    /// The preset of ctrlbench's own controllers ("" for command and external).
    pub fn preset(&self) -> &str {
        self.spec
            .preset
            .as_ref()
            .map_or("", |p| p.get_ref().as_str())
    }

    /// Whether ctrlbench starts one of its own controllers for this variant.
    pub fn is_own(&self) -> bool {
        matches!(self.implementation, Impl::Rust | Impl::Go(_))
    }
}

impl VariantSpec {
    pub fn start_mode(&self) -> StartMode {
        self.start
            .as_ref()
            .map(|s| *s.get_ref())
            .unwrap_or_default()
    }
}

impl Variant {
    /// When the controller starts relative to the load.
    pub fn start(&self) -> StartMode {
        self.spec.start_mode()
    }

    /// The controller's flags: the spec's, and always the queue (the
    /// spec's or the runtime's own) and, for Go builds that have one,
    /// whether the priority queue is on, so every recorded run names its queue.
    pub fn flags(&self) -> Vec<String> {
        if !self.is_own() {
            return Vec::new();
        }
        let mut f = self.spec.flags();
        let q = self
            .spec
            .queue
            .as_ref()
            .map(|q| *q.get_ref())
            .unwrap_or_else(|| self.implementation.default_queue());
        f.push(format!("--queue={}", q.as_str()));
        if let Some(default) = self.implementation.priority_queue_default() {
            let on = self
                .spec
                .priority_queue
                .as_ref()
                .map_or(default, |p| *p.get_ref());
            f.push(format!("--priority-queue={on}"));
        }
        f
    }
}

impl Experiment {
    pub fn name(&self) -> &str {
        self.spec.name.get_ref()
    }
    pub fn scales(&self) -> &[u64] {
        self.spec.scales.get_ref()
    }
    pub fn window_s(&self) -> f64 {
        *self.spec.window_s.get_ref()
    }
    pub fn repeats(&self) -> u32 {
        *self.spec.repeats.get_ref()
    }
    /// The Kubernetes version `variant`'s runs need, when variants differ
    /// (None: the experiment's one cluster).
    pub fn variant_k8s_version(&self, variant: usize) -> Option<String> {
        self.variants[variant]
            .spec
            .k8s_version
            .as_ref()
            .and_then(|v| ctrlbench_plane::binaries::normalize_version(v.get_ref()).ok())
    }

    /// The `[[fault]]` schedule `variant`'s runs get: none for a variant
    /// with `faults = false` (the fault-free baseline).
    pub fn faults_for(&self, variant: usize) -> &[FaultSpec] {
        let off = self.variants[variant]
            .spec
            .faults
            .as_ref()
            .is_some_and(|f| !*f.get_ref());
        if off { &[] } else { &self.spec.faults }
    }

    /// This experiment on a plane of `version` (for variants that name one).
    pub fn on_version(&self, version: &str) -> Experiment {
        let mut e = self.clone();
        e.spec.cluster.k8s_version = Some(Spanned::new(0..0, version.to_string()));
        e
    }

    pub fn is_local(&self) -> bool {
        self.spec.cluster.kubeconfig.is_none() && self.spec.cluster.context.is_none()
    }
}

impl VariantSpec {
    /// The controller's command-line flags for this variant (besides namespace,
    /// metrics address and log format, which the runner sets).
    pub fn flags(&self) -> Vec<String> {
        let mut f = Vec::new();
        if let Some(p) = &self.preset {
            f.extend(["--preset".to_string(), p.get_ref().as_str().to_string()]);
        }
        if let Some(w) = &self.workers {
            f.push(format!("--workers={}", w.get_ref()));
        }
        if let Some(p) = self.predicate {
            f.push(format!("--predicate={}", p.as_str()));
        }
        if let Some(s) = self.status_write {
            f.push(format!("--status-write={}", s.as_str()));
        }
        if let Some(a) = self.annotate {
            f.push(format!("--annotate={a}"));
        }
        if let Some(w) = self.work_ms {
            f.push(format!("--work-ms={w}"));
        }
        if let Some(q) = self.client_qps {
            f.push(format!("--client-qps={q}"));
        }
        if let Some(b) = &self.client_burst {
            f.push(format!("--client-burst={}", b.get_ref()));
        }
        if self.watch_list {
            f.push("--watch-list".to_string());
        }
        if self.strip_managed_fields {
            f.push("--strip-managed-fields".to_string());
        }
        if let Some(d) = &self.debounce_ms {
            f.push(format!("--debounce-ms={}", d.get_ref()));
        }
        let level = self.log_level.unwrap_or(LogLevel::Debug);
        f.push(format!("--log-level={}", level.as_str()));
        if let Some(c) = self.conflict_reread {
            f.push(format!(
                "--conflict-reread={}",
                if c == ConflictReread::Api {
                    "api"
                } else {
                    "cache"
                }
            ));
        }
        f
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"name = "t"
scales = [20]
window_s = 10

[[variant]]
name = "a"
preset = "good"
"#;

    fn err(text: &str) -> SpecError {
        parse(Path::new("exp.toml"), text).expect_err("should be rejected")
    }

    #[test]
    fn a_valid_file_parses_with_defaults() {
        let e = parse(Path::new("exp.toml"), GOOD).unwrap();
        assert_eq!(e.scales(), &[20]);
        assert_eq!(e.repeats(), 1);
        assert_eq!(e.spec.schedule, Schedule::Isolated);
        assert_eq!(e.variants[0].implementation, Impl::Rust);
        assert!(e.is_local());
    }

    #[test]
    fn malformed_files_name_file_line_and_key() {
        let cases: [(&str, usize, &str); 22] = [
            (
                "name = \"t\"\nscales = [20]\nrepeets = 2\n[[variant]]\nname = \"a\"\npreset = \"good\"\n",
                3,
                "repeets",
            ),
            (
                "name = \"t\"\nscales = []\n[[variant]]\nname = \"a\"\npreset = \"good\"\n",
                2,
                "scales",
            ),
            (
                "name = \"t\"\nscales = [0, 5]\n[[variant]]\nname = \"a\"\npreset = \"good\"\n",
                2,
                "scales",
            ),
            (
                "name = \"t\"\nscales = [5]\nwindow_s = -1\n[[variant]]\nname = \"a\"\npreset = \"good\"\n",
                3,
                "window_s",
            ),
            (
                "name = \"t\"\nscales = [5]\nrepeats = 0\n[[variant]]\nname = \"a\"\npreset = \"good\"\n",
                3,
                "repeats",
            ),
            (
                "name = \"t\"\nscales = [5]\nschedule = \"parallel\"\n[[variant]]\nname = \"a\"\npreset = \"good\"\n",
                3,
                "schedule",
            ),
            (
                "name = \"t\"\nscales = [5]\n[[variant]]\nname = \"a\"\npreset = \"great\"\n",
                5,
                "preset",
            ),
            (
                "name = \"t\"\nscales = [5]\n[[variant]]\nname = \"a\"\nimpl = \"java\"\npreset = \"good\"\n",
                5,
                "impl",
            ),
            (
                "name = \"t\"\nscales = [5]\n[[variant]]\nname = \"a\"\npreset = \"good\"\nworkers = 0\n",
                6,
                "workers",
            ),
            (
                "name = \"t\"\nscales = [5]\n[[variant]]\nname = \"a\"\npreset = \"good\"\nclient_burst = 5\n",
                6,
                "client_burst",
            ),
            (
                "name = \"t\"\nscales = [5]\n[[variant]]\nname = \"a\"\npreset = \"good\"\nclient_qps = -1\nclient_burst = 5\n",
                7,
                "client_burst",
            ),
            (
                "name = \"t\"\nscales = [5]\n[[variant]]\nname = \"a\"\npreset = \"good\"\n[[variant]]\nname = \"a\"\npreset = \"bad\"\n",
                7,
                "name",
            ),
            (
                "name = \"t\"\nscales = [5]\n[cluster]\nkubeconfig = \"k\"\netcd_fsync = false\n[[variant]]\nname = \"a\"\npreset = \"good\"\n",
                4,
                "cluster",
            ),
            (
                "name = \"t\"\nscales = [5]\n[[variant]]\nname = \"a\"\npreset = \"good\"\nwokers = 3\n",
                6,
                "wokers",
            ),
            (
                "name = \"t\"\nscales = \"many\"\n[[variant]]\nname = \"a\"\npreset = \"good\"\n",
                2,
                "scales",
            ),
            (
                "name = \"t\"\nscales = [5]\n[[variant]]\nname = \"a\"\nimpl = \"go@v0.22\"\npreset = \"good\"\nqueue = \"kube\"\n",
                7,
                "queue",
            ),
            (
                "name = \"t\"\nscales = [5]\n[[variant]]\nname = \"a\"\npreset = \"good\"\nqueue = \"lifo\"\n",
                6,
                "queue",
            ),
            (
                "name = \"t\"\nscales = [5]\n[[variant]]\nname = \"a\"\nimpl = \"go@v0.22\"\npreset = \"good\"\ndebounce_ms = 5\n",
                7,
                "debounce_ms",
            ),
            (
                "name = \"t\"\nscales = [5]\n[[variant]]\nname = \"a\"\nimpl = \"go@v0.18.4\"\npreset = \"good\"\npriority_queue = true\n",
                7,
                "priority_queue",
            ),
            (
                "name = \"t\"\nscales = [5]\n[[variant]]\nname = \"a\"\npreset = \"good\"\npriority_queue = false\n",
                6,
                "priority_queue",
            ),
            (
                "name = \"t\"\nscales = [5]\n[[variant]]\nname = \"a\"\npreset = \"good\"\nstart = \"later\"\n",
                6,
                "start",
            ),
            (
                "name = \"t\"\nscales = [5]\nschedule = \"concurrent\"\n[[variant]]\nname = \"a\"\npreset = \"good\"\n[[variant]]\nname = \"b\"\npreset = \"good\"\nstart = \"after-load\"\n",
                10,
                "start",
            ),
        ];
        for (text, line, key) in cases {
            let e = err(text);
            assert_eq!((e.line, e.key.as_str()), (line, key), "{text}\n→ {e}");
            let shown = e.to_string();
            assert!(
                shown.starts_with(&format!("exp.toml:{line}: key `{key}`")),
                "{shown}"
            );
        }
    }

    #[test]
    fn a_file_cannot_weaken_the_plane_or_redirect_a_controller() {
        for (text, line, key, says) in [
            (
                "name = \"t\"\nscales = [5]\n[cluster]\napiserver_args = [\"--max-requests-inflight=800\", \"--anonymous-auth=true\"]\n[[variant]]\nname = \"a\"\npreset = \"good\"\n",
                4,
                "apiserver_args",
                "--anonymous-auth=true",
            ),
            (
                "name = \"t\"\nscales = [5]\n[cluster]\netcd_args = [\"--listen-client-urls=http://0.0.0.0:2379\"]\n[[variant]]\nname = \"a\"\npreset = \"good\"\n",
                4,
                "etcd_args",
                "--listen-client-urls",
            ),
            (
                "name = \"t\"\nscales = [5]\n[[variant]]\nname = \"a\"\npreset = \"good\"\nenv = { KUBECONFIG = \"/tmp/other\" }\n",
                6,
                "env",
                "KUBECONFIG",
            ),
            (
                "name = \"t\"\nscales = [5]\n[[variant]]\nname = \"a\"\npreset = \"good\"\nenv = { RUST_LOG = \"x\", LD_PRELOAD = \"/x.so\" }\n",
                6,
                "env",
                "LD_PRELOAD",
            ),
        ] {
            let e = parse(Path::new("f.toml"), text).unwrap_err();
            assert_eq!((e.line, e.key.as_str()), (line, key), "{e}");
            assert!(e.message.contains(says), "{e}");
        }
        // Harmless ones pass.
        let ok = "name = \"t\"\nscales = [5]\n[cluster]\napiserver_args = [\"--max-requests-inflight=800\"]\n[[variant]]\nname = \"a\"\npreset = \"good\"\nenv = { RUST_LOG = \"info\" }\n";
        assert!(parse(Path::new("f.toml"), ok).is_ok());
    }

    #[test]
    fn values_out_of_bounds_are_refused_at_parse_time() {
        for (extra, key) in [
            ("window_s = 1e20\n", "window_s"),
            ("quiet_s = 1e9\n", "quiet_s"),
            ("scrape_interval_s = 0.001\n", "scrape_interval_s"),
            ("concurrency = 5000\n", "concurrency"),
            ("probe_objects = 0\n", "probe_objects"),
            ("probe_objects = 200000\n", "probe_objects"),
        ] {
            let text = format!(
                "name = \"t\"\nscales = [5]\n{extra}[[variant]]\nname = \"a\"\npreset = \"good\"\n"
            );
            let e = parse(Path::new("f.toml"), &text).unwrap_err();
            assert_eq!((e.line, e.key.as_str()), (3, key), "{e}");
        }
        let e = parse(
            Path::new("f.toml"),
            "name = \"t\"\nscales = [5, 2000000]\n[[variant]]\nname = \"a\"\npreset = \"good\"\n",
        )
        .unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (2, "scales"), "{e}");
    }

    #[test]
    fn path_like_names_are_refused() {
        for bad in [
            "../x",
            "a/b",
            "a b",
            "",
            ".",
            "..",
            "-a",
            "x".repeat(64).as_str(),
        ] {
            let text = format!(
                "name = {bad:?}\nscales = [5]\n[[variant]]\nname = \"a\"\npreset = \"good\"\n"
            );
            let e = parse(Path::new("f.toml"), &text).unwrap_err();
            assert_eq!((e.line, e.key.as_str()), (1, "name"), "{bad:?}: {e}");
        }
        for good in ["quick", "seed-exp1", "a.b_c"] {
            assert!(check_name(good).is_ok(), "{good}");
        }
    }

    #[test]
    fn command_and_external_variants_are_checked_like_the_rest() {
        let base = "name = \"t\"\nscales = [5]\n[[variant]]\nname = \"a\"\n";
        for (extra, line, key, says) in [
            (
                "impl = \"command\"\n",
                4,
                "command",
                "missing field `command`",
            ),
            (
                "impl = \"command\"\ncommand = []\n",
                6,
                "command",
                "at least the program",
            ),
            (
                "impl = \"command\"\ncommand = [\"x\"]\npreset = \"good\"\n",
                7,
                "preset",
                "ctrlbench's own controllers",
            ),
            (
                "impl = \"command\"\ncommand = [\"x\"]\nmetrics = \"http://10.0.0.1:9/metrics\"\n",
                7,
                "metrics",
                "loopback",
            ),
            (
                "impl = \"command\"\ncommand = [\"x\"]\nmetrics = \"http://127.0.0.1:{port}/metrics\"\n",
                7,
                "metrics",
                "never passes {port}",
            ),
            (
                "impl = \"command\"\ncommand = [\"x\"]\ncluster_rbac = [{ api_groups = [\"\"], resources = [\"pods\"], verbs = [\"delete\"] }]\n",
                7,
                "cluster_rbac",
                "may only read",
            ),
            (
                "impl = \"command\"\ncommand = [\"x\"]\ncluster_rbac = [{ api_groups = [\"\"], resources = [\"secrets\"], verbs = [\"list\"] }]\n",
                7,
                "cluster_rbac",
                "secrets",
            ),
            (
                "impl = \"command\"\ncommand = [\"x\"]\nrbac = [{ api_groups = [\"*\"], resources = [\"*\"], verbs = [\"*\"] }]\n",
                7,
                "rbac",
                "cannot be granted",
            ),
            (
                "impl = \"command\"\ncommand = [\"x\"]\nenv = { KUBECONFIG = \"/x\" }\n",
                7,
                "env",
                "KUBECONFIG",
            ),
            (
                "impl = \"external\"\ncommand = [\"x\"]\n",
                6,
                "command",
                "starts nothing",
            ),
            (
                "impl = \"external\"\nnamespace = \"kube-system\"\n",
                6,
                "namespace",
                "not a namespace a run may use",
            ),
            (
                "impl = \"external\"\nstart = \"after-load\"\n",
                6,
                "start",
                "already running",
            ),
            ("impl = \"rust\"\n", 4, "preset", "missing field `preset`"),
            (
                "impl = \"rust\"\npreset = \"good\"\ncommand = [\"x\"]\n",
                7,
                "command",
                "only impl",
            ),
        ] {
            let e = err(&format!("{base}{extra}"));
            assert_eq!((e.line, e.key.as_str()), (line, key), "{extra}\n→ {e}");
            assert!(e.message.contains(says), "{extra}\n→ {e}");
        }
        let ok = format!(
            "{base}impl = \"command\"\ncommand = [\"./op\", \"--port={{port}}\"]\nmetrics = \"http://127.0.0.1:{{port}}/metrics\"\nrbac = [{{ api_groups = [\"\"], resources = [\"events\"], verbs = [\"create\"] }}]\ncluster_rbac = [{{ api_groups = [\"apps\"], resources = [\"deployments\"], verbs = [\"list\", \"watch\"] }}]\n"
        );
        let e = parse(Path::new("exp.toml"), &ok).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(e.variants[0].implementation, Impl::Command);
        assert!(e.variants[0].flags().is_empty());
        let ext = format!("{base}impl = \"external\"\nnamespace = \"my-ns\"\n");
        assert!(parse(Path::new("exp.toml"), &ext).is_ok());
    }

    #[test]
    fn workload_errors_name_the_file_line_and_key() {
        let dir = tempfile::tempdir().unwrap();
        let crd =
            serde_yaml::to_string(&<widget_api::Widget as kube::CustomResourceExt>::crd()).unwrap();
        std::fs::write(dir.path().join("crd.yaml"), &crd).unwrap();
        std::fs::write(
            dir.path().join("w.yaml"),
            "apiVersion: benchmark.example.com/v1alpha1\nkind: Widget\nspec:\n  count: {{index}}\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("other.yaml"),
            "apiVersion: v1\nkind: ConfigMap\n",
        )
        .unwrap();
        let file = dir.path().join("exp.toml");
        let text = |workload: &str| {
            format!(
                "name = \"t\"\nscales = [5]\n[workload]\n{workload}[[variant]]\nname = \"a\"\npreset = \"good\"\n"
            )
        };
        let ok = text(
            "crd = \"crd.yaml\"\nobject = \"w.yaml\"\nready = { jsonpath = \"{.status.phase}\", equals = \"Ready\" }\n",
        );
        let e = parse(&file, &ok).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(e.workload.crd_name(), "widgets.benchmark.example.com");
        assert!(!e.workload.is_builtin());
        for (workload, line, key, says) in [
            (
                "crd = \"nope.yaml\"\nobject = \"w.yaml\"\nready = { condition = \"Ready\" }\n",
                4,
                "crd",
                "cannot read",
            ),
            (
                "crd = \"other.yaml\"\nobject = \"w.yaml\"\nready = { condition = \"Ready\" }\n",
                4,
                "crd",
                "no CustomResourceDefinition",
            ),
            (
                "crd = \"crd.yaml\"\nobject = \"other.yaml\"\nready = { condition = \"Ready\" }\n",
                5,
                "object",
                "the CRD serves Widget",
            ),
            (
                "crd = \"crd.yaml\"\nobject = \"w.yaml\"\nready = { jsonpath = \"{.status.phase\" , equals = \"x\"}\n",
                6,
                "ready",
                "unbalanced",
            ),
            (
                "crd = \"crd.yaml\"\nobject = \"w.yaml\"\nready = { condition = \"Ready\", exists = true }\n",
                6,
                "ready",
                "not a readiness rule",
            ),
            (
                "crd = \"crd.yaml\"\nobject = \"w.yaml\"\nready = { phase = \"Ready\" }\n",
                6,
                "phase",
                "unknown field",
            ),
        ] {
            let e = parse(&file, &text(workload)).unwrap_err();
            assert_eq!((e.line, e.key.as_str()), (line, key), "{workload}\n→ {e}");
            assert!(e.message.contains(says), "{workload}\n→ {e}");
            assert!(
                e.to_string()
                    .starts_with(&format!("{}:{line}:", file.display())),
                "{e}"
            );
        }
    }

    #[test]
    fn topology_and_faults_are_validated_with_file_line_and_key() {
        let with = |extra: &str| format!("{GOOD}{extra}");
        // (extra text, line of the error, key, part of the message)
        let cases = [
            (
                "[cluster]\netcd_members = 9\n",
                9,
                "etcd_members",
                "from 1 to 7",
            ),
            (
                "[cluster]\napiservers = 0\n",
                9,
                "apiservers",
                "from 1 to 5",
            ),
            (
                "[[fault]]\nat_s = 1\naction = \"kill\"\ntarget = \"etcd:2\"\n",
                11,
                "target",
                "1 etcd member",
            ),
            (
                "[[fault]]\nat_s = 1\naction = \"kill\"\ntarget = \"apiserver:1\"\n",
                11,
                "target",
                "1 apiserver",
            ),
            (
                "[[fault]]\nat_s = 1\naction = \"kill\"\ntarget = \"etcd:follower\"\n",
                11,
                "target",
                "at least 2",
            ),
            (
                "[[fault]]\nat_s = 12\naction = \"kill\"\ntarget = \"controller\"\n",
                9,
                "at_s",
                "after the window",
            ),
            (
                "[[fault]]\nat_s = 1\naction = \"stop\"\ntarget = \"controller\"\n",
                10,
                "duration_s",
                "duration_s > 0",
            ),
            (
                "[[fault]]\nat_s = 1\naction = \"explode\"\ntarget = \"controller\"\n",
                10,
                "action",
                "explode",
            ),
            (
                "[[fault]]\nat_s = 1\naction = \"kill\"\ntarget = \"scheduler\"\n",
                11,
                "target",
                "unknown fault target",
            ),
        ];
        for (extra, line, key, msg) in cases {
            let e = err(&with(extra));
            assert_eq!((e.line, e.key.as_str()), (line, key), "{extra}: {e}");
            assert!(e.message.contains(msg), "{extra}: {e}");
            assert!(e.to_string().starts_with("exp.toml:"), "{e}");
        }
        // The same targets are fine on a plane that has them.
        let ok = with(
            "[cluster]\netcd_members = 3\napiservers = 2\n\
             [[fault]]\nat_s = 1\naction = \"restart\"\ntarget = \"etcd:2\"\nduration_s = 1\n\
             [[fault]]\nat_s = 2\naction = \"stop\"\ntarget = \"etcd:follower\"\nduration_s = 1\n\
             [[fault]]\nat_s = 3\naction = \"kill\"\ntarget = \"apiserver:1\"\n",
        );
        let e = parse(Path::new("exp.toml"), &ok).unwrap();
        assert_eq!(e.spec.faults.len(), 3);
        // An existing cluster has no plane processes to hit.
        let e = err(&with(
            "[cluster]\ncontext = \"x\"\n[[fault]]\nat_s = 1\naction = \"kill\"\ntarget = \"etcd:leader\"\n",
        ));
        assert_eq!(e.key, "target");
    }

    #[test]
    fn a_fault_free_baseline_variant_is_validated() {
        let fault =
            "[[fault]]\nat_s = 1\naction = \"restart\"\ntarget = \"controller\"\nduration_s = 1\n";
        let base = "[[variant]]\nname = \"b\"\npreset = \"good\"\nfaults = false\n";
        let e = parse(Path::new("exp.toml"), &format!("{GOOD}{base}{fault}")).unwrap();
        assert_eq!(e.faults_for(0).len(), 1);
        assert!(e.faults_for(1).is_empty());
        // Nothing to opt out of.
        let e = err(&format!("{GOOD}{base}"));
        assert_eq!((e.line, e.key.as_str()), (11, "faults"), "{e}");
        assert!(e.message.contains("no [[fault]]"), "{e}");
        // A concurrent run shares its plane, and so its plane faults.
        let text = format!("{GOOD}{base}{fault}").replace(
            "window_s = 10\n",
            "window_s = 10\nschedule = \"concurrent\"\n",
        );
        let e = err(&text);
        assert_eq!(e.key, "faults", "{e}");
        assert!(e.message.contains("isolated"), "{e}");
    }

    #[test]
    fn missing_variant_is_reported() {
        let e = err("name = \"t\"\nscales = [5]\n");
        assert_eq!(e.key, "variant");
    }

    #[test]
    fn builtin_experiments_are_valid() {
        for (name, text) in super::super::builtin::BUILTIN {
            super::super::builtin::parse(name, text).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }

    #[test]
    fn every_variant_gets_its_queue_and_debounce_works_on_both() {
        let text = r#"name = "t"
scales = [5]
[[variant]]
name = "r"
preset = "good"
[[variant]]
name = "r-fifo"
preset = "good"
queue = "fifo"
debounce_ms = 50
[[variant]]
name = "g"
impl = "go@v0.22"
preset = "good"
"#;
        let e = parse(Path::new("exp.toml"), text).unwrap();
        let flags: Vec<Vec<String>> = e.variants.iter().map(|v| v.flags()).collect();
        assert!(flags[0].contains(&"--queue=kube".to_string()), "{flags:?}");
        assert!(flags[1].contains(&"--queue=fifo".to_string()), "{flags:?}");
        assert!(
            flags[1].contains(&"--debounce-ms=50".to_string()),
            "{flags:?}"
        );
        assert!(flags[2].contains(&"--queue=fifo".to_string()), "{flags:?}");
    }

    #[test]
    fn go_builds_with_a_priority_queue_always_get_the_flag() {
        let text = r#"name = "t"
scales = [5]
[[variant]]
name = "rust"
preset = "good"
[[variant]]
name = "g18"
impl = "go@v0.18.4"
preset = "good"
[[variant]]
name = "g22"
impl = "go@v0.22"
preset = "good"
[[variant]]
name = "g25"
impl = "go@v0.25"
preset = "good"
[[variant]]
name = "g25-fifo"
impl = "go@v0.25"
preset = "good"
priority_queue = false
[[variant]]
name = "g22-prio"
impl = "go@v0.22"
preset = "good"
priority_queue = true
"#;
        let e = parse(Path::new("exp.toml"), text).unwrap();
        let pq: Vec<Option<String>> = e
            .variants
            .iter()
            .map(|v| {
                v.flags()
                    .into_iter()
                    .find(|f| f.starts_with("--priority-queue"))
            })
            .collect();
        let want = [
            None,
            None,
            Some("--priority-queue=false"),
            Some("--priority-queue=true"),
            Some("--priority-queue=false"),
            Some("--priority-queue=true"),
        ];
        assert_eq!(
            pq,
            want.map(|w| w.map(String::from)).to_vec(),
            "{:?}",
            e.variants.iter().map(|v| v.flags()).collect::<Vec<_>>()
        );
        let msg = err("name = \"t\"\nscales = [5]\n[[variant]]\nname = \"a\"\nimpl = \"go@v0.18.4\"\npreset = \"good\"\npriority_queue = true\n").to_string();
        assert!(msg.contains("go@v0.18.4 has no priority queue"), "{msg}");
    }

    #[test]
    fn phases_are_validated_with_file_line_and_key() {
        let with = |phases: &str| format!("{GOOD}{phases}");
        for (phases, line, key) in [
            ("[[phase]]\nkind = \"upgrade\"\n", 9, "kind"),
            ("[[phase]]\nkind = \"idle\"\n", 9, "duration_s"),
            (
                "[[phase]]\nkind = \"idle\"\nduration_s = 5\ncount = 2\n",
                11,
                "count",
            ),
            ("[[phase]]\nkind = \"update\"\ncount = 0\n", 10, "count"),
            ("[[phase]]\nkind = \"delete\"\nrate = -1.0\n", 10, "rate"),
            (
                "[[phase]]\nkind = \"update\"\npatch = \"no-such-file.yaml\"\n",
                10,
                "patch",
            ),
            (
                "[[phase]]\nkind = \"delete\"\n[[phase]]\nkind = \"update\"\n",
                11,
                "kind",
            ),
        ] {
            let e = err(&with(phases));
            assert_eq!((e.line, e.key.as_str()), (line, key), "{phases}: {e}");
        }
        let e = parse(
            Path::new("exp.toml"),
            &with("[[phase]]\nkind = \"update\"\ncount = 2\n[[phase]]\nkind = \"idle\"\nduration_s = 5\n[[phase]]\nkind = \"delete\"\n"),
        )
        .unwrap();
        assert_eq!(
            e.phases.iter().map(|p| p.kind()).collect::<Vec<_>>(),
            ["update", "idle", "delete"]
        );
        // Timeouts default to the window.
        assert_eq!(e.phases[2].max_seconds(), 10.0);
    }

    #[test]
    fn per_variant_versions_need_an_isolated_local_plane() {
        let v = |extra: &str, variant: &str| {
            format!(
                "name = \"t\"\nscales = [5]\n{extra}[[variant]]\nname = \"a\"\npreset = \"good\"\n{variant}"
            )
        };
        let e = parse(Path::new("exp.toml"), &v("", "k8s_version = \"v1.36.3\"\n")).unwrap();
        assert_eq!(e.variant_k8s_version(0).as_deref(), Some("1.36.3"));
        let on = e.on_version("1.36.3");
        assert_eq!(
            on.spec
                .cluster
                .k8s_version
                .as_ref()
                .map(|s| s.get_ref().as_str()),
            Some("1.36.3")
        );
        for (extra, variant, line) in [
            ("", "k8s_version = \"1.36\"\n", 6),
            (
                "schedule = \"concurrent\"\n",
                "k8s_version = \"1.36.3\"\n",
                7,
            ),
            ("probe = true\n", "k8s_version = \"1.36.3\"\n", 7),
            (
                "[cluster]\nk8s_version = \"1.34.12\"\n",
                "k8s_version = \"1.36.3\"\n",
                8,
            ),
        ] {
            let e = err(&v(extra, variant));
            assert_eq!(
                (e.line, e.key.as_str()),
                (line, "k8s_version"),
                "{extra}{variant}: {e}"
            );
        }
    }

    #[test]
    fn start_is_before_load_unless_a_variant_says_after_load() {
        let text = "name = \"t\"\nscales = [5]\n[[variant]]\nname = \"a\"\npreset = \"good\"\n[[variant]]\nname = \"b\"\npreset = \"good\"\nstart = \"after-load\"\n";
        let e = parse(Path::new("exp.toml"), text).unwrap();
        assert_eq!(e.variants[0].start(), StartMode::BeforeLoad);
        assert_eq!(e.variants[1].start(), StartMode::AfterLoad);
        // Not a controller flag: the harness decides when to start it.
        assert!(!e.variants[1].flags().iter().any(|f| f.contains("load")));
        let perf = super::super::builtin::get("perf").unwrap();
        let p = parse(Path::new("perf.toml"), perf).unwrap();
        assert!(p.variants.iter().any(|v| v.start() == StartMode::AfterLoad));
        assert!(
            p.variants
                .iter()
                .any(|v| v.start() == StartMode::BeforeLoad)
        );
    }
}
