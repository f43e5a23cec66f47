//! The diagnosis rules about what a controller writes: its status (dropped,
//! rewritten, unchanged, without the generation it describes), the loops
//! its own writes start, and the refused or duplicated writes (conflicts,
//! blind creates, Events, replicas without election). One constant per
//! rule; `rules.rs` orders them into the table.

use super::{Basis, Fixes, Likely, Rule, find, n2, unless};

pub const STATUS_DROPPED: Rule = Rule {
    id: "status-dropped",
    name: "status written through the main resource",
    means: "The controller writes status with an update of the object itself. Its CRD has a status subresource, so the apiserver drops the status, and nothing ever becomes ready.",
    evidence: "footprint: updates of the workload's objects, none of their status subresource; our watch: objects Ready",
    threshold: "≥ 1 object write per object, no status write, and no object Ready",
    basis: Basis::Counts,
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
                format!(
                    "every write is wasted: {} writes per object and no object ever Ready",
                    n2(writes)
                ),
            )
        })
    },
};

pub const SELF_TRIGGERED_LOOP: Rule = Rule {
    id: "self-triggered-loop",
    name: "a self-triggered loop",
    means: "Each reconcile writes the object itself (an annotation, a label, the spec), the write is a new event, and the controller, reconciling every event, reconciles again: it spins for as long as it runs.",
    evidence: "footprint: writes of the workload's own objects (not their status) per object; controller: reconciles per object",
    threshold: "≥ 2 writes of its own objects per object, with objects Ready",
    basis: Basis::Counts,
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
};

pub const STATUS_EVERY_RECONCILE: Rule = Rule {
    id: "status-every-reconcile",
    name: "status written on every reconcile",
    means: "Each reconcile writes status whether or not it changed, and the controller reconciles its own status events: every object costs at least one more reconcile and one more write, and a status that differs each time (a timestamp, a counter) keeps re-triggering: a loop.",
    evidence: "footprint: status writes per object and per reconcile, with few writes of the object itself; controller: reconciles (the footprint alone cannot tell a write that changed nothing from one that did)",
    threshold: "≥ 1.8 accepted status writes per object, ≥ 0.8 per reconcile, and < 1 write of the object itself per object, with objects Ready (its own status event brings one more reconcile and write at least; a controller that skips unchanged status writes 1 per object)",
    basis: Basis::Counts,
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
                    format!(
                        "{} status writes per object{rec}, with no spec change",
                        n2(status)
                    ),
                    format!(
                        "{} status writes per object where one would do, and as many reconciles",
                        n2(status)
                    ),
                )
            })
    },
};

pub const NOOP_WRITES: Rule = Rule {
    id: "noop-writes",
    name: "writes that changed nothing",
    means: "The controller writes its objects (or their status) with what they already hold: the apiserver answers, etcd is read, admission and conversion run, and nothing changes.",
    evidence: "footprint: accepted writes of the workload's objects, status included; our own watch: the changes it saw (each a new resourceVersion); the difference, per object",
    threshold: "≥ 0.5 writes per object that changed nothing",
    basis: Basis::Counts,
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
};

pub const NO_OBSERVED_GENERATION: Rule = Rule {
    id: "no-observed-generation",
    name: "no observedGeneration",
    means: "The status does not say which generation of the spec it describes: a client (kubectl wait, kstatus, Argo CD, Flux) cannot tell a Ready left over from the last spec from a Ready for this one.",
    evidence: "our own watch: each object when first Ready, its status.observedGeneration, or its readiness condition's observedGeneration, against metadata.generation (read where the status has either)",
    threshold: "≥ 50 % of the objects first Ready without one equal to their generation",
    basis: Basis::Counts,
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
};

pub const REPLICAS_WITHOUT_ELECTION: Rule = Rule {
    id: "replicas-without-election",
    name: "replicas without leader election",
    means: "Several replicas run without leader election: each reconciles every object, so work is done twice and the replicas' writes race.",
    evidence: "settings: replicas and leader election; controller: reconciles per object; footprint: conflicts",
    threshold: "≥ 2 replicas, no leader election, and ≥ 1.5 reconciles or any conflict per object",
    basis: Basis::Counts,
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
};

pub const CONFLICTS: Rule = Rule {
    id: "conflicts",
    name: "update conflicts",
    means: "Updates carry the resourceVersion they read, and the object changed in between: the apiserver refuses them with 409, and the controller retries.",
    evidence: "footprint: updates and patches answered 409, per object",
    threshold: "≥ 0.1 conflicts per object",
    basis: Basis::Counts,
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
};

pub const BLIND_CREATES: Rule = Rule {
    id: "blind-creates",
    name: "blind creates answered 409 AlreadyExists",
    means: "The reconcile creates a child object without looking first, and the apiserver refuses it because it exists.",
    evidence: "footprint: creates answered 409, per object",
    threshold: "≥ 0.1 per object",
    basis: Basis::Counts,
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
};

pub const EVENT_SPAM: Rule = Rule {
    id: "event-spam",
    name: "event spam",
    means: "The controller records Events on every reconcile, not on transitions: each is a write to the apiserver and to etcd.",
    evidence: "footprint: Events created per object",
    threshold: "≥ 3 per object",
    basis: Basis::Counts,
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
};
