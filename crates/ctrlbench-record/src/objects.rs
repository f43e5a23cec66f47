//! `objects.csv`: one record per widget the loader created — when the create
//! returned, when our own watch first saw it Ready (empty: never) and when it
//! first saw a write by anyone but the loader (the controller's coverage).

use std::path::Path;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::time::parse_time;

/// One row of objects.csv.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ObjectRecord {
    pub name: String,
    /// RFC 3339; None when the create failed.
    pub created_at: Option<String>,
    /// RFC 3339 of the first Ready seen by our watch; None when never Ready.
    pub ready_at: Option<String>,
    /// RFC 3339 of the first change by a field manager other than the
    /// loader's, seen by our watch; None when nobody else ever wrote it
    /// (and in results older than this column).
    #[serde(default)]
    pub first_write_at: Option<String>,
}

impl ObjectRecord {
    /// created_at as seconds since the Unix epoch.
    pub fn created(&self) -> Option<f64> {
        self.created_at.as_deref().and_then(parse_time)
    }

    /// ready_at as seconds since the Unix epoch.
    pub fn ready(&self) -> Option<f64> {
        self.ready_at.as_deref().and_then(parse_time)
    }

    /// first_write_at as seconds since the Unix epoch.
    pub fn first_write(&self) -> Option<f64> {
        self.first_write_at.as_deref().and_then(parse_time)
    }
}

pub const FILE_NAME: &str = "objects.csv";

pub fn write(path: &Path, rows: &[ObjectRecord]) -> Result<()> {
    crate::files::write_csv(
        path,
        rows,
        &["name", "created_at", "ready_at", "first_write_at"],
    )
}

/// Whether the file has the first_write_at column (results from before it
/// existed do not: their coverage is unknown, not zero).
pub fn records_first_writes(path: &Path) -> bool {
    csv::Reader::from_path(path)
        .and_then(|mut r| r.headers().map(|h| h.iter().any(|c| c == "first_write_at")))
        .unwrap_or(false)
}

/// Empty when the file does not exist.
pub fn read(path: &Path) -> Result<Vec<ObjectRecord>> {
    crate::files::read_csv(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_with_missing_times() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(FILE_NAME);
        let rows = vec![
            ObjectRecord {
                name: "widget-000001".into(),
                created_at: Some("2026-11-30T01:12:28.142Z".into()),
                ready_at: None,
                first_write_at: Some("2026-11-30T01:12:29.5Z".into()),
            },
            ObjectRecord {
                name: "widget-000002".into(),
                created_at: None,
                ready_at: None,
                first_write_at: None,
            },
        ];
        write(&p, &rows).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert_eq!(
            text,
            "name,created_at,ready_at,first_write_at\nwidget-000001,2026-11-30T01:12:28.142Z,,2026-11-30T01:12:29.5Z\nwidget-000002,,,\n"
        );
        assert_eq!(read(&p).unwrap(), rows);
        assert!(records_first_writes(&p));
        // Results written before first_write_at existed still read.
        std::fs::write(&p, "name,created_at,ready_at\nwidget-000003,,\n").unwrap();
        assert_eq!(read(&p).unwrap()[0].first_write_at, None);
        assert!(!records_first_writes(&p));
        write(&p, &[]).unwrap();
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "name,created_at,ready_at,first_write_at\n"
        );
    }
}
