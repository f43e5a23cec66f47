//! The measurement of one run group. Every measurement — our Ready watch
//! and objects.csv (`watch`), the scrapes of controllers, apiservers and
//! etcd (`sampler`), the fault schedule (`faults`), the phases after the
//! create phase (`phases`), the audit log (`audit`), the harness's own CPU
//! (`harness_cpu`), what else the machine did (`machine`), who holds a
//! controller's Lease (`leases`), the apiservers' peak memory
//! (`apiserver_peak`), the controllers' CPU profiles (`profile`), the
//! pods in the run's namespaces (`pods`), the plane's processes beyond etcd
//! and the apiservers (`plane_processes`), the started controllers' CPU and
//! memory from /proc where their metrics lack them (`controller_os`), what
//! the objects weigh as the apiserver sends them (`object_size`) —
//! implements [`Measurement`]: it is told when the run
//! starts, on every tick of the loop, when the window is over (the
//! controllers still run) and when the controllers have stopped, where it
//! writes its files and its part of each summary. [`run`] composes them
//! around the loader; adding a measurement is a file and a line in
//! [`measurements`].

pub mod apiserver_peak;
pub mod audit;
pub mod controller_os;
pub mod faults;
pub mod fleet;
pub mod harness_cpu;
pub mod leases;
pub mod machine;
pub mod object_size;
pub mod phases;
pub mod plane_processes;
pub mod pods;
pub mod profile;
pub mod sampler;
pub mod scrapes;
pub mod watch;

use std::time::{Duration, Instant};

use anyhow::Result;
use ctrlbench_record::summary::QuietWait;
use ctrlbench_record::{StopReason, Summary};
use futures::future::BoxFuture;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use ctrlbench_plane::process::own_cpu_seconds;

use super::loader::LoadStats;
use super::member::Member;
use super::{Ctx, loader, summary};
use crate::experiment::plan;
use sampler::Sampler;

/// What every measurement sees of the run.
pub struct Run<'a> {
    pub ctx: &'a Ctx<'a>,
    pub plan: &'a plan::Run,
    pub members: &'a mut [Member],
    /// Ends our watches and the loader at the end of the window.
    pub stop: CancellationToken,
    pub sampler: Sampler,
    /// When the loader started (the window counts from here).
    pub load_start: Instant,
    /// When every loader had finished, once they have, and the harness's
    /// CPU seconds then.
    pub loaded_at: Option<(Instant, f64)>,
    /// The controllers start after the load (start = "after-load").
    pub after_load: bool,
    pub stop_reason: StopReason,
    /// Seconds from the load's start to the end of the create phase.
    pub elapsed: f64,
    /// Each controller's counters at the end of the create phase, when
    /// phases followed it (summary.json's reconcile counts are the create
    /// phase's, like the report's figures).
    pub create_last: Option<Vec<Option<sampler::ControllerRow>>>,
}

/// One measurement of a run group; every step has a default that does
/// nothing, so a measurement implements only the steps it has.
pub trait Measurement: Send {
    /// The controllers run, the loader is about to start.
    fn start<'a>(&'a mut self, _run: &'a mut Run<'_>) -> BoxFuture<'a, Result<()>> {
        Box::pin(async { Ok(()) })
    }
    /// Every turn of the loop (about every 100 ms): a measurement keeps its own pace.
    fn tick<'a>(&'a mut self, _run: &'a mut Run<'_>) -> BoxFuture<'a, Result<()>> {
        Box::pin(async { Ok(()) })
    }
    /// The window is over and the loader has returned; the controllers still run.
    fn after_window<'a>(&'a mut self, _run: &'a mut Run<'_>) -> BoxFuture<'a, Result<()>> {
        Box::pin(async { Ok(()) })
    }
    /// The controllers have stopped: write the files, fill in the summaries
    /// (one per member, in order).
    fn finish<'a>(
        &'a mut self,
        _run: &'a mut Run<'_>,
        _summaries: &'a mut [Summary],
    ) -> BoxFuture<'a, Result<()>> {
        Box::pin(async { Ok(()) })
    }
}

/// Every measurement of a run, in the order they are called (faults are
/// restored before the phases run; the harness's CPU is read last).
fn measurements(
    run: &Run<'_>,
    watch: watch::ReadyWatch,
    pods: pods::PodWatch,
    cpu: harness_cpu::HarnessCpu,
) -> Vec<Box<dyn Measurement>> {
    vec![
        Box::new(watch),
        Box::new(pods),
        Box::new(scrapes::Scrapes::new(run)),
        Box::new(plane_processes::PlaneProcesses::new(run)),
        Box::new(controller_os::ControllersOs::new(run)),
        Box::new(faults::Faults::of(run)),
        Box::new(leases::Leases::new()),
        Box::new(apiserver_peak::ApiserverPeak::new()),
        Box::new(profile::Profiles::new()),
        // Before the phases, which may delete the objects.
        Box::new(object_size::ObjectSize::new()),
        Box::new(phases::Phases::new()),
        Box::new(audit::Audit::new(run)),
        Box::new(machine::Machine::new()),
        Box::new(cpu),
    ]
}

pub async fn run(
    ctx: &Ctx<'_>,
    plan: &plan::Run,
    members: &mut [Member],
    quiet_wait: &Option<QuietWait>,
) -> Result<Vec<Summary>> {
    let stop = ctx.cancel.child_token();
    let after_load = members.iter().any(|m| m.pending);
    // After the load, the window and every start figure still count from
    // the loader's start.
    let load_start = Instant::now();
    let mut cpu = harness_cpu::HarnessCpu::starting();
    let mut loads = Vec::new();
    let pods = pods::PodWatch::start(ctx, members, &stop);
    if after_load {
        // All N objects first, the loader alone; then our watch lists them
        // before the controllers start.
        loads = spawn_loads(ctx, plan, members, &stop);
        while !loads.iter().all(|l| l.is_finished()) {
            if ctx.cancel.is_cancelled() {
                stop.cancel();
                anyhow::bail!("interrupted while loading (before the controllers started)");
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        cpu.loaded_alone();
    }
    let watch = watch::ReadyWatch::start(ctx, plan, members, &stop).await;
    for m in members.iter_mut() {
        m.start_controller().await?;
    }
    let sampler = sampler::Sampler::of_group(ctx, members).await?;
    let mut run = Run {
        ctx,
        plan,
        members,
        stop,
        sampler,
        load_start,
        loaded_at: None,
        after_load,
        stop_reason: StopReason::Window,
        elapsed: 0.0,
        create_last: None,
    };
    let mut all = measurements(&run, watch, pods, cpu);
    for m in all.iter_mut() {
        m.start(&mut run).await?;
    }
    if !after_load {
        run.load_start = Instant::now();
        loads = spawn_loads(ctx, plan, run.members, &run.stop);
    }
    run.stop_reason = window(&mut run, &mut all, &loads).await?;
    run.stop.cancel();
    let mut load_stats = Vec::new();
    for l in loads {
        load_stats.push(l.await.unwrap_or_default());
    }
    run.elapsed = run.load_start.elapsed().as_secs_f64();
    for m in all.iter_mut() {
        m.after_window(&mut run).await?;
    }
    let mut codes = Vec::new();
    for m in run.members.iter_mut() {
        // The replicas stop at once; a replica that failed speaks for all.
        let stopped = futures::future::join_all(
            m.replicas
                .iter_mut()
                .filter_map(|r| r.process.take())
                .map(|p| p.stop(ctx.stop_grace())),
        )
        .await;
        codes.push(
            stopped
                .iter()
                .find(|c| c.is_some_and(|c| c != 0))
                .or(stopped.first())
                .copied()
                .flatten(),
        );
    }
    let mut summaries = base_summaries(&run, &load_stats, &codes, quiet_wait);
    for m in all.iter_mut() {
        m.finish(&mut run, &mut summaries).await?;
    }
    for (m, s) in run.members.iter().zip(&summaries) {
        s.write(&m.dir.summary())?;
    }
    Ok(summaries)
}

/// Where the window stands on one turn of its loop.
struct Turn {
    cancelled: bool,
    /// Since the loader started: the window counts from there.
    since_load: Duration,
    window: Duration,
    stop_when_converged: bool,
    /// When the last fault and the quiet spell after it are over.
    faults_over: Duration,
    /// Every member's objects Ready.
    all_ready: bool,
    /// Every member's objects Ready, or, where creates failed, every one
    /// that exists ([`Objects::settled`](crate::run::objects::Objects::settled)).
    all_settled: bool,
    /// Every controller's counters unchanged for the quiet spell.
    all_quiet: bool,
}

/// Why the window ends on this turn, if it does: Ctrl-C before anything,
/// then the window's end, then convergence (or settling, where creates
/// failed), which waits for the faults.
fn ends(t: &Turn) -> Option<StopReason> {
    let done = t.stop_when_converged && t.since_load >= t.faults_over && t.all_quiet;
    if t.cancelled {
        Some(StopReason::Interrupted)
    } else if t.since_load >= t.window {
        Some(StopReason::Window)
    } else if done && t.all_ready {
        Some(StopReason::Converged)
    } else if done && t.all_settled {
        Some(StopReason::CreatesFailed)
    } else {
        None
    }
}

/// The window: ticks every measurement until it ends, everything has
/// converged (stop_when_converged) or Ctrl-C.
async fn window(
    run: &mut Run<'_>,
    all: &mut [Box<dyn Measurement>],
    loads: &[JoinHandle<LoadStats>],
) -> Result<StopReason> {
    let exp = run.ctx.exp;
    let window = Duration::from_secs_f64(exp.window_s);
    let quiet = Duration::from_secs_f64(exp.quiet_s);
    let cancel = run.ctx.cancel;
    // A converged run still waits for its faults, and a quiet spell after
    // the last one ends: the recovery is what they are there to measure.
    let faults_over = run
        .members
        .iter()
        .flat_map(|m| exp.faults_for(m.variant))
        .map(|f| Duration::from_secs_f64(f.at_s + f.duration_s) + quiet)
        .max()
        .unwrap_or_default();
    turns(cancel, async || {
        if run.loaded_at.is_none() && loads.iter().all(|l| l.is_finished()) {
            run.loaded_at = Some((Instant::now(), own_cpu_seconds()));
        }
        let turn = Turn {
            cancelled: cancel.is_cancelled(),
            since_load: run.load_start.elapsed(),
            window,
            stop_when_converged: exp.stop_when_converged,
            faults_over,
            all_ready: run
                .members
                .iter()
                .all(|m| m.objects.ready() >= run.plan.scale),
            all_settled: run
                .members
                .iter()
                .all(|m| m.objects.ready() >= run.plan.scale || m.objects.settled(run.plan.scale)),
            all_quiet: run
                .sampler
                .controllers
                .iter()
                .all(|c| c.last_change.elapsed() >= quiet),
        };
        if let Some(reason) = ends(&turn) {
            return Ok(Some(reason));
        }
        for m in all.iter_mut() {
            m.tick(run).await?;
        }
        Ok(None)
    })
    .await
}

/// How often the window's loop turns.
const TURN: Duration = Duration::from_millis(100);

/// Runs `turn` every `TURN` until it gives a reason to stop; Ctrl-C cuts
/// the wait short, so that the next turn sees it at once.
async fn turns(
    cancel: &CancellationToken,
    mut turn: impl AsyncFnMut() -> Result<Option<StopReason>>,
) -> Result<StopReason> {
    loop {
        if let Some(reason) = turn().await? {
            return Ok(reason);
        }
        tokio::select! {
            _ = cancel.cancelled() => {},
            _ = tokio::time::sleep(TURN) => {},
        }
    }
}

fn spawn_loads(
    ctx: &Ctx<'_>,
    plan: &plan::Run,
    members: &[Member],
    stop: &CancellationToken,
) -> Vec<JoinHandle<LoadStats>> {
    let workload = std::sync::Arc::new(ctx.exp.workload.clone());
    members
        .iter()
        .map(|m| {
            tokio::spawn(loader::create(
                ctx.cluster.client.clone(),
                workload.clone(),
                m.ns.clone(),
                m.run_id.clone(),
                plan.scale,
                ctx.exp.concurrency as usize,
                m.objects.clone(),
                stop.clone(),
            ))
        })
        .collect()
}

/// Each member's summary from what every run has: the variant, its load,
/// our watch's Ready counts and the sampler's reconcile deltas.
fn base_summaries(
    run: &Run<'_>,
    load_stats: &[LoadStats],
    codes: &[Option<i32>],
    quiet_wait: &Option<QuietWait>,
) -> Vec<Summary> {
    run.members
        .iter()
        .enumerate()
        .map(|(i, m)| {
            summary::of(summary::Inputs {
                exp: run.ctx.exp,
                run: run.plan,
                member: m,
                controller: &run.sampler.controllers[i],
                load: &load_stats[i],
                load_start: run.load_start,
                elapsed: run.elapsed,
                stop_reason: run.stop_reason,
                exit_code: codes[i],
                sampler: &run.sampler,
                quiet_wait,
                kubernetes_version: &run.ctx.cluster.version,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each case is one turn: (cancelled, seconds since the load, converge
    /// on, faults over at s, which objects are Ready, all quiet) with a 60 s window, and
    /// the reason the window ends there, if any.
    #[test]
    fn the_window_ends_on_ctrl_c_on_time_or_on_convergence() {
        use StopReason::*;
        #[derive(Debug, PartialEq)]
        enum Ready {
            No,
            /// Creates failed and every object that exists is Ready.
            Settled,
            All,
        }
        use Ready::{All, No};
        let s = Duration::from_secs_f64;
        for (cancelled, at, converge, faults, ready, quiet, want) in [
            (false, 1.0, true, 0.0, No, true, None),
            // Creates failed and what exists is Ready: settled, not
            // converged, with the same waits.
            (
                false,
                1.0,
                true,
                0.0,
                Ready::Settled,
                true,
                Some(CreatesFailed),
            ),
            (false, 1.0, true, 0.0, Ready::Settled, false, None),
            (false, 10.0, true, 30.0, Ready::Settled, true, None),
            (false, 1.0, false, 0.0, Ready::Settled, true, None),
            (false, 60.0, true, 0.0, Ready::Settled, true, Some(Window)),
            (false, 1.0, true, 0.0, All, false, None),
            (false, 1.0, true, 0.0, All, true, Some(Converged)),
            // Convergence is not asked for: the window runs out.
            (false, 1.0, false, 0.0, All, true, None),
            (false, 60.0, false, 0.0, No, false, Some(Window)),
            (false, 59.9, false, 0.0, No, false, None),
            // A converged run waits for its faults and their quiet spell.
            (false, 10.0, true, 30.0, All, true, None),
            (false, 30.0, true, 30.0, All, true, Some(Converged)),
            // The window's end wins over convergence, Ctrl-C over both.
            (false, 61.0, true, 0.0, All, true, Some(Window)),
            (true, 61.0, true, 0.0, All, true, Some(Interrupted)),
            (true, 0.0, false, 0.0, No, false, Some(Interrupted)),
        ] {
            let turn = Turn {
                cancelled,
                since_load: s(at),
                window: s(60.0),
                stop_when_converged: converge,
                faults_over: s(faults),
                all_ready: ready == All,
                all_settled: ready != No,
                all_quiet: quiet,
            };
            assert_eq!(
                ends(&turn),
                want,
                "cancelled {cancelled}, at {at} s, converge {converge}, faults over {faults} s, \
                 ready {ready:?}, quiet {quiet}"
            );
        }
    }

    /// A turn that stops at `window`, or once `ready` says so, on the
    /// paused clock; it counts the turns it took.
    fn turn_at(
        t0: tokio::time::Instant,
        window: f64,
        cancel: &CancellationToken,
        ready: bool,
    ) -> Turn {
        Turn {
            cancelled: cancel.is_cancelled(),
            since_load: t0.elapsed(),
            window: Duration::from_secs_f64(window),
            stop_when_converged: true,
            faults_over: Duration::ZERO,
            all_ready: ready,
            all_settled: ready,
            all_quiet: true,
        }
    }

    /// The loop turns every 100 ms, the first turn at once, and ends on
    /// the turn that finds the window over: at 1 s exactly, its 11th.
    #[tokio::test(start_paused = true)]
    async fn the_window_ends_on_time_on_the_paused_clock() {
        let cancel = CancellationToken::new();
        let t0 = tokio::time::Instant::now();
        let mut n = 0;
        let reason = turns(&cancel, async || {
            n += 1;
            Ok(ends(&turn_at(t0, 1.0, &cancel, false)))
        })
        .await
        .unwrap();
        assert_eq!((reason, n), (StopReason::Window, 11));
        assert_eq!(t0.elapsed(), Duration::from_secs(1));
    }

    /// Ctrl-C at 350 ms cuts the wait short: the loop ends then, not at
    /// the next 100 ms turn.
    #[tokio::test(start_paused = true)]
    async fn ctrl_c_ends_the_window_at_once() {
        let cancel = CancellationToken::new();
        let t0 = tokio::time::Instant::now();
        let later = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(350)).await;
            later.cancel();
        });
        let mut n = 0;
        let reason = turns(&cancel, async || {
            n += 1;
            Ok(ends(&turn_at(t0, 60.0, &cancel, false)))
        })
        .await
        .unwrap();
        assert_eq!((reason, n), (StopReason::Interrupted, 5));
        assert_eq!(t0.elapsed(), Duration::from_millis(350));
    }

    /// Convergence ends the window on the first turn that sees it (here
    /// the fifth, at 400 ms); a turn's error ends it with that error.
    #[tokio::test(start_paused = true)]
    async fn convergence_or_an_error_ends_the_window_early() {
        let cancel = CancellationToken::new();
        let t0 = tokio::time::Instant::now();
        let mut n = 0;
        let reason = turns(&cancel, async || {
            n += 1;
            Ok(ends(&turn_at(t0, 60.0, &cancel, n >= 5)))
        })
        .await
        .unwrap();
        assert_eq!((reason, n), (StopReason::Converged, 5));
        assert_eq!(t0.elapsed(), Duration::from_millis(400));
        let mut n = 0;
        let e = turns(&cancel, async || {
            n += 1;
            if n == 3 {
                anyhow::bail!("scrape failed");
            }
            Ok(None)
        })
        .await
        .unwrap_err();
        assert_eq!((e.to_string(), n), ("scrape failed".to_string(), 3));
    }
}
