//! What is wrong with a controller, named from what it did: one table of
//! rules, each defined once (its name, what it means, the evidence and
//! threshold it judges, the fix in each framework, its source), and that
//! table drives the detection, the report's "What to fix", verdicts.json
//! and docs/diagnosis.md alike. The evidence is counts: the run's API
//! footprint (the apiserver's audit log names every request's caller) and
//! the controller's own counters, per object and per reconcile, so one
//! repeat decides a rule. A rule whose signature another rule explains
//! (the conflicts of a loop) is suppressed by it, so each finding names a
//! cause, not its echoes.

use crate::figures::{Group, RunFigures};
use crate::metrics::Metric;

/// The controller frameworks a fix is written for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framework {
    ControllerRuntime,
    ClientGo,
    KubeRs,
    Kopf,
}

impl Framework {
    pub const ALL: [Framework; 4] = [
        Framework::ControllerRuntime,
        Framework::ClientGo,
        Framework::KubeRs,
        Framework::Kopf,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Framework::ControllerRuntime => "controller-runtime",
            Framework::ClientGo => "client-go",
            Framework::KubeRs => "kube-rs",
            Framework::Kopf => "kopf",
        }
    }

    /// The framework a run's implementation names; None for a user's
    /// command, whose framework the results do not record.
    pub fn of(implementation: &str) -> Option<Framework> {
        if implementation == "rust" {
            Some(Framework::KubeRs)
        } else if implementation.starts_with("go") {
            Some(Framework::ControllerRuntime)
        } else {
            None
        }
    }
}

/// The fix, per framework.
pub struct Fixes {
    pub controller_runtime: &'static str,
    pub client_go: &'static str,
    pub kube_rs: &'static str,
    pub kopf: &'static str,
}

impl Fixes {
    pub fn of(&self, f: Framework) -> &'static str {
        match f {
            Framework::ControllerRuntime => self.controller_runtime,
            Framework::ClientGo => self.client_go,
            Framework::KubeRs => self.kube_rs,
            Framework::Kopf => self.kopf,
        }
    }
}

/// One rule of the table.
pub struct Rule {
    /// A stable identifier (verdicts.json, docs anchors).
    pub id: &'static str,
    pub name: &'static str,
    /// What the anti-pattern is, in a sentence.
    pub means: &'static str,
    /// What the rule reads, in words.
    pub evidence: &'static str,
    /// When it fires, in words (the code below is the same threshold).
    pub threshold: &'static str,
    pub fix: Fixes,
    pub source: &'static str,
    /// Rules whose finding explains this one's signature.
    pub suppressed_by: &'static [&'static str],
    /// This group's evidence and what it costs, if the rule fires.
    pub detect: fn(&Evidence) -> Option<(String, String)>,
}

/// What a group's runs show, summed over its runs (counts add up, so the
/// per-object figures are totals over total objects).
#[derive(Clone, Debug, Default)]
pub struct Evidence {
    pub runs: usize,
    /// Objects created, over the runs.
    pub objects: f64,
    /// Objects first Ready, over the runs.
    pub ready: f64,
    /// Every run had an audit log (its footprint is known).
    pub footprint: bool,
    pub requests: f64,
    pub gets: f64,
    pub extra_lists: f64,
    pub watches: f64,
    pub object_writes: f64,
    pub status_writes: f64,
    pub conflicts: f64,
    pub already_existed: f64,
    pub events: f64,
    pub cluster_wide: f64,
    pub cluster_targets: Vec<String>,
    /// Reconciles over the runs (None: some run did not count them).
    pub reconciles: Option<f64>,
    pub requeues: Option<f64>,
    pub replicas: usize,
    /// Some(false): the settings say the replicas elect no leader.
    pub leader_election: Option<bool>,
    /// The median share of a reconcile spent in the client's rate limiter.
    pub throttle_share: Option<f64>,
    /// The workload's kind, for the report's words.
    pub kind: String,
}

impl Evidence {
    pub fn of(g: &Group) -> Evidence {
        let runs: Vec<&RunFigures> = g.runs.iter().collect();
        let mut e = Evidence {
            runs: runs.len(),
            footprint: !runs.is_empty() && runs.iter().all(|r| r.footprint.is_some()),
            kind: g.kind().unwrap_or("Widget").to_string(),
            replicas: runs.iter().map(|r| r.replicas).max().unwrap_or(1),
            leader_election: runs
                .iter()
                .find_map(|r| r.settings.as_ref())
                .map(|s| s.leader_election.is_some()),
            ..Evidence::default()
        };
        let mut reconciles = Some(0.0);
        let mut requeues = Some(0.0);
        let mut shares = Vec::new();
        for r in &runs {
            e.objects += r.scale as f64;
            e.ready += r.ready as f64;
            reconciles = reconciles
                .zip(r.get(Metric::ReconcilesPerObject))
                .map(|(s, v)| s + v * r.scale as f64);
            requeues = requeues.zip(r.get(Metric::Requeues)).map(|(s, v)| s + v);
            if let (Some(t), Some(m)) = (r.attribution.throttle, r.attribution.mean)
                && m > 0.0
            {
                shares.push(t / m);
            }
            if let Some(f) = &r.footprint {
                e.requests += f.requests();
                e.gets += f.verb("get");
                e.extra_lists += f.extra_lists();
                e.watches += f.verb("watch");
                e.object_writes += f.object_writes();
                e.status_writes += f.status_writes();
                e.conflicts += f.conflicts();
                e.already_existed += f.already_existed();
                e.events += f.events();
                let wide: Vec<String> = f
                    .cluster_wide_targets()
                    .into_iter()
                    .filter(|t| !cluster_scoped(t))
                    .collect();
                e.cluster_wide += f.count(|row| {
                    (row.verb == "list" || row.verb == "watch")
                        && !row.namespaced
                        && wide.contains(&row.target())
                });
                e.cluster_targets.extend(wide);
            }
        }
        e.cluster_targets.sort();
        e.cluster_targets.dedup();
        e.reconciles = reconciles.filter(|r| *r > 0.0);
        e.requeues = requeues;
        shares.sort_by(f64::total_cmp);
        e.throttle_share = (!shares.is_empty()).then(|| shares[shares.len() / 2]);
        e
    }

    fn per_object(&self, v: f64) -> f64 {
        if self.objects > 0.0 {
            v / self.objects
        } else {
            0.0
        }
    }

    fn per_reconcile(&self, v: f64) -> Option<f64> {
        self.reconciles.map(|r| v / r)
    }

    fn reconciles_per_object(&self) -> Option<f64> {
        self.reconciles.map(|r| self.per_object(r))
    }
}

/// Resources without a namespace: a list of them reads no other namespace.
fn cluster_scoped(target: &str) -> bool {
    const CLUSTER: [&str; 16] = [
        "nodes",
        "namespaces",
        "persistentvolumes",
        "apiextensions.k8s.io/customresourcedefinitions",
        "rbac.authorization.k8s.io/clusterroles",
        "rbac.authorization.k8s.io/clusterrolebindings",
        "storage.k8s.io/storageclasses",
        "storage.k8s.io/csidrivers",
        "storage.k8s.io/csinodes",
        "storage.k8s.io/volumeattachments",
        "scheduling.k8s.io/priorityclasses",
        "node.k8s.io/runtimeclasses",
        "networking.k8s.io/ingressclasses",
        "admissionregistration.k8s.io/validatingwebhookconfigurations",
        "admissionregistration.k8s.io/mutatingwebhookconfigurations",
        "apiregistration.k8s.io/apiservices",
    ];
    CLUSTER.contains(&target)
}

/// A count as the findings print it: whole numbers as they are, else two
/// significant digits at least.
fn n2(v: f64) -> String {
    if v.fract() == 0.0 || v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// The rules, in the order "What to fix" lists their findings.
pub const RULES: &[Rule] = &[
    Rule {
        id: "status-dropped",
        name: "status written through the main resource",
        means: "The controller writes status with an update of the object itself. Its CRD has a status subresource, so the apiserver drops the status, and nothing ever becomes ready.",
        evidence: "footprint: updates of the workload's objects, none of their status subresource; our watch: objects Ready",
        threshold: "≥ 1 object write per object, no status write, and no object Ready",
        fix: Fixes {
            controller_runtime: "write status with r.Status().Update(ctx, obj) or r.Status().Patch(ctx, obj, patch), not r.Update",
            client_go: "write status with the typed client's UpdateStatus (or a patch of the \"status\" subresource)",
            kube_rs: "write status with Api::patch_status (or replace_status), not Api::replace or patch",
            kopf: "write status through patch.status (kopf patches the status subresource when the CRD declares it)",
        },
        source: "Kubernetes API conventions: spec and status; a CRD's /status subresource (kubernetes.io, custom resources)",
        suppressed_by: &[],
        detect: |e| {
            let writes = e.per_object(e.object_writes);
            (e.footprint && writes >= 1.0 && e.status_writes == 0.0 && e.ready == 0.0).then(|| {
                (
                    format!(
                        "{} updates of each {} itself per object, none of its status; 0 of {} Ready",
                        n2(writes),
                        e.kind,
                        n2(e.objects)
                    ),
                    format!("every write is wasted: {} writes per object and no object ever Ready", n2(writes)),
                )
            })
        },
    },
    Rule {
        id: "self-triggered-loop",
        name: "a self-triggered loop",
        means: "Each reconcile writes the object itself (an annotation, a label, the spec), the write is a new event, and the controller, reconciling every event, reconciles again: it spins for as long as it runs.",
        evidence: "footprint: writes of the workload's own objects (not their status) per object; controller: reconciles per object",
        threshold: "≥ 2 writes of its own objects per object, with objects Ready",
        fix: Fixes {
            controller_runtime: "filter events with builder.WithPredicates(predicate.GenerationChangedPredicate{}) and write the object only when something changed",
            client_go: "skip update events whose metadata.generation did not change, and write only what changed",
            kube_rs: "filter the watch with predicates::generation (watcher(..).predicate_filter(predicates::generation)) and write only what changed",
            kopf: "react to spec changes (@kopf.on.update(field='spec')), and do not patch metadata in every handler",
        },
        source: "kube.rs controllers/optimization (\"the controller will spin forever\"); Skiperator's audit (kartverket/skiperator doc/improvements.md, a missing GenerationChangedPredicate)",
        suppressed_by: &["status-dropped"],
        detect: |e| {
            let writes = e.per_object(e.object_writes);
            (e.footprint && writes >= 2.0 && e.ready > 0.0).then(|| {
                let rec = e
                    .reconciles_per_object()
                    .map_or(String::new(), |r| format!(" and {} reconciles per object", n2(r)));
                (
                    format!(
                        "{} writes of each {} itself (not its status) per object{rec}, with no spec change",
                        n2(writes),
                        e.kind
                    ),
                    format!(
                        "{} requests per object where one status write would do, for as long as it runs",
                        n2(e.per_object(e.requests))
                    ),
                )
            })
        },
    },
    Rule {
        id: "status-differs",
        name: "status that differs on every write",
        means: "Each reconcile writes a status that differs from the last (a timestamp, a counter), so each write is a new event that triggers the next reconcile.",
        evidence: "footprint: status writes per object and per reconcile, with few writes of the object itself; controller: reconciles",
        threshold: "≥ 1.8 accepted status writes per object, ≥ 0.8 per reconcile, and < 1 write of the object itself per object, with objects Ready (a status that differs on every write re-triggers at least once, and even the same-second rewrite that ends the loop is a request; a controller that skips unchanged status writes 1 per object)",
        fix: Fixes {
            controller_runtime: "write status only when it changed (compare before r.Status().Update), keep times out of status except a condition's lastTransitionTime, and add predicate.GenerationChangedPredicate{}",
            client_go: "compare the status before UpdateStatus, keep times out of it, and skip events whose generation did not change",
            kube_rs: "compare before Api::patch_status, keep times out of status, and filter with predicates::generation",
            kopf: "patch status only on a change; kopf's own status.kopf progress is not yours to rewrite",
        },
        source: "kube.rs controllers/optimization (non-deterministic status); nolar/kopf PR #1259 (PATCHes per cycle)",
        suppressed_by: &[
            "status-dropped",
            "self-triggered-loop",
            "requeue-loop",
            "replicas-without-election",
        ],
        detect: |e| {
            let status = e.per_object(e.status_writes);
            let every_reconcile = e.per_reconcile(e.status_writes).is_none_or(|w| w >= 0.8);
            (e.footprint
                && status >= 1.8
                && every_reconcile
                && e.per_object(e.object_writes) < 1.0
                && e.ready > 0.0)
                .then(|| {
                    let rec = e.reconciles_per_object().map_or(String::new(), |r| {
                        format!(", {} reconciles per object", n2(r))
                    });
                    (
                        format!("{} status writes per object{rec}", n2(status)),
                        format!("{} status writes per object where one would do", n2(status)),
                    )
                })
        },
    },
    Rule {
        id: "uncached-reads",
        name: "uncached reads",
        means: "The reconcile reads objects with a GET from the apiserver instead of the informer's cache: each is a round trip and, by default, a quorum read from etcd.",
        evidence: "footprint: GETs per reconcile (per object when reconciles are not counted)",
        threshold: "≥ 0.5 GETs per reconcile (≥ 1 per object)",
        fix: Fixes {
            controller_runtime: "read through the manager's cached client (r.Get), not mgr.GetAPIReader(); for metadata-only watches, cache the full object or keep to its metadata",
            client_go: "read from the informer's lister, not the clientset",
            kube_rs: "use the object the controller hands the reconcile, or a reflector Store, not Api::get",
            kopf: "use the body the handler receives, not a get through the API",
        },
        source: "controller-runtime FAQ (a direct client \"is generally considered to be a last resort\"); Gardener's \"Kubernetes Clients in Gardener\"; karpenter #2478; kubewarden adm-controller #645",
        suppressed_by: &[],
        detect: |e| {
            if !e.footprint || e.gets == 0.0 {
                return None;
            }
            let per_object = e.per_object(e.gets);
            let fires = match e.per_reconcile(e.gets) {
                Some(r) => r >= 0.5,
                None => per_object >= 1.0,
            };
            fires.then(|| {
                let per = e
                    .per_reconcile(e.gets)
                    .map_or(String::new(), |r| format!("{} GETs per reconcile, ", n2(r)));
                (
                    format!("{per}{} per object", n2(per_object)),
                    format!(
                        "{} apiserver round trips per object that the cache would answer",
                        n2(per_object)
                    ),
                )
            })
        },
    },
    Rule {
        id: "list-per-reconcile",
        name: "a LIST per reconcile",
        means: "The reconcile lists objects from the apiserver: each LIST returns every object of its kind in scope, so a reconcile costs O(N) and N reconciles O(N²).",
        evidence: "footprint: LISTs beyond the one each watch starts with, per reconcile",
        threshold: "≥ 0.5 LISTs per reconcile (≥ 1 per object)",
        fix: Fixes {
            controller_runtime: "list from the cache (r.List through the manager's client) with a field index or label selector, not mgr.GetAPIReader().List",
            client_go: "list from the informer's lister or an indexer",
            kube_rs: "query a reflector Store (or an index built from it) instead of Api::list",
            kopf: "keep an in-memory index with @kopf.index instead of listing in the handler",
        },
        source: "Skiperator's audit (44 of 48 uncached round trips per reconcile were LISTs); the O(N²) cost: this project's lab, list-in-reconcile",
        suppressed_by: &[],
        detect: |e| {
            if !e.footprint || e.extra_lists == 0.0 {
                return None;
            }
            let per_object = e.per_object(e.extra_lists);
            let fires = match e.per_reconcile(e.extra_lists) {
                Some(r) => r >= 0.5,
                None => per_object >= 1.0,
            };
            fires.then(|| {
                let per = e.per_reconcile(e.extra_lists).map_or(String::new(), |r| {
                    format!("{} LISTs per reconcile, ", n2(r))
                });
                (
                    format!("{per}{} per object beyond the watches' own", n2(per_object)),
                    "each returns every object in scope: O(N) per reconcile, O(N²) in all"
                        .to_string(),
                )
            })
        },
    },
    Rule {
        id: "watch-per-reconcile",
        name: "a watch opened per reconcile",
        means: "The reconcile starts a watch (a new informer or a watch call) instead of sharing the controller's: watches grow with reconciles.",
        evidence: "footprint: watches opened, against reconciles",
        threshold: "≥ 5 watches and ≥ 0.5 per reconcile",
        fix: Fixes {
            controller_runtime: "watch through the manager's shared cache (Owns/Watches at setup), never a new informer or client.Watch in Reconcile",
            client_go: "use a SharedInformerFactory started once",
            kube_rs: "set up watches once (Controller::owns/watches, a shared reflector), never Api::watch in the reconcile",
            kopf: "declare watches as handlers; do not call the API's watch in a handler",
        },
        source: "OpenShift origin's test \"operators should not create watch channels very often\" (origin PR #30750)",
        suppressed_by: &[],
        detect: |e| {
            let per = e.per_reconcile(e.watches)?;
            (e.footprint && e.watches >= 5.0 && per >= 0.5).then(|| {
                (
                    format!(
                        "{} watches opened, {} per reconcile",
                        n2(e.watches),
                        n2(per)
                    ),
                    "a watch held by the apiserver for each, and an initial LIST each".to_string(),
                )
            })
        },
    },
    Rule {
        id: "requeue-loop",
        name: "a requeue loop or a short resync",
        means: "Every reconcile asks to be requeued (RequeueAfter, a short resync), so objects that are Ready are reconciled again and again on a timer.",
        evidence: "controller: requeued reconciles per object",
        threshold: "≥ 3 requeues per object",
        fix: Fixes {
            controller_runtime: "return ctrl.Result{} once the object is as it should be; keep RequeueAfter for real external polling, and long",
            client_go: "do not AddAfter a key whose object is done; keep the resync period long",
            kube_rs: "return Action::await_change() once done; keep Action::requeue for real external polling, and long",
            kopf: "avoid short @kopf.timer intervals and raise kopf.TemporaryError only on real errors",
        },
        source: "kube.rs controllers/optimization (\"about 1 to 5+ reconciles every 1/(your requeue time)\"); Skiperator (10 s requeue: about 4800 requests/s at 1000 objects); crossplane #2477",
        suppressed_by: &["status-dropped", "self-triggered-loop"],
        detect: |e| {
            let q = e.per_object(e.requeues?);
            (q >= 3.0).then(|| {
                (
                    format!("{} requeued reconciles per object", n2(q)),
                    "a reconcile of every object on each requeue, for as long as it runs"
                        .to_string(),
                )
            })
        },
    },
    Rule {
        id: "replicas-without-election",
        name: "replicas without leader election",
        means: "Several replicas run without leader election: each reconciles every object, so work is done twice and the replicas' writes race.",
        evidence: "settings: replicas and leader election; controller: reconciles per object; footprint: conflicts",
        threshold: "≥ 2 replicas, no leader election, and ≥ 1.5 reconciles or any conflict per object",
        fix: Fixes {
            controller_runtime: "set LeaderElection: true (and a LeaderElectionID) in the manager's options",
            client_go: "run the controller under leaderelection.RunOrDie",
            kube_rs: "take a Lease before running the controller (e.g. kube-leader-election), or run one replica",
            kopf: "run with peering (no --standalone) so that one replica handles each object, or run one replica",
        },
        source: "controller-runtime's manager options (LeaderElection); this project's lab, no-leader-election",
        suppressed_by: &[],
        detect: |e| {
            if e.replicas < 2 || e.leader_election != Some(false) {
                return None;
            }
            let rec = e.reconciles_per_object();
            let conflicts = e.per_object(e.conflicts);
            (rec.is_some_and(|r| r >= 1.5) || conflicts > 0.0).then(|| {
                (
                    format!(
                        "{} replicas without leader election: {} reconciles and {} conflicts per object",
                        e.replicas,
                        rec.map_or("?".into(), n2),
                        n2(conflicts)
                    ),
                    format!("each object's work done {} times", e.replicas),
                )
            })
        },
    },
    Rule {
        id: "conflicts",
        name: "update conflicts",
        means: "Updates carry the resourceVersion they read, and the object changed in between: the apiserver refuses them with 409, and the controller retries.",
        evidence: "footprint: updates and patches answered 409, per object",
        threshold: "≥ 0.1 conflicts per object",
        fix: Fixes {
            controller_runtime: "write status with a merge patch (client.MergeFrom without optimistic lock) or server-side apply, not Update",
            client_go: "patch (merge or apply) instead of Update with a stale resourceVersion",
            kube_rs: "Api::patch_status with Patch::Merge or Patch::Apply, not replace_status",
            kopf: "write through patch (kopf merges it); avoid replacing whole objects",
        },
        source: "Gardener's \"Kubernetes Clients in Gardener\" (patches \"avoid conflicts\"); OpenShift origin's audit-log analyser (fails above 10 conflicts per user)",
        suppressed_by: &[
            "status-dropped",
            "self-triggered-loop",
            "status-differs",
            "replicas-without-election",
        ],
        detect: |e| {
            let c = e.per_object(e.conflicts);
            (e.footprint && c >= 0.1).then(|| {
                (
                    format!("{} updates answered 409 per object", n2(c)),
                    "a refused write and a retry for each".to_string(),
                )
            })
        },
    },
    Rule {
        id: "blind-creates",
        name: "blind creates answered 409 AlreadyExists",
        means: "The reconcile creates a child object without looking first, and the apiserver refuses it because it exists.",
        evidence: "footprint: creates answered 409, per object",
        threshold: "≥ 0.1 per object",
        fix: Fixes {
            controller_runtime: "read the child from the cache first (or controllerutil.CreateOrUpdate), or server-side apply it",
            client_go: "look the child up in its lister before creating",
            kube_rs: "server-side apply the child (Api::patch with Patch::Apply), or read the Store first",
            kopf: "look the child up first, or adopt and patch it",
        },
        source: "kubewarden adm-controller #645 (2.5 M creates that \"always fail with 409\")",
        suppressed_by: &[],
        detect: |e| {
            let c = e.per_object(e.already_existed);
            (e.footprint && c >= 0.1).then(|| {
                (
                    format!("{} creates answered 409 AlreadyExists per object", n2(c)),
                    "a refused write each".to_string(),
                )
            })
        },
    },
    Rule {
        id: "event-spam",
        name: "event spam",
        means: "The controller records Events on every reconcile, not on transitions: each is a write to the apiserver and to etcd.",
        evidence: "footprint: Events created per object",
        threshold: "≥ 3 per object",
        fix: Fixes {
            controller_runtime: "record an Event only when something changed (a transition), not on every reconcile",
            client_go: "record on transitions only; the EventRecorder's aggregation does not stop the writes",
            kube_rs: "publish with the Recorder on transitions only",
            kopf: "call kopf.info/kopf.event on transitions; set posting level to WARNING",
        },
        source: "karpenter #236 (\"hammering the control plane with events\"); openshift/library-go PR #1780",
        suppressed_by: &[],
        detect: |e| {
            let ev = e.per_object(e.events);
            (e.footprint && ev >= 3.0).then(|| {
                (
                    format!("{} Events created per object", n2(ev)),
                    format!("{} writes per object to the apiserver and etcd", n2(ev)),
                )
            })
        },
    },
    Rule {
        id: "cluster-wide-cache",
        name: "a cluster-wide cache",
        means: "The controller lists and watches a namespaced kind in every namespace while it reconciles one: it caches, and is sent, every other namespace's objects too.",
        evidence: "footprint: lists and watches of namespaced kinds that named no namespace",
        threshold: "any, in a run whose objects live in one namespace",
        fix: Fixes {
            controller_runtime: "restrict the cache: cache.Options{DefaultNamespaces: …} or ByObject with a label or field selector",
            client_go: "build informers with informers.WithNamespace or a tweak-list-options selector",
            kube_rs: "watch with Api::namespaced, or a watcher::Config with a label or field selector",
            kopf: "run with --namespace (ctrlbench's command does) and avoid cluster-wide handlers",
        },
        source: "operator-sdk \"Designing Lean Operators\"; cert-manager #3748 (90k Secrets: controller 5207Mi); external-secrets PR #729",
        suppressed_by: &[],
        detect: |e| {
            (e.footprint && e.cluster_wide > 0.0).then(|| {
                (
                    format!(
                        "{} lists and watches in every namespace, of {}",
                        n2(e.cluster_wide),
                        e.cluster_targets.join(", ")
                    ),
                    "memory and watch traffic grow with every namespace's objects, not only the ones it reconciles".to_string(),
                )
            })
        },
    },
    Rule {
        id: "client-throttling",
        name: "client-side throttling",
        means: "The controller's client rate limiter, not the apiserver, sets its pace: reconciles wait for tokens.",
        evidence: "controller: the rate limiter's wait against the reconcile time (client-go's rate_limiter metrics, ours)",
        threshold: "≥ 50 % of each reconcile waiting in the limiter (median over the runs)",
        fix: Fixes {
            controller_runtime: "cut the requests per reconcile first; then raise the rest.Config's QPS and Burst (controller-runtime ≥ v0.21 has no client limiter by default, leaving it to the apiserver's priority and fairness)",
            client_go: "cut the requests per reconcile; then raise rest.Config QPS and Burst",
            kube_rs: "cut the requests per reconcile, then raise or drop the rate limiter put in front of the client (kube-rs has none of its own)",
            kopf: "cut the requests per handler",
        },
        source: "controller-runtime PR #3119 (\"Disable client-side ratelimiter by default\"); controller-runtime #3202",
        suppressed_by: &["self-triggered-loop", "status-differs", "status-dropped"],
        detect: |e| {
            let s = e.throttle_share?;
            (s >= 0.5).then(|| {
                (
                    format!(
                        "{:.0} % of each reconcile waiting in the client's rate limiter",
                        s * 100.0
                    ),
                    "time to Ready set by the limiter's rate".to_string(),
                )
            })
        },
    },
];

/// One rule that fired for one group.
#[derive(Clone)]
pub struct Finding {
    pub rule: &'static Rule,
    pub scale: u64,
    pub variant: String,
    /// This run's evidence, in words with its numbers.
    pub evidence: String,
    pub cost: String,
    /// The framework whose fix applies, when known.
    pub framework: Option<Framework>,
}

/// What each group shows: every rule that fires, less those a firing rule
/// suppresses.
pub fn diagnose(groups: &[Group]) -> Vec<Finding> {
    let mut out = Vec::new();
    for g in groups {
        let e = Evidence::of(g);
        let fired: Vec<(&'static Rule, (String, String))> = RULES
            .iter()
            .filter_map(|r| (r.detect)(&e).map(|x| (r, x)))
            .collect();
        let framework = g
            .runs
            .iter()
            .find_map(|r| r.implementation.as_deref())
            .and_then(Framework::of);
        for (rule, (evidence, cost)) in &fired {
            if rule
                .suppressed_by
                .iter()
                .any(|s| fired.iter().any(|(f, _)| f.id == *s))
            {
                continue;
            }
            out.push(Finding {
                rule,
                scale: g.scale,
                variant: g.variant.clone(),
                evidence: evidence.clone(),
                cost: cost.clone(),
                framework,
            });
        }
    }
    out
}

/// Whether a group's runs carry what the footprint rules read.
pub fn checked(g: &Group) -> bool {
    Evidence::of(g).footprint
}

/// docs/diagnosis.md, from the table.
pub fn markdown() -> String {
    let mut s = String::from(
        "# Diagnosis rules\n\n\
         <!-- Generated from crates/ctrlbench-report/src/diagnosis.rs (RULES) by `ctrlbench diagnose --rules`; a test keeps it in step. -->\n\n\
         `ctrlbench run` (and `ctrlbench diagnose RESULTS` on older results) names each anti-pattern a controller's runs \
         show, in the report's \"What to fix\", in verdicts.json's `diagnosis` and on the terminal. The evidence is counts: \
         the run's API footprint (footprint.csv, from the apiserver's audit log, which names each request's caller) and \
         the controller's own counters, per object and per reconcile, so one repeat decides a rule. A rule whose \
         signature another finding explains (the conflicts of a loop) is left out where that one fires.\n\n\
         To add a rule: one entry in `RULES` in crates/ctrlbench-report/src/diagnosis.rs (its name, meaning, evidence, \
         threshold, fixes, source and detection together), then `ctrlbench diagnose --rules > docs/diagnosis.md`.\n\n",
    );
    for r in RULES {
        s.push_str(&format!("## {} (`{}`)\n\n{}\n\n", r.name, r.id, r.means));
        s.push_str(&format!("- **Evidence:** {}.\n", r.evidence));
        s.push_str(&format!("- **Fires at:** {}.\n", r.threshold));
        if !r.suppressed_by.is_empty() {
            s.push_str(&format!(
                "- **Left out when these fire:** {}.\n",
                r.suppressed_by
                    .iter()
                    .map(|x| format!("`{x}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        s.push_str("- **Fix:**\n");
        for f in Framework::ALL {
            s.push_str(&format!("  - {}: {}.\n", f.name(), r.fix.of(f)));
        }
        s.push_str(&format!("- **Source:** {}.\n\n", r.source));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::footprint::Footprint;
    use ctrlbench_record::footprint::FootprintRow;

    /// A group of one run of N = 100 with these footprint rows (create
    /// phase), reconciles per object and Ready count.
    fn group(rows: &[(&str, &str, u16, bool, bool, u64)], rec: f64, ready: u64) -> Group {
        let mut r = RunFigures::empty(100, "v", 1);
        r.footprint = Some(Footprint::of(
            &rows
                .iter()
                .map(|(verb, sub, code, workload, namespaced, n)| FootprintRow {
                    phase: "create".into(),
                    verb: verb.to_string(),
                    group: "x".into(),
                    resource: if *workload { "widgets" } else { "secrets" }.into(),
                    subresource: sub.to_string(),
                    code: *code,
                    namespaced: *namespaced,
                    workload: *workload,
                    count: *n,
                    ..Default::default()
                })
                .collect::<Vec<_>>(),
        ));
        r.set(Metric::ReconcilesPerObject, Some(rec));
        r.ready = ready;
        Group {
            scale: 100,
            variant: "v".into(),
            runs: vec![r],
        }
    }

    fn ids(g: Group) -> Vec<&'static str> {
        diagnose(&[g]).iter().map(|f| f.rule.id).collect()
    }

    fn ids_of(g: &Group) -> Vec<&'static str> {
        diagnose(std::slice::from_ref(g))
            .iter()
            .map(|f| f.rule.id)
            .collect()
    }

    const WATCH: (&str, &str, u16, bool, bool, u64) = ("watch", "", 200, true, true, 1);
    const LIST: (&str, &str, u16, bool, bool, u64) = ("list", "", 200, true, true, 1);

    #[test]
    fn a_clean_controller_gets_nothing() {
        let g = group(
            &[LIST, WATCH, ("update", "status", 200, true, true, 100)],
            1.0,
            100,
        );
        assert!(ids(g).is_empty());
    }

    #[test]
    fn each_signature_gets_its_rule_and_its_echoes_are_left_out() {
        // Hand-counted: 50 GETs over 100 reconciles is 0.5 per reconcile.
        let uncached = group(
            &[
                LIST,
                WATCH,
                ("get", "", 200, true, true, 50),
                ("update", "status", 200, true, true, 100),
            ],
            1.0,
            100,
        );
        assert_eq!(ids(uncached), ["uncached-reads"]);
        // 101 LISTs, one of them the watch's: 100 over 100 reconciles.
        let lists = group(
            &[
                ("list", "", 200, true, true, 101),
                WATCH,
                ("update", "status", 200, true, true, 100),
            ],
            1.0,
            100,
        );
        assert_eq!(ids(lists), ["list-per-reconcile"]);
        // A loop: 4000 object updates, 400 conflicts; the conflicts are its echo.
        let looping = group(
            &[
                LIST,
                WATCH,
                ("update", "", 200, true, true, 4000),
                ("update", "", 409, true, true, 400),
                ("update", "status", 200, true, true, 4000),
            ],
            40.0,
            60,
        );
        assert_eq!(ids(looping), ["self-triggered-loop"]);
        // The same writes with nothing Ready and no status write: dropped status.
        let dropped = group(
            &[LIST, WATCH, ("update", "", 200, true, true, 4000)],
            40.0,
            0,
        );
        assert_eq!(ids(dropped), ["status-dropped"]);
        let stamping = group(
            &[LIST, WATCH, ("update", "status", 200, true, true, 500)],
            5.0,
            100,
        );
        assert_eq!(ids(stamping), ["status-differs"]);
        // Cluster-wide: a namespaced kind listed everywhere; a CRD list is not.
        let mut wide = group(
            &[
                ("list", "", 200, false, false, 1),
                ("watch", "", 200, false, false, 1),
            ],
            1.0,
            100,
        );
        assert_eq!(ids_of(&wide), ["cluster-wide-cache"]);
        wide.runs[0]
            .footprint
            .as_mut()
            .unwrap()
            .rows
            .iter_mut()
            .for_each(|r| {
                r.group = "apiextensions.k8s.io".into();
                r.resource = "customresourcedefinitions".into();
            });
        assert!(ids(wide).is_empty());
        let spam = group(
            &[LIST, WATCH, ("create", "", 200, false, true, 300)],
            1.0,
            100,
        );
        // Secrets stand in for any child: 300 creates are no Events.
        assert!(ids(spam).is_empty());
        let blind = group(
            &[LIST, WATCH, ("create", "", 409, false, true, 20)],
            1.0,
            100,
        );
        assert_eq!(ids(blind), ["blind-creates"]);
    }

    #[test]
    fn requeues_and_replicas_come_from_the_controller() {
        let mut g = group(
            &[LIST, WATCH, ("update", "status", 200, true, true, 100)],
            6.0,
            100,
        );
        g.runs[0].set(Metric::Requeues, Some(500.0));
        assert_eq!(ids(g), ["requeue-loop"]);
        let mut g = group(
            &[
                LIST,
                WATCH,
                ("update", "status", 200, true, true, 150),
                ("update", "status", 409, true, true, 30),
            ],
            2.0,
            100,
        );
        g.runs[0].replicas = 2;
        g.runs[0].settings = Some(Default::default());
        assert_eq!(ids(g), ["replicas-without-election"]);
    }

    #[test]
    fn the_docs_are_the_table() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/diagnosis.md");
        let docs = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            docs == markdown(),
            "docs/diagnosis.md is not the table: run `ctrlbench diagnose --rules > docs/diagnosis.md`"
        );
        for r in RULES {
            assert!(!r.id.is_empty() && r.source.len() > 10, "{}", r.id);
            for s in r.suppressed_by {
                assert!(RULES.iter().any(|x| x.id == *s), "{} names {s}", r.id);
            }
        }
    }
}
