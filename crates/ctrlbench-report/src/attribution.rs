//! Where a reconcile's time goes: simulated work (inferred from the
//! variant's configuration), client rate-limiter wait (measured by the
//! controller), API write time (measured by the apiserver) and the rest.

use crate::load::Run;
use crate::stats::fmt_duration;

/// The controllers' --work-ms default: unless the experiment overrides it,
/// every preset sleeps 10 ms per reconcile to stand for real work.
pub const DEFAULT_WORK_MS: f64 = 10.0;

/// One run's split of the mean reconcile time, in seconds per reconcile.
#[derive(Clone, Copy, Debug, Default)]
pub struct Attribution {
    pub mean: Option<f64>,
    /// Inferred: the recorded --work-ms setting, or the controllers' default.
    pub work: f64,
    /// The recorded work differs from the controllers' default (else shown as "(default)").
    pub work_overridden: bool,
    /// Measured: throttle_wait_s_sum delta / reconciles.
    pub throttle: Option<f64>,
    /// Measured: the apiserver's mean widget update latency (cluster-wide
    /// when variants share the cluster) × the controller's own writes per
    /// reconcile.
    pub api: Option<f64>,
    /// `api` is the controller's own client time in its write requests
    /// (rest_client_request_duration_seconds), not the server-side estimate.
    pub api_by_client: bool,
    pub writes_per_reconcile: Option<f64>,
}

impl Attribution {
    /// mean − work − throttle − api; negative when the parts overlap.
    pub fn rest(&self) -> Option<f64> {
        Some(self.mean? - self.work - self.throttle.unwrap_or(0.0) - self.api.unwrap_or(0.0))
    }
}

/// The work per reconcile the controller reported it ran with (summary.json's settings).
fn work_ms(run: &Run) -> Option<f64> {
    Some(run.summary.as_ref()?.settings.as_ref()?.work_ms as f64)
}

pub fn of(run: &Run) -> Attribution {
    let flag = work_ms(run);
    if run.summary.as_ref().is_some_and(|s| !s.controller_metrics) {
        // Not scraped on purpose (a user's controller without metrics):
        // nothing to attribute, not even ctrlbench's simulated work.
        return Attribution::default();
    }
    let mut a = Attribution {
        work: flag.unwrap_or(DEFAULT_WORK_MS) / 1000.0,
        work_overridden: flag.is_some_and(|w| w != DEFAULT_WORK_MS),
        ..Attribution::default()
    };
    let Some(m) = &run.metrics else {
        return a;
    };
    let Some(reconciles) = m.delta("reconcile_latency_count").filter(|c| *c > 0.0) else {
        return a;
    };
    a.mean = m.delta("reconcile_latency_sum").map(|s| s / reconciles);
    a.throttle = m.delta("throttle_wait_s_sum").map(|s| s / reconciles);
    // The controller's own client timed its writes: the most direct
    // measure, and per variant whatever ran beside it.
    if m.delta("client_write_latency_count")
        .is_some_and(|c| c > 0.0)
        && let Some(spent) = m.delta("client_write_latency_s_sum")
    {
        a.api = Some(spent / reconciles);
        a.api_by_client = true;
        a.writes_per_reconcile = m.delta("rest_writes_total").map(|w| w / reconciles);
        return a;
    }
    if let Some(api) = &run.apiserver {
        // Newer results split out updates (PUT/PATCH/APPLY): the loader's
        // creates then stay out of the controller's write time.
        let updates = api.delta("widget_update_writes_total");
        // Writes per reconcile from the controller's own client counter (per
        // variant even when variants share the apiserver); the apiserver's
        // counts only for results recorded without it.
        let own = m.delta("rest_writes_total");
        let writes = match (own, updates) {
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
        return Attribution {
            work: DEFAULT_WORK_MS / 1000.0,
            ..Attribution::default()
        };
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
        work: avg(&|a| Some(a.work)).unwrap_or(DEFAULT_WORK_MS / 1000.0),
        work_overridden: middle.iter().all(|a| a.work_overridden),
        api_by_client: middle.iter().all(|a| a.api_by_client),
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
        return format!(
            "{who}: the measured parts exceed the {} mean reconcile by {}, so none can be named \
             dominant: the apiserver's write mean covers every widget write in the window, the \
             loader's creates included (slow creates, as on a fresh plane's first run, inflate it).",
            fmt_duration(mean),
            fmt_duration(-rest)
        );
    }
    let parts = [
        ("simulated work (inferred)", Some(a.work)),
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
    let (name, v) = parts
        .iter()
        .filter_map(|(n, v)| Some((*n, (*v)?)))
        .max_by(|x, y| x.1.total_cmp(&y.1))
        .unwrap_or(("simulated work (inferred)", a.work));
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
}
