//! The work queue as client-go defines it: a key is *dirty* from the trigger
//! that queues it until a worker picks it up; triggers for a dirty key
//! coalesce; a key being processed is never handed to a second worker, and
//! one re-added while processing goes to the back when its reconcile is done.
//!
//! With `--queue kube` kube-runtime's scheduler decides the order (it has no
//! hooks), and this type only counts what client-go would count (depth,
//! waits, in-flight time) for the metrics. With `--queue fifo` it is also the
//! scheduler: [`Queue::next`] hands out keys in FIFO order.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::Instant;

use tokio::sync::Notify;

#[derive(Default)]
pub struct Queue {
    inner: Mutex<Inner>,
    /// Wakes a worker waiting in `next` (fifo only).
    ready: Notify,
}

#[derive(Default)]
struct Inner {
    /// Dirty keys and when they were queued.
    dirty: HashMap<String, Instant>,
    /// Keys being reconciled, with their start time.
    processing: HashMap<String, Instant>,
    /// The FIFO order of dirty keys not being processed; None: kube-runtime orders.
    order: Option<VecDeque<String>>,
}

impl Queue {
    /// A queue that also schedules, in client-go's FIFO order.
    pub fn fifo() -> Queue {
        Queue {
            inner: Mutex::new(Inner {
                order: Some(VecDeque::new()),
                ..Inner::default()
            }),
            ready: Notify::new(),
        }
    }

    /// A trigger for `key`. Returns true when it queued the key (an "add" in
    /// client-go's terms), false when it coalesced with a pending one.
    pub fn add(&self, key: &str) -> bool {
        let mut q = self.inner.lock().expect("queue lock");
        if q.dirty.contains_key(key) {
            return false;
        }
        q.dirty.insert(key.to_string(), Instant::now());
        // A key being processed is queued again when its reconcile is done.
        if !q.processing.contains_key(key)
            && let Some(order) = q.order.as_mut()
        {
            order.push_back(key.to_string());
            self.ready.notify_one();
        }
        true
    }

    /// The next key in FIFO order, waiting for one (fifo only; the caller
    /// then runs `start` … `done` for it).
    pub async fn next(&self) -> String {
        loop {
            let notified = self.ready.notified();
            {
                let mut q = self.inner.lock().expect("queue lock");
                if let Some(k) = q.order.as_mut().and_then(VecDeque::pop_front) {
                    return k;
                }
            }
            notified.await;
        }
    }

    /// A worker picked `key` up; returns how long it waited, if it was queued.
    pub fn start(&self, key: &str) -> Option<f64> {
        let mut q = self.inner.lock().expect("queue lock");
        q.processing.insert(key.to_string(), Instant::now());
        q.dirty.remove(key).map(|t| t.elapsed().as_secs_f64())
    }

    /// The reconcile of `key` finished.
    pub fn done(&self, key: &str) {
        let mut q = self.inner.lock().expect("queue lock");
        q.processing.remove(key);
        if q.dirty.contains_key(key)
            && let Some(order) = q.order.as_mut()
        {
            order.push_back(key.to_string());
            self.ready.notify_one();
        }
    }

    pub fn depth(&self) -> usize {
        self.inner.lock().expect("queue lock").dirty.len()
    }

    /// (sum, max) of the running time of in-flight reconciles, in seconds.
    pub fn in_progress_seconds(&self) -> (f64, f64) {
        let q = self.inner.lock().expect("queue lock");
        let now = Instant::now();
        q.processing.values().fold((0.0, 0.0), |(sum, max), t| {
            let d = now.duration_since(*t).as_secs_f64();
            (sum + d, f64::max(max, d))
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::Queue;

    #[test]
    fn triggers_coalesce_until_picked_up() {
        let q = Queue::default();
        assert!(q.add("a"));
        assert!(!q.add("a"));
        assert!(q.add("b"));
        assert_eq!(q.depth(), 2);
        assert!(q.start("a").is_some());
        assert_eq!(q.depth(), 1);
        // Re-added while processing: queued again (client-go's dirty set).
        assert!(q.add("a"));
        assert_eq!(q.depth(), 2);
        q.done("a");
        assert_eq!(q.in_progress_seconds().0, 0.0);
    }

    async fn next(q: &Queue) -> String {
        tokio::time::timeout(Duration::from_secs(1), q.next())
            .await
            .expect("a key was queued")
    }

    /// client-go's order: FIFO; a key re-added while processing waits behind
    /// keys queued before it, and is not handed out again until done.
    #[tokio::test]
    async fn fifo_serves_in_arrival_order_and_requeues_at_the_back() {
        let q = Queue::fifo();
        for k in ["a", "b", "c"] {
            q.add(k);
        }
        let a = next(&q).await;
        assert_eq!(a, "a");
        q.start(&a);
        // "a" re-triggers itself while running: no second copy in the queue.
        assert!(q.add("a"));
        assert!(!q.add("a"));
        assert_eq!(next(&q).await, "b");
        q.start("b");
        q.done("a");
        q.done("b");
        assert_eq!(next(&q).await, "c");
        q.start("c");
        q.done("c");
        assert_eq!(next(&q).await, "a");
        q.start("a");
        q.done("a");
        assert!(
            tokio::time::timeout(Duration::from_millis(50), q.next())
                .await
                .is_err(),
            "nothing left"
        );
    }

    /// A waiting worker wakes when a key arrives.
    #[tokio::test]
    async fn next_waits_for_an_add() {
        let q = std::sync::Arc::new(Queue::fifo());
        let waiter = tokio::spawn({
            let q = q.clone();
            async move { q.next().await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        q.add("x");
        let k = tokio::time::timeout(Duration::from_secs(1), waiter)
            .await
            .expect("woken")
            .unwrap();
        assert_eq!(k, "x");
    }
}
