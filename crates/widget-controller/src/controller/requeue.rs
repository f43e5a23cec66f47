//! The error path and the requeues, as controller-runtime's default rate
//! limiter has them: a failed key is requeued after the larger of its
//! per-item exponential backoff and the wait for a token of one overall
//! bucket; requeue-after delays go through the same stream (without the
//! bucket) so that the queue metrics count every add.

use std::sync::Arc;
use std::time::Duration;

use futures::{Stream, StreamExt};
use governor::DefaultDirectRateLimiter;
use kube::runtime::controller::Action;
use kube::runtime::reflector::ObjectRef;
use tokio::sync::mpsc;
use widget_api::Widget;
use widget_api::presets::retry;

use super::reconcile::{Context, Error, Requeue, key};
use crate::client::token_bucket;
use crate::metrics::Metrics;

/// client-go's default per-item backoff: 5 ms doubling per failure, capped at 1000 s.
const BACKOFF_BASE: Duration = Duration::from_millis(retry::BACKOFF_BASE_MS);
const BACKOFF_CAP: Duration = Duration::from_secs(retry::BACKOFF_CAP_S);

/// controller-runtime's error path: requeue after the per-item exponential
/// backoff (through our own trigger so the queue metrics see it, the retry
/// included); the requeue also waits for the overall retry bucket.
pub(super) fn error_policy(obj: Arc<Widget>, err: &Error, ctx: Arc<Context>) -> Action {
    let k = key(&obj);
    let failures = {
        let mut f = ctx.failures.lock().expect("failures lock");
        let n = f.entry(k.clone()).or_insert(0);
        let current = *n;
        *n += 1;
        current
    };
    let delay = backoff(failures);
    // The controller's one log target, wherever in the module a line is written.
    tracing::debug!(target: "widget_controller::controller", controller = "widget", key = %k, error = %err, ?delay, "Reconciler error");
    let _ = ctx
        .requeue
        .send((ObjectRef::from(obj.as_ref()), delay, true));
    Action::await_change()
}

/// 5 ms × 2^failures, capped at 1000 s.
pub fn backoff(failures: u32) -> Duration {
    let factor = 2f64.powi(failures.min(40) as i32);
    BACKOFF_BASE.mul_f64(factor).min(BACKOFF_CAP)
}

/// Delays each requeue by the larger of its per-item backoff and the wait
/// for a token of the one overall bucket (client-go's MaxOfRateLimiter over
/// ItemExponentialFailureRateLimiter and BucketRateLimiter), then triggers it.
/// Every requeue counts as a retry when it is asked for, as client-go's
/// delaying queue counts one on every AddAfter: error retries and
/// requeue-after alike.
pub(super) fn delayed_requeues(
    rx: mpsc::UnboundedReceiver<Requeue>,
    metrics: Arc<Metrics>,
) -> impl Stream<Item = ObjectRef<Widget>> + Send {
    let overall: Arc<DefaultDirectRateLimiter> =
        Arc::new(token_bucket(retry::OVERALL_QPS, retry::OVERALL_BURST));
    tokio_stream::wrappers::UnboundedReceiverStream::new(rx)
        .map(move |(obj, delay, rate_limited)| {
            let m = metrics.clone();
            m.record_retry();
            let overall = overall.clone();
            async move {
                if rate_limited {
                    tokio::join!(tokio::time::sleep(delay), overall.until_ready());
                } else {
                    tokio::time::sleep(delay).await;
                }
                let k = format!(
                    "{}/{}",
                    obj.namespace.as_deref().unwrap_or_default(),
                    obj.name
                );
                let counted = m.queue.add(&k);
                m.record_add(counted);
                obj
            }
        })
        .buffer_unordered(usize::MAX)
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;

    /// The overall bucket lets 100 retries through at once, then 10 per second
    /// (real time: governor keeps its own clock).
    #[tokio::test]
    async fn requeues_wait_for_the_overall_bucket() {
        let metrics = Arc::new(Metrics::new(1));
        let (tx, rx) = mpsc::unbounded_channel();
        for i in 0..110 {
            tx.send((
                ObjectRef::new(&format!("w{i}")).within("ns"),
                backoff(0),
                true,
            ))
            .unwrap();
        }
        drop(tx);
        let t0 = Instant::now();
        let times: Vec<Duration> = delayed_requeues(rx, metrics)
            .map(|_| t0.elapsed())
            .collect()
            .await;
        assert_eq!(times.len(), 110);
        let mut sorted = times.clone();
        sorted.sort();
        // Lower bounds only (a noisy machine can delay, never hasten): the
        // 101st waits for the first refill (100 ms), the 110th for the tenth.
        assert!(sorted[100] >= Duration::from_millis(90), "{sorted:?}");
        assert!(sorted[109] >= Duration::from_millis(990), "{sorted:?}");
    }

    /// client-go's delaying queue counts a retry on every AddAfter: a
    /// requeue-after (not rate limited) counts like an error retry.
    #[tokio::test]
    async fn every_requeue_counts_a_retry_as_client_go_does() {
        let metrics = Arc::new(Metrics::new(1));
        let (tx, rx) = mpsc::unbounded_channel();
        for (i, rate_limited) in [false, false, true].into_iter().enumerate() {
            tx.send((
                ObjectRef::new(&format!("w{i}")).within("ns"),
                Duration::from_millis(1),
                rate_limited,
            ))
            .unwrap();
        }
        drop(tx);
        let n = delayed_requeues(rx, metrics.clone()).count().await;
        assert_eq!(n, 3);
        let page = metrics.encode();
        let retries = page
            .lines()
            .find(|l| l.starts_with("workqueue_retries_total"))
            .unwrap_or_else(|| panic!("{page}"));
        assert!(retries.ends_with(" 3"), "{retries}");
    }

    #[test]
    fn backoff_matches_client_go() {
        assert_eq!(backoff(0), Duration::from_millis(5));
        assert_eq!(backoff(1), Duration::from_millis(10));
        assert_eq!(backoff(10), Duration::from_millis(5 * 1024));
        assert_eq!(backoff(40), BACKOFF_CAP);
    }
}
