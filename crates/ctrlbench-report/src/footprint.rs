//! A run's API footprint as the report reads it: footprint.csv's rows of
//! the create phase (until every object was Ready, and after), summed by
//! what a figure or a diagnosis rule asks (GETs, LISTs, watches, writes of
//! the workload's own objects, conflicts, Events). Each count is this run's
//! controller's own: the audit log names the caller.

use std::collections::BTreeMap;

use ctrlbench_record::footprint::{CREATE, FootprintRow, SETTLED, START};

/// The create phase's rows of one run.
#[derive(Clone, Debug, Default)]
pub struct Footprint {
    pub rows: Vec<FootprintRow>,
}

impl Footprint {
    /// The create phase of `rows` (later phases have figures of their own).
    pub fn of(rows: &[FootprintRow]) -> Footprint {
        Footprint {
            rows: rows
                .iter()
                .filter(|r| r.phase == START || r.phase == CREATE || r.phase == SETTLED)
                .cloned()
                .collect(),
        }
    }

    /// Requests that `keep` accepts.
    pub fn count(&self, keep: impl Fn(&FootprintRow) -> bool) -> f64 {
        self.rows
            .iter()
            .filter(|r| keep(r))
            .map(|r| r.count as f64)
            .sum()
    }

    pub fn requests(&self) -> f64 {
        self.count(|_| true)
    }

    pub fn verb(&self, verb: &str) -> f64 {
        self.count(|r| r.verb == verb)
    }

    /// Watches the controller opened anew, of the rows `keep` accepts: every
    /// watch less those that only resumed one. An informer re-opens its
    /// watch from the last version it saw when the apiserver closes it (a
    /// timeout, or a watcher too slow for a burst of events): per list or
    /// watch target, the watches from a version beyond its LISTs (each of
    /// which hands one watch its version) are such resumes.
    pub fn opened_watches(&self, keep: impl Fn(&FootprintRow) -> bool) -> f64 {
        // target -> (watches, watches from a version, lists)
        let mut by: BTreeMap<(String, bool, &str), (f64, f64, f64)> = BTreeMap::new();
        for r in self.rows.iter().filter(|r| keep(r)) {
            if r.verb != "watch" && r.verb != "list" {
                continue;
            }
            let e = by
                .entry((r.target(), r.namespaced, r.selector.as_str()))
                .or_default();
            let n = r.count as f64;
            match (r.verb.as_str(), r.from_version) {
                ("watch", true) => (e.0, e.1) = (e.0 + n, e.1 + n),
                ("watch", false) => e.0 += n,
                _ => e.2 += n,
            }
        }
        by.values()
            .map(|(w, from, lists)| w - (from - lists).max(0.0))
            .sum()
    }

    /// LISTs beyond the one each watch starts with: a controller's informer
    /// lists once and then watches; the LISTs past that are its own.
    pub fn extra_lists(&self) -> f64 {
        (self.verb("list") - self.verb("watch")).max(0.0)
    }

    /// Accepted writes of the workload's own objects, not their status.
    pub fn object_writes(&self) -> f64 {
        self.count(|r| r.workload && r.subresource.is_empty() && is_update(r) && ok(r))
    }

    /// Accepted writes of the workload's status subresource.
    pub fn status_writes(&self) -> f64 {
        self.count(|r| r.workload && r.subresource == "status" && is_update(r) && ok(r))
    }

    /// Every write that was not refused (2xx), any resource.
    pub fn writes(&self) -> f64 {
        self.count(|r| r.is_write() && (200..300).contains(&r.code))
    }

    /// Updates and patches refused with 409: the object changed since it was read.
    pub fn conflicts(&self) -> f64 {
        self.count(|r| is_update(r) && r.code == 409)
    }

    /// Creates refused with 409: the object already existed.
    pub fn already_existed(&self) -> f64 {
        self.count(|r| r.verb == "create" && r.code == 409)
    }

    pub fn events(&self) -> f64 {
        self.count(|r| r.verb == "create" && r.resource == "events")
    }

    /// Lists and watches that named no namespace: they read every namespace.
    pub fn cluster_wide_reads(&self) -> f64 {
        self.count(|r| (r.verb == "list" || r.verb == "watch") && !r.namespaced)
    }

    /// The resources a cluster-wide list or watch read, as a reader names them.
    pub fn cluster_wide_targets(&self) -> Vec<String> {
        let mut t: Vec<String> = self
            .rows
            .iter()
            .filter(|r| (r.verb == "list" || r.verb == "watch") && !r.namespaced)
            .map(FootprintRow::target)
            .collect();
        t.sort();
        t.dedup();
        t
    }

    /// Requests after every object was first Ready, in the create phase.
    pub fn settled(&self, keep: impl Fn(&FootprintRow) -> bool) -> f64 {
        self.count(|r| r.phase == SETTLED && keep(r))
    }
}

fn ok(r: &FootprintRow) -> bool {
    (200..300).contains(&r.code)
}

fn is_update(r: &FootprintRow) -> bool {
    r.verb == "update" || r.verb == "patch"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(phase: &str, verb: &str, sub: &str, code: u16, workload: bool, n: u64) -> FootprintRow {
        FootprintRow {
            phase: phase.into(),
            verb: verb.into(),
            resource: if workload { "widgets" } else { "events" }.into(),
            subresource: sub.into(),
            code,
            namespaced: true,
            workload,
            count: n,
            ..Default::default()
        }
    }

    #[test]
    fn counts_read_the_create_phase_only() {
        let f = Footprint::of(&[
            row(CREATE, "list", "", 200, true, 3),
            row(CREATE, "watch", "", 200, true, 1),
            row(CREATE, "update", "status", 200, true, 50),
            row(SETTLED, "update", "status", 409, true, 4),
            row(SETTLED, "patch", "", 200, true, 7),
            row(CREATE, "create", "", 200, false, 9),
            row("phase-1", "get", "", 200, true, 100),
        ]);
        assert_eq!(f.requests(), 74.0);
        assert_eq!(f.extra_lists(), 2.0);
        // The 409s are conflicts, not writes.
        assert_eq!(f.status_writes(), 50.0);
        assert_eq!(f.object_writes(), 7.0);
        assert_eq!(f.conflicts(), 4.0);
        assert_eq!(f.events(), 9.0);
        assert_eq!(f.writes(), 50.0 + 7.0 + 9.0);
        assert_eq!(f.settled(|_| true), 11.0);
        assert_eq!(f.verb("get"), 0.0);
    }

    #[test]
    fn resumed_watches_are_not_opened_anew() {
        let watch = |phase: &str, namespaced: bool, from_version: bool, n: u64| FootprintRow {
            namespaced,
            from_version,
            ..row(phase, "watch", "", 200, true, n)
        };
        // A lister-watcher (kube-rs): one list, its watch from the list's
        // version, then three resumes after the apiserver closed it; plus a
        // streaming list (client-go) of another target, resumed once.
        let f = Footprint::of(&[
            row(START, "list", "", 200, true, 1),
            watch(START, true, true, 1),
            watch(CREATE, true, true, 3),
            watch(START, false, false, 1),
            watch(SETTLED, false, true, 1),
        ]);
        assert_eq!(f.verb("watch"), 6.0);
        assert_eq!(f.opened_watches(|_| true), 2.0);
        assert_eq!(f.opened_watches(|r| r.phase != START), 0.0);
        // Per reconcile: a list and a watch from its version each time, or
        // a watch from now each time, all open anew.
        let per_reconcile = Footprint::of(&[
            row(CREATE, "list", "", 200, true, 10),
            watch(CREATE, true, true, 10),
            watch(CREATE, false, false, 10),
        ]);
        assert_eq!(per_reconcile.opened_watches(|_| true), 20.0);
    }
}
