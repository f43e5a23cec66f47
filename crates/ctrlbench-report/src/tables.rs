//! The report's text: header, warnings, the tables per scale × variant
//! (seed shapes first, then percentiles, throughput, cost, server side,
//! attribution), the plots, per-run detail and how each number is computed.

use ctrlbench_record::summary::Schedule;

use crate::attribution;
use crate::figures::{Group, Metric};
use crate::load::Results;
use crate::stats::{fmt_count, fmt_duration, fmt_stat};
use crate::{Block, Table};

fn row_head(g: &Group) -> Vec<String> {
    vec![g.scale.to_string(), format!("{}{}", g.variant, g.marker())]
}

fn table<'a>(
    groups: impl IntoIterator<Item = &'a Group>,
    head: &[&str],
    cells: impl Fn(&Group) -> Vec<String>,
) -> Block {
    let mut h = vec!["N".to_string(), "variant".to_string()];
    h.extend(head.iter().map(|s| s.to_string()));
    Block::Table(Table {
        head: h,
        rows: groups
            .into_iter()
            .map(|g| {
                let mut r = row_head(g);
                r.extend(cells(g));
                r
            })
            .collect(),
    })
}

fn ready_cell(g: &Group) -> String {
    match g.stat(Metric::Ready) {
        Some(s) => format!("{}/{}", fmt_stat(&s, fmt_count), g.scale),
        None => "—".into(),
    }
}

fn coverage_cell(g: &Group) -> String {
    match g.stat(Metric::Coverage) {
        Some(s) => format!("{}/{}", fmt_stat(&s, fmt_count), g.scale),
        None => "—".into(),
    }
}

/// Why a variant wrote to fewer than N objects, from its queue setting.
fn coverage_notes(groups: &[Group]) -> Vec<String> {
    groups
        .iter()
        .filter_map(|g| {
            let s = g.stat(Metric::Coverage)?;
            if s.median >= g.scale as f64 {
                return None;
            }
            let queue = g.settings().and_then(|(_, s)| s.queue.clone());
            let why = match queue.as_deref() {
                Some("kube") => {
                    "Its queue is kube-runtime's scheduler (queue = \"kube\"): when every worker is \
                     busy, due keys wait in a hash set and a freed worker takes one in hash order, so \
                     a key that re-triggers itself (a looping preset) is served again before keys \
                     never processed. queue = \"fifo\" (client-go's order) serves keys in arrival \
                     order; compare the two to separate the queue from the pattern."
                }
                Some("fifo") => {
                    "Its queue is FIFO (client-go's order), so the others were still waiting \
                     behind earlier keys or failing when the window ended: see retries, errors and \
                     the client throttle wait."
                }
                _ => "The controller did not report its queue order.",
            };
            Some(format!(
                "N={} {}: the controller wrote to {} of {} objects. {why}",
                g.scale,
                g.variant,
                fmt_stat(&s, fmt_count),
                g.scale
            ))
        })
        .collect()
}

/// What each variant ran with, as its controller printed it: the same load
/// is not enough for like for like, the client limits and retry policy
/// must be visible too.
fn settings_table(groups: &[Group]) -> Option<Block> {
    // A Kubernetes column only when the variants ran on different versions.
    let mut versions: Vec<&str> = groups
        .iter()
        .flat_map(|g| {
            g.runs
                .iter()
                .filter_map(|r| r.kubernetes_version.as_deref())
        })
        .collect();
    versions.sort();
    versions.dedup();
    let by_version = versions.len() > 1;
    let mut seen: Vec<&str> = Vec::new();
    let mut rows = Vec::new();
    for g in groups {
        if seen.contains(&g.variant.as_str()) {
            continue;
        }
        seen.push(&g.variant);
        let Some((imp, s)) = g.settings() else {
            let imp = g
                .runs
                .iter()
                .find_map(|r| r.implementation.clone())
                .unwrap_or_else(|| "?".into());
            let why = match imp.as_str() {
                "command" => "a user's command: its settings are its own",
                "external" => "already running in the cluster: not started by ctrlbench",
                _ => "not recorded",
            };
            rows.push(vec![g.variant.clone(), imp, why.into()]);
            continue;
        };
        rows.push(vec![
            g.variant.clone(),
            imp.to_string(),
            s.preset.clone(),
            s.workers.to_string(),
            queue_cell(s),
            s.client_limit(),
            if s.client_buckets.is_empty() {
                "?".into()
            } else {
                s.client_buckets.join(", ")
            },
            s.retry_policy(),
        ]);
        if by_version {
            let v = g.runs.iter().find_map(|r| r.kubernetes_version.clone());
            rows.last_mut()
                .expect("just pushed")
                .push(v.unwrap_or_else(|| "?".into()));
        }
    }
    if rows.is_empty() {
        return None;
    }
    let width = if by_version { 9 } else { 8 };
    for r in &mut rows {
        r.resize(width, String::new());
    }
    Some(Block::Table(Table {
        head: [
            "variant",
            "impl",
            "preset",
            "workers",
            "queue",
            "client limit (effective)",
            "clients with their own bucket",
            "retry on error",
            "Kubernetes",
        ]
        .into_iter()
        .take(width)
        .map(String::from)
        .collect(),
        rows,
    }))
}

/// "fifo", "kube, debounce 5 ms", "fifo, priority": the queue, its
/// debounce, and whether controller-runtime's priority queue was on.
fn queue_cell(s: &ctrlbench_record::summary::Settings) -> String {
    let Some(q) = s.queue.as_deref() else {
        return "?".into();
    };
    let mut cell = q.to_string();
    if let Some(d) = s.debounce_ms.filter(|d| *d > 0) {
        cell.push_str(&format!(", debounce {d} ms"));
    }
    if s.priority_queue == Some(true) {
        cell.push_str(", priority");
    }
    cell
}

fn header(r: &Results) -> Vec<Block> {
    let m = &r.manifest;
    // Missing (empty) manifest fields show as "?".
    let s = |v: &str| {
        if v.is_empty() {
            "?".to_string()
        } else {
            v.to_string()
        }
    };
    let first = r.runs.iter().find_map(|x| x.summary.as_ref());
    let schedule = first.map(|s| s.schedule.to_string()).unwrap_or("?".into());
    let window = first.map(|s| s.window_s);
    let repeats = r.runs.iter().map(|x| x.repeat).max().unwrap_or(0);
    let background = match first.map_or(0, |s| s.background_objects) {
        0 => String::new(),
        k => format!(
            " {k} background widgets in a namespace of their own, created before any controller started."
        ),
    };
    let name = r
        .dir
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut blocks = vec![
        Block::Heading(1, format!("ctrlbench report: {}", r.experiment())),
        Block::Para(format!(
            "Results {name}, started {} and finished {}. Kubernetes {}, etcd {}, {}. \
             Machine: {} cores, {:.1} GiB. Schedule {schedule}, window {}, {repeats} repeat(s), \
             {} run(s). ctrlbench {} (git {}).{background}",
            s(&m.started_at),
            m.finished_at.as_deref().unwrap_or("never"),
            s(&m.kubernetes_version),
            s(&m.etcd_version),
            if m.local_plane && m.controller_manager {
                "local control plane with kube-controller-manager (namespace and garbage-collector controllers)"
            } else if m.local_plane {
                "local control plane"
            } else {
                "existing cluster"
            },
            m.machine.cores,
            m.machine.memory_bytes as f64 / f64::from(1u32 << 30),
            window.map(|w| format!("{w} s")).unwrap_or("?".into()),
            r.runs.len(),
            s(&m.tool_version),
            m.git_revision
                .as_deref()
                .map(|g| &g[..g.len().min(12)])
                .unwrap_or("unknown"),
        )),
    ];
    if let Some(w) = first.and_then(|s| s.workload.as_deref()) {
        blocks.push(Block::Para(format!(
            "Workload: {w}. \"Ready\" below means this rule held, as our own watch saw it."
        )));
    }
    blocks
}

fn warnings(r: &Results, groups: &[Group]) -> Vec<String> {
    let mut w = Vec::new();
    if !r.complete() {
        w.push(
            "The experiment did not complete (manifest.json: complete=false): runs may be \
             missing, and every table below comes from an incomplete experiment."
                .to_string(),
        );
    }
    for e in r.errors() {
        w.push(format!("Run failed: {e}"));
    }
    for g in groups {
        for f in g.runs.iter().filter(|f| !f.problems.is_empty()) {
            w.push(format!(
                "{}: {} — {}.",
                f.label(),
                f.problems.join("; "),
                if g.flagged_only() {
                    "its group has no other runs, so its figures are shown, marked ⚠"
                } else {
                    "left out of the medians (marked ⚠ runs excluded)"
                }
            ));
        }
    }
    if r.runs.is_empty() {
        w.push("No run directories (N<scale>/<variant>/rep<k>/) were found.".into());
    }
    w
}

pub fn document(r: &Results, groups: &[Group], plots: Vec<Block>) -> Vec<Block> {
    let mut d = header(r);
    let w = warnings(r, groups);
    if !w.is_empty() {
        d.push(Block::Heading(2, "Warnings".into()));
        d.push(Block::Warning(w));
    }
    let repeats = groups.iter().any(|g| g.used().len() > 1);
    d.push(Block::Para(if repeats {
        "Cells with repeats show median [min–max] over the runs without problems. \
         Counters are deltas from each run's baseline scrape to its last good scrape."
            .into()
    } else {
        "Counters are deltas from each run's baseline scrape to its last good scrape.".into()
    }));

    if let Some(t) = settings_table(groups) {
        d.push(Block::Heading(2, "Controller settings".into()));
        d.push(Block::Para(
            "As each controller resolved its flags (--print-settings, recorded in summary.json): \
             the effective client limit includes the client library's own default; watches are \
             never throttled."
                .into(),
        ));
        d.push(t);
    }
    let mut seen: Vec<&str> = Vec::new();
    for g in groups {
        if seen.contains(&g.variant.as_str()) {
            continue;
        }
        seen.push(&g.variant);
        if let Some(r) = g.runs.iter().find(|r| !r.cluster_grants.is_empty()) {
            d.push(Block::Para(format!(
                "Cluster-scoped grant: {} ran with {} in every namespace (beyond its own).",
                g.variant,
                r.cluster_grants.join("; ")
            )));
        }
    }

    d.extend(crate::counterparts::section(groups));

    d.push(Block::Heading(2, "Convergence and reconciles".into()));
    d.push(table(
        groups,
        &[
            "Ready/N at window end",
            "objects written (coverage)",
            "convergence (Ready==N)",
            "reconciles ok / error",
            "retries",
            "mean reconcile",
        ],
        |g| {
            vec![
                ready_cell(g),
                coverage_cell(g),
                g.convergence_cell(),
                format!("{} / {}", g.cell(Metric::Success), g.cell(Metric::Errors)),
                g.cell(Metric::Retries),
                g.cell(Metric::MeanLatency),
            ]
        },
    ));
    let notes = coverage_notes(groups);
    if !notes.is_empty() {
        d.push(Block::List(notes));
    }

    d.push(Block::Heading(2, "Latency percentiles".into()));
    d.push(table(
        groups,
        &[
            "reconcile p50",
            "reconcile p90",
            "reconcile p99",
            "time-to-Ready p50",
            "time-to-Ready p99",
        ],
        |g| {
            [
                Metric::P50,
                Metric::P90,
                Metric::P99,
                Metric::TtrP50,
                Metric::TtrP99,
            ]
            .map(|m| g.cell(m))
            .to_vec()
        },
    ));

    d.push(Block::Heading(2, "Throughput and cost".into()));
    d.push(table(
        groups,
        &[
            "Ready/s",
            "T50",
            "T90",
            "T100",
            "controller writes/s (own client)",
            "409s",
            "client throttle wait",
            "controller CPU",
            "peak RSS",
        ],
        |g| {
            [
                Metric::ReadyPerS,
                Metric::T50,
                Metric::T90,
                Metric::T100,
                Metric::WritesPerS,
                Metric::Conflicts,
                Metric::ThrottleWait,
                Metric::Cpu,
                Metric::PeakRss,
            ]
            .map(|m| g.cell(m))
            .to_vec()
        },
    ));
    d.extend(start_section(groups));

    d.push(Block::Heading(2, "Server side".into()));
    d.extend(server_side(groups));

    d.extend(crate::phases::section(groups));

    d.extend(crate::goals::section(r, groups));
    d.extend(attribution_section(groups));
    d.extend(crate::faults::section(r));
    if !plots.is_empty() {
        d.push(Block::Heading(2, "Plots".into()));
        d.extend(plots);
    }
    d.push(Block::Heading(2, "Per-run detail".into()));
    d.push(per_run(groups));
    d.push(Block::Heading(2, "How the numbers are computed".into()));
    d.push(Block::List(method_notes(r)));
    d
}

/// apiserver and etcd figures. Their metrics carry no caller, so when the
/// variants of a scale ran together they are one cluster-wide row per
/// scale, never per-variant rows that each describe all of them.
fn server_side(groups: &[Group]) -> Vec<Block> {
    const HEAD: [&str; 3] = [
        "apiserver widget update p99 (PUT/PATCH/APPLY)",
        "apiserver widget create p99 (loader's POST)",
        "etcd WAL fsync p99",
    ];
    let cells = |g: &Group| {
        [Metric::ApiP99, Metric::ApiCreateP99, Metric::FsyncP99]
            .map(|m| g.cell(m))
            .to_vec()
    };
    let (shared, own): (Vec<&Group>, Vec<&Group>) = groups
        .iter()
        .partition(|g| g.runs.iter().any(|r| r.concurrent));
    let mut rows = Vec::new();
    for g in own {
        let mut r = row_head(g);
        r.extend(cells(g));
        rows.push(r);
    }
    let mut scales: Vec<u64> = shared.iter().map(|g| g.scale).collect();
    scales.dedup();
    for scale in scales {
        let at: Vec<&&Group> = shared.iter().filter(|g| g.scale == scale).collect();
        // The group's one apiserver/etcd scrape is written into every
        // variant's files: the first variant's stand for the cluster.
        let mut r = vec![
            scale.to_string(),
            format!(
                "cluster-wide: {} together{}",
                at.iter()
                    .map(|g| g.variant.as_str())
                    .collect::<Vec<_>>()
                    .join(" + "),
                at[0].marker()
            ),
        ];
        r.extend(cells(at[0]));
        rows.push(r);
    }
    let mut h = vec!["N".to_string(), "variant".to_string()];
    h.extend(HEAD.iter().map(|s| s.to_string()));
    let mut out = vec![Block::Table(Table { head: h, rows })];
    // Per variant even when variants ran together: each audit event names
    // the ServiceAccount that sent the request.
    let audited: Vec<&Group> = groups
        .iter()
        .filter(|g| g.runs.iter().any(|r| r.get(Metric::OwnUpdates).is_some()))
        .collect();
    if !audited.is_empty() {
        out.push(Block::Para(
            "Per variant, from the apiserver's audit log (audit.csv: each completed widget \
             write with its caller and the apiserver's receive → complete time), so these are \
             this variant's own requests even when variants shared the apiserver:"
                .into(),
        ));
        out.push(table(
            audited,
            &[
                "own updates (server-side count)",
                "own update p50",
                "own update p99",
            ],
            |g| {
                [
                    Metric::OwnUpdates,
                    Metric::OwnUpdateP50,
                    Metric::OwnUpdateP99,
                ]
                .map(|m| g.cell(m))
                .to_vec()
            },
        ));
    }
    out
}

/// Controller start-up: when it started relative to the load, the time to its
/// first write and to Ready == N (results that record it).
fn start_section(groups: &[Group]) -> Vec<Block> {
    if !groups
        .iter()
        .any(|g| g.stat(Metric::StartAllReady).is_some())
    {
        return Vec::new();
    }
    vec![
        Block::Heading(2, "Controller start".into()),
        Block::Para(
            "From the controller process's start (summary.json's start): the end of its \
             initial list (its own ctrlbench_initial_list_seconds gauge: the watch cache first \
             held the whole list; our Rust and Go controllers export it), the first object \
             our own watch saw written by it (its first reconcile's write), and the last of N \
             first seen Ready. start = \"after-load\" starts the controller once all N objects \
             exist (its Ready/s is counted from its start); \"before-load\" before the loader \
             (these times then include the load). Queue wait: the mean time a key waited in the \
             work queue before its reconcile began (workqueue_queue_duration_seconds); CPU per \
             reconcile: the controller's CPU seconds over its reconciles (deltas)."
                .into(),
        ),
        table(
            groups,
            &[
                "start",
                "start → initial list",
                "start → first write",
                "start → Ready==N",
                "Ready/s",
                "queue wait (mean)",
                "CPU per reconcile",
            ],
            |g| {
                let mode = g
                    .runs
                    .iter()
                    .find_map(|r| r.start_mode)
                    .map(|m| m.as_str().to_string())
                    .unwrap_or("—".into());
                let mut v = vec![mode];
                v.extend(
                    [
                        Metric::StartInitialList,
                        Metric::StartFirstWrite,
                        Metric::StartAllReady,
                        Metric::ReadyPerS,
                        Metric::QueueWait,
                        Metric::CpuPerReconcile,
                    ]
                    .map(|m| g.cell(m)),
                );
                v
            },
        ),
    ]
}

fn attribution_section(groups: &[Group]) -> Vec<Block> {
    let parts: Vec<_> = groups
        .iter()
        .map(|g| attribution::median(g.used().iter().map(|r| &r.attribution)))
        .collect();
    let opt = |v: Option<f64>| v.map(fmt_duration).unwrap_or("—".into());
    let rows = groups
        .iter()
        .zip(&parts)
        .map(|(g, a)| {
            let mut r = row_head(g);
            r.extend([
                opt(a.mean),
                if a.mean.is_none() && g.runs.iter().all(|r| r.settings.is_none()) {
                    // A user's controller: ctrlbench simulated no work in it.
                    "—".to_string()
                } else {
                    format!(
                        "{}{}",
                        fmt_duration(a.work),
                        if a.work_overridden { "" } else { " (default)" }
                    )
                },
                opt(a.throttle),
                match a.api {
                    Some(v) if a.api_by_client => format!("{} (own client)", fmt_duration(v)),
                    v => opt(v),
                },
                a.writes_per_reconcile
                    .map(|w| format!("{w:.2}"))
                    .unwrap_or("—".into()),
                opt(a.rest()),
            ]);
            r
        })
        .collect();
    let mut v = vec![
        Block::Heading(2, "Where the reconcile time goes".into()),
        Block::Para(
            "Mean reconcile time split into: simulated work — INFERRED from the variant's \
             configuration (the recorded work_ms setting), not measured; \
             client rate-limiter wait — MEASURED by the controller (throttle wait delta / \
             reconciles); API write time — MEASURED: where the controller exports client-go's \
             request latency (rest_client_request_duration_seconds, after the rate limiter), the \
             time its own client spent in write requests per reconcile, marked \"own client\"; \
             else its writes per reconcile (its client counter) × the apiserver's mean widget \
             update latency (PUT/PATCH/APPLY, apiserver.csv deltas; cluster-wide when variants \
             share the apiserver); \
             and the rest (cache reads, client overhead, conflict back-off, scheduling), \
             which is what remains."
                .into(),
        ),
        Block::Table(Table {
            head: [
                "N",
                "variant",
                "mean reconcile",
                "simulated work (inferred)",
                "rate-limiter wait (measured)",
                "API write time (measured)",
                "writes/reconcile",
                "rest",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        }),
    ];
    v.push(Block::List(
        groups
            .iter()
            .zip(&parts)
            .map(|(g, a)| attribution::sentence(&format!("N={} {}", g.scale, g.variant), a))
            .collect(),
    ));
    v
}

fn per_run(groups: &[Group]) -> Block {
    let opt = |m: Metric, v: Option<f64>| v.map(|x| m.fmt(x)).unwrap_or("—".into());
    let rows = groups
        .iter()
        .flat_map(|g| g.runs.iter())
        .map(|f| {
            vec![
                f.label(),
                if f.problems.is_empty() {
                    "ok".into()
                } else {
                    format!("⚠ {}", f.problems.join("; "))
                },
                format!("{:.0}/{}", f.get(Metric::Ready).unwrap_or(0.0), f.scale),
                match f.get(Metric::Convergence) {
                    Some(c) => fmt_duration(c),
                    None => "not converged".into(),
                },
                opt(Metric::Success, f.get(Metric::Success)),
                opt(Metric::Errors, f.get(Metric::Errors)),
                opt(Metric::P99, f.get(Metric::P99)),
                opt(Metric::ReadyPerS, f.get(Metric::ReadyPerS)),
                opt(Metric::WritesPerS, f.get(Metric::WritesPerS)),
            ]
        })
        .collect();
    Block::Table(Table {
        head: [
            "run",
            "status",
            "Ready/N",
            "convergence",
            "reconciles ok",
            "errors",
            "reconcile p99",
            "Ready/s",
            "writes/s",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    })
}

fn method_notes(r: &Results) -> Vec<String> {
    let mut v = vec![
        "Time zero of every run is the load start, reconstructed as objects.csv's last \
         created_at minus summary.json's load.seconds (the loader's own clock)."
            .to_string(),
        "Convergence is the first moment Ready==N: the latest ready_at in objects.csv (our own \
         watch, not the controller's metrics), minus time zero. Time-to-Ready is ready_at − \
         created_at per object, over every created object (p50/p99 with linear interpolation); \
         an object never Ready is censored at the window end, and a percentile that falls on \
         one reads \"> window\"."
            .into(),
        "Counters (reconciles, retries, 409s, throttle wait, CPU, histogram buckets) are deltas \
         from the baseline row (the first with scrape_ok=1) to the last good row; failed scrapes \
         are skipped, never read as zeros."
            .into(),
        "Latency percentiles are interpolated from the histogram buckets as PromQL's \
         histogram_quantile does (linear within a bucket; a rank in the +Inf bucket gives the \
         highest finite bound)."
            .into(),
        "T50, T90 and T100 run from the first create (objects.csv) to the moment 50 %, 90 % and \
         100 % of N objects were Ready (the ⌈q·N⌉-th ready_at); — when that many never were."
            .into(),
        "Ready/s is N / convergence, or Ready / the observed window when not converged. \
         Controller writes/s is the controller's own client count of the writes it sent \
         (rest_writes_total: POST/PUT/PATCH/APPLY, any response), so it is per variant even \
         when variants share the apiserver, over its writing span: the last scrape before \
         its first write → the first scrape showing its final count. Rates in the plots use \
         the real gaps between scrapes."
            .into(),
        "Peak RSS is the largest resident-memory sample of the controller process.".into(),
        "Objects written (coverage) counts the objects that anyone but the loader ever wrote \
         (objects.csv first_write_at: the first change by another field manager, seen by our \
         own watch): the controller's status or annotation writes. — when objects.csv predates \
         the column."
            .into(),
    ];
    let concurrent = r
        .runs
        .iter()
        .filter_map(|x| x.summary.as_ref())
        .any(|s| s.schedule == Schedule::Concurrent);
    if concurrent {
        v.push(
            "Schedule concurrent: variants of a group shared the apiserver and etcd, so the \
             apiserver and etcd metrics cannot tell them apart: the server-side table has one \
             cluster-wide row per scale, and the API write time in the attribution is the \
             variant's own writes per reconcile × the cluster-wide mean update latency. \
             Controller writes/s, writes/reconcile and every controller-side figure are per \
             variant (each controller's own metrics)."
                .into(),
        );
    }
    if r.runs.iter().any(|x| x.audit.is_some()) {
        v.push(
            "Own updates and their p50/p99 come from audit.csv (the apiserver's audit log, kept \
         when the plane runs with audit_log on): the update and patch requests of this run's \
         namespace, whose caller is the variant's own ServiceAccount; latency is the event's \
         stageTimestamp − requestReceivedTimestamp (percentiles with linear interpolation). \
         Without an audit log there is no per-variant server-side figure."
                .into(),
        );
    }
    if repeats_note(r) {
        v.push(
            "With repeats, cells show median [min–max]; runs with problems (incomplete, failed \
             scrapes, missing files) are left out and listed under Warnings. The reconcile-time \
             breakdown is the median run's (runs ranked by mean reconcile; two middle runs \
             averaged), taken whole, so its parts add up to one run's total."
                .into(),
        );
    }
    v
}

fn repeats_note(r: &Results) -> bool {
    r.runs.iter().any(|x| x.repeat > 1)
}
