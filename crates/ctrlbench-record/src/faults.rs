//! `faults.csv`: one row per fault the runner executed in a run — when it was
//! planned (seconds after the load started), when it actually happened, what
//! it did to which process, and how that went. A restart has one row for the
//! kill and the outcome of the new start (its pid) in the same row.

use std::path::Path;

use anyhow::Result;
use serde::{Deserialize, Serialize};

/// One row of faults.csv.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FaultRecord {
    /// Seconds after the load started, as the experiment file says.
    pub planned_s: f64,
    /// Seconds after the load started when the signal was sent.
    pub actual_s: f64,
    /// RFC 3339 of the same moment.
    pub at: String,
    /// kill | stop | restart.
    pub action: String,
    /// controller | apiserver:<k> | etcd:<k> | etcd:leader | etcd:follower, as written.
    pub target: String,
    /// The process it resolved to (`etcd:leader` → `etcd:1`).
    pub resolved: String,
    pub duration_s: f64,
    /// The pid signalled.
    pub pid: u32,
    /// `ok`, `ok, restarted as pid N`, `ok, continued`, or what failed.
    pub outcome: String,
}

pub const FILE_NAME: &str = "faults.csv";

pub fn write(path: &Path, rows: &[FaultRecord]) -> Result<()> {
    crate::files::write_csv(
        path,
        rows,
        &[
            "planned_s",
            "actual_s",
            "at",
            "action",
            "target",
            "resolved",
            "duration_s",
            "pid",
            "outcome",
        ],
    )
}

/// The faults of a run (empty when the file is absent: no faults ran).
pub fn read(path: &Path) -> Result<Vec<FaultRecord>> {
    crate::files::read_csv(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_round_trip() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join(FILE_NAME);
        let rows = vec![FaultRecord {
            planned_s: 2.0,
            actual_s: 2.01,
            at: "2026-11-30T10:00:00.000Z".into(),
            action: "restart".into(),
            target: "controller".into(),
            resolved: "controller".into(),
            duration_s: 1.0,
            pid: 42,
            outcome: "ok, restarted as pid 43".into(),
        }];
        write(&p, &rows).unwrap();
        assert_eq!(read(&p).unwrap(), rows);
        assert!(read(&d.path().join("none.csv")).unwrap().is_empty());
    }
}
