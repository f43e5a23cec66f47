//! A run group's slice of the apiserver's audit log: the log's length when
//! the group starts measuring, then, once its controllers have stopped,
//! every completed write of the workload's kind since, split by namespace into
//! each run's audit.csv (local plane with the audit log on; nothing otherwise).

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use ctrlbench_record::RunDir;
use ctrlbench_record::Summary;
use ctrlbench_record::audit::{self, AuditRecord};
use futures::future::BoxFuture;

use super::{Measurement, Run};

pub struct AuditSpan {
    log: PathBuf,
    start: u64,
    /// The workload's (API group, plural resource).
    kind: (String, String),
}

impl AuditSpan {
    /// Marks the start of the span; None without an audit log.
    pub fn begin(log: Option<&Path>, kind: (String, String)) -> Option<AuditSpan> {
        let log = log?;
        let start = std::fs::metadata(log).map(|m| m.len()).unwrap_or(0);
        Some(AuditSpan {
            log: log.to_path_buf(),
            start,
            kind,
        })
    }

    /// Writes each (namespace, run directory)'s audit.csv from the events
    /// logged since `begin`.
    pub fn write(&self, runs: &[(&str, &RunDir)]) -> Result<()> {
        let mut by_ns: HashMap<&str, Vec<AuditRecord>> =
            runs.iter().map(|(ns, _)| (*ns, Vec::new())).collect();
        let kind = (self.kind.0.as_str(), self.kind.1.as_str());
        if let Ok(mut f) = std::fs::File::open(&self.log) {
            f.seek(SeekFrom::Start(self.start))?;
            for line in BufReader::new(f).lines() {
                let line = line.with_context(|| format!("reading {}", self.log.display()))?;
                if let Some((ns, r)) = audit::from_log_line(&line, kind)
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

/// The audit log as a measurement (nothing without one).
pub struct Audit {
    span: Option<AuditSpan>,
}

impl Audit {
    pub fn new(run: &Run<'_>) -> Audit {
        let log = run.ctx.cluster.plane.as_ref().and_then(|p| p.audit_log());
        let r = &run.ctx.exp.workload.resource;
        Audit {
            span: AuditSpan::begin(log.as_deref(), (r.group.clone(), r.plural.clone())),
        }
    }
}

impl Measurement for Audit {
    fn finish<'a>(
        &'a mut self,
        run: &'a mut Run<'_>,
        _summaries: &'a mut [Summary],
    ) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            // Every controller has stopped: the blocking audit backend has
            // logged each of their writes.
            if let Some(a) = &self.span {
                let runs: Vec<(&str, &RunDir)> = run
                    .members
                    .iter()
                    .map(|m| (m.ns.as_str(), &m.dir))
                    .collect();
                a.write(&runs)?;
            }
            Ok(())
        })
    }
}
