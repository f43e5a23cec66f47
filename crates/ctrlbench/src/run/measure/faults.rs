//! Faults: the experiment's `[[fault]]` schedule, executed during each run
//! by the measurement loop. At `at_s` after the load starts a fault kills
//! (SIGKILL), stops (SIGSTOP, SIGCONT after `duration_s`) or restarts (SIGKILL,
//! then the same command again after `duration_s`) the controller (every
//! replica, `controller:k` one, `controller:leader` the one whose
//! leader-election gauge said it leads at the last scrape), an apiserver or
//! an etcd member (`etcd:leader`/`etcd:follower` are resolved when the fault
//! fires). A restarted controller gets the same binary, flags
//! and identity (its kubeconfig) and appends to the same controller.log; the
//! sampler follows its new metrics address. Plane processes restart with
//! their own flags and data directory. When the run ends every process a
//! fault left down or stopped is brought back, so the next run starts on a
//! whole plane; every event goes to the run's faults.csv.

use std::time::{Duration, Instant};

use anyhow::Result;
use ctrlbench_record::faults::{self, FaultRecord};
use ctrlbench_record::time::now_rfc3339;

use futures::future::BoxFuture;

use super::sampler::Sampler;
use super::{Measurement, Run};
use crate::experiment::spec::{Fault, FaultAction, FaultTarget};
use crate::run::member::Member;
use ctrlbench_plane::process::Signal;
use ctrlbench_plane::{ControlPlane, Member as PlaneMember};

/// The process a fault hit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Hit {
    /// Replica k of the controller of member `i` of the group.
    Controller(usize, usize),
    Plane(PlaneMember),
}

/// What is left to do for a fault that already fired.
struct FollowUp {
    due: Instant,
    hit: Hit,
    /// SIGCONT (a stop) or a new start (a restart).
    action: FaultAction,
    /// Its row in `records`.
    record: usize,
}

/// The fault schedule of one run group, and what it did.
pub struct Faults {
    plan: Vec<Fault>,
    next: usize,
    follow_ups: Vec<FollowUp>,
    /// Plane processes killed for good during the run (restored at the end).
    killed: Vec<Hit>,
    /// (member it belongs to: None for plane faults, which every member's
    /// file lists; the row).
    records: Vec<(Option<usize>, FaultRecord)>,
}

impl Faults {
    pub fn new(faults: &[Fault]) -> Faults {
        let mut plan = faults.to_vec();
        plan.sort_by(|a, b| a.at_s.total_cmp(&b.at_s));
        Faults {
            plan,
            next: 0,
            follow_ups: Vec::new(),
            killed: Vec::new(),
            records: Vec::new(),
        }
    }

    /// The schedule of `run`'s variants (faulted and fault-free variants
    /// never share a run: spec validation).
    pub fn of(run: &Run<'_>) -> Faults {
        Faults::new(
            run.members
                .first()
                .map_or(&[][..], |m| run.ctx.exp.faults_for(m.variant)),
        )
    }

    pub fn is_empty(&self) -> bool {
        self.plan.is_empty()
    }

    /// Fires every fault that is due and every follow-up (SIGCONT, restart) that is.
    pub async fn tick(
        &mut self,
        load_start: Instant,
        members: &mut [Member],
        sampler: &mut Sampler,
        plane: Option<&ControlPlane>,
    ) -> Result<()> {
        while self.next < self.plan.len()
            && self.plan[self.next].at_s <= load_start.elapsed().as_secs_f64()
        {
            self.fire(self.next, load_start, members, sampler, plane)
                .await;
            self.next += 1;
        }
        let now = Instant::now();
        let due: Vec<FollowUp> = {
            let (due, later) = std::mem::take(&mut self.follow_ups)
                .into_iter()
                .partition(|f| f.due <= now);
            self.follow_ups = later;
            due
        };
        for f in due {
            self.follow_up(f, members, sampler, plane).await;
        }
        Ok(())
    }

    /// Ends the run's faults: pending follow-ups now, then every plane
    /// process a kill left down is started again (the next run needs a whole
    /// plane). Writes faults.csv into each member's run directory.
    pub async fn finish(
        &mut self,
        members: &mut [Member],
        sampler: &mut Sampler,
        plane: Option<&ControlPlane>,
    ) -> Result<()> {
        if self.plan.is_empty() {
            return Ok(());
        }
        for f in std::mem::take(&mut self.follow_ups) {
            self.follow_up(f, members, sampler, plane).await;
        }
        if let Some(p) = plane {
            for hit in std::mem::take(&mut self.killed) {
                if let Hit::Plane(m) = hit
                    && let Err(e) = p.restart(m)
                {
                    eprintln!("warning: cannot restore {m} after the run: {e:#}");
                }
            }
        }
        for (i, m) in members.iter().enumerate() {
            let rows: Vec<FaultRecord> = self
                .records
                .iter()
                .filter(|(owner, _)| owner.is_none_or(|o| o == i))
                .map(|(_, r)| r.clone())
                .collect();
            faults::write(&m.dir.faults(), &rows)?;
        }
        Ok(())
    }

    async fn fire(
        &mut self,
        k: usize,
        load_start: Instant,
        members: &mut [Member],
        sampler: &Sampler,
        plane: Option<&ControlPlane>,
    ) {
        let p = &self.plan[k];
        let (at_s, action, target, text, duration_s) = (
            p.at_s,
            p.action,
            p.target,
            p.target.to_string(),
            p.duration_s,
        );
        let d = Duration::from_secs_f64(duration_s);
        let hits: Vec<Hit> = match target {
            FaultTarget::Controller => members
                .iter()
                .enumerate()
                .flat_map(|(i, m)| (0..m.replicas.len()).map(move |k| Hit::Controller(i, k)))
                .collect(),
            FaultTarget::ControllerReplica(k) => (0..members.len())
                .filter(|i| k < members[*i].replicas.len())
                .map(|i| Hit::Controller(i, k))
                .collect(),
            FaultTarget::ControllerLeader => (0..members.len())
                .filter_map(|i| {
                    let leader = match &sampler.controllers[i].fleet {
                        Some(f) => f.leader,
                        None => Some(0),
                    };
                    leader.map(|k| Hit::Controller(i, k))
                })
                .collect(),
            FaultTarget::ApiServer(k) => vec![Hit::Plane(PlaneMember::ApiServer(k))],
            FaultTarget::Etcd(k) => vec![Hit::Plane(PlaneMember::Etcd(k))],
            FaultTarget::EtcdLeader | FaultTarget::EtcdFollower => {
                let leader = match plane {
                    Some(p) => p.etcd_leader().await,
                    None => None,
                };
                let n = plane.map_or(0, |p| p.etcd_metrics_urls().len());
                let pick = if target == FaultTarget::EtcdLeader {
                    leader
                } else {
                    (0..n).find(|k| {
                        Some(*k) != leader
                            && plane
                                .and_then(|p| p.pid(PlaneMember::Etcd(*k)))
                                .is_some_and(|(_, running)| running)
                    })
                };
                pick.map(|k| Hit::Plane(PlaneMember::Etcd(k)))
                    .into_iter()
                    .collect()
            }
        };
        let base = FaultRecord {
            planned_s: at_s,
            actual_s: 0.0,
            at: String::new(),
            action: action.as_str().into(),
            target: text,
            resolved: String::new(),
            duration_s,
            pid: 0,
            outcome: String::new(),
        };
        if hits.is_empty() {
            let mut r = base;
            r.actual_s = load_start.elapsed().as_secs_f64();
            r.at = now_rfc3339();
            r.outcome = "failed: no such process (no member or replica said it leads)".into();
            self.records.push((None, r));
            return;
        }
        let sig = match action {
            FaultAction::Stop => Signal::STOP,
            FaultAction::Kill | FaultAction::Restart => Signal::KILL,
        };
        for hit in hits {
            let mut r = base.clone();
            r.actual_s = load_start.elapsed().as_secs_f64();
            r.at = now_rfc3339();
            let (owner, sent) = match hit {
                Hit::Controller(i, k) => {
                    r.resolved = match members[i].replicas.len() {
                        1 => "controller".into(),
                        _ => format!("controller:{k}"),
                    };
                    let sent = match members[i].replicas[k]
                        .process
                        .as_mut()
                        .filter(|c| c.running_now())
                    {
                        Some(c) => {
                            let pid = c.pid;
                            if sig == Signal::KILL {
                                c.kill().await;
                            } else {
                                c.signal(sig);
                            }
                            Ok(pid)
                        }
                        _ => Err("the controller was not running".to_string()),
                    };
                    (Some(i), sent)
                }
                Hit::Plane(m) => {
                    r.resolved = m.to_string();
                    let sent = match plane {
                        Some(p) => p.signal(m, sig).map_err(|e| format!("{e:#}")),
                        None => Err("no local plane".into()),
                    };
                    (None, sent)
                }
            };
            match sent {
                Ok(pid) => {
                    r.pid = pid;
                    r.outcome = "ok".into();
                    match action {
                        FaultAction::Kill => {
                            if matches!(hit, Hit::Plane(_)) {
                                self.killed.push(hit);
                            }
                        }
                        FaultAction::Stop | FaultAction::Restart => {
                            self.follow_ups.push(FollowUp {
                                due: Instant::now() + d,
                                hit,
                                action,
                                record: self.records.len(),
                            })
                        }
                    }
                }
                Err(e) => r.outcome = format!("failed: {e}"),
            }
            eprintln!(
                "fault at {:.1} s: {} {} (pid {}): {}",
                r.actual_s, r.action, r.resolved, r.pid, r.outcome
            );
            self.records.push((owner, r));
        }
    }

    async fn follow_up(
        &mut self,
        f: FollowUp,
        members: &mut [Member],
        sampler: &mut Sampler,
        plane: Option<&ControlPlane>,
    ) {
        let outcome = match (f.action, f.hit) {
            (FaultAction::Stop, Hit::Controller(i, k)) => {
                if let Some(c) = members[i].replicas[k].process.as_mut() {
                    c.signal(Signal::CONT);
                }
                "ok, continued".to_string()
            }
            (FaultAction::Stop, Hit::Plane(m)) => match plane.map(|p| p.signal(m, Signal::CONT)) {
                Some(Ok(_)) => "ok, continued".into(),
                Some(Err(e)) => format!("continue failed: {e:#}"),
                None => "continue failed: no plane".into(),
            },
            (FaultAction::Restart, Hit::Controller(i, k)) => {
                let m = &mut members[i];
                let log = m.dir.replica_log(k);
                let r = &mut m.replicas[k];
                match &r.launch {
                    Some(l) => match l.spawn(&log, true).await {
                        Ok((p, url)) => {
                            let s = format!("ok, restarted as pid {}", p.pid);
                            sampler.controllers[i].urls[k] = url.clone();
                            r.metrics_url = url;
                            r.process = Some(p);
                            s
                        }
                        Err(e) => format!("restart failed: {e:#}"),
                    },
                    None => "restart failed: unknown command".into(),
                }
            }
            (FaultAction::Restart, Hit::Plane(m)) => match plane.map(|p| p.restart(m)) {
                Some(Ok(pid)) => format!("ok, restarted as pid {pid}"),
                Some(Err(e)) => format!("restart failed: {e:#}"),
                None => "restart failed: no plane".into(),
            },
            (FaultAction::Kill, _) => return,
        };
        eprintln!("fault follow-up: {outcome}");
        if let Some((_, r)) = self.records.get_mut(f.record) {
            r.outcome = outcome;
        }
    }
}

impl Measurement for Faults {
    fn tick<'a>(&'a mut self, run: &'a mut Run<'_>) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            if !self.is_empty() {
                let plane = run.ctx.cluster.plane.as_ref();
                self.tick(run.load_start, run.members, &mut run.sampler, plane)
                    .await?;
            }
            Ok(())
        })
    }

    /// Stopped or killed processes come back before the next phase or run.
    fn after_window<'a>(&'a mut self, run: &'a mut Run<'_>) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let plane = run.ctx.cluster.plane.as_ref();
            self.finish(run.members, &mut run.sampler, plane).await
        })
    }
}
