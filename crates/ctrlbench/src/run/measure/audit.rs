//! A run group's slice of the apiserver's audit log: the log's length when
//! the group starts measuring, then, once its controllers have stopped, one
//! pass over everything logged since. Every completed write of the
//! workload's kind goes, split by namespace, into each run's audit.csv;
//! every request of each run's controller (its ServiceAccount, named in the
//! run's namespace) into its footprint.csv, by phase. Local plane with the
//! audit log on; nothing otherwise.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use ctrlbench_record::RunDir;
use ctrlbench_record::Summary;
use ctrlbench_record::audit::{self, AuditRecord};
use ctrlbench_record::footprint::{self, Tally};
use futures::future::BoxFuture;

use super::{Measurement, Run};

pub struct AuditSpan {
    log: PathBuf,
    start: u64,
    /// The workload's (API group, plural resource).
    kind: (String, String),
}

impl AuditSpan {
    /// Marks the start of the span (at `from`, the log's length when the
    /// controllers had not started yet, else now); None without an audit log.
    pub fn begin(
        log: Option<&Path>,
        from: Option<u64>,
        kind: (String, String),
    ) -> Option<AuditSpan> {
        let log = log?;
        let start = from.unwrap_or_else(|| std::fs::metadata(log).map(|m| m.len()).unwrap_or(0));
        Some(AuditSpan {
            log: log.to_path_buf(),
            start,
            kind,
        })
    }

    /// Writes each run's audit.csv and footprint.csv from the events logged
    /// since `begin`.
    pub fn write(&self, runs: &[AuditedRun<'_>]) -> Result<()> {
        let mut by_ns: HashMap<&str, Vec<AuditRecord>> =
            runs.iter().map(|r| (r.ns, Vec::new())).collect();
        let mut tallies: Vec<Tally> = runs.iter().map(|_| Tally::default()).collect();
        let users: Vec<String> = runs
            .iter()
            .map(|r| format!("system:serviceaccount:{}:", r.ns))
            .collect();
        let kind = (self.kind.0.as_str(), self.kind.1.as_str());
        let t0 = std::time::Instant::now();
        if let Ok(mut f) = std::fs::File::open(&self.log) {
            let end = f.metadata().map(|m| m.len()).unwrap_or(0);
            // The log's cost is part of what a run reports: say what was read.
            tracing::info!(
                bytes = end.saturating_sub(self.start),
                "reading the audit log's span"
            );
            f.seek(SeekFrom::Start(self.start))?;
            // Streamed: at 100 000 objects the span is far larger than memory
            // should hold.
            for line in BufReader::new(f).lines() {
                let line = line.with_context(|| format!("reading {}", self.log.display()))?;
                if let Some((ns, r)) = audit::from_log_line(&line, kind)
                    && let Some(v) = by_ns.get_mut(ns.as_str())
                {
                    v.push(r);
                }
                for (i, u) in users.iter().enumerate() {
                    if let Some(req) = footprint::from_log_line(&line, u, kind) {
                        tallies[i].add(&runs[i].phase_of(req.received_us), &req.row);
                        break;
                    }
                }
            }
        }
        tracing::info!(seconds = t0.elapsed().as_secs_f64(), "audit log read");
        for (r, t) in runs.iter().zip(tallies) {
            audit::write(&r.dir.audit(), &by_ns[r.ns])?;
            footprint::write(&r.dir.footprint(), &t.rows())?;
        }
        Ok(())
    }
}

/// One run as the audit log is split: its namespace, its directory, and
/// the moments its phases begin (epoch microseconds).
pub struct AuditedRun<'a> {
    pub ns: &'a str,
    pub dir: &'a RunDir,
    /// When the controller first wrote one of the run's objects, if it did.
    pub first_write_us: Option<i64>,
    /// When every object was first ready, if it was.
    pub all_ready_us: Option<i64>,
    /// Each `[[phase]]`'s start, in order.
    pub phases: Vec<i64>,
}

impl AuditedRun<'_> {
    fn phase_of(&self, t: i64) -> String {
        if let Some(k) = self.phases.iter().rposition(|s| t >= *s) {
            return format!("phase-{}", k + 1);
        }
        match (self.first_write_us, self.all_ready_us) {
            (_, Some(r)) if t >= r => footprint::SETTLED.into(),
            (Some(w), _) if t < w => footprint::START.into(),
            _ => footprint::CREATE.into(),
        }
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
            span: AuditSpan::begin(
                log.as_deref(),
                run.members.iter().find_map(|m| m.audit_from),
                (r.group.clone(), r.plural.clone()),
            ),
        }
    }
}

impl Measurement for Audit {
    fn finish<'a>(
        &'a mut self,
        run: &'a mut Run<'_>,
        summaries: &'a mut [Summary],
    ) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            // Every controller has stopped: the blocking audit backend has
            // logged each of their requests.
            if let Some(a) = &self.span {
                let now = std::time::Instant::now();
                let wall = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_micros() as i64);
                let us = |at: std::time::Instant| {
                    wall - now.saturating_duration_since(at).as_micros() as i64
                };
                let runs: Vec<AuditedRun<'_>> = run
                    .members
                    .iter()
                    .enumerate()
                    .map(|(i, m)| AuditedRun {
                        ns: m.ns.as_str(),
                        dir: &m.dir,
                        first_write_us: m.objects.first_write_at().map(us),
                        all_ready_us: m.objects.all_ready_at().map(us),
                        phases: summaries
                            .get(i)
                            .map(|s| {
                                s.phases
                                    .iter()
                                    .filter_map(|p| {
                                        ctrlbench_record::time::parse_time(&p.started_at)
                                    })
                                    .map(|t| (t * 1e6) as i64)
                                    .collect()
                            })
                            .unwrap_or_default(),
                    })
                    .collect();
                a.write(&runs)?;
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_falls_in_the_phase_it_was_received_in() {
        let dir = RunDir {
            path: "/r".into(),
            scale: 1,
            variant: "v".into(),
            repeat: 1,
        };
        let r = AuditedRun {
            ns: "ns1",
            dir: &dir,
            first_write_us: None,
            all_ready_us: Some(100),
            phases: vec![200, 300],
        };
        let got: Vec<String> = [50, 100, 150, 200, 250, 300, 999]
            .iter()
            .map(|t| r.phase_of(*t))
            .collect();
        assert_eq!(
            got,
            [
                "create", "settled", "settled", "phase-1", "phase-1", "phase-2", "phase-2"
            ]
        );
    }
}
