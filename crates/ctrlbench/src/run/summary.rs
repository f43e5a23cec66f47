//! Building one run's [`Summary`] from what the measurement loop saw: the
//! variant and its effective settings, the load, Ready counts and
//! convergence from our own watch, reconcile deltas from the sampler.

use std::time::Instant;

use ctrlbench_record::summary::{
    Load, PresetInfo, QuietWait, Reconciles, Scrapes, Start, StartMode,
};
use ctrlbench_record::{StopReason, Summary};

use super::loader::LoadStats;
use super::measure::sampler::{ControllerRow, ControllerTarget, Sampler};
use super::member::Member;
use crate::experiment::Experiment;
use crate::experiment::plan::Run;

/// Everything a summary is made of.
pub struct Inputs<'a> {
    pub exp: &'a Experiment,
    pub run: &'a Run,
    pub member: &'a Member,
    pub controller: &'a ControllerTarget,
    pub load: &'a LoadStats,
    pub load_start: Instant,
    pub elapsed: f64,
    pub stop_reason: StopReason,
    pub exit_code: Option<i32>,
    pub sampler: &'a Sampler,
    pub quiet_wait: &'a Option<QuietWait>,
    pub kubernetes_version: &'a str,
}

pub fn of(i: Inputs<'_>) -> Summary {
    let (exp, run, m, c) = (i.exp, i.run, i.member, i.controller);
    let v = &exp.variants[m.variant];
    let ready = m.objects.ready();
    let convergence = m
        .objects
        .all_ready_at()
        .map(|t| t.duration_since(i.load_start).as_secs_f64());
    let delta = |f: fn(&ControllerRow) -> f64| match (c.baseline, c.last) {
        (Some(b), Some(l)) => Some(f(&l) - f(&b)),
        _ => None,
    };
    Summary {
        variant: v.name.clone(),
        implementation: v.implementation.to_string(),
        preset: v.preset().to_string(),
        flags: m.flags.clone(),
        settings: m.settings.clone(),
        namespace: m.ns.clone(),
        scale: run.scale,
        repeat: run.repeat,
        schedule: exp.schedule,
        concurrent_with: run
            .variants
            .iter()
            .filter(|x| **x != m.variant)
            .map(|x| exp.variants[*x].name.clone())
            .collect(),
        window_s: exp.window_s,
        elapsed_s: i.elapsed,
        stop_reason: i.stop_reason,
        incomplete: i.stop_reason == StopReason::Interrupted,
        load: Load {
            created: i.load.created,
            errors: i.load.errors,
            seconds: i.load.seconds,
            rate_per_s: i.load.rate(),
            first_error: i.load.first_error.clone(),
            concurrency: Some(exp.concurrency),
        },
        ready,
        remaining: run.scale.saturating_sub(ready),
        converged: convergence.is_some(),
        convergence_s: convergence,
        throughput_ready_per_s: convergence
            .map(|t| if t > 0.0 { ready as f64 / t } else { 0.0 })
            .unwrap_or(ready as f64 / i.elapsed.max(1e-9)),
        reconciles: Reconciles {
            total: delta(|r| r.reconciles),
            success: delta(|r| r.success),
            error: delta(|r| r.errors),
            requeue: delta(|r| r.reconciles - r.success - r.errors),
        },
        scrapes: Scrapes {
            ok: c.ok,
            failed: c.failed,
            apiserver_failed: i.sampler.apiserver_failed,
            etcd_failed: i.sampler.etcd_failed,
        },
        controller_exit_code: i.exit_code,
        harness_cpu: None,
        quiet_wait: i.quiet_wait.clone(),
        preset_info: widget_api::presets::get(v.preset()).map(|p| PresetInfo {
            description: p.description.clone(),
            question: p.question.as_str().to_string(),
            counterpart: p.counterpart.clone(),
        }),
        phases: Vec::new(),
        background_objects: exp.background_objects,
        decoys: exp.decoys,
        kubernetes_version: Some(i.kubernetes_version.to_string()),
        feature_gates: if exp.is_local() {
            exp.variant_plane(m.variant).map_or_else(
                || exp.cluster.feature_gates.clone(),
                |p| exp.on_plane(&p).cluster.feature_gates,
            )
        } else {
            Vec::new()
        },
        workload: (!exp.workload.is_builtin()).then(|| exp.workload.describe()),
        controller_metrics: m.has_metrics(),
        cluster_grants: m.cluster_grants.clone(),
        controller_exited_early: false,
        start: None,
        watch_changes: None,
        ready_generation_checked: None,
        ready_generation_missing: None,
        framework: v.keys.framework.map(|f| f.name().to_string()),
        machine: None,
        object_bytes: exp.object_bytes,
        // etcd's NOSPACE alarm refuses every write with this message.
        etcd_nospace: i
            .load
            .first_error
            .as_deref()
            .is_some_and(|e| e.contains("database space exceeded")),
        replicas: Vec::new(),
        apiserver_peak_rss_bytes: Vec::new(),
        apiserver_rss_at_start_bytes: Vec::new(),
        leader_changes: Vec::new(),
        load_started_at: None,
        controller_os: None,
        field_managers: u64::from(exp.workload.field_managers),
        object_sample: None,
    }
}

/// The controller's start-up times, from its process start.
pub fn start(
    mode: StartMode,
    m: &Member,
    load_start: Instant,
    reconciles_at_baseline: Option<f64>,
) -> Start {
    let signed = |a: Instant, b: Instant| match a.checked_duration_since(b) {
        Some(d) => d.as_secs_f64(),
        None => -b.duration_since(a).as_secs_f64(),
    };
    let started = m.started_at.unwrap_or(load_start);
    let after = |t: Option<Instant>| t.map(|t| signed(t, started));
    Start {
        mode,
        controller_started_s: signed(started, load_start),
        first_write_s: after(m.objects.first_write_at()),
        all_ready_s: after(m.objects.all_ready_at()),
        // (+ 0.0: a scraped "-0" stays out of the record)
        reconciles_at_baseline: (mode == StartMode::AfterLoad)
            .then_some(reconciles_at_baseline.map(|r| r + 0.0))
            .flatten(),
    }
}
