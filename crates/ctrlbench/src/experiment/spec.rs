//! Experiment files (TOML): parsing and validation. Unknown keys are
//! rejected, and every error names the file, the line and the key.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use toml::Spanned;

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
    /// Run `ctrlbench probe` first and record its figures in the manifest.
    #[serde(default)]
    pub probe: bool,
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
fn default_concurrency() -> Spanned<u32> {
    Spanned::new(0..0, 16)
}

/// One variant at a time, or all at once (the seed's Experiment 1): the
/// record's type, so what the file says is what summary.json says.
pub use ctrlbench_record::summary::Schedule;

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
    pub preset: Preset,
    pub workers: Option<Spanned<u32>>,
    pub predicate: Option<Predicate>,
    pub status_write: Option<StatusWrite>,
    pub annotate: Option<bool>,
    pub work_ms: Option<u64>,
    pub client_qps: Option<f64>,
    pub client_burst: Option<Spanned<i64>>,
    #[serde(default)]
    pub watch_list: bool,
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
    #[serde(default = "no_env")]
    pub env: Spanned<BTreeMap<String, String>>,
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

/// `repeats` (also `--repeats`).
pub fn check_repeats(v: u32) -> Result<(), String> {
    if v == 0 {
        return Err("must be at least 1".into());
    }
    Ok(())
}

pub fn parse(file: &Path, text: &str) -> Result<Experiment, SpecError> {
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
    let c = &spec.cluster;
    if let Some(kc) = c.kubeconfig.as_ref().or(c.context.as_ref())
        && (c.k8s_version.is_some()
            || !c.feature_gates.is_empty()
            || !c.apiserver_args.get_ref().is_empty()
            || c.etcd_fsync.is_some()
            || c.audit_log.is_some()
            || c.etcd_members.is_some()
            || c.apiservers.is_some())
    {
        return Err(err(
            "cluster",
            kc.span(),
            "an existing cluster (kubeconfig/context) cannot take local-plane settings (k8s_version, feature_gates, apiserver_args, etcd_fsync, audit_log, etcd_members, apiservers)".into(),
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
                    "unknown implementation {:?}: use rust, {}",
                    v.implementation.get_ref(),
                    crate::controllers::go_labels()
                ),
            ));
        };
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
        variants.push(Variant {
            name: name.clone(),
            implementation,
            spec: v.clone(),
        });
    }
    Ok(Experiment {
        file: file.to_path_buf(),
        text: text.to_string(),
        spec,
        variants,
    })
}

impl Variant {
    /// The controller's flags: the spec's, and always the queue (the
    /// spec's or the runtime's own) and, for Go builds that have one,
    /// whether the priority queue is on, so every recorded run names its queue.
    pub fn flags(&self) -> Vec<String> {
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
    pub fn is_local(&self) -> bool {
        self.spec.cluster.kubeconfig.is_none() && self.spec.cluster.context.is_none()
    }
}

impl VariantSpec {
    /// The controller's command-line flags for this variant (besides namespace,
    /// metrics address and log format, which the runner sets).
    pub fn flags(&self) -> Vec<String> {
        let mut f = vec!["--preset".to_string(), self.preset.as_str().to_string()];
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
        let cases: [(&str, usize, &str); 20] = [
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
    fn missing_variant_is_reported() {
        let e = err("name = \"t\"\nscales = [5]\n");
        assert_eq!(e.key, "variant");
    }

    #[test]
    fn builtin_experiments_are_valid() {
        for (name, text) in super::super::builtin::BUILTIN {
            parse(Path::new(name), text).unwrap_or_else(|e| panic!("{name}: {e}"));
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
}
