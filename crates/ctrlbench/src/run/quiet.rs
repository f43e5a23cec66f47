//! Waiting for a quiet cluster before each run: the previous run's writes
//! and teardown still echo through the apiserver for a while, and a run that
//! starts into them measures its neighbour too. The idle request rate is
//! taken once after the warm-up; before each run we wait (bounded) until no
//! widget is being written and the request rate is back near that level.
//! The wait is recorded in the run's summary.

use std::time::{Duration, Instant};

use ctrlbench_record::summary::QuietWait;

use super::measure::sampler::{apiserver_value, apiserver_values};

/// How long a run waits for quiet at most.
const BOUND: Duration = Duration::from_secs(10);
/// The sampling step of the wait.
const STEP: Duration = Duration::from_secs(1);

/// (requests total, widget writes total, when).
async fn counters(client: &kube::Client) -> Option<(f64, f64, Instant)> {
    let v = apiserver_values(client).await?;
    Some((
        apiserver_value(&v, "requests_total")?,
        apiserver_value(&v, "widget_writes_total")?,
        Instant::now(),
    ))
}

/// The apiserver's request rate over `over` while nothing of ours runs.
pub async fn idle_rate(client: &kube::Client, over: Duration) -> Option<f64> {
    let (r0, _, t0) = counters(client).await?;
    tokio::time::sleep(over).await;
    let (r1, _, t1) = counters(client).await?;
    Some((r1 - r0) / t1.duration_since(t0).as_secs_f64())
}

/// Waits until, over one step, no widget was written and the request rate is
/// at most max(1.5 × idle, idle + 5)/s — or the bound passes.
pub async fn wait(client: &kube::Client, idle: f64) -> QuietWait {
    let started = Instant::now();
    let limit = (idle * 1.5).max(idle + 5.0);
    let mut last = counters(client).await;
    let mut rate = None;
    while started.elapsed() < BOUND {
        tokio::time::sleep(STEP).await;
        let now = counters(client).await;
        if let (Some((r0, w0, t0)), Some((r1, w1, t1))) = (last, now) {
            let r = (r1 - r0) / t1.duration_since(t0).as_secs_f64();
            rate = Some(r);
            if w1 == w0 && r <= limit {
                return QuietWait {
                    waited_s: started.elapsed().as_secs_f64(),
                    idle_per_s: idle,
                    rate_per_s: r,
                    quiet: true,
                };
            }
        }
        last = now;
    }
    QuietWait {
        waited_s: started.elapsed().as_secs_f64(),
        idle_per_s: idle,
        rate_per_s: rate.unwrap_or(f64::NAN),
        quiet: false,
    }
}
