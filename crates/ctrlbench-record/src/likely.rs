//! `likely.csv`, at the top of a results directory: the lines of the
//! operator's own source that each diagnosis rule's patterns point to,
//! found by the harness when the experiment names its source (`[workload]
//! source`, which `init --from` writes). One row per rule × line: the
//! rule's id, the file relative to the source directory, the line number
//! and the line's text, trimmed. They are "likely" lines, never evidence:
//! the report prints a few under each finding of that rule. The file is
//! absent when the experiment names no source.

use std::path::Path;

use anyhow::Result;
use serde::{Deserialize, Serialize};

pub const FILE_NAME: &str = "likely.csv";

/// The longest line text kept, in characters.
pub const MAX_TEXT: usize = 160;

/// One line a rule's pattern matched.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LikelyRow {
    /// The diagnosis rule's id (`list-per-reconcile` …).
    pub rule: String,
    /// The file, relative to the source directory, `/`-separated.
    pub path: String,
    /// 1-based.
    pub line: u64,
    /// The line, trimmed, at most [`MAX_TEXT`] characters.
    pub text: String,
}

pub fn write(path: &Path, rows: &[LikelyRow]) -> Result<()> {
    crate::rows::write(path, &["rule", "path", "line", "text"], rows)
}

/// None when the file does not exist (the experiment named no source).
pub fn read(path: &Path) -> Result<Option<Vec<LikelyRow>>> {
    crate::rows::read(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_round_trip_with_commas_and_quotes_in_the_text() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(FILE_NAME);
        let rows = vec![LikelyRow {
            rule: "list-per-reconcile".into(),
            path: "internal/controller/a.go".into(),
            line: 12,
            text: "r.List(ctx, &list, client.InNamespace(\"x\"))".into(),
        }];
        write(&p, &rows).unwrap();
        assert_eq!(read(&p).unwrap(), Some(rows));
        write(&p, &[]).unwrap();
        assert_eq!(read(&p).unwrap(), Some(vec![]));
        assert_eq!(read(&dir.path().join("none.csv")).unwrap(), None);
    }
}
