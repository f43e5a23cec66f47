//! The measurement loop of one run group: a baseline scrape of every
//! controller, then the loader and our own Ready watch per variant, a scrape
//! every interval until the window ends, everything converges or Ctrl-C;
//! faults fired on schedule (`faults`); a last scrape while the controllers
//! still run; then faults.csv, objects.csv,
//! audit.csv (when the plane keeps an audit log) and summary.json per variant.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::Result;
use ctrlbench_record::phases::{self, PhaseRecord, PhaseSummary};
use ctrlbench_record::summary::{HarnessCpu, QuietWait, StartMode};
use ctrlbench_record::{RunDir, StopReason, Summary, objects};

use super::audit::AuditSpan;
use super::faults::Faults;
use super::member::Member;
use super::sampler::Sampler;
use super::{Ctx, loader, phase, summary, watch};
use crate::experiment::plan::Run;
use crate::experiment::spec::FaultTarget;
use ctrlbench_plane::process::own_cpu_seconds;
use ctrlbench_plane::progress::Progress;

/// How long our watch gets to list a run's existing objects before the
/// controller starts anyway (100 000 objects list in a few seconds).
const WATCH_LIST_WAIT: Duration = Duration::from_secs(120);

/// How often objects.csv is rewritten during a run.
const OBJECTS_EVERY: Duration = Duration::from_secs(5);

pub async fn run(
    ctx: &Ctx<'_>,
    run: &Run,
    members: &mut [Member],
    quiet_wait: &Option<QuietWait>,
) -> Result<Vec<Summary>> {
    let exp = ctx.exp;
    let client = &ctx.cluster.client;
    let cancel = ctx.cancel;
    let stop = cancel.child_token();
    let workload = Arc::new(exp.workload.clone());
    let mut watches = Vec::new();
    // Our own watch of each member's objects; returns when every watch has
    // listed what exists.
    let start_watches = |members: &[Member], watches: &mut Vec<_>| {
        let mut listed = Vec::new();
        for m in members.iter() {
            m.objects.expected.store(run.scale, Ordering::SeqCst);
            let (tx, rx) = tokio::sync::oneshot::channel();
            listed.push(rx);
            watches.push(tokio::spawn(watch::watch_ready(
                client.clone(),
                workload.clone(),
                m.ns.clone(),
                m.run_id.clone(),
                m.objects.clone(),
                tx,
                stop.clone(),
            )));
        }
        let interrupted = stop.clone();
        async move {
            for rx in listed {
                tokio::select! {
                    _ = interrupted.cancelled() => return,
                    _ = tokio::time::timeout(WATCH_LIST_WAIT, rx) => {}
                }
            }
        }
    };
    // start = "after-load" leaves nothing to see until the controller
    // starts: the watch begins after the load, so the loader runs alone
    // (the probe's conditions), and its initial list is complete before
    // the controller's first write.
    let after_load = members.iter().any(|m| m.pending);
    if !after_load {
        start_watches(members, &mut watches).await;
    }
    let spawn_loads = |members: &[Member]| {
        members
            .iter()
            .map(|m| {
                tokio::spawn(loader::create(
                    client.clone(),
                    workload.clone(),
                    m.ns.clone(),
                    m.run_id.clone(),
                    run.scale,
                    exp.concurrency as usize,
                    m.objects.clone(),
                    stop.clone(),
                ))
            })
            .collect::<Vec<_>>()
    };
    // start = "after-load": all N objects first, then the controllers.
    let mut loads = Vec::new();
    let mut load_start = Instant::now();
    // start = "after-load": the harness's CPU while its loader ran alone.
    let mut alone_cpu = None;
    if after_load {
        let cpu = own_cpu_seconds();
        loads = spawn_loads(members);
        while !loads.iter().all(|l| l.is_finished()) {
            if cancel.is_cancelled() {
                stop.cancel();
                anyhow::bail!("interrupted while loading (before the controllers started)");
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        alone_cpu = Some(own_cpu_seconds() - cpu);
        start_watches(members, &mut watches).await;
        for m in members.iter_mut() {
            m.start_controller().await?;
        }
    }

    // Every apiserver and etcd member directly (an existing cluster: its URL, no etcd).
    let (apis, etcd_urls) = match &ctx.cluster.plane {
        Some(p) => {
            let mut apis = Vec::new();
            for k in 0..p.apiserver_urls().len() {
                apis.push(ctrlbench_plane::kubeconfig::client(&p.kubeconfig_for(k)).await?);
            }
            (apis, p.etcd_metrics_urls())
        }
        None => (vec![client.clone()], Vec::new()),
    };
    let targets = members
        .iter()
        .map(|m| {
            (
                exp.variants[m.variant].name.clone(),
                m.metrics_url.clone(),
                m.dir.clone(),
            )
        })
        .collect();
    let mut sampler = Sampler::new(apis, etcd_urls, targets)?;
    for (c, m) in sampler.controllers.iter_mut().zip(members.iter()) {
        c.any_controller = !exp.variants[m.variant].is_own();
    }
    let audit = AuditSpan::begin(
        ctx.cluster
            .plane
            .as_ref()
            .and_then(|p| p.audit_log())
            .as_deref(),
    );
    // Baseline: a first successful scrape of every controller that has metrics.
    let t0 = Instant::now();
    loop {
        sampler.scrape_once().await?;
        if sampler
            .controllers
            .iter()
            .all(|c| c.url.is_none() || c.baseline.is_some())
        {
            break;
        }
        if t0.elapsed() >= Duration::from_secs(15) {
            let silent: Vec<String> = sampler
                .controllers
                .iter()
                .filter(|c| c.url.is_some() && c.baseline.is_none())
                .map(|c| format!("{} ({})", c.variant, c.url.as_deref().unwrap_or_default()))
                .collect();
            anyhow::bail!(
                "no answer from the controller metrics of {} within 15 s",
                silent.join(", ")
            );
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    // Faulted and fault-free variants never share a run (spec validation).
    let fault_specs = members
        .first()
        .map_or(&[][..], |m| exp.faults_for(m.variant));
    let mut faults = Faults::new(fault_specs);
    let plane = ctx.cluster.plane.as_ref();
    if !after_load {
        load_start = Instant::now();
        loads = spawn_loads(members);
    }
    let names: Vec<String> = members
        .iter()
        .map(|m| exp.variants[m.variant].name.clone())
        .collect();
    let bars = Progress::new(
        &names,
        run.scale,
        "Ready",
        Duration::from_secs(5),
        ctx.opts.progress,
    );
    let interval = Duration::from_secs_f64(exp.scrape_interval_s);
    let window = Duration::from_secs_f64(exp.window_s);
    let quiet = Duration::from_secs_f64(exp.quiet_s);
    let mut next_scrape = Instant::now() + interval;
    // objects.csv is rewritten (atomically) as the run goes: a killed run keeps
    // what was observed until then.
    let mut next_objects = Instant::now() + OBJECTS_EVERY;
    // The harness's own CPU: while loading, then while only watching and sampling.
    let cpu_at_start = own_cpu_seconds();
    let mut loaded: Option<(Instant, f64)> = None;
    // Controllers that stopped by themselves during the window.
    let mut exited_early = vec![false; members.len()];
    // A controller the fault schedule kills or restarts exits on purpose.
    let controller_faults = fault_specs
        .iter()
        .any(|f| f.target == FaultTarget::Controller);
    let stop_reason = loop {
        if cancel.is_cancelled() {
            break StopReason::Interrupted;
        }
        if loaded.is_none() && loads.iter().all(|l| l.is_finished()) {
            loaded = Some((Instant::now(), own_cpu_seconds()));
        }
        let elapsed = load_start.elapsed();
        if elapsed >= window {
            break StopReason::Window;
        }
        if exp.stop_when_converged
            && members.iter().all(|m| m.objects.ready() >= run.scale)
            && sampler
                .controllers
                .iter()
                .all(|c| c.last_change.elapsed() >= quiet)
        {
            break StopReason::Converged;
        }
        if Instant::now() >= next_scrape {
            next_scrape += interval;
            sampler.scrape_once().await?;
            for (i, m) in members.iter_mut().enumerate() {
                let alive = m.process.as_mut().is_some_and(|p| p.running());
                if m.process.is_some() && !alive && !controller_faults {
                    exited_early[i] = true;
                }
                let msg = format!(
                    "{:>7.1} reconciles/s  {:>5.0}/{:.0} s{}",
                    sampler.controllers[i].rate,
                    elapsed.as_secs_f64(),
                    exp.window_s,
                    if alive { "" } else { "  controller exited!" }
                );
                bars.set(i, m.objects.ready(), Some(msg));
            }
        }
        if !faults.is_empty() {
            faults
                .tick(load_start, members, &mut sampler, plane)
                .await?;
        }
        if Instant::now() >= next_objects {
            next_objects += OBJECTS_EVERY;
            for m in members.iter() {
                objects::write(&m.dir.objects(), &m.objects.rows())?;
            }
        }
        tokio::select! {
            _ = cancel.cancelled() => {},
            _ = tokio::time::sleep(Duration::from_millis(100)) => {},
        }
    };
    bars.finish();
    // The last row is taken while the controllers still run.
    stop.cancel();
    let mut load_stats = Vec::new();
    for l in loads {
        load_stats.push(l.await.unwrap_or_default());
    }
    // Stopped or killed processes come back before the next phase or run.
    faults.finish(members, &mut sampler, plane).await?;
    // The create phase ends here; the figures of the phases after it are
    // their own (summary.json `phases`, phases.csv).
    let elapsed = load_start.elapsed().as_secs_f64();
    let mut phases: Vec<Vec<PhaseSummary>> = members.iter().map(|_| Vec::new()).collect();
    // summary.json's reconcile counts are the create phase's, like the report's figures.
    let mut create_last = None;
    if stop_reason != StopReason::Interrupted && !exp.phases.is_empty() {
        sampler.scrape_once().await?;
        create_last = Some(
            sampler
                .controllers
                .iter()
                .map(|c| c.last)
                .collect::<Vec<_>>(),
        );
        let targets: Vec<Arc<phase::Target>> = members
            .iter()
            .map(|m| {
                let created: Vec<String> = m
                    .objects
                    .rows()
                    .into_iter()
                    .filter(|r| r.created_at.is_some())
                    .map(|r| r.name)
                    .collect();
                Arc::new(phase::Target {
                    client: client.clone(),
                    resource: exp.workload.resource.clone(),
                    namespace: m.ns.clone(),
                    objects: created
                        .into_iter()
                        .enumerate()
                        .map(|(k, n)| (phase::index_of(&n, k), n))
                        .collect(),
                    ready_again: phase::ReadyAgain::of(&exp.workload),
                    concurrency: exp.concurrency as usize,
                })
            })
            .collect();
        let mut rows: Vec<Vec<PhaseRecord>> = members.iter().map(|_| Vec::new()).collect();
        for (k, p) in exp.phases.iter().enumerate() {
            if cancel.is_cancelled() {
                break;
            }
            eprintln!("phase {}: {}", k + 1, p.kind());
            // A row at each phase boundary, so each phase's rates cover it alone.
            sampler.scrape_once().await?;
            let tasks: Vec<_> = targets
                .iter()
                .map(|t| {
                    let (t, p, cancel) = (t.clone(), p.clone(), cancel.clone());
                    tokio::spawn(async move { phase::run(&t, k as u32 + 1, &p, &cancel).await })
                })
                .collect();
            let outs =
                scrape_while(&mut sampler, interval, futures::future::join_all(tasks)).await?;
            for (i, o) in outs.into_iter().enumerate() {
                let o = o.map_err(|e| anyhow::anyhow!("phase {} failed: {e}", k + 1))?;
                phases[i].push(o.summary);
                rows[i].extend(o.rows);
                phases::write(&members[i].dir.phases(), &rows[i])?;
            }
        }
    }
    if cancel.is_cancelled() {
        // The user is waiting: the last row only if it comes quickly.
        let _ = tokio::time::timeout(Duration::from_secs(1), sampler.scrape_once()).await;
    } else {
        sampler.scrape_once().await?;
    }
    for w in watches {
        let _ = w.await;
    }
    let cpu_at_end = own_cpu_seconds();
    let harness_cpu = match loaded {
        Some((t, cpu)) => {
            let wall = t.elapsed().as_secs_f64();
            HarnessCpu {
                load_phase_s: alone_cpu.unwrap_or(cpu - cpu_at_start),
                after_load_s: Some(cpu_at_end - cpu),
                after_load_wall_s: Some(wall),
                after_load_core_fraction: Some(if wall > 0.0 {
                    (cpu_at_end - cpu) / wall
                } else {
                    0.0
                }),
            }
        }
        None => HarnessCpu {
            load_phase_s: cpu_at_end - cpu_at_start,
            ..HarnessCpu::default()
        },
    };
    let mut codes = Vec::new();
    for m in members.iter_mut() {
        codes.push(match m.process.take() {
            Some(p) => p.stop(ctx.stop_grace()).await,
            None => None,
        });
    }
    // Every controller has stopped: the blocking audit backend has logged
    // each of their writes.
    if let Some(a) = &audit {
        let runs: Vec<(&str, &RunDir)> = members.iter().map(|m| (m.ns.as_str(), &m.dir)).collect();
        a.write(&runs)?;
    }
    if let Some(last) = create_last {
        for (c, l) in sampler.controllers.iter_mut().zip(last) {
            c.last = l;
        }
    }
    let mut summaries = Vec::new();
    for (i, m) in members.iter_mut().enumerate() {
        let code = codes[i];
        objects::write(&m.dir.objects(), &m.objects.rows())?;
        let mut s = summary::of(summary::Inputs {
            exp,
            run,
            member: m,
            controller: &sampler.controllers[i],
            load: &load_stats[i],
            load_start,
            elapsed,
            stop_reason,
            exit_code: code,
            sampler: &sampler,
            quiet_wait,
            kubernetes_version: &ctx.cluster.version,
        });
        s.harness_cpu = Some(harness_cpu.clone());
        s.phases = std::mem::take(&mut phases[i]);
        s.controller_exited_early = exited_early[i];
        s.start = Some(summary::start(
            exp.variants[m.variant].start(),
            m,
            load_start,
            sampler.controllers[i].baseline.map(|b| b.reconciles),
        ));
        if let Some(t) = s.start.as_ref().and_then(|t| t.all_ready_s)
            && s.start
                .as_ref()
                .is_some_and(|t| t.mode == StartMode::AfterLoad)
            && t > 0.0
        {
            // Ready/s from the controller's start: the load is not its time.
            s.throughput_ready_per_s = s.ready as f64 / t;
        }
        s.write(&m.dir.summary())?;
        summaries.push(s);
    }
    Ok(summaries)
}

/// `fut`'s output, scraping every `interval` while it runs (the phases after
/// the create phase are measured like it).
async fn scrape_while<T>(
    sampler: &mut Sampler,
    interval: Duration,
    fut: impl std::future::Future<Output = T>,
) -> Result<T> {
    let mut fut = std::pin::pin!(fut);
    let mut next = tokio::time::Instant::now() + interval;
    loop {
        tokio::select! {
            r = &mut fut => return Ok(r),
            _ = tokio::time::sleep_until(next) => {
                next += interval;
                sampler.scrape_once().await?;
            }
        }
    }
}
