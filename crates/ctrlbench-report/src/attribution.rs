//! Where a reconcile's time goes: simulated work (inferred from the
//! variant's configuration, for ctrlbench's own controllers only), client
//! rate-limiter wait (measured by the controller), API write time (measured
//! by the controller's client or by the apiserver) and the rest.

use crate::load::Run;
use crate::stats::fmt_duration;

/// The controllers' --work-ms default: unless the experiment overrides it,
/// every preset sleeps 10 ms per reconcile to stand for real work.
pub const DEFAULT_WORK_MS: f64 = 10.0;

/// One run's split of the mean reconcile time, in seconds per reconcile.
#[derive(Clone, Copy, Debug, Default)]
pub struct Attribution {
    pub mean: Option<f64>,
    /// The controller is one of ctrlbench's own (rust, go@…), which sleep
    /// `work` per reconcile; a user's controller has no simulated work.
    pub simulated: bool,
    /// Inferred: the recorded --work-ms setting, or the controllers' default
    /// (0 where nothing is simulated).
    pub work: f64,
    /// The recorded work differs from the controllers' default (else shown as "(default)").
    pub work_overridden: bool,
    /// Measured: throttle_wait_s_sum delta / reconciles.
    pub throttle: Option<f64>,
    /// Measured: the controller's own client time in its writes beyond the
    /// throttle wait (`api_by_client`), else the apiserver's mean widget
    /// update latency (cluster-wide when variants share the cluster) × the
    /// controller's own writes per reconcile.
    pub api: Option<f64>,
    /// `api` is the controller's own client time in its write requests
    /// (rest_client_request_duration_seconds), not the server-side estimate.
    pub api_by_client: bool,
    /// The server-side estimate's mean is over every widget write, the
    /// loader's creates included (results from before the update/create split).
    pub api_with_creates: bool,
    pub writes_per_reconcile: Option<f64>,
}

impl Attribution {
    /// mean − work − throttle − api; negative when the parts overlap.
    pub fn rest(&self) -> Option<f64> {
        Some(self.mean? - self.work - self.throttle.unwrap_or(0.0) - self.api.unwrap_or(0.0))
    }
}

/// Whose controller a run measured, as far as the split is concerned
/// (summary.json's `impl`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Ours, kube-rs (`rust`).
    Rust,
    /// Ours, controller-runtime (`go@…`).
    Go,
    /// A user's (`command`, `external`).
    Theirs,
}

impl Kind {
    fn of(run: &Run) -> Kind {
        match run.summary.as_ref().map(|s| s.implementation.as_str()) {
            Some("rust") => Kind::Rust,
            Some(i) if i.starts_with("go@") => Kind::Go,
            Some(_) => Kind::Theirs,
            // Results without a summary predate user's controllers.
            None => Kind::Rust,
        }
    }

    /// ctrlbench's `--work-ms` sleep exists in its own controllers only.
    fn simulates_work(self) -> bool {
        self != Kind::Theirs
    }

    /// Whether the client's request latency holds its rate-limiter wait.
    /// client-go's `Request.request` starts the clock of
    /// rest_client_request_duration_seconds before `tryThrottle` (v0.30 to
    /// v0.37 alike; a retry's throttle is inside it too), so a client-go
    /// controller's write latency holds its writes' throttle wait. The Rust
    /// controller (widget-controller/src/client.rs) starts its clock after
    /// its token bucket let the request through: its latency holds none. A
    /// user's controller that exports the metric exports client-go's.
    fn latency_holds_throttle(self) -> bool {
        self != Kind::Rust
    }
}

/// The work per reconcile the controller reported it ran with (summary.json's settings).
fn work_ms(run: &Run) -> Option<f64> {
    Some(run.summary.as_ref()?.settings.as_ref()?.work_ms as f64)
}

/// The controller's own counters over the run (metrics-<variant>.csv deltas).
#[derive(Clone, Copy, Debug, Default)]
struct Counters {
    reconciles: f64,
    latency_s: Option<f64>,
    throttle_s: Option<f64>,
    /// Its client's write latency: sum and count.
    client_write_s: Option<f64>,
    client_writes: Option<f64>,
    /// The writes' share of the throttle wait (absent in older results).
    client_write_throttle_s: Option<f64>,
    /// Its client's writes (rest_writes_total).
    writes: Option<f64>,
}

/// The time the client spent in its writes beyond waiting for its own rate
/// limiter, over the run: its write latency less the writes' throttle wait
/// where the latency holds it, so that the throttle (its own column) is
/// counted once. Older results do not split the wait by verb: the whole
/// wait then, as much of it as the writes' latency can hold (all of it
/// where only writes are throttled, as with every preset that reads from
/// its cache).
fn client_write_time(kind: Kind, c: &Counters) -> Option<f64> {
    let spent = c.client_write_s?;
    if !kind.latency_holds_throttle() {
        return Some(spent);
    }
    let wait = c
        .client_write_throttle_s
        .or(c.throttle_s.map(|w| w.min(spent)))
        .unwrap_or(0.0);
    Some((spent - wait).max(0.0))
}

/// The split from the controller's own counters: the mean, the throttle
/// and, where its client timed its writes, the API write time.
fn from_counters(kind: Kind, c: &Counters, a: &mut Attribution) {
    a.mean = c.latency_s.map(|s| s / c.reconciles);
    a.throttle = c.throttle_s.map(|s| s / c.reconciles);
    if c.client_writes.is_some_and(|n| n > 0.0)
        && let Some(spent) = client_write_time(kind, c)
    {
        a.api = Some(spent / c.reconciles);
        a.api_by_client = true;
        a.writes_per_reconcile = c.writes.map(|w| w / c.reconciles);
    }
}

pub fn of(run: &Run) -> Attribution {
    let flag = work_ms(run);
    if run.summary.as_ref().is_some_and(|s| !s.controller_metrics) {
        // Not scraped on purpose (a user's controller without metrics):
        // nothing to attribute, not even ctrlbench's simulated work.
        return Attribution::default();
    }
    let kind = Kind::of(run);
    let simulated = kind.simulates_work();
    let mut a = Attribution {
        simulated,
        work: match simulated {
            true => flag.unwrap_or(DEFAULT_WORK_MS) / 1000.0,
            false => 0.0,
        },
        work_overridden: flag.is_some_and(|w| w != DEFAULT_WORK_MS),
        ..Attribution::default()
    };
    let Some(m) = &run.metrics else {
        return a;
    };
    let Some(reconciles) = m.delta("reconcile_latency_count").filter(|c| *c > 0.0) else {
        return a;
    };
    let counters = Counters {
        reconciles,
        latency_s: m.delta("reconcile_latency_sum"),
        throttle_s: m.delta("throttle_wait_s_sum"),
        client_write_s: m.delta("client_write_latency_s_sum"),
        client_writes: m.delta("client_write_latency_count"),
        client_write_throttle_s: m.delta("client_write_throttle_s_sum"),
        writes: m.delta("rest_writes_total"),
    };
    from_counters(kind, &counters, &mut a);
    // The controller's own client timed its writes: the most direct
    // measure, and per variant whatever ran beside it.
    if a.api_by_client {
        return a;
    }
    if let Some(api) = &run.apiserver {
        // Newer results split out updates (PUT/PATCH/APPLY): the loader's
        // creates then stay out of the controller's write time.
        let updates = api.delta("widget_update_writes_total");
        // Writes per reconcile from the controller's own client counter (per
        // variant even when variants share the apiserver); the apiserver's
        // counts only for results recorded without it.
        let writes = match (counters.writes, updates) {
            (Some(w), _) => Some(w / reconciles),
            (None, Some(u)) => Some(u / reconciles),
            (None, None) => api
                .delta("widget_writes_total")
                .map(|w| (w - run.created()).max(0.0) / reconciles),
        };
        let (sum_col, count_col) = if updates.is_some() {
            ("widget_update_latency_sum", "widget_update_latency_count")
        } else {
            ("widget_write_latency_sum", "widget_write_latency_count")
        };
        let mean_write = api
            .delta(sum_col)
            .zip(api.delta(count_col))
            .filter(|(_, c)| *c > 0.0)
            .map(|(s, c)| s / c);
        a.writes_per_reconcile = writes;
        a.api_with_creates = updates.is_none();
        a.api = match (writes, mean_write) {
            (Some(w), Some(l)) => Some(w * l),
            (Some(0.0), None) => Some(0.0),
            _ => None,
        };
    }
    a
}

/// The median run's whole breakdown over the runs a group uses: runs are
/// ranked by mean reconcile time and the middle one's parts are taken
/// together (with an even count, the two middle runs' parts averaged), so
/// the parts still add up to one run's total instead of mixing per-part
/// medians from different runs.
pub fn median<'a>(runs: impl IntoIterator<Item = &'a Attribution>) -> Attribution {
    let mut used: Vec<&Attribution> = runs.into_iter().collect();
    let with_mean: Vec<&Attribution> = used.iter().copied().filter(|a| a.mean.is_some()).collect();
    if !with_mean.is_empty() {
        used = with_mean;
    }
    used.sort_by(|x, y| x.mean.unwrap_or(0.0).total_cmp(&y.mean.unwrap_or(0.0)));
    let n = used.len();
    if n == 0 {
        return Attribution::default();
    }
    let middle: &[&Attribution] = if n % 2 == 1 {
        &used[n / 2..=n / 2]
    } else {
        &used[n / 2 - 1..=n / 2]
    };
    let avg = |f: &dyn Fn(&Attribution) -> Option<f64>| {
        let v: Vec<f64> = middle.iter().filter_map(|a| f(a)).collect();
        (v.len() == middle.len()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    };
    Attribution {
        mean: avg(&|a| a.mean),
        simulated: middle.iter().all(|a| a.simulated),
        work: avg(&|a| Some(a.work)).unwrap_or(0.0),
        work_overridden: middle.iter().all(|a| a.work_overridden),
        api_by_client: middle.iter().all(|a| a.api_by_client),
        api_with_creates: middle.iter().any(|a| a.api_with_creates),
        throttle: avg(&|a| a.throttle),
        api: avg(&|a| a.api),
        writes_per_reconcile: avg(&|a| a.writes_per_reconcile),
    }
}

/// One sentence naming the largest part.
/// `who` names the group, e.g. "N=20 rust-good".
pub fn sentence(who: &str, a: &Attribution) -> String {
    let Some(mean) = a.mean.filter(|m| *m > 0.0) else {
        return format!("{who}: no reconciles measured, nothing to attribute.");
    };
    // Overlap beyond rounding (5%): the parts are not additive here.
    if let Some(rest) = a.rest().filter(|r| *r < -0.05 * mean) {
        let why = if a.api_by_client {
            "the controller's client counts its writes and its throttle wait over every request \
             between the first and the last scrape, those outside a reconcile included (its \
             informer's lists, leader election's Lease renewals, Events), while the mean covers \
             the reconciles that finished"
        } else if a.api_with_creates {
            "the apiserver's write mean covers every widget write in the window, the loader's \
             creates included (slow creates, as on a fresh plane's first run, inflate it)"
        } else {
            "the server-side write time is the controller's writes per reconcile × the \
             apiserver's mean update latency over every widget update in the window \
             (cluster-wide when variants share the apiserver), which a few slow updates lift"
        };
        return format!(
            "{who}: the measured parts exceed the {} mean reconcile by {}, so none can be named \
             dominant: {why}.",
            fmt_duration(mean),
            fmt_duration(-rest)
        );
    }
    let parts = [
        ("simulated work (inferred)", a.simulated.then_some(a.work)),
        ("client rate-limiter wait (measured)", a.throttle),
        (
            if a.api_by_client {
                "API write time (measured by its own client)"
            } else {
                "API write time (measured server-side)"
            },
            a.api,
        ),
        ("the unattributed rest", a.rest()),
    ];
    let Some((name, v)) = parts
        .iter()
        .filter_map(|(n, v)| Some((*n, (*v)?)))
        .max_by(|x, y| x.1.total_cmp(&y.1))
    else {
        return format!("{who}: no reconciles measured, nothing to attribute.");
    };
    format!(
        "{who}: {name} dominates, {} of the {} mean reconcile ({:.0}%).",
        fmt_duration(v),
        fmt_duration(mean),
        100.0 * v / mean
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(mean: f64, throttle: f64, api: f64) -> Attribution {
        Attribution {
            mean: Some(mean),
            work: 0.01,
            throttle: Some(throttle),
            api: Some(api),
            ..Attribution::default()
        }
    }

    /// Per-part medians would give throttle 0.02 (run 2) with api 0.02
    /// (run 3): a breakdown no run had. The median run's is taken whole.
    #[test]
    fn the_median_run_keeps_its_own_breakdown() {
        let runs = [
            a(0.10, 0.06, 0.02),
            a(0.05, 0.02, 0.01),
            a(0.08, 0.01, 0.05),
        ];
        let m = median(&runs);
        assert_eq!(
            (m.mean, m.throttle, m.api),
            (Some(0.08), Some(0.01), Some(0.05))
        );
        // Two runs: the middle pair averaged, still adding up.
        let m = median(&runs[..2]);
        assert!((m.mean.unwrap() - 0.075).abs() < 1e-12);
        let rest = m.rest().unwrap();
        assert!((m.work + m.throttle.unwrap() + m.api.unwrap() + rest - 0.075).abs() < 1e-12);
    }

    fn close(what: &str, got: Option<f64>, want: f64) {
        let g = got.unwrap_or_else(|| panic!("{what}: none"));
        assert!((g - want).abs() < 1e-9, "{what}: {g} ≠ {want}");
    }

    /// 10 reconciles of a client-go controller: 6 s of reconcile time, 4.5 s
    /// in its token bucket (4 s of it before writes, 0.5 s before reads) and
    /// 5.2 s of write latency on client-go's clock, which starts before the
    /// bucket. Per reconcile: mean 600 ms = work 10 + throttle 450 + API
    /// (520 − 400 =) 120 + rest 20. Taking both whole gave rest
    /// 600 − 10 − 450 − 520 = −380 ms.
    #[test]
    fn client_gos_throttle_wait_counts_once() {
        let c = Counters {
            reconciles: 10.0,
            latency_s: Some(6.0),
            throttle_s: Some(4.5),
            client_write_s: Some(5.2),
            client_writes: Some(20.0),
            client_write_throttle_s: Some(4.0),
            writes: Some(20.0),
        };
        let ours = Attribution {
            simulated: true,
            work: 0.010,
            ..Attribution::default()
        };
        let mut a = ours;
        from_counters(Kind::Go, &c, &mut a);
        assert!(a.api_by_client);
        close("mean", a.mean, 0.600);
        close("throttle", a.throttle, 0.450);
        close("api", a.api, 0.120);
        close("rest", a.rest(), 0.020);
        close("writes/reconcile", a.writes_per_reconcile, 2.0);
        // Older results, without the writes' share: the whole wait, which
        // the writes' latency can hold: API 520 − 450 = 70, rest 70.
        let mut a = ours;
        let older = Counters {
            client_write_throttle_s: None,
            ..c
        };
        from_counters(Kind::Go, &older, &mut a);
        close("older api", a.api, 0.070);
        close("older rest", a.rest(), 0.070);
        // A user's controller exporting the metric exports client-go's.
        let mut a = Attribution::default();
        from_counters(Kind::Theirs, &c, &mut a);
        close("theirs api", a.api, 0.120);
        close("theirs rest", a.rest(), 0.030);
        // The Rust controller's clock starts after its bucket: its 1.2 s of
        // write latency is all API time, 120 ms, and the rest 20 ms again.
        let rust = Counters {
            client_write_s: Some(1.2),
            ..c
        };
        let mut a = ours;
        from_counters(Kind::Rust, &rust, &mut a);
        close("rust api", a.api, 0.120);
        close("rust rest", a.rest(), 0.020);
    }

    /// The quick experiment's go-bad-fix shape: nothing but writes was
    /// throttled, and the writes' wait is nearly all of their latency.
    #[test]
    fn a_write_latency_made_of_waiting_leaves_little_api_time() {
        let c = Counters {
            reconciles: 100.0,
            latency_s: Some(50.0),
            throttle_s: Some(45.0),
            client_write_s: Some(46.0),
            client_writes: Some(200.0),
            client_write_throttle_s: Some(45.0),
            writes: Some(200.0),
        };
        let mut a = Attribution {
            simulated: true,
            work: 0.010,
            ..Attribution::default()
        };
        from_counters(Kind::Go, &c, &mut a);
        // 500 ms = 10 + 450 + (460 − 450 =) 10 + 30.
        close("api", a.api, 0.010);
        close("rest", a.rest(), 0.030);
        let s = sentence("N=20 go-bad-fix", &a);
        assert!(
            s.contains("client rate-limiter wait (measured) dominates"),
            "{s}"
        );
    }

    /// A user's controller has no simulated work, scraped or not; ours
    /// keep their default. Loaded from results-mixed, its go-good run
    /// relabelled a command, as a command's summary.json has it (no settings).
    #[test]
    fn only_our_own_controllers_have_simulated_work() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/results-mixed");
        let mut r = crate::load::Results::load(&dir).unwrap();
        let run = r.runs.iter_mut().find(|x| x.variant == "go-good").unwrap();
        let go = of(run);
        assert!(go.simulated && !go.work_overridden);
        close("go work", Some(go.work), DEFAULT_WORK_MS / 1000.0);
        let s = run.summary.as_mut().unwrap();
        (s.implementation, s.settings) = ("command".into(), None);
        let theirs = of(run);
        assert!(!theirs.simulated);
        assert_eq!(theirs.work, 0.0);
        // The same measured parts; the work moves into the rest.
        assert_eq!((theirs.mean, theirs.api), (go.mean, go.api));
        close(
            "rest",
            theirs.rest(),
            go.rest().unwrap() + DEFAULT_WORK_MS / 1000.0,
        );
        let said = sentence("N=20 op", &theirs);
        assert!(!said.contains("simulated"), "{said}");
        run.summary.as_mut().unwrap().implementation = "external".into();
        assert!(!of(run).simulated);
    }
}
