//! The measurement loop of one run group: a baseline scrape of every
//! controller, then the loader and our own Ready watch per variant, a scrape
//! every interval until the window ends, everything converges or Ctrl-C;
//! faults fired on schedule (`faults`); a last scrape while the controllers
//! still run; then faults.csv, objects.csv,
//! audit.csv (when the plane keeps an audit log) and summary.json per variant.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::Result;
use ctrlbench_record::summary::{HarnessCpu, QuietWait};
use ctrlbench_record::{RunDir, StopReason, Summary, objects};

use super::audit::AuditSpan;
use super::faults::Faults;
use super::member::Member;
use super::sampler::Sampler;
use super::{Ctx, loader, summary, watch};
use crate::cluster::process::own_cpu_seconds;
use crate::cluster::progress::Progress;
use crate::experiment::plan::Run;

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
    // Every apiserver and etcd member directly (an existing cluster: its URL, no etcd).
    let (apis, etcd_urls) = match &ctx.cluster.plane {
        Some(p) => {
            let mut apis = Vec::new();
            for k in 0..p.apiserver_urls().len() {
                apis.push(crate::cluster::kubeconfig::client(&p.kubeconfig_for(k)).await?);
            }
            (apis, p.etcd_metrics_urls())
        }
        None => (vec![client.clone()], Vec::new()),
    };
    let targets = members
        .iter()
        .map(|m| {
            let addr = m
                .process
                .as_ref()
                .map(|p| p.metrics_addr.clone())
                .unwrap_or_default();
            (exp.variants[m.variant].name.clone(), addr, m.dir.clone())
        })
        .collect();
    let mut sampler = Sampler::new(apis, etcd_urls, targets)?;
    let audit = AuditSpan::begin(
        ctx.cluster
            .plane
            .as_ref()
            .and_then(|p| p.audit_log())
            .as_deref(),
    );
    // Baseline: a first successful scrape of every controller.
    let t0 = Instant::now();
    loop {
        sampler.scrape_once().await?;
        if sampler.controllers.iter().all(|c| c.baseline.is_some()) {
            break;
        }
        anyhow::ensure!(
            t0.elapsed() < Duration::from_secs(15),
            "a controller's /metrics never answered"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    let cancel = ctx.cancel;
    let stop = cancel.child_token();
    let mut watches = Vec::new();
    let mut loads = Vec::new();
    for m in members.iter() {
        m.objects.expected.store(run.scale, Ordering::SeqCst);
        watches.push(tokio::spawn(watch::watch_ready(
            client.clone(),
            m.ns.clone(),
            m.objects.clone(),
            stop.clone(),
        )));
    }
    let mut faults = Faults::new(&exp.spec.faults);
    let plane = ctx.cluster.plane.as_ref();
    let load_start = Instant::now();
    for m in members.iter() {
        loads.push(tokio::spawn(loader::create(
            client.clone(),
            m.ns.clone(),
            run.scale,
            *exp.spec.concurrency.get_ref() as usize,
            m.objects.clone(),
            stop.clone(),
        )));
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
    let interval = Duration::from_secs_f64(*exp.spec.scrape_interval_s.get_ref());
    let window = Duration::from_secs_f64(exp.window_s());
    let quiet = Duration::from_secs_f64(*exp.spec.quiet_s.get_ref());
    let mut next_scrape = Instant::now() + interval;
    // objects.csv is rewritten (atomically) as the run goes: a killed run keeps
    // what was observed until then.
    let mut next_objects = Instant::now() + OBJECTS_EVERY;
    // The harness's own CPU: while loading, then while only watching and sampling.
    let cpu_at_start = own_cpu_seconds();
    let mut loaded: Option<(Instant, f64)> = None;
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
        if exp.spec.stop_when_converged
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
                let msg = format!(
                    "{:>7.1} reconciles/s  {:>5.0}/{:.0} s{}",
                    sampler.controllers[i].rate,
                    elapsed.as_secs_f64(),
                    exp.window_s(),
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
    if cancel.is_cancelled() {
        // The user is waiting: the last row only if it comes quickly.
        let _ = tokio::time::timeout(Duration::from_secs(1), sampler.scrape_once()).await;
    } else {
        sampler.scrape_once().await?;
    }
    for w in watches {
        let _ = w.await;
    }
    // Stopped or killed processes come back before the next run.
    faults.finish(members, &mut sampler, plane).await?;
    let elapsed = load_start.elapsed().as_secs_f64();
    let cpu_at_end = own_cpu_seconds();
    let harness_cpu = match loaded {
        Some((t, cpu)) => {
            let wall = t.elapsed().as_secs_f64();
            HarnessCpu {
                load_phase_s: cpu - cpu_at_start,
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
        });
        s.harness_cpu = Some(harness_cpu.clone());
        s.write(&m.dir.summary())?;
        summaries.push(s);
    }
    Ok(summaries)
}
