//! The work queue as client-go counts it, kept beside kube-runtime's own
//! scheduler (which has no hooks): a key is *dirty* from the trigger that
//! queues it until a worker picks it up; triggers for a dirty key coalesce.
//! Depth is the number of dirty keys; unfinished work is the time in-flight
//! reconciles have been running.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

#[derive(Default)]
pub struct Queue {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    /// Dirty keys and when they were queued.
    dirty: HashMap<String, Instant>,
    /// Keys being reconciled, with their start time.
    processing: HashMap<String, Instant>,
}

impl Queue {
    /// A trigger for `key`. Returns true when it queued the key (an "add" in
    /// client-go's terms), false when it coalesced with a pending one.
    pub fn add(&self, key: &str) -> bool {
        let mut q = self.inner.lock().expect("queue lock");
        if q.dirty.contains_key(key) {
            return false;
        }
        q.dirty.insert(key.to_string(), Instant::now());
        true
    }

    /// A worker picked `key` up; returns how long it waited, if it was queued.
    pub fn start(&self, key: &str) -> Option<f64> {
        let mut q = self.inner.lock().expect("queue lock");
        q.processing.insert(key.to_string(), Instant::now());
        q.dirty.remove(key).map(|t| t.elapsed().as_secs_f64())
    }

    /// The reconcile of `key` finished.
    pub fn done(&self, key: &str) {
        self.inner
            .lock()
            .expect("queue lock")
            .processing
            .remove(key);
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
}
