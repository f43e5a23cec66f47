//! "Restart storm": per run whose controller ran several replicas, what
//! their start cost — each replica's initial list (process start → first
//! complete list, summary.json `replicas`; p50 and max over the replicas),
//! each apiserver's peak memory while they started (its VmHWM, reset when
//! they started), the apiserver's LIST p99 for the workload's objects and
//! the streaming lists it served and how long its watch cache of them took
//! to fill (apiserver.csv), beside the settings that decide them: replicas,
//! streaming list, object size, the apiserver's feature gates.

use super::Section;
use crate::context::ReportCtx;
use crate::quantile::{histogram_quantile, percentile};
use crate::{Block, Table};

pub struct Storm;

fn mib(b: f64) -> String {
    format!("{:.1} MiB", b / f64::from(1u32 << 20))
}

/// The gates a run's plane was given, "defaults" without any.
fn gates(g: &[String]) -> String {
    if g.is_empty() {
        "defaults".into()
    } else {
        g.join(", ")
    }
}

impl Section for Storm {
    fn render(&self, ctx: &ReportCtx, out: &mut Vec<Block>) {
        let fleets = ctx
            .results
            .runs
            .iter()
            .any(|r| r.summary.as_ref().is_some_and(|s| s.replicas.len() > 1));
        if !fleets {
            return;
        }
        let mut rows = Vec::new();
        for run in &ctx.results.runs {
            let Some(s) = run.summary.as_ref() else {
                continue;
            };
            // One replica: its own metrics row (beside the fleets, as the
            // baseline a storm is measured against).
            let (n, mut lists) = match s.replicas.len() {
                0 | 1 => (
                    1,
                    run.metrics
                        .as_ref()
                        .and_then(|m| m.max("initial_list_s"))
                        .filter(|x| *x > 0.0)
                        .into_iter()
                        .collect::<Vec<f64>>(),
                ),
                n => (
                    n,
                    s.replicas.iter().filter_map(|r| r.initial_list_s).collect(),
                ),
            };
            lists.sort_by(f64::total_cmp);
            let listed = format!("{}/{n}", lists.len());
            let secs = |v: Option<f64>| v.map_or("—".to_string(), |x| format!("{x:.2} s"));
            let api = run.apiserver.as_ref();
            let list_p99 = api
                .map(|a| histogram_quantile(0.99, &a.bucket_delta("widget_list_latency")))
                .filter(|x| x.is_finite());
            let streams = api.and_then(|a| a.delta("widget_watch_lists_total"));
            // The apiserver process at the run's end: its own fill (after a
            // restart, the one that followed it); none during the run: the
            // cache was filled before it (when the plane started empty).
            let cache_fill = api.map_or("—".to_string(), |a| {
                let during = a.delta("widget_watch_cache_inits").unwrap_or(0.0) > 0.0;
                let last = a.last_good();
                let n = last.and_then(|r| a.get(r, "widget_watch_cache_inits"));
                let s = last.and_then(|r| a.get(r, "widget_watch_cache_init_s_sum"));
                match (during, n, s) {
                    (true, Some(n), Some(s)) if n > 0.0 => format!("{:.2} s", s / n),
                    (false, Some(_), _) => "before the run".to_string(),
                    _ => "—".to_string(),
                }
            });
            let peak = match s.apiserver_peak_rss_bytes.as_slice() {
                [] => "—".to_string(),
                p => p
                    .iter()
                    .enumerate()
                    .map(|(k, b)| match s.apiserver_rss_at_start_bytes.get(k) {
                        Some(a) => format!("{} (+{})", mib(*b), mib(b - a)),
                        None => mib(*b),
                    })
                    .collect::<Vec<_>>()
                    .join(", "),
            };
            rows.push(vec![
                run.dir.label(),
                n.to_string(),
                s.settings
                    .as_ref()
                    .map_or("?", |x| if x.watch_list { "on" } else { "off" })
                    .to_string(),
                s.object_bytes.map_or("bare".to_string(), |b| {
                    format!("{:.1} KiB", b as f64 / 1024.0)
                }),
                listed,
                secs(percentile(&lists, 0.5)),
                secs(lists.last().copied()),
                peak,
                secs(list_p99),
                streams.map_or("—".to_string(), |x| format!("{x:.0}")),
                cache_fill,
                gates(&s.feature_gates),
            ]);
        }
        if rows.is_empty() {
            return;
        }
        out.push(Block::Heading(2, "Restart storm".into()));
        out.push(Block::Para(
            "Every run, when some controller ran several replicas (started at once). Initial list: each replica's \
             process start → its cache's first complete list (p50 and max over the replicas that \
             listed); apiserver peak RSS: each apiserver's high-water mark of resident memory (the \
             kernel's VmHWM, reset when the replicas had started, read at the end of the window: a \
             peak between two scrapes counts), with its rise over the memory it held when the \
             replicas started; LIST p99: the apiserver's request latency of the \
             workload's LISTs over the run; streaming lists: the WatchList initial lists it served \
             (apiserver_watch_list_duration_seconds_count); watch-cache fill: the apiserver's \
             apiserver_watch_cache_initialization_duration_seconds for the workload's resource, from \
             the process serving at the run's end, when it filled during the run (after an \
             apiserver restart, its refill; \"before the run\": the cache was filled earlier)."
                .into(),
        ));
        out.push(Block::Table(Table {
            head: [
                "run",
                "replicas",
                "watch_list",
                "object size",
                "listed",
                "initial list p50",
                "initial list max",
                "apiserver peak RSS",
                "LIST p99",
                "streaming lists",
                "watch-cache fill",
                "apiserver gates",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect(),
            rows,
        }));
    }
}
