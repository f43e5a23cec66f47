//! The per-object times of one run ([`Objects`]): when each object was
//! created, first seen ready and first written by someone but the loader,
//! and the loader's field manager that tells those writes apart. The loader,
//! the members, our watch and the summary all share them, so they live here,
//! below every one of those files, and use none of them.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use ctrlbench_record::ObjectRecord;
use ctrlbench_record::time::now_rfc3339;

#[derive(Default, Clone)]
struct Times {
    created_at: Option<String>,
    ready_at: Option<String>,
    first_write_at: Option<String>,
    /// The resourceVersion our watch last saw.
    version: Option<String>,
}

/// The field manager the loader's creates carry.
pub const LOADER_MANAGER: &str = "ctrlbench-loader";

/// The objects of one run.
#[derive(Default)]
pub struct Objects {
    times: Mutex<HashMap<String, Times>>,
    ready: AtomicU64,
    /// When the last object first became Ready, if all `expected` did.
    all_ready_at: Mutex<Option<Instant>>,
    /// When the first object was first seen written by someone but the loader.
    first_write_at: Mutex<Option<Instant>>,
    pub expected: AtomicU64,
    /// Changes our watch saw to objects it had already seen: each write
    /// that changed something makes a new resourceVersion and one event.
    changes: AtomicU64,
    /// Objects first seen Ready whose status could say which generation it
    /// describes, and of those, how many did not.
    generation_checked: AtomicU64,
    generation_missing: AtomicU64,
    /// Creates the loader saw fail, set when it is done.
    failed_creates: AtomicU64,
}

impl Objects {
    pub fn created(&self, name: &str) {
        let mut t = self.times.lock().expect("objects lock");
        t.entry(name.to_string()).or_default().created_at = Some(now_rfc3339());
    }

    /// Only our watch (`measure::watch`) sees objects ready or written,
    /// hence visible to `run` alone.
    /// `observes`: whether its status names the generation it describes
    /// (None: nothing to judge), counted on the first Ready only.
    pub(super) fn seen_ready(&self, name: &str, observes: Option<bool>) {
        let mut t = self.times.lock().expect("objects lock");
        let e = t.entry(name.to_string()).or_default();
        if e.ready_at.is_none() {
            e.ready_at = Some(now_rfc3339());
            if let Some(o) = observes {
                self.generation_checked.fetch_add(1, Ordering::SeqCst);
                if !o {
                    self.generation_missing.fetch_add(1, Ordering::SeqCst);
                }
            }
            let n = self.ready.fetch_add(1, Ordering::SeqCst) + 1;
            if n == self.expected.load(Ordering::SeqCst) {
                *self.all_ready_at.lock().expect("objects lock") = Some(Instant::now());
            }
        }
    }

    pub(super) fn seen_written(&self, name: &str) {
        let mut t = self.times.lock().expect("objects lock");
        let e = t.entry(name.to_string()).or_default();
        if e.first_write_at.is_none() {
            e.first_write_at = Some(now_rfc3339());
            self.first_write_at
                .lock()
                .expect("objects lock")
                .get_or_insert_with(Instant::now);
        }
    }

    /// Our watch saw `name` at `version`: a change when it had seen the
    /// object at another.
    pub(super) fn seen_version(&self, name: &str, version: &str) {
        let mut t = self.times.lock().expect("objects lock");
        let e = t.entry(name.to_string()).or_default();
        if e.version.as_deref().is_some_and(|v| v != version) {
            self.changes.fetch_add(1, Ordering::SeqCst);
        }
        e.version = Some(version.to_string());
    }

    /// (checked, missing) of the objects first seen Ready, as
    /// [`Objects::seen_ready`] counts them; None when none was checked.
    pub fn observed_generation(&self) -> Option<(u64, u64)> {
        let checked = self.generation_checked.load(Ordering::SeqCst);
        (checked > 0).then(|| (checked, self.generation_missing.load(Ordering::SeqCst)))
    }

    /// The loader is done and `n` of its creates failed.
    pub fn creates_failed(&self, n: u64) {
        self.failed_creates.store(n, Ordering::SeqCst);
    }

    /// After failed creates, every object that exists is Ready: those the
    /// loader saw created and those our watch saw (a create whose answer
    /// was lost may have been made), and at least as many as succeeded.
    /// Such a run can never have all `scale` Ready; waiting for the window
    /// would only measure the wait.
    pub fn settled(&self, scale: u64) -> bool {
        let failed = self.failed_creates.load(Ordering::SeqCst);
        if failed == 0 || self.ready() + failed < scale {
            return false;
        }
        let t = self.times.lock().expect("objects lock");
        t.values().all(|v| v.ready_at.is_some())
    }

    /// Changes seen so far to objects already seen.
    pub fn changes(&self) -> u64 {
        self.changes.load(Ordering::SeqCst)
    }

    pub fn ready(&self) -> u64 {
        self.ready.load(Ordering::SeqCst)
    }

    pub fn all_ready_at(&self) -> Option<Instant> {
        *self.all_ready_at.lock().expect("objects lock")
    }

    /// When the first object was first seen written by the controller.
    pub fn first_write_at(&self) -> Option<Instant> {
        *self.first_write_at.lock().expect("objects lock")
    }

    /// objects.csv's records, sorted by name.
    pub fn rows(&self) -> Vec<ObjectRecord> {
        let mut rows: Vec<_> = {
            // Copied under the lock, sorted outside it: the watch waits less.
            let t = self.times.lock().expect("objects lock");
            t.iter()
                .map(|(n, v)| ObjectRecord {
                    name: n.clone(),
                    created_at: v.created_at.clone(),
                    ready_at: v.ready_at.clone(),
                    first_write_at: v.first_write_at.clone(),
                })
                .collect()
        };
        rows.sort();
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::Objects;

    /// 10 asked, 7 created, 3 failed, one of which the apiserver made
    /// anyway (our watch saw it): settled once all 8 that exist are Ready.
    #[test]
    fn a_run_whose_creates_failed_settles_when_what_exists_is_ready() {
        let o = Objects::default();
        for i in 0..7 {
            o.created(&format!("w{i}"));
        }
        o.seen_version("w7", "1");
        assert!(!o.settled(10), "the loader is not done");
        o.creates_failed(3);
        for i in 0..7 {
            o.seen_ready(&format!("w{i}"), None);
        }
        // 7 Ready + 3 failed reach 10, but w7 exists and is not Ready.
        assert!(!o.settled(10));
        o.seen_ready("w7", None);
        assert!(o.settled(10));
        // No failure: only all 10 Ready would do, which is convergence.
        let ok = Objects::default();
        ok.created("w0");
        ok.seen_ready("w0", None);
        assert!(!ok.settled(10));
        // Failures, but too few Ready for what succeeded: not settled.
        let few = Objects::default();
        few.creates_failed(3);
        few.seen_ready("w0", None);
        assert!(!few.settled(10));
    }
}
