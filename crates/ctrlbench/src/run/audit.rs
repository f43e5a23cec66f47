//! A run group's slice of the apiserver's audit log: the log's length when
//! the group starts measuring, then, once its controllers have stopped,
//! every completed widget write since, split by namespace into each run's
//! audit.csv (local plane with the audit log on; nothing otherwise).

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use ctrlbench_record::RunDir;
use ctrlbench_record::audit::{self, AuditRecord};

pub struct AuditSpan {
    log: PathBuf,
    start: u64,
}

impl AuditSpan {
    /// Marks the start of the span; None without an audit log.
    pub fn begin(log: Option<&Path>) -> Option<AuditSpan> {
        let log = log?;
        let start = std::fs::metadata(log).map(|m| m.len()).unwrap_or(0);
        Some(AuditSpan {
            log: log.to_path_buf(),
            start,
        })
    }

    /// Writes each (namespace, run directory)'s audit.csv from the events
    /// logged since `begin`.
    pub fn write(&self, runs: &[(&str, &RunDir)]) -> Result<()> {
        let mut by_ns: HashMap<&str, Vec<AuditRecord>> =
            runs.iter().map(|(ns, _)| (*ns, Vec::new())).collect();
        if let Ok(mut f) = std::fs::File::open(&self.log) {
            f.seek(SeekFrom::Start(self.start))?;
            for line in BufReader::new(f).lines() {
                let line = line.with_context(|| format!("reading {}", self.log.display()))?;
                if let Some((ns, r)) = audit::from_log_line(&line)
                    && let Some(v) = by_ns.get_mut(ns.as_str())
                {
                    v.push(r);
                }
            }
        }
        for (ns, dir) in runs {
            audit::write(&dir.audit(), &by_ns[ns])?;
        }
        Ok(())
    }
}
