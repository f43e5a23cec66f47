//! `phases.csv`: the phases after the create phase (`[[phase]]` in an
//! experiment file), one row per object and step — an update round's patch
//! and the moment the object was ready again, or a delete and the moment
//! the object was gone. Idle phases have no per-object rows; their span is in
//! summary.json ([`PhaseSummary`]) and the report takes rates over it from
//! the scraped series.

use std::path::Path;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::time::parse_time;

pub const FILE_NAME: &str = "phases.csv";

/// One object's step in one phase.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct PhaseRecord {
    /// 1-based position of the phase in the experiment file.
    pub phase: u32,
    /// "update" or "delete".
    pub kind: String,
    /// The update round (1..=count); 1 for a delete.
    pub round: u32,
    pub name: String,
    /// RFC 3339: when the patch or delete returned; None when it failed.
    pub started_at: Option<String>,
    /// RFC 3339: when our watch saw the object ready again after the patch
    /// (or gone after the delete); None when it never was within the phase.
    pub done_at: Option<String>,
}

impl PhaseRecord {
    /// done − started in seconds, when both exist.
    pub fn latency(&self) -> Option<f64> {
        let s = parse_time(self.started_at.as_deref()?)?;
        let d = parse_time(self.done_at.as_deref()?)?;
        Some(d - s)
    }
}

/// What one phase did (summary.json `phases`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PhaseSummary {
    pub phase: u32,
    /// "update", "delete" or "idle".
    pub kind: String,
    /// RFC 3339 span of the phase.
    pub started_at: String,
    pub ended_at: String,
    /// Steps the phase had to complete (objects × rounds; 0 for idle).
    pub steps: u64,
    /// Steps that completed (ready again, gone) within the phase.
    pub done: u64,
    /// Patches or deletes the apiserver refused.
    pub errors: u64,
    /// The phase ended at its timeout with steps left.
    pub timed_out: bool,
    /// Cut short by Ctrl-C.
    #[serde(default)]
    pub interrupted: bool,
}

impl PhaseSummary {
    pub fn span(&self) -> Option<(f64, f64)> {
        Some((parse_time(&self.started_at)?, parse_time(&self.ended_at)?))
    }
}

pub fn write(path: &Path, rows: &[PhaseRecord]) -> Result<()> {
    crate::files::write_csv(
        path,
        rows,
        &["phase", "kind", "round", "name", "started_at", "done_at"],
    )
}

/// Empty when the file does not exist (no phase ran).
pub fn read(path: &Path) -> Result<Vec<PhaseRecord>> {
    crate::files::read_csv(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_round_trip_and_latency_is_done_minus_started() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(FILE_NAME);
        let rows = vec![
            PhaseRecord {
                phase: 1,
                kind: "update".into(),
                round: 1,
                name: "widget-000001".into(),
                started_at: Some("2026-11-30T10:00:00.250Z".into()),
                done_at: Some("2026-11-30T10:00:01Z".into()),
            },
            PhaseRecord {
                phase: 2,
                kind: "delete".into(),
                round: 1,
                name: "widget-000001".into(),
                started_at: Some("2026-11-30T10:00:02Z".into()),
                done_at: None,
            },
        ];
        write(&p, &rows).unwrap();
        let back = read(&p).unwrap();
        assert_eq!(back, rows);
        assert_eq!(back[0].latency(), Some(0.75));
        assert_eq!(back[1].latency(), None);
        write(&p, &[]).unwrap();
        assert!(read(&p).unwrap().is_empty());
    }
}
