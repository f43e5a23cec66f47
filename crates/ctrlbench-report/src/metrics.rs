//! The metric catalogue: every headline figure of a run, each defined once —
//! its label, the heading of its column in the report's tables, its unit and
//! how it is computed from the run's files. The `Metric` enum and the list of
//! all metrics are generated from that one list, so a new figure is one
//! entry here plus the table that shows it.

use ctrlbench_record::columns::apiserver::{WIDGET_CREATE_LATENCY, WIDGET_UPDATE_LATENCY};
use ctrlbench_record::footprint::START;

use crate::quantile::{histogram_quantile, percentile};
use crate::stats::{fmt_count, fmt_duration};

mod inputs;
pub use inputs::{Inputs, controller_cpu, controller_peak_rss};
use inputs::{controller_writes_per_s, requeues};

/// How a metric's values are shown.
#[derive(Clone, Copy, Debug)]
pub enum Unit {
    Count,
    Duration,
    Rate,
    Bytes,
    Seconds,
}

/// One metric's definition.
pub struct Def {
    /// How the metric is named in running text, `compare` and the goals.
    pub label: &'static str,
    /// The heading of its column in the report's tables.
    pub column: &'static str,
    pub unit: Unit,
    /// +∞ is a value ("censored at the window end"), not a failed computation.
    pub censored: bool,
    /// The value for one run; None when its files do not measure it.
    pub of: fn(&Inputs) -> Option<f64>,
}

impl Def {
    const fn new(label: &'static str, unit: Unit, of: fn(&Inputs) -> Option<f64>) -> Def {
        Def {
            label,
            column: label,
            unit,
            censored: false,
            of,
        }
    }

    const fn column(mut self, column: &'static str) -> Def {
        self.column = column;
        self
    }

    const fn censored(mut self) -> Def {
        self.censored = true;
        self
    }
}

/// Generates `Metric` (one variant per entry, documented as the entry) and
/// its definitions in the same order, which is what `Metric::def` indexes by.
macro_rules! catalogue {
    ($($(#[$doc:meta])* $name:ident = $def:expr;)*) => {
        /// A headline figure of a run; `Metric::def` says what it is.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Metric {
            $($(#[$doc])* $name,)*
        }

        impl Metric {
            /// Every metric, in the catalogue's order.
            pub const ALL: &'static [Metric] = &[$(Metric::$name),*];

            pub fn def(self) -> &'static Def {
                const DEFS: &[Def] = &[$($def),*];
                &DEFS[self as usize]
            }
        }
    };
}

use Unit::{Bytes, Count, Duration, Rate, Seconds};

catalogue! {
    /// Objects first seen Ready by the window end (our own watch).
    Ready = Def::new("Ready at window end", Count, |x| Some(x.ready.len() as f64))
        .column("Ready/N at window end");
    /// Objects anyone but the loader ever wrote: the controller's status or
    /// annotation writes; unknown when objects.csv has no first_write_at.
    Coverage = Def::new("objects written", Count, |x| {
        x.run.records_first_writes.then_some(x.first_writes.len() as f64)
    })
    .column("objects written (coverage)");
    /// Load start → the last object first seen Ready, when all N were.
    Convergence = Def::new("convergence", Duration, |x| x.convergence)
        .column("convergence (Ready==N)");
    Success = Def::new("reconciles ok", Count, |x| x.metrics()?.delta("reconcile_success_total"));
    Errors = Def::new("reconcile errors", Count, |x| x.metrics()?.delta("reconcile_error_total"));
    /// Reconciles that asked to be requeued (controller-runtime's requeue and
    /// requeue_after results), so ok + errors + requeues is every reconcile.
    Requeues = Def::new("reconcile requeues", Count, requeues);
    /// Every reconcile (ok, errors, requeues), summed over the replicas,
    /// per object of the run: 1 when each object was reconciled once.
    ReconcilesPerObject = Def::new("reconciles per object", Count, |x| {
        let ok = x.metrics()?.delta("reconcile_success_total")?;
        let errors = x.metrics()?.delta("reconcile_error_total").unwrap_or(0.0);
        let n = x.run.scale as f64;
        (n > 0.0).then(|| (ok + errors + requeues(x).unwrap_or(0.0)) / n)
    });
    Retries = Def::new("retries", Count, |x| x.metrics()?.delta("queue_retries_total"));
    MeanLatency = Def::new("mean reconcile", Duration, |x| {
        x.per_reconcile(x.metrics()?.delta("reconcile_latency_sum"))
    });
    P50 = Def::new("reconcile p50", Duration, |x| x.reconcile_quantile(0.5));
    P90 = Def::new("reconcile p90", Duration, |x| x.reconcile_quantile(0.9));
    P99 = Def::new("reconcile p99", Duration, |x| x.reconcile_quantile(0.99));
    TtrP50 = Def::new("time-to-Ready p50", Duration, |x| percentile(&x.ttr, 0.5)).censored();
    TtrP99 = Def::new("time-to-Ready p99", Duration, |x| percentile(&x.ttr, 0.99)).censored();
    /// First create → the moment 50 % of N were Ready.
    T50 = Def::new("T50", Duration, |x| x.time_to_fraction(0.5));
    T90 = Def::new("T90", Duration, |x| x.time_to_fraction(0.9));
    T100 = Def::new("T100", Duration, |x| x.time_to_fraction(1.0));
    ReadyPerS = Def::new("Ready/s", Rate, |x| x.ready_per_s());
    /// The controller's own writes per second of its writing span.
    WritesPerS = Def::new("writes/s", Rate, |x| {
        // Shown only for runs whose apiserver was scraped too.
        x.run.apiserver.as_ref()?;
        controller_writes_per_s(x.run)
    })
    .column("controller writes/s (own client)");
    /// The controller's own writes over the run, per object: 1 for a
    /// controller that writes each status once, and the cost of a loop
    /// that keeps writing. A count, so nearly free of the machine's noise.
    WritesPerObject = Def::new("writes per object", Count, |x| {
        x.run.apiserver.as_ref()?;
        let writes = x.metrics()?.delta("rest_writes_total")?;
        let n = x.run.scale as f64;
        (n > 0.0).then(|| writes / n)
    });
    Conflicts = Def::new("409s", Count, |x| x.metrics()?.delta("rest_409_total"));
    ThrottleWait = Def::new("throttle wait", Duration, |x| {
        x.metrics()?.delta("throttle_wait_s_sum")
    })
    .column("client throttle wait");
    /// The controller's metrics page, or (a process ctrlbench started whose
    /// page had none) what ctrlbench read from /proc: [`controller_cpu`].
    Cpu = Def::new("CPU", Seconds, |x| Some(controller_cpu(x.run)?.0)).column("controller CPU");
    PeakRss = Def::new("peak RSS", Bytes, |x| Some(controller_peak_rss(x.run)?.0));
    /// Updates only (what controllers send). Results from before the
    /// update/create split have one histogram over both: it fits neither
    /// label, so both stay unmeasured.
    ApiP99 = Def::new("apiserver update p99", Duration, |x| {
        x.apiserver_p99(WIDGET_UPDATE_LATENCY)
    })
    .column("apiserver widget update p99 (PUT/PATCH/APPLY)");
    ApiCreateP99 = Def::new("apiserver create p99", Duration, |x| {
        x.apiserver_p99(WIDGET_CREATE_LATENCY)
    })
    .column("apiserver widget create p99 (loader's POST)");
    FsyncP99 = Def::new("etcd fsync p99", Duration, |x| {
        let e = x.run.etcd.as_ref()?;
        Some(histogram_quantile(0.99, &e.bucket_delta("wal_fsync")))
    })
    .column("etcd WAL fsync p99");
    /// This variant's own updates as the apiserver's audit log saw them.
    OwnUpdates = Def::new("own updates (server-side)", Count, |x| {
        Some(x.own_updates.as_ref()?.len() as f64)
    })
    .column("own updates (server-side count)");
    OwnUpdateP50 = Def::new("own update p50 (server-side)", Duration, |x| {
        percentile(x.own_updates.as_ref()?, 0.5)
    })
    .column("own update p50");
    OwnUpdateP99 = Def::new("own update p99 (server-side)", Duration, |x| {
        percentile(x.own_updates.as_ref()?, 0.99)
    })
    .column("own update p99");
    /// Controller start → the end of its initial list (its own
    /// ctrlbench_initial_list_seconds gauge, metrics-<variant>.csv).
    StartInitialList = Def::new("start → initial list", Duration, |x| {
        x.start()?;
        // The gauge is set once, when the list completes (0 before).
        let m = x.run.metrics_all.as_ref().or(x.metrics());
        m?.max("initial_list_s").filter(|v| *v > 0.0)
    });
    /// Controller start → first object written (summary.json's start).
    StartFirstWrite = Def::new("start → first write", Duration, |x| x.start()?.first_write_s);
    /// Controller start → Ready == N.
    StartAllReady = Def::new("start → Ready==N", Duration, |x| x.start()?.all_ready_s);
    /// Controller CPU seconds per reconcile.
    CpuPerReconcile = Def::new("CPU per reconcile", Duration, |x| {
        x.per_reconcile(controller_cpu(x.run).map(|(v, _)| v))
    });
    /// Mean time a key waited in the work queue before its reconcile began.
    QueueWait = Def::new("queue wait (mean)", Duration, |x| {
        let m = x.metrics()?;
        let sum = m.delta("queue_wait_s_sum")?;
        m.delta("queue_wait_count").filter(|c| *c > 0.0).map(|c| sum / c)
    });
    /// kube-apiserver's CPU seconds over the run (its own process, from
    /// apiserver.csv): the whole plane's cost, so per variant only where
    /// each variant had a plane of its own (an A/A of a plane setting).
    ApiserverCpu = Def::new("apiserver CPU", Seconds, |x| {
        x.run.apiserver.as_ref()?.delta("cpu_seconds")
    });
    ApiserverPeakRss = Def::new("apiserver peak RSS", Bytes, |x| {
        x.run.apiserver.as_ref()?.max("rss_bytes")
    });
    /// etcd's database bytes in use at the run's last scrape less at its
    /// baseline (etcd.csv, summed over the members): what the run's objects,
    /// their children and their history not yet compacted added. The whole
    /// plane's, like the apiserver's CPU. None when etcd compacted within
    /// the run (its compact revision moved): the compaction frees history
    /// of earlier runs too, so the difference is not this run's.
    EtcdBytesAdded = Def::new("etcd bytes added", Bytes, |x| {
        let e = x.run.etcd.as_ref()?;
        let (first, last) = (e.first_good()?, e.last_good()?);
        if let (Some(a), Some(b)) = (e.get(first, "compact_revision"), e.get(last, "compact_revision"))
            && a != b
        {
            return None;
        }
        let at = |r| e.get(r, "db_in_use_bytes");
        Some(at(last)? - at(first)?)
    })
    .column("etcd bytes in use, added by the run");
    /// Every request the controller sent in the create phase, per object
    /// (footprint.csv: the apiserver's audit log names the caller).
    /// Without an audit log (an existing cluster), the controller's own
    /// client counter (rest_client_requests_total) where it exports one.
    RequestsPerObject = Def::new("requests per object", Count, |x| {
        match x.footprint() {
            Some(f) => x.per_object(f.requests()),
            None => x.per_object(x.metrics()?.delta("rest_requests_total")?),
        }
    })
    .column("API requests per object");
    GetsPerObject = Def::new("GETs per object", Count, |x| x.per_object(x.footprint()?.verb("get")));
    /// LISTs beyond the one each watch starts with, per object.
    ListsPerObject = Def::new("LISTs per object", Count, |x| {
        x.per_object(x.footprint()?.extra_lists())
    })
    .column("LISTs per object (beyond the watches')");
    /// Watches opened anew: an informer resuming its watch after the
    /// apiserver closed it opens none.
    WatchesOpened = Def::new("watches opened", Count, |x| {
        Some(x.footprint()?.opened_watches(|_| true))
    });
    /// Watches opened after the controller's start-up (its first write):
    /// a controller whose informers are shared opens none.
    WatchesAfterStart = Def::new("watches opened after start-up", Count, |x| {
        Some(x.footprint()?.opened_watches(|r| r.phase != START))
    });
    /// Writes the apiserver accepted from the controller, any resource, per
    /// object: its status, its child objects, its Events.
    ApiWritesPerObject = Def::new("API writes per object", Count, |x| {
        x.per_object(x.footprint()?.writes())
    })
    .column("API writes per object (server-side)");
    /// The controller's requests per object per minute in the experiment's
    /// first idle phase (nothing changes: a controller that is done sends
    /// nothing).
    IdleRequestsPerObjectMin = Def::new("idle requests per object per minute", Count, |x| {
        let p = x.run.summary.as_ref()?.phases.iter().find(|p| p.kind == "idle")?;
        let (a, b) = p.span()?;
        let label = format!("phase-{}", p.phase);
        let n: f64 = x
            .run
            .footprint
            .as_ref()?
            .iter()
            .filter(|r| r.phase == label)
            .map(|r| r.count as f64)
            .sum();
        let minutes = (b - a) / 60.0;
        (minutes > 0.0).then_some(())?;
        x.per_object(n / minutes)
    });
    /// Updates and patches refused with 409, per object.
    ConflictsPerObject = Def::new("conflicts per object", Count, |x| {
        x.per_object(x.footprint()?.conflicts())
    });
    EventsPerObject = Def::new("Events per object", Count, |x| {
        x.per_object(x.footprint()?.events())
    });
    /// Objects every LIST returned, any resource, per object: the
    /// apiserver's list metrics, cluster-wide (our watch's first list and
    /// the controller's informers' included). A LIST per reconcile makes it
    /// grow with N.
    ListReturnedPerObject = Def::new("objects returned by LISTs per object", Count, |x| {
        x.per_object(x.run.apiserver.as_ref()?.delta("list_returned_objects_total")?)
    })
    .column("objects returned by LISTs per object (cluster-wide)");
    /// The apiserver's own request counts (apiserver_request_total), every
    /// caller's, per object: the footprint of an existing cluster, where no
    /// audit log names the caller.
    ClusterGetsPerObject = Def::new("GETs per object (cluster-wide)", Count, |x| x.apiserver_per_object("gets_total"));
    ClusterListsPerObject = Def::new("LISTs per object (cluster-wide)", Count, |x| x.apiserver_per_object("lists_total"));
    ClusterWatches = Def::new("watches opened (cluster-wide)", Count, |x| {
        x.run.apiserver.as_ref()?.delta("watches_total")
    });
    ClusterWritesPerObject = Def::new("writes per object (cluster-wide)", Count, |x| x.apiserver_per_object("writes_total"));
    Cluster409PerObject = Def::new("409s per object (cluster-wide)", Count, |x| x.apiserver_per_object("code_409_total"));
    Cluster404PerObject = Def::new("404s per object (cluster-wide)", Count, |x| x.apiserver_per_object("code_404_total"));
    Cluster429PerObject = Def::new("429s per object (cluster-wide)", Count, |x| x.apiserver_per_object("code_429_total"));
    /// The share of the objects our watch first saw Ready whose status did
    /// not say which generation it describes (no `status.observedGeneration`
    /// and none on the readiness condition, or an older one).
    GenerationMissingShare = Def::new("Ready without observedGeneration", Count, |x| {
        let s = x.run.summary.as_ref()?;
        let checked = s.ready_generation_checked? as f64;
        (checked > 0.0).then(|| s.ready_generation_missing.unwrap_or(0) as f64 / checked)
    })
    .column("share Ready without observedGeneration");
    /// Creates refused with 409 AlreadyExists, per object.
    AlreadyExistedPerObject = Def::new("creates that already existed per object", Count, |x| {
        x.per_object(x.footprint()?.already_existed())
    })
    .column("409 AlreadyExists per object");
    /// Requests answered 404, per object.
    NotFoundPerObject = Def::new("404s per object", Count, |x| {
        x.per_object(x.footprint()?.count(|r| r.code == 404))
    });
    /// Requests the apiserver refused with 429 (its priority and fairness),
    /// per object.
    TooManyPerObject = Def::new("429s per object", Count, |x| {
        x.per_object(x.footprint()?.count(|r| r.code == 429))
    });
    /// Accepted writes of the workload's objects, status included, that
    /// changed nothing: the audit log's count less the changes our own watch
    /// saw (each change is a new resourceVersion and one watch event).
    NoopWritesPerObject = Def::new("writes that changed nothing per object", Count, |x| {
        let seen = x.run.summary.as_ref()?.watch_changes? as f64;
        let f = x.footprint()?;
        x.per_object((f.object_writes() + f.status_writes() - seen).max(0.0))
    })
    .column("no-op writes per object");
    /// Objects written per second from our own watch's timestamps: (k − 1)
    /// ÷ (last first_write_at − first first_write_at) over the k objects
    /// written (objects.csv). Exact to the millisecond where writes/s is
    /// bounded by the scrape interval at each end of the writing span.
    FirstWritesPerS = Def::new("first writes/s", Rate, |x| {
        match (x.first_writes.first(), x.first_writes.last()) {
            (Some(a), Some(b)) if b > a && x.run.records_first_writes => {
                Some((x.first_writes.len() - 1) as f64 / (b - a))
            }
            _ => None,
        }
    });
}

impl Metric {
    pub fn label(self) -> &'static str {
        self.def().label
    }

    /// The metric a name means: its label or its column heading, ignoring
    /// ASCII case ("Ready/s", "peak RSS", "reconcile p99", "controller CPU").
    pub fn named(name: &str) -> Option<Metric> {
        let n = name.trim();
        Metric::ALL
            .iter()
            .copied()
            .find(|m| m.label().eq_ignore_ascii_case(n) || m.column().eq_ignore_ascii_case(n))
    }

    pub fn column(self) -> &'static str {
        self.def().column
    }

    /// The column in the workload's own words: "widget" is the built-in
    /// workload's kind, replaced by `kind` (e.g. "Memcached") when given.
    pub fn column_of(self, kind: Option<&str>) -> String {
        match kind {
            Some(k) => self.column().replace("widget", k),
            None => self.column().to_string(),
        }
    }

    /// The value as the report shows it; +∞ (censored) reads "> window".
    pub fn fmt(self, v: f64) -> String {
        if v == f64::INFINITY {
            return "> window".into();
        }
        match self.def().unit {
            Count => fmt_count(v),
            Rate => format!("{v:.1}/s"),
            Bytes => format!("{:.1} MiB", v / (1024.0 * 1024.0)),
            Seconds => format!("{v:.2} s"),
            Duration => fmt_duration(v),
        }
    }

    /// This metric's value for one run, as computed from its inputs.
    pub fn of(self, inputs: &Inputs) -> Option<f64> {
        (self.def().of)(inputs)
    }

    /// The value kept for a run: finite, or +∞ where it means censored.
    pub fn keep(self, v: Option<f64>) -> Option<f64> {
        let censored = self.def().censored;
        v.filter(|x| x.is_finite() || (censored && *x == f64::INFINITY))
    }
}
