//! Pod start times from our own watch of Pods in each member's namespace
//! (not Events, which an apiserver under load drops): per pod, when the
//! watch first saw it, when it was scheduled, Running and Ready, and its
//! owner — the controller ownerReference, a ReplicaSet followed up one level
//! to the Deployment that owns it. The watch starts before the load and the
//! controllers, so no pod is missed; pods are kept by uid, so a watch that restarts and lists
//! again neither loses nor double-counts one, and a deleted pod keeps its
//! row. pods.csv is written (as the run goes and at its end) only for a
//! namespace that had a pod: a run without pods costs one idle watch.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Result;
use ctrlbench_record::pods::{self, PodRecord, millis};
use ctrlbench_record::time::{now_unix, rfc3339_of_unix};
use ctrlbench_record::{RunDir, Summary};
use futures::TryStreamExt;
use futures::future::BoxFuture;
use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{ApiResource, DynamicObject};
use kube::runtime::{WatchStreamExt, watcher};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::{Measurement, Run};
use crate::run::Ctx;
use crate::run::member::Member;
use crate::run::watched::Watched;

/// What one event says of a pod.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Observed {
    pub uid: String,
    pub name: String,
    /// The controller ownerReference's (kind, name).
    pub owner: Option<(String, String)>,
    pub scheduled: bool,
    pub running: bool,
    pub ready: bool,
}

/// Whether condition `kind` of the pod's status is True.
fn condition(status: &serde_json::Value, kind: &str) -> bool {
    status["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == kind && c["status"] == "True")
}

impl Observed {
    /// None for an object without a uid (never a pod the apiserver sent).
    pub fn of(pod: &DynamicObject) -> Option<Observed> {
        let status = &pod.data["status"];
        let owner = pod
            .metadata
            .owner_references
            .iter()
            .flatten()
            .find(|o| o.controller == Some(true))
            .map(|o| (o.kind.clone(), o.name.clone()));
        Some(Observed {
            uid: pod.metadata.uid.clone()?,
            name: pod.metadata.name.clone().unwrap_or_default(),
            owner,
            scheduled: condition(status, "PodScheduled")
                || pod.data["spec"]["nodeName"]
                    .as_str()
                    .is_some_and(|n| !n.is_empty()),
            running: status["phase"] == "Running",
            ready: condition(status, "Ready"),
        })
    }
}

#[derive(Debug, Clone)]
struct Seen {
    name: String,
    owner: Option<(String, String)>,
    first_seen: Instant,
    scheduled: Option<Instant>,
    running: Option<Instant>,
    ready: Option<Instant>,
}

/// The pods of one namespace, by uid.
#[derive(Default)]
pub struct PodTimes {
    pods: Mutex<HashMap<String, Seen>>,
}

impl PodTimes {
    /// Records what an event says, at `now`; every stage keeps the first
    /// time it was seen.
    pub fn seen(&self, o: Observed, now: Instant) {
        let mut pods = self.pods.lock().expect("pods lock");
        let p = pods.entry(o.uid).or_insert_with(|| Seen {
            name: o.name,
            owner: None,
            first_seen: now,
            scheduled: None,
            running: None,
            ready: None,
        });
        if p.owner.is_none() {
            p.owner = o.owner;
        }
        for (stage, at) in [
            (o.scheduled, &mut p.scheduled),
            (o.running, &mut p.running),
            (o.ready, &mut p.ready),
        ] {
            if stage && at.is_none() {
                *at = Some(now);
            }
        }
    }

    /// Whether this pod (by uid) has an owner recorded already.
    fn has_owner(&self, uid: &str) -> bool {
        let pods = self.pods.lock().expect("pods lock");
        pods.get(uid).is_some_and(|p| p.owner.is_some())
    }

    pub fn is_empty(&self) -> bool {
        self.pods.lock().expect("pods lock").is_empty()
    }

    /// pods.csv's rows, in seconds since `origin` (the load's start), by
    /// pod name then first sighting.
    pub fn rows(&self, namespace: &str, origin: Instant) -> Vec<PodRecord> {
        let s = |t: Instant| {
            millis(match t.checked_duration_since(origin) {
                Some(d) => d.as_secs_f64(),
                None => -(origin - t).as_secs_f64(),
            })
        };
        let pods = self.pods.lock().expect("pods lock");
        let mut rows: Vec<PodRecord> = pods
            .values()
            .map(|p| {
                let (owner_kind, owner) = p.owner.clone().unwrap_or_default();
                PodRecord {
                    namespace: namespace.to_string(),
                    pod: p.name.clone(),
                    owner_kind,
                    owner,
                    // creationTimestamp has whole seconds only: the watch's
                    // first sighting, milliseconds after the create, is closer.
                    created_s: Some(s(p.first_seen)),
                    scheduled_s: p.scheduled.map(s),
                    running_s: p.running.map(s),
                    ready_s: p.ready.map(s),
                }
            })
            .collect();
        drop(pods);
        rows.sort_by(|a, b| {
            (&a.pod, a.created_s)
                .partial_cmp(&(&b.pod, b.created_s))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        rows
    }
}

/// A ReplicaSet's own controller (a Deployment's), looked up once per
/// ReplicaSet: its ownerReference never changes.
async fn workload_owner(
    rs: &kube::Api<ReplicaSet>,
    cache: &mut HashMap<String, Option<(String, String)>>,
    name: &str,
) -> Option<(String, String)> {
    if let Some(o) = cache.get(name) {
        return o.clone();
    }
    let owner = match rs.get_metadata_opt(name).await {
        Ok(m) => m.and_then(|m| {
            m.metadata
                .owner_references?
                .into_iter()
                .find(|o| o.controller == Some(true))
                .map(|o| (o.kind, o.name))
        }),
        // Not allowed to read ReplicaSets: the pods keep theirs as owner.
        Err(kube::Error::Api(s)) if s.code == 403 => None,
        // Not cached: the next pod of this ReplicaSet asks again.
        Err(_) => return None,
    };
    cache.insert(name.to_string(), owner.clone());
    owner
}

fn forbidden(e: &watcher::Error) -> bool {
    matches!(
        e,
        watcher::Error::InitialListFailed(kube::Error::Api(s))
            | watcher::Error::WatchStartFailed(kube::Error::Api(s))
            | watcher::Error::WatchFailed(kube::Error::Api(s)) if s.code == 403
    )
}

/// Watches the pods of `ns` until cancelled.
pub async fn watch_pods(
    client: kube::Client,
    ns: String,
    times: Arc<PodTimes>,
    cancel: CancellationToken,
) {
    let api: kube::Api<Watched> =
        kube::Api::namespaced_with(client.clone(), &ns, &ApiResource::erase::<Pod>(&()));
    let rs: kube::Api<ReplicaSet> = kube::Api::namespaced(client, &ns);
    let mut owners = HashMap::new();
    let stream = watcher(api, watcher::Config::default()).default_backoff();
    let mut stream = std::pin::pin!(stream);
    loop {
        let item = tokio::select! {
            _ = cancel.cancelled() => return,
            item = stream.try_next() => item,
        };
        match item {
            Ok(Some(
                watcher::Event::Apply(Watched(p))
                | watcher::Event::InitApply(Watched(p))
                | watcher::Event::Delete(Watched(p)),
            )) => {
                let Some(mut o) = Observed::of(&p) else {
                    continue;
                };
                let now = Instant::now();
                if let Some((kind, name)) = &o.owner
                    && kind == "ReplicaSet"
                    && !times.has_owner(&o.uid)
                    && let Some(up) = workload_owner(&rs, &mut owners, name).await
                {
                    o.owner = Some(up);
                }
                times.seen(o, now);
            }
            Ok(Some(watcher::Event::Init | watcher::Event::InitDone)) => {}
            Ok(None) => return,
            Err(e) if forbidden(&e) => {
                // An existing cluster's user may not list pods: no pod figures.
                tracing::warn!(namespace = %ns, error = %e, "cannot watch pods; no pods.csv");
                return;
            }
            Err(e) => tracing::warn!(namespace = %ns, error = %e, "pod watch failed; retrying"),
        }
    }
}

/// How often pods.csv is rewritten during a run, at most.
const PODS_EVERY: Duration = Duration::from_secs(5);

/// Our watch of each member's pods, as a measurement.
pub struct PodWatch {
    watches: Vec<JoinHandle<()>>,
    times: Vec<Arc<PodTimes>>,
    next_write: Instant,
}

impl Default for PodWatch {
    fn default() -> PodWatch {
        PodWatch {
            watches: Vec::new(),
            times: Vec::new(),
            next_write: Instant::now() + PODS_EVERY,
        }
    }
}

impl PodWatch {
    /// Starts a watch per member, before anything in its namespace runs
    /// (with start = "after-load", before the load: the plane's own
    /// controllers may create pods while it runs).
    pub fn start(ctx: &Ctx<'_>, members: &[Member], stop: &CancellationToken) -> PodWatch {
        let mut w = PodWatch::default();
        for m in members {
            let t = Arc::new(PodTimes::default());
            w.times.push(t.clone());
            w.watches.push(tokio::spawn(watch_pods(
                ctx.cluster.client.clone(),
                m.ns.clone(),
                t,
                stop.clone(),
            )));
        }
        w
    }

    fn write(&self, run: &Run<'_>) -> Result<()> {
        for (m, t) in run.members.iter().zip(&self.times) {
            if !t.is_empty() {
                write_rows(&m.dir, &t.rows(&m.ns, run.load_start))?;
            }
        }
        Ok(())
    }
}

fn write_rows(dir: &RunDir, rows: &[PodRecord]) -> Result<()> {
    pods::write(&dir.pods(), rows)
}

impl Measurement for PodWatch {
    fn tick<'a>(&'a mut self, run: &'a mut Run<'_>) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let now = Instant::now();
            if now >= self.next_write {
                self.write(run)?;
                // Never more than a hundredth of a core on rewrites.
                self.next_write = now + PODS_EVERY.max(now.elapsed() * 100);
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
            self.write(run)?;
            let origin = now_unix() - run.load_start.elapsed().as_secs_f64();
            for (t, s) in self.times.iter().zip(summaries.iter_mut()) {
                if !t.is_empty() {
                    s.load_started_at = Some(rfc3339_of_unix(origin));
                }
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A pod as the apiserver sends it at one stage of its start.
    fn pod(
        uid: &str,
        name: &str,
        node: Option<&str>,
        phase: &str,
        conds: &[(&str, &str)],
    ) -> DynamicObject {
        let mut spec = json!({"containers": [{"name": "c", "image": "x"}]});
        if let Some(n) = node {
            spec["nodeName"] = json!(n);
        }
        let conditions: Vec<_> = conds
            .iter()
            .map(|(t, s)| json!({"type": t, "status": s}))
            .collect();
        serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "ns", "uid": uid,
                "creationTimestamp": "2026-12-04T10:00:00Z",
                "ownerReferences": [
                    {"apiVersion": "v1", "kind": "Other", "name": "not-the-controller", "uid": "o1"},
                    {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-5d8", "uid": "r1", "controller": true}
                ]},
            "spec": spec,
            "status": {"phase": phase, "conditions": conditions}
        }))
        .unwrap()
    }

    fn at(t0: Instant, ms: u64) -> Instant {
        t0 + Duration::from_millis(ms)
    }

    /// Created, scheduled, running, ready in order; then the watch restarts
    /// and lists the pod again, and the pod is deleted: one row, each stage
    /// at its first sighting.
    #[test]
    fn each_stage_keeps_its_first_sighting() {
        let t0 = Instant::now();
        let times = PodTimes::default();
        let events = [
            (100, pod("u1", "web-5d8-a", None, "Pending", &[])),
            (
                150,
                pod(
                    "u1",
                    "web-5d8-a",
                    None,
                    "Pending",
                    &[("PodScheduled", "False")],
                ),
            ),
            (
                300,
                pod(
                    "u1",
                    "web-5d8-a",
                    Some("kwok-node-0"),
                    "Pending",
                    &[("PodScheduled", "True")],
                ),
            ),
            (
                700,
                pod(
                    "u1",
                    "web-5d8-a",
                    Some("kwok-node-0"),
                    "Running",
                    &[("PodScheduled", "True"), ("Ready", "False")],
                ),
            ),
            (
                1250,
                pod(
                    "u1",
                    "web-5d8-a",
                    Some("kwok-node-0"),
                    "Running",
                    &[("PodScheduled", "True"), ("Ready", "True")],
                ),
            ),
            // The watch restarted: its list sends the pod again, later.
            (
                4000,
                pod(
                    "u1",
                    "web-5d8-a",
                    Some("kwok-node-0"),
                    "Running",
                    &[("PodScheduled", "True"), ("Ready", "True")],
                ),
            ),
            // Deleted: the last state, again.
            (
                5000,
                pod(
                    "u1",
                    "web-5d8-a",
                    Some("kwok-node-0"),
                    "Running",
                    &[("Ready", "True")],
                ),
            ),
        ];
        for (ms, p) in &events {
            times.seen(Observed::of(p).unwrap(), at(t0, *ms));
        }
        // The load started 50 ms after t0.
        let rows = times.rows("ns", at(t0, 50));
        assert_eq!(
            rows,
            vec![PodRecord {
                namespace: "ns".into(),
                pod: "web-5d8-a".into(),
                owner_kind: "ReplicaSet".into(),
                owner: "web-5d8".into(),
                created_s: Some(0.05),
                scheduled_s: Some(0.25),
                running_s: Some(0.65),
                ready_s: Some(1.2),
            }]
        );
    }

    /// nodeName alone counts as scheduled; a second pod of the same name
    /// (another uid, as a StatefulSet's) is its own row; a pod seen before
    /// the load's start has negative times; a pod never ready has none.
    #[test]
    fn pods_are_kept_by_uid() {
        let t0 = Instant::now();
        let times = PodTimes::default();
        let mut first = pod("u1", "db-0", Some("kwok-node-1"), "Pending", &[]);
        first.metadata.owner_references = None;
        times.seen(Observed::of(&first).unwrap(), t0);
        let again = pod("u2", "db-0", None, "Pending", &[]);
        times.seen(Observed::of(&again).unwrap(), at(t0, 2000));
        times.seen(Observed::of(&again).unwrap(), at(t0, 2500));
        let rows = times.rows("ns", at(t0, 1000));
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].created_s, Some(-1.0));
        assert_eq!(rows[0].scheduled_s, Some(-1.0));
        assert_eq!(
            (rows[0].owner_kind.as_str(), rows[0].owner.as_str()),
            ("", "")
        );
        assert_eq!(rows[1].created_s, Some(1.0));
        assert_eq!(rows[1].owner, "web-5d8");
        assert_eq!(
            (rows[1].scheduled_s, rows[1].running_s, rows[1].ready_s),
            (None, None, None)
        );
        assert!(PodTimes::default().is_empty());
        assert!(!times.is_empty());
    }

    #[test]
    fn an_object_without_uid_is_not_a_pod() {
        let mut p = pod("u1", "x", None, "Pending", &[]);
        p.metadata.uid = None;
        assert_eq!(Observed::of(&p), None);
    }
}
