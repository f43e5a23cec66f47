//! One `[[variant]]`: its name, its implementation, which keys that
//! implementation takes (the key table decides), then the rules of each
//! kind — ctrlbench's own controllers (values judged by the preset table's
//! rules, `widget_api::presets`), a user's command (its program, metrics
//! URL and RBAC), an external controller (its namespace) — and the rules
//! that depend on the rest of the file (plane version, faults, schedule).

use std::ops::Range;

use super::errors::{Checked, Source};
use super::faults::{Fault, FaultTarget};
use super::keys::{self, KEYS, VariantSpec};
use super::policy;
use super::schema::{FaultSpec, Queue, Schedule, StartMode};
use super::validated::Variant;
use crate::controllers::Impl;

/// The most replicas a variant may run (each is a whole controller process):
/// a restart storm of 32 informers on a machine that has the room. A preset
/// row's own default stays within widget_api's smaller bound.
pub const MAX_REPLICAS: u32 = 32;

/// What a variant's checks need to know of the rest of the file.
pub struct Around<'a> {
    pub schedule: Schedule,
    pub local: bool,
    /// `[cluster] k8s_version` is set.
    pub cluster_version: bool,
    /// probe, background_objects or decoys is on (all per plane).
    pub per_plane: bool,
    /// The file has a `[[fault]]` schedule.
    pub faults: bool,
    /// The observation window, which bounds every per-reconcile duration.
    pub window_s: f64,
    /// The variants checked before this one.
    pub earlier: &'a [Variant],
}

pub fn check(src: &Source, v: &VariantSpec, around: &Around) -> Checked<Variant> {
    let given = v.given();
    let span_of = |key: &str| -> Range<usize> {
        given
            .iter()
            .find(|(k, _)| k.name == key)
            .map_or(v.name.span(), |(_, s)| s.clone())
    };
    let name = v.name.get_ref();
    policy::check_variant_name(name).map_err(|m| src.at("name", v.name.span(), m))?;
    if around.earlier.iter().any(|x| &x.name == name) {
        return Err(src.at(
            "name",
            v.name.span(),
            format!("variant name {name:?} is used twice"),
        ));
    }
    let written = v.implementation.as_ref().map_or("rust", |i| i.get_ref());
    let Some(imp) = Impl::parse(written) else {
        return Err(src.at(
            "impl",
            span_of("impl"),
            format!(
                "unknown implementation {written:?}: use rust, {}, command or external",
                crate::controllers::go_labels()
            ),
        ));
    };
    for (key, span) in &given {
        key.accepts
            .check(key.name, key.flag, &imp)
            .map_err(|m| src.at(key.name, span.clone(), m))?;
    }
    let values = v.values();
    match imp {
        Impl::Rust | Impl::Go(_) => own(src, &values, &imp, &span_of, v)?,
        Impl::Command => command(src, &values, &span_of, v)?,
        Impl::External => external(src, &values, &span_of)?,
    }
    if let Some(m) = &values.metrics {
        policy::check_metrics_url(m).map_err(|e| src.at("metrics", span_of("metrics"), e))?;
    }
    if let Some(u) = &values.pprof {
        policy::check_pprof_url(u).map_err(|e| src.at("pprof", span_of("pprof"), e))?;
    }
    if let Some(k) = values
        .env
        .iter()
        .flatten()
        .map(|(k, _)| k)
        .find(|k| policy::env_denied(k))
    {
        return Err(src.at(
            "env",
            span_of("env"),
            format!("{k} cannot be set by an experiment file (it would redirect or alter the controller)"),
        ));
    }
    in_context(src, &values, around, &span_of)?;
    Ok(Variant {
        name: name.clone(),
        implementation: imp,
        keys: values,
    })
}

type SpanOf<'a> = dyn Fn(&str) -> Range<usize> + 'a;

/// The longest a per-reconcile duration may be: one such wait longer than the
/// window (or than an hour) can only end a run with nothing measured.
const MAX_DURATION_MS: f64 = 3_600_000.0;

/// `work_ms` and `debounce_ms` within the window and within an hour.
fn durations(
    src: &Source,
    values: &keys::VariantKeys,
    around: &Around,
    span_of: &SpanOf,
) -> Checked<()> {
    let bound_ms = (around.window_s * 1000.0).min(MAX_DURATION_MS);
    for (key, v) in [
        ("work_ms", values.work_ms),
        ("debounce_ms", values.debounce_ms),
    ] {
        if let Some(ms) = v
            && ms as f64 > bound_ms
        {
            let what = if bound_ms < MAX_DURATION_MS {
                format!("the window ({} s)", around.window_s)
            } else {
                "one hour".to_string()
            };
            return Err(src.at(
                key,
                span_of(key),
                format!("{ms} ms is longer than {what}: a run could measure nothing"),
            ));
        }
    }
    Ok(())
}

/// rust and go@…: a preset, values the preset table's rules accept, a
/// queue the runtime has.
fn own(
    src: &Source,
    values: &keys::VariantKeys,
    imp: &Impl,
    span_of: &SpanOf,
    v: &VariantSpec,
) -> Checked<()> {
    if values.preset.is_none() {
        return Err(src.at(
            "preset",
            v.name.span(),
            format!("missing field `preset` (impl = \"{imp}\" needs one)"),
        ));
    }
    if let Err(e) = widget_api::presets::resolve(&values.preset_flags()) {
        let key = KEYS
            .iter()
            .find(|k| k.flag == Some(e.flag))
            .map_or("preset", |k| k.name);
        return Err(src.at(key, span_of(key), keys::flags_as_keys(&e.message)));
    }
    if values.queue == Some(Queue::Kube) && *imp != Impl::Rust {
        return Err(src.at(
            "queue",
            span_of("queue"),
            "\"kube\" is kube-runtime's scheduler, which only the Rust controller has; the Go controller's queue is \"fifo\"",
        ));
    }
    Ok(())
}

/// A user's program: something to run, a metrics URL it can be told, RBAC
/// the policy allows.
fn command(
    src: &Source,
    values: &keys::VariantKeys,
    span_of: &SpanOf,
    v: &VariantSpec,
) -> Checked<()> {
    let Some(cmd) = &values.command else {
        return Err(src.at(
            "command",
            v.name.span(),
            "missing field `command` (impl = \"command\" runs it)",
        ));
    };
    if cmd.first().is_none_or(|p| p.trim().is_empty()) {
        return Err(src.at("command", span_of("command"), "needs at least the program"));
    }
    for (key, url) in [("metrics", &values.metrics), ("pprof", &values.pprof)] {
        if let Some(m) = url
            && m.contains("{port}")
            && !cmd.iter().any(|a| a.contains("{port}"))
        {
            return Err(src.at(
                key,
                span_of(key),
                "uses {port}, but the command never passes {port} to the controller",
            ));
        }
    }
    if let Some(b) = &values.build
        && b.first().is_none_or(|p| p.trim().is_empty())
    {
        return Err(src.at("build", span_of("build"), "needs at least the program"));
    }
    if values.build_dir.is_some() && values.build.is_none() {
        return Err(src.at(
            "build_dir",
            span_of("build_dir"),
            "is where `build` runs: give build too",
        ));
    }
    for (key, rules, cluster) in [
        ("rbac", &values.rbac, false),
        ("cluster_rbac", &values.cluster_rbac, true),
    ] {
        if let Some(r) = rules {
            policy::check_rbac(r, cluster).map_err(|e| src.at(key, span_of(key), e))?;
        }
    }
    Ok(())
}

/// A controller that is already running: a namespace a run may use, and
/// nothing to start after the load.
fn external(src: &Source, values: &keys::VariantKeys, span_of: &SpanOf) -> Checked<()> {
    if values.start == Some(StartMode::AfterLoad) {
        return Err(src.at(
            "start",
            span_of("start"),
            "impl = \"external\" is already running: ctrlbench cannot start it after the load",
        ));
    }
    if let Some(n) = &values.namespace {
        policy::check_namespace(n).map_err(|m| src.at("namespace", span_of("namespace"), m))?;
    }
    Ok(())
}

/// Why a variant cannot have a local plane of its own here (its own
/// version or gates), if it cannot.
fn plane_of_its_own(around: &Around) -> Option<String> {
    if !around.local {
        Some("needs the local plane (no kubeconfig or context)".to_string())
    } else if around.schedule == Schedule::Concurrent {
        Some(
            "needs schedule = \"isolated\" (variants on different planes cannot run together)"
                .to_string(),
        )
    } else if around.per_plane {
        Some(
            "cannot be combined with probe, background_objects or [workload] decoys, which are per plane"
                .to_string(),
        )
    } else {
        None
    }
}

/// The rules that depend on the rest of the file.
fn in_context(
    src: &Source,
    values: &keys::VariantKeys,
    around: &Around,
    span_of: &SpanOf,
) -> Checked<()> {
    durations(src, values, around, span_of)?;
    if let Some(k) = &values.k8s_version {
        let why = plane_of_its_own(around)
            .or_else(|| {
                around
                    .cluster_version
                    .then(|| "cannot be combined with [cluster] k8s_version".to_string())
            })
            .or_else(|| {
                ctrlbench_plane::binaries::normalize_version(k)
                    .err()
                    .map(|e| format!("{e:#}"))
            });
        if let Some(m) = why {
            return Err(src.at("k8s_version", span_of("k8s_version"), m));
        }
    }
    if let Some(gates) = &values.feature_gates {
        let why = plane_of_its_own(around).or_else(|| {
            gates.iter().find_map(|g| match g.split_once('=') {
                Some((name, "true" | "false")) if !name.is_empty() => None,
                _ => Some(format!("{g:?} is not Name=true or Name=false")),
            })
        });
        if let Some(m) = why {
            return Err(src.at("feature_gates", span_of("feature_gates"), m));
        }
    }
    if values.audit_log.is_some()
        && let Some(m) = plane_of_its_own(around)
    {
        return Err(src.at("audit_log", span_of("audit_log"), m));
    }
    if values.faults.is_some() {
        let why = if !around.faults {
            Some("there is no [[fault]] schedule to opt out of")
        } else if around.schedule == Schedule::Concurrent {
            Some(
                "needs schedule = \"isolated\" (plane faults hit every variant of a concurrent run)",
            )
        } else {
            None
        };
        if let Some(m) = why {
            return Err(src.at("faults", span_of("faults"), m));
        }
    }
    if let Some(r) = values.replicas
        && !(1..=MAX_REPLICAS).contains(&r)
    {
        return Err(src.at(
            "replicas",
            span_of("replicas"),
            format!("must be 1 to {MAX_REPLICAS}"),
        ));
    }
    if values.leader_election == Some(false)
        && let Some(p) = values
            .preset
            .as_ref()
            .and_then(|p| widget_api::presets::get(p.as_str()))
        && p.leader_elect
    {
        return Err(src.at(
            "leader_election",
            span_of("leader_election"),
            format!(
                "preset {:?} elects a leader: drop leader_election = false or choose a preset without election",
                p.name
            ),
        ));
    }
    if values.allocator.is_some() && values.binary.is_some() {
        return Err(src.at(
            "allocator",
            span_of("allocator"),
            "a `binary` is already built: set its allocator when building it, or drop `binary`",
        ));
    }
    if let Some(a) = &values.allocator
        && !crate::controllers::ALLOCATORS.contains(&a.as_str())
    {
        return Err(src.at(
            "allocator",
            span_of("allocator"),
            format!(
                "unknown allocator {a:?} (want {})",
                crate::controllers::ALLOCATORS.join("|")
            ),
        ));
    }
    if values.controller_cpus == Some(0) {
        return Err(src.at(
            "controller_cpus",
            span_of("controller_cpus"),
            "must be at least 1",
        ));
    }
    if let Some(l) = &values.cpu_limit
        && let Err(m) = ctrlbench_plane::quota::parse_millicores(l)
    {
        return Err(src.at("cpu_limit", span_of("cpu_limit"), m));
    }
    // Variants that run together share one loader phase: they start alike.
    let start = values.start.unwrap_or_default();
    if around.schedule == Schedule::Concurrent
        && let Some(first) = around.earlier.first()
        && first.start() != start
    {
        return Err(src.at(
            "start",
            span_of("start"),
            format!(
                "with schedule = \"concurrent\" every variant starts alike: {:?} is {}, {:?} is {}",
                first.name,
                first.start(),
                values.name,
                start
            ),
        ));
    }
    Ok(())
}

/// Checks the controller faults against the faulted variants: `controller:k`
/// needs k replicas more than k in each, `controller:leader` a Lease in each
/// (`leader_election = true`, or a command's `lease`).
pub fn check_fleet(
    src: &Source,
    specs: &[FaultSpec],
    faults: &[Fault],
    variants: &[Variant],
) -> Checked<()> {
    let faulted: Vec<_> = variants.iter().filter(|v| v.faulted()).collect();
    for (spec, f) in specs.iter().zip(faults) {
        let bad = |m: String| Err(src.at("target", spec.target.span(), m));
        match f.target {
            FaultTarget::ControllerReplica(k) => {
                if let Some(v) = faulted.iter().find(|v| v.replicas() <= k) {
                    return bad(format!(
                        "controller:{k} does not exist in variant {:?}: it runs {} replica(s), numbered from 0 (replicas)",
                        v.keys.name,
                        v.replicas()
                    ));
                }
            }
            FaultTarget::ControllerLeader => {
                if let Some(v) = faulted.iter().find(|v| v.lease().is_none()) {
                    return bad(format!(
                        "controller:leader needs leader election in variant {:?}: set leader_election = true (or a command's lease)",
                        v.keys.name
                    ));
                }
            }
            _ => {}
        }
    }
    Ok(())
}
