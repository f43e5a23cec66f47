//! The diagnosis rules about what a controller reads, holds and how it
//! paces itself: uncached GETs and LISTs, watches per reconcile, requeue
//! loops, a cluster-wide cache, managedFields in the cache, client-side
//! throttling and too few workers. One
//! constant per rule; `rules.rs` orders them into the table.

use super::{Basis, Evidence, Fixes, Likely, Rule, find, n2, unless};

pub const UNCACHED_READS: Rule = Rule {
    id: "uncached-reads",
    name: "uncached reads",
    means: "The reconcile reads objects with a GET from the apiserver instead of the informer's cache: each is a round trip and, by default, a quorum read from etcd.",
    evidence: "footprint: GETs per reconcile (per object when reconciles are not counted)",
    threshold: "≥ 0.5 GETs per reconcile (≥ 1 per object)",
    basis: Basis::Counts,
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
};

pub const LIST_PER_RECONCILE: Rule = Rule {
    id: "list-per-reconcile",
    name: "a LIST per reconcile",
    means: "The reconcile lists objects from the apiserver: each LIST returns every object of its kind in scope, so a reconcile costs O(N) and N reconciles O(N²).",
    evidence: "footprint: LISTs beyond the one each watch starts with, per reconcile",
    threshold: "≥ 0.5 LISTs per reconcile (≥ 1 per object)",
    basis: Basis::Counts,
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
                "each returns every object in scope: O(N) per reconcile, O(N²) in all".to_string(),
            )
        })
    },
};

pub const WATCH_PER_RECONCILE: Rule = Rule {
    id: "watch-per-reconcile",
    name: "a watch opened per reconcile",
    means: "The reconcile starts a watch (a new informer or a watch call) instead of sharing the controller's: watches grow with reconciles.",
    evidence: "footprint: watches opened anew (not an informer resuming its watch from the last version it saw after the apiserver closed it), against reconciles",
    threshold: "≥ 5 watches and ≥ 0.5 per reconcile",
    basis: Basis::Counts,
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
};

pub const REQUEUE_LOOP: Rule = Rule {
    id: "requeue-loop",
    name: "a requeue loop or a short resync",
    means: "Every reconcile asks to be requeued (RequeueAfter, a short resync), so objects that are Ready are reconciled again and again on a timer.",
    evidence: "controller: requeued reconciles per object",
    threshold: "≥ 3 requeues per object",
    basis: Basis::Counts,
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
                "a reconcile of every object on each requeue, for as long as it runs".to_string(),
            )
        })
    },
};

pub const CLUSTER_WIDE_CACHE: Rule = Rule {
    id: "cluster-wide-cache",
    name: "a cluster-wide cache",
    means: "The controller lists and watches a namespaced kind in every namespace while it reconciles one: it caches, and is sent, every other namespace's objects too.",
    evidence: "footprint: lists and watches of namespaced kinds that named no namespace; with `[workload] decoys` (objects of the workload's kind, Secrets and ConfigMaps in a namespace no controller reconciles), which of those lists returned the decoys, and the controller's peak RSS against its counterpart preset's (per decoy when the variants ran one at a time)",
    threshold: "any, in a run whose objects live in one namespace",
    basis: Basis::Counts,
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
};

/// The least share of an object its managedFields must be for the rule
/// to judge: a cache without them holds the rest of each object, a few
/// times its JSON size as decoded, which must stay under their size.
pub const MANAGED_FIELDS_SHARE: f64 = 0.75;

/// The least managedFields per object for the rule to judge: below it, a
/// cache's own cost per object (its index, the decoded metadata) could
/// account for the growth as well.
pub const MANAGED_FIELDS_PER_OBJECT: f64 = 4.0 * 1024.0;

/// The least managedFields, over one run's objects, for the rule to
/// judge: below it, a garbage collector's swing in peak RSS could be the
/// whole of the growth.
pub const MANAGED_FIELDS_VISIBLE_BYTES: f64 = 32.0 * 1024.0 * 1024.0;

pub const MANAGED_FIELDS_IN_CACHE: Rule = Rule {
    id: "managed-fields-in-cache",
    name: "managedFields kept in the cache",
    means: "The controller's cache keeps whole objects, managedFields included: the field-ownership records of every manager that ever wrote the object, which a controller rarely reads and which can outweigh the rest of the object.",
    evidence: "the run's objects as the apiserver sent them (a LIST of 20 at the end of the window: the object's JSON and its managedFields' alone, medians) against the controller's memory growth per object (its peak RSS less its first scrape's, over N); not judged in concurrent runs, where other variants' objects share the apiserver, nor without a metrics RSS series",
    threshold: "managedFields at least three quarters of each object, at least 4 KiB of it and at least 32 MiB over the run's objects, and the controller's memory grown per object by at least the managedFields' size",
    basis: Basis::Measured,
    fix: Fixes {
        controller_runtime: "drop them before objects enter the cache: cache.Options{DefaultTransform: cache.TransformStripManagedFields()}",
        client_go: "set a transform on each informer that clears them (informer.SetTransform with an accessor's SetManagedFields(nil))",
        kube_rs: "clear them in the watch stream before the reflector: .modify(|o| o.managed_fields_mut().clear())",
        kopf: "kopf keeps no cache of its own; in a @kopf.index keep only the fields the handlers read",
    },
    source: "kube.rs \"Optimization\" (managed fields \"should usually be pruned\"; \"pruning will not reduce your network traffic\"); controller-runtime's cache.TransformStripManagedFields",
    likely: Likely {
        controller_runtime: &[unless(
            r"ctrl\.NewManager\(",
            r"TransformStripManagedFields|DefaultTransform",
        )],
        client_go: &[unless(r"NewSharedInformerFactory\(", r"SetTransform")],
        kube_rs: &[unless(
            r"reflector\(|Controller::new\(",
            r"managed_fields_mut",
        )],
        kopf: &[find(r"@kopf\.index\(")],
    },
    suppressed_by: &[],
    detect: |e| {
        if e.concurrent || e.runs == 0 {
            return None;
        }
        let (whole, fields, grown) = (
            e.object_bytes?,
            e.managed_fields_bytes?,
            e.rss_growth_per_object?,
        );
        let n = e.objects / e.runs as f64;
        let judged = fields >= MANAGED_FIELDS_SHARE * whole
            && fields >= MANAGED_FIELDS_PER_OBJECT
            && n * fields >= MANAGED_FIELDS_VISIBLE_BYTES;
        (judged && grown >= fields).then(|| {
            let kib = |b: f64| format!("{:.1} KiB", b / 1024.0);
            (
                format!(
                    "each object carried {} of managedFields in {} as the apiserver sent it ({:.0} %), and the controller's memory grew {} per object, at least what the managedFields alone weigh",
                    kib(fields),
                    kib(whole),
                    100.0 * fields / whole,
                    kib(grown)
                ),
                format!(
                    "{:.0} MiB of managedFields as JSON over N = {n:.0} objects, against {:.0} MiB of memory growth in all (decoded, they weigh more than their JSON)",
                    n * fields / (1024.0 * 1024.0),
                    n * grown / (1024.0 * 1024.0)
                ),
            )
        })
    },
};

pub const CLIENT_THROTTLING: Rule = Rule {
    id: "client-throttling",
    name: "client-side throttling",
    means: "The controller's client rate limiter, not the apiserver, sets its pace: reconciles wait for tokens.",
    evidence: "controller: the rate limiter's wait against the reconcile time (client-go's rate_limiter metrics, ours)",
    threshold: "≥ 50 % of each reconcile waiting in the limiter (median over the runs)",
    basis: Basis::Measured,
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
};

pub const TOO_FEW_WORKERS: Rule = Rule {
    id: "too-few-workers",
    name: "too few workers",
    means: "Keys wait in the work queue far longer than a reconcile takes while the controller's CPU and the apiserver are idle: concurrency, not work, sets the pace.",
    evidence: "controller: the work queue's mean wait (workqueue_queue_duration_seconds) against the mean reconcile, and the controller's CPU over the time to Ready==N; apiserver: its CPU over the same time",
    threshold: "mean queue wait ≥ 2 s and ≥ 10× the mean reconcile, with the controller and the apiserver each under half a core, and no client-side throttling",
    basis: Basis::Measured,
    fix: Fixes {
        controller_runtime: "raise MaxConcurrentReconciles (controller.Options) once the requests per reconcile are low",
        client_go: "start more worker goroutines on the work queue once the requests per reconcile are low",
        kube_rs: "raise the controller's concurrency (controller::Config::concurrency) once the requests per reconcile are low",
        kopf: "raise settings.batching.worker_limit, if it is set, once the requests per handler are low",
    },
    source: "Skiperator's metrics table (workqueue_depth and workqueue_queue_duration_seconds against controller_runtime_active_workers: \"Workers pinned at 1 with a growing depth means concurrency is the limit\"; \"Fix B1 first, then raise this\"); percona-server-mongodb-operator #2136 (the counter-case: 60 workers, over 1000 requests a second)",
    likely: Likely {
        controller_runtime: &[
            find(r"MaxConcurrentReconciles"),
            find(r"ctrl\.NewControllerManagedBy\("),
        ],
        client_go: &[find(r"go wait\.Until\(|\.Run\(ctx, \d+\)")],
        kube_rs: &[find(r"Controller::new\("), find(r"concurrency\(")],
        kopf: &[find(r"worker_limit")],
    },
    suppressed_by: &[
        "client-throttling",
        "self-triggered-loop",
        "requeue-loop",
        "list-per-reconcile",
        "uncached-reads",
    ],
    detect: |e| {
        let (wait, mean, cores) = (e.queue_wait?, e.reconcile_mean?, e.cpu_share?);
        let apiserver = e.apiserver_share?;
        let throttled = e.throttle_share.is_some_and(|s| s >= 0.2);
        let idle = cores < 0.5 && apiserver < 0.5 && !throttled;
        (wait >= 2.0 && wait >= 10.0 * mean && idle).then(|| {
            (
                format!(
                    "keys waited {wait:.2} s in the queue on average against {:.1} ms per reconcile, with the controller at {:.0} % of a core and the apiserver at {:.0} %",
                    mean * 1e3,
                    cores * 100.0,
                    apiserver * 100.0
                ),
                format!("{wait:.2} s of waiting per key that more workers would overlap"),
            )
        })
    },
};

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
