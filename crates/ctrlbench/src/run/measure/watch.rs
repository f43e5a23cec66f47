//! Per-object timing, kept in `run::objects`: when each object was created
//! (from the loader), when it was first seen ready by the workload's rule
//! and when it was first written by someone other than the loader (both from
//! our own watch, not the controller's). "Written" is read off managedFields, so it needs no
//! knowledge of the controller: any field manager but the loader's counts,
//! status and annotation writes alike. Any kind, through kube's dynamic API
//! (decoded without managedFields' field sets, see `run::watched`); only the
//! run's own objects (its run-id label) are watched. As a
//! measurement ([`ReadyWatch`]) it writes objects.csv as the run goes (a
//! killed run keeps what was seen), the controller's start-up times, and
//! how many changes it saw (a new resourceVersion each), against which the
//! audit log's accepted writes tell the writes that changed nothing.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::Result;
use ctrlbench_record::summary::StartMode;
use ctrlbench_record::{Summary, objects};
use futures::TryStreamExt;
use futures::future::BoxFuture;
use kube::api::DynamicObject;
use kube::runtime::{WatchStreamExt, watcher};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::{Measurement, Run};
use crate::experiment::plan;
use crate::run::Ctx;
use crate::run::member::Member;
use crate::run::objects::{LOADER_MANAGER, Objects};
use crate::run::watched::Watched;

use crate::experiment::appliers::APPLIER_PREFIX;
use crate::experiment::workload::Workload;

/// Whether anyone but the loader has written `w` (managedFields keeps one
/// entry per manager and subresource; a write that changed nothing adds
/// none). The appliers' entries came with the loader's create.
fn written_by_others(w: &DynamicObject) -> bool {
    w.metadata.managed_fields.iter().flatten().any(|m| {
        m.manager
            .as_deref()
            .is_none_or(|n| n != LOADER_MANAGER && !n.starts_with(APPLIER_PREFIX))
    })
}

/// Watches run `run`'s objects in `ns` until cancelled, recording each
/// object's first time ready (the workload's rule) and first write by others.
/// `listed` is told when the watch's first initial list is complete (every
/// object that existed then has been looked at).
pub async fn watch_ready(
    client: kube::Client,
    workload: std::sync::Arc<Workload>,
    ns: String,
    run: String,
    objects: std::sync::Arc<Objects>,
    listed: tokio::sync::oneshot::Sender<()>,
    cancel: CancellationToken,
) {
    let api: kube::Api<Watched> = kube::Api::namespaced_with(client, &ns, &workload.resource);
    let config =
        watcher::Config::default().labels(&format!("{}={run}", crate::run::workload::RUN_LABEL));
    let stream = watcher(api, config).default_backoff();
    let mut stream = std::pin::pin!(stream);
    let mut listed = Some(listed);
    loop {
        tokio::select! {
            _ = cancel.cancelled() => return,
            item = stream.try_next() => match item {
                Ok(Some(watcher::Event::InitDone)) => {
                    if let Some(tx) = listed.take() {
                        let _ = tx.send(());
                    }
                }
                Ok(Some(watcher::Event::Init | watcher::Event::Delete(_))) => {}
                Ok(Some(watcher::Event::Apply(Watched(w)) | watcher::Event::InitApply(Watched(w)))) => {
                    let name = w.metadata.name.as_deref().unwrap_or_default();
                    if let Some(v) = w.metadata.resource_version.as_deref() {
                        objects.seen_version(name, v);
                    }
                    if written_by_others(&w) && w.metadata.deletion_timestamp.is_none() {
                        objects.seen_written(name);
                    }
                    if workload.ready.holds_object(&w) {
                        objects.seen_ready(name, workload.ready.observes_generation(&w));
                    }
                }
                Ok(None) => return,
                Err(e) => tracing::warn!(namespace = %ns, error = %e, "ready watch failed; retrying"),
            }
        }
    }
}

/// How long our watch gets to list a run's existing objects before the
/// controller starts anyway (100 000 objects list in a few seconds).
const WATCH_LIST_WAIT: Duration = Duration::from_secs(120);

/// How often objects.csv is rewritten during a run, at most: a killed run
/// keeps what was seen until the last rewrite (an interrupted one, all).
const OBJECTS_EVERY: Duration = Duration::from_secs(5);

/// A rewrite is followed by at least this many times its own duration.
const OBJECTS_SHARE: u32 = 100;

/// Our watch of each member's objects, as a measurement.
pub struct ReadyWatch {
    watches: Vec<JoinHandle<()>>,
    next_objects: Instant,
}

impl ReadyWatch {
    /// Starts a watch per member; returns once every watch has listed what
    /// exists (after-load: all N objects, before the controller starts).
    pub async fn start(
        ctx: &Ctx<'_>,
        plan: &plan::Run,
        members: &[Member],
        stop: &CancellationToken,
    ) -> ReadyWatch {
        let workload = Arc::new(ctx.exp.workload.clone());
        let mut watches = Vec::new();
        let mut listed = Vec::new();
        for m in members {
            m.objects.expected.store(plan.scale, Ordering::SeqCst);
            let (tx, rx) = tokio::sync::oneshot::channel();
            listed.push(rx);
            watches.push(tokio::spawn(watch_ready(
                ctx.cluster.client.clone(),
                workload.clone(),
                m.ns.clone(),
                m.run_id.clone(),
                m.objects.clone(),
                tx,
                stop.clone(),
            )));
        }
        for rx in listed {
            tokio::select! {
                _ = stop.cancelled() => break,
                _ = tokio::time::timeout(WATCH_LIST_WAIT, rx) => {}
            }
        }
        ReadyWatch {
            watches,
            next_objects: Instant::now() + OBJECTS_EVERY,
        }
    }
}

impl Measurement for ReadyWatch {
    fn tick<'a>(&'a mut self, run: &'a mut Run<'_>) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let now = Instant::now();
            if now >= self.next_objects {
                for m in run.members.iter() {
                    objects::write(&m.dir.objects(), &m.objects.rows())?;
                }
                // At N = 100 000 a rewrite takes tens of milliseconds: space
                // them so that they never cost more than 1/OBJECTS_SHARE of a core.
                self.next_objects = now + OBJECTS_EVERY.max(now.elapsed() * OBJECTS_SHARE);
            }
            Ok(())
        })
    }

    fn after_window<'a>(&'a mut self, _run: &'a mut Run<'_>) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            // The window's end stopped them.
            for w in self.watches.drain(..) {
                let _ = w.await;
            }
            Ok(())
        })
    }

    fn finish<'a>(
        &'a mut self,
        run: &'a mut Run<'_>,
        summaries: &'a mut [Summary],
    ) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            for (i, (m, s)) in run.members.iter().zip(summaries.iter_mut()).enumerate() {
                objects::write(&m.dir.objects(), &m.objects.rows())?;
                let start = crate::run::summary::start(
                    run.ctx.exp.variants[m.variant].start(),
                    m,
                    run.load_start,
                    run.sampler.controllers[i].baseline.map(|b| b.reconciles),
                );
                if let Some(t) = start.all_ready_s
                    && start.mode == StartMode::AfterLoad
                    && t > 0.0
                {
                    // Ready/s from the controller's start: the load is not its time.
                    s.throughput_ready_per_s = s.ready as f64 / t;
                }
                s.start = Some(start);
                s.watch_changes = Some(m.objects.changes());
                if let Some((checked, missing)) = m.objects.observed_generation() {
                    s.ready_generation_checked = Some(checked);
                    s.ready_generation_missing = Some(missing);
                }
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_managers(managers: &[&str]) -> DynamicObject {
        let entries: Vec<serde_json::Value> = managers
            .iter()
            .map(|m| serde_json::json!({"manager": m, "operation": "Update"}))
            .collect();
        serde_json::from_value(serde_json::json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "managedFields": entries},
        }))
        .unwrap()
    }

    #[test]
    fn the_loader_and_the_appliers_are_not_others() {
        assert!(!written_by_others(&with_managers(&["ctrlbench-loader"])));
        assert!(!written_by_others(&with_managers(&[
            "ctrlbench-loader",
            "ctrlbench-applier-001",
            "ctrlbench-applier-016",
        ])));
        assert!(written_by_others(&with_managers(&[
            "ctrlbench-loader",
            "ctrlbench-applier-001",
            "widget-controller",
        ])));
    }
}
