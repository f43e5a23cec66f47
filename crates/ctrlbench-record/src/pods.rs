//! `pods.csv`: one record per pod our own watch saw in a run's namespace —
//! its owner (the controller ownerReference, a ReplicaSet followed up to the
//! Deployment that owns it) and the seconds from the load's start until it
//! was first seen, scheduled, Running and Ready (empty: never). Written
//! only when the namespace had a pod. The time from a workload object's
//! creation to all of its pods Ready is not stored: the report takes it
//! from this file and objects.csv, with summary.json's `load_started_at`
//! to put both on one clock.

use std::path::Path;

use anyhow::Result;
use serde::{Deserialize, Serialize};

pub const FILE_NAME: &str = "pods.csv";

pub const HEADER: &[&str] = &[
    "namespace",
    "pod",
    "owner_kind",
    "owner",
    "created_s",
    "scheduled_s",
    "running_s",
    "ready_s",
];

/// One row of pods.csv; times in seconds since the load's start.
#[derive(Clone, Debug, Default, PartialEq, PartialOrd, Serialize, Deserialize)]
pub struct PodRecord {
    pub namespace: String,
    pub pod: String,
    /// Empty when the pod has no controller.
    pub owner_kind: String,
    pub owner: String,
    /// When our watch first saw the pod (creationTimestamp has whole seconds only).
    pub created_s: Option<f64>,
    /// The PodScheduled condition True, or spec.nodeName set, whichever came first.
    pub scheduled_s: Option<f64>,
    /// status.phase Running.
    pub running_s: Option<f64>,
    /// The Ready condition True.
    pub ready_s: Option<f64>,
}

impl PodRecord {
    /// created → `stage` in seconds, None when the stage never came (or
    /// the pod's creation was not seen).
    pub fn since_created(&self, stage: Option<f64>) -> Option<f64> {
        Some(stage? - self.created_s?)
    }
}

/// Seconds rounded to the millisecond, as every record's times are.
pub fn millis(s: f64) -> f64 {
    (s * 1000.0).round() / 1000.0
}

pub fn write(path: &Path, rows: &[PodRecord]) -> Result<()> {
    crate::files::write_csv(path, rows, HEADER)
}

/// Empty when the file does not exist (no pod in the run's namespace).
pub fn read(path: &Path) -> Result<Vec<PodRecord>> {
    crate::files::read_csv(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_with_stages_that_never_came() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(FILE_NAME);
        let rows = vec![
            PodRecord {
                namespace: "ns".into(),
                pod: "web-7d9-abcde".into(),
                owner_kind: "Deployment".into(),
                owner: "web".into(),
                created_s: Some(0.25),
                scheduled_s: Some(0.3),
                running_s: Some(1.5),
                ready_s: None,
            },
            PodRecord {
                namespace: "ns".into(),
                pod: "lonely".into(),
                ..PodRecord::default()
            },
        ];
        write(&p, &rows).unwrap();
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "namespace,pod,owner_kind,owner,created_s,scheduled_s,running_s,ready_s\n\
             ns,web-7d9-abcde,Deployment,web,0.25,0.3,1.5,\n\
             ns,lonely,,,,,,\n"
        );
        assert_eq!(read(&p).unwrap(), rows);
        assert_eq!(rows[0].since_created(rows[0].running_s), Some(1.25));
        assert_eq!(rows[0].since_created(rows[0].ready_s), None);
        write(&p, &[]).unwrap();
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            format!("{}\n", HEADER.join(","))
        );
        assert!(read(&dir.path().join("none.csv")).unwrap().is_empty());
        assert_eq!(millis(1.23456), 1.235);
    }
}
