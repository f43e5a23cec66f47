//! The diagnosis's rules, one entry each: name, meaning, evidence,
//! threshold, fixes, source, what suppresses it, and its detection over a
//! group's `Evidence`. Everything else (the report's words, verdicts.json,
//! docs/diagnosis.md) is generated from this table.

use super::{Evidence, Fixes, Likely, Rule, find, n2, unless};

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
        likely: Likely {
            controller_runtime: &[find(r"\w\.Update\(ctx")],
            client_go: &[find(r"[^(]\)\.Update\(ctx")],
            kube_rs: &[find(r"\.(replace|patch)\(")],
            kopf: &[find(r"(patch|replace)_namespaced_custom_object\(")],
        },
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
        likely: Likely {
            controller_runtime: &[
                unless(
                    r"\bFor\(",
                    r"GenerationChangedPredicate|predicate\.Generation",
                ),
                find(r"\w\.(Update|Patch)\(ctx"),
            ],
            client_go: &[unless(r"UpdateFunc:", r"Generation")],
            kube_rs: &[
                unless(
                    r"Controller::new\(",
                    r"predicates::generation|predicate_filter",
                ),
                find(r"\.(replace|patch)\("),
            ],
            kopf: &[
                find(r"@kopf\.on\.event\(|@kopf\.on\.update\([^=]*\)"),
                find(r"patch\.metadata"),
            ],
        },
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
        id: "status-every-reconcile",
        name: "status written on every reconcile",
        means: "Each reconcile writes status whether or not it changed, and the controller reconciles its own status events: every object costs at least one more reconcile and one more write, and a status that differs each time (a timestamp, a counter) keeps re-triggering: a loop.",
        evidence: "footprint: status writes per object and per reconcile, with few writes of the object itself; controller: reconciles (the footprint alone cannot tell a write that changed nothing from one that did)",
        threshold: "≥ 1.8 accepted status writes per object, ≥ 0.8 per reconcile, and < 1 write of the object itself per object, with objects Ready (its own status event brings one more reconcile and write at least; a controller that skips unchanged status writes 1 per object)",
        fix: Fixes {
            controller_runtime: "write status only when it changed (compare before r.Status().Update), keep times out of status except a condition's lastTransitionTime, and add predicate.GenerationChangedPredicate{}",
            client_go: "compare the status before UpdateStatus, keep times out of it, and skip events whose generation did not change",
            kube_rs: "compare before Api::patch_status, keep times out of status, and filter with predicates::generation",
            kopf: "patch status only on a change; kopf's own status.kopf progress is not yours to rewrite",
        },
        source: "kube.rs controllers/optimization (non-deterministic status); nolar/kopf PR #1259 (PATCHes per cycle)",
        likely: Likely {
            controller_runtime: &[find(r"Status\(\)\.(Update|Patch)\(")],
            client_go: &[find(r"UpdateStatus\(")],
            kube_rs: &[find(r"\.(patch|replace)_status\(")],
            kopf: &[find(r"patch\.status")],
        },
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
                        format!("{} status writes per object{rec}, with no spec change", n2(status)),
                        format!(
                            "{} status writes per object where one would do, and as many reconciles",
                            n2(status)
                        ),
                    )
                })
        },
    },
    Rule {
        id: "noop-writes",
        name: "writes that changed nothing",
        means: "The controller writes its objects (or their status) with what they already hold: the apiserver answers, etcd is read, admission and conversion run, and nothing changes.",
        evidence: "footprint: accepted writes of the workload's objects, status included; our own watch: the changes it saw (each a new resourceVersion); the difference, per object",
        threshold: "≥ 0.5 writes per object that changed nothing",
        fix: Fixes {
            controller_runtime: "compare before writing (equality.Semantic.DeepEqual of the old and new status) and skip the Update when equal; meta.SetStatusCondition reports whether it changed anything",
            client_go: "compare the object before Update or UpdateStatus and skip equal writes",
            kube_rs: "compare the status before Api::patch_status and skip equal patches",
            kopf: "return or patch only what changed; an unchanged handler result still patches",
        },
        source: "measured here: operator-sdk's Memcached tutorial operator (tests/fixtures/memcached-operator) sends an unchanged status Update on its last reconcile of each object; the apiserver still reads etcd and runs admission for it",
        likely: Likely {
            controller_runtime: &[find(r"Status\(\)\.Update\(ctx"), find(r"\w\.Update\(ctx")],
            client_go: &[find(r"(UpdateStatus|Update)\(ctx")],
            kube_rs: &[find(r"\.(replace|replace_status)\(")],
            kopf: &[find(
                r"(patch|replace)_namespaced_custom_object(_status)?\(",
            )],
        },
        suppressed_by: &[
            "status-every-reconcile",
            "self-triggered-loop",
            "status-dropped",
            "requeue-loop",
            "replicas-without-election",
        ],
        detect: |e| {
            let n = e.per_object(e.noop_writes?);
            (n >= 0.5).then(|| {
                (
                    format!("{} writes per object that changed nothing (accepted by the apiserver, no new resourceVersion seen by our watch)", n2(n)),
                    format!("{} apiserver round trips and etcd reads per object for no change", n2(n)),
                )
            })
        },
    },
    Rule {
        id: "no-observed-generation",
        name: "no observedGeneration",
        means: "The status does not say which generation of the spec it describes: a client (kubectl wait, kstatus, Argo CD, Flux) cannot tell a Ready left over from the last spec from a Ready for this one.",
        evidence: "our own watch: each object when first Ready, its status.observedGeneration, or its readiness condition's observedGeneration, against metadata.generation (read where the status has either)",
        threshold: "≥ 50 % of the objects first Ready without one equal to their generation",
        fix: Fixes {
            controller_runtime: "set ObservedGeneration: obj.Generation on each metav1.Condition you set (meta.SetStatusCondition), and status.observedGeneration in the same status write",
            client_go: "set status.observedGeneration (and each condition's) to metadata.generation in the same UpdateStatus",
            kube_rs: "write observed_generation: obj.metadata.generation into the status (and its conditions) in the same patch_status",
            kopf: "patch status.observedGeneration from body.metadata.generation in the handler's status patch",
        },
        source: "Kubernetes API conventions, \"Typical status properties\" (observedGeneration); sig-api-machinery's controllers.md (\"make sure you correctly set it to metadata.Generation\")",
        likely: Likely {
            controller_runtime: &[find(r"SetStatusCondition\(")],
            client_go: &[find(r"UpdateStatus\(")],
            kube_rs: &[find(r"\.patch_status\(")],
            kopf: &[find(r"patch\.status")],
        },
        suppressed_by: &["status-dropped"],
        detect: |e| {
            let share = e.generation_missing?;
            (share >= 0.5).then(|| {
                (
                    format!(
                        "{:.0} % of the objects first Ready had no observedGeneration for their generation",
                        share * 100.0
                    ),
                    "a client cannot tell whether Ready describes the current spec".to_string(),
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
        likely: Likely {
            controller_runtime: &[
                find(r"GetAPIReader\(\)|APIReader\b"),
                find(r"client\.New\("),
            ],
            client_go: &[find(r"\.Get\(ctx, [^)]*GetOptions")],
            kube_rs: &[find(r"\.get_opt\(|(?i)api\w*\.get\(")],
            kopf: &[find(r"(get|read)_namespaced_\w+\(")],
        },
        // Two replicas without election conflict with each other, and a
        // conflict retry that re-reads through the API reader (our Go
        // controller's default) sends a GET per conflict: an echo of
        // the replicas, not a cause of its own.
        suppressed_by: &["replicas-without-election"],
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
        likely: Likely {
            controller_runtime: &[find(r"\.List\(ctx"), find(r"GetAPIReader\(\)")],
            client_go: &[find(r"\.List\(ctx")],
            kube_rs: &[find(r"\.list(_metadata)?\(&")],
            kopf: &[find(r"list_(namespaced|cluster)_\w+\(")],
        },
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
        likely: Likely {
            controller_runtime: &[find(r"\.Watch\(ctx|cache\.New\(|NewInformer\(")],
            client_go: &[find(r"\.Watch\(ctx|NewInformer\(")],
            kube_rs: &[find(r"\.watch\(&")],
            kopf: &[find(r"watch\.Watch\(\)")],
        },
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
        likely: Likely {
            controller_runtime: &[find(r"RequeueAfter:|Requeue:\s*true")],
            client_go: &[find(r"\.AddAfter\(|[Rr]esyncPeriod")],
            kube_rs: &[find(r"Action::requeue\(")],
            kopf: &[find(r"@kopf\.(timer|daemon)\(|TemporaryError\(")],
        },
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
        likely: Likely {
            controller_runtime: &[find(r"LeaderElection:")],
            client_go: &[unless(r"func main\(\)", r"(?i)leaderelection")],
            kube_rs: &[unless(r"Controller::new\(", r"(?i)lease|leader")],
            kopf: &[find(r"--standalone|standalone\s*=\s*True")],
        },
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
        likely: Likely {
            controller_runtime: &[find(r"\.Update\(ctx")],
            client_go: &[find(r"\.Update(Status)?\(ctx")],
            kube_rs: &[find(r"\.replace(_status)?\(")],
            kopf: &[find(r"replace_namespaced_\w+\(")],
        },
        suppressed_by: &[
            "status-dropped",
            "self-triggered-loop",
            "status-every-reconcile",
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
        likely: Likely {
            controller_runtime: &[find(r"\.Create\(ctx")],
            client_go: &[find(r"\.Create\(ctx")],
            kube_rs: &[find(r"\.create\(&")],
            kopf: &[find(r"create_namespaced_\w+\(")],
        },
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
        likely: Likely {
            controller_runtime: &[find(r"\.(Event|Eventf|AnnotatedEventf)\(")],
            client_go: &[find(r"\.(Event|Eventf|AnnotatedEventf)\(")],
            kube_rs: &[find(r"\.publish\(")],
            kopf: &[find(r"kopf\.(info|warn|exception|event)\(")],
        },
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
        evidence: "footprint: lists and watches of namespaced kinds that named no namespace; with `[workload] decoys` (objects of the workload's kind, Secrets and ConfigMaps in a namespace no controller reconciles), which of those lists returned the decoys, and the controller's peak RSS against its counterpart preset's (per decoy when the variants ran one at a time)",
        threshold: "any, in a run whose objects live in one namespace",
        fix: Fixes {
            controller_runtime: "restrict the cache: cache.Options{DefaultNamespaces: …} or ByObject with a label or field selector",
            client_go: "build informers with informers.WithNamespace or a tweak-list-options selector",
            kube_rs: "watch with Api::namespaced, or a watcher::Config with a label or field selector",
            kopf: "run with --namespace (ctrlbench's command does) and avoid cluster-wide handlers",
        },
        source: "operator-sdk \"Designing Lean Operators\"; cert-manager #3748 (90k Secrets: controller 5207Mi); external-secrets PR #729",
        likely: Likely {
            controller_runtime: &[unless(r"ctrl\.NewManager\(", r"DefaultNamespaces")],
            client_go: &[find(r"NewSharedInformerFactory\(")],
            kube_rs: &[find(r"Api::all\(")],
            kopf: &[find(r"clusterwide\s*=\s*True|--all-namespaces")],
        },
        suppressed_by: &[],
        detect: |e| {
            (e.footprint && e.cluster_wide > 0.0).then(|| {
                (
                    format!(
                        "{} lists and watches in every namespace, of {}{}",
                        n2(e.cluster_wide),
                        e.cluster_targets.join(", "),
                        decoys_seen(e)
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
        likely: Likely {
            controller_runtime: &[find(r"\.(QPS|Burst)\s*=")],
            client_go: &[find(r"\.(QPS|Burst)\s*=")],
            kube_rs: &[find(r"(?i)rate_?limit")],
            kopf: &[],
        },
        suppressed_by: &[
            "self-triggered-loop",
            "status-every-reconcile",
            "status-dropped",
        ],
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

/// What the decoys show, for the cluster-wide-cache finding ("" without
/// decoys): which cluster-wide lists returned them, and the peak RSS
/// against the counterpart's, per decoy where the variants ran one at a
/// time (run together, the cache also held the other variants' objects).
fn decoys_seen(e: &Evidence) -> String {
    if e.decoys == 0 {
        return String::new();
    }
    let mib = |b: f64| format!("{:.1} MiB", b / (1u64 << 20) as f64);
    let mut s = format!(
        "; with {} decoys in a namespace it was not asked to reconcile",
        e.decoys
    );
    if !e.decoy_targets.is_empty() {
        s.push_str(&format!(
            ", its lists of {} returned them",
            e.decoy_targets.join(", ")
        ));
    }
    let Some(rss) = e.peak_rss else { return s };
    s.push_str(&format!(": peak RSS {}", mib(rss)));
    if let Some((counterpart, base)) = &e.counterpart_rss {
        let d = rss - base;
        let side = if d >= 0.0 { "more" } else { "less" };
        s.push_str(&format!(", {} {side} than {counterpart}'s", mib(d.abs())));
        if e.concurrent {
            s.push_str(" (its cache also held the other variants' objects)");
        } else if d > 0.0 {
            s.push_str(&format!(
                " ({:.2} KiB per decoy)",
                d / 1024.0 / e.decoys as f64
            ));
        }
    }
    s
}
