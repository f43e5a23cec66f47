//! The local plane's own processes beyond etcd and the apiservers
//! (kube-controller-manager, kube-scheduler, kwok: what fake nodes and the
//! plane's controllers cost) read from /proc every scrape interval into
//! plane.csv in each run directory: CPU seconds and resident memory. etcd
//! and the apiservers report theirs on their metrics pages (the sampler's);
//! these are read from /proc, since the controller-manager opens no port.
//! Nothing is written on an existing cluster or a plane without them.

use std::time::{Duration, Instant};

use anyhow::Result;
use ctrlbench_plane::process::{kb_field, stat_fields};
use ctrlbench_record::plane;
use ctrlbench_record::table::Table;
use ctrlbench_record::time::now_rfc3339;
use futures::future::BoxFuture;

use super::{Measurement, Run};

/// /proc's utime and stime count USER_HZ ticks, 100 a second on Linux.
const TICKS_PER_S: f64 = 100.0;

/// (CPU seconds, resident bytes) of `pid`, None when it is gone.
fn usage(pid: u32) -> Option<(f64, u64)> {
    let f = stat_fields(&pid.to_string())?;
    // utime and stime are fields 14 and 15 (index N-3).
    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    Some((ticks as f64 / TICKS_PER_S, kb_field(&status, "VmRSS")?))
}

pub struct PlaneProcesses {
    procs: Vec<(&'static str, u32)>,
    tables: Vec<Table>,
    interval: Duration,
    next: Instant,
}

impl PlaneProcesses {
    pub fn new(run: &Run<'_>) -> PlaneProcesses {
        let procs = run
            .ctx
            .cluster
            .plane
            .as_ref()
            .map(|p| p.extra_processes())
            .unwrap_or_default();
        let interval = Duration::from_secs_f64(run.ctx.exp.scrape_interval_s);
        PlaneProcesses {
            procs,
            tables: Vec::new(),
            interval,
            next: Instant::now(),
        }
    }

    /// One row per run directory; a process gone is a failed row.
    fn row(&mut self) -> Result<()> {
        let ts = now_rfc3339();
        let mut cells = vec![ts, String::new()];
        let mut ok = true;
        for (_, pid) in &self.procs {
            match usage(*pid) {
                Some((cpu, rss)) => {
                    cells.push(format!("{cpu}"));
                    cells.push(rss.to_string());
                }
                None => {
                    ok = false;
                    cells.extend([String::new(), String::new()]);
                }
            }
        }
        cells[1] = if ok { "1" } else { "0" }.into();
        for t in &mut self.tables {
            t.row(cells.clone())?;
        }
        Ok(())
    }
}

impl Measurement for PlaneProcesses {
    fn start<'a>(&'a mut self, run: &'a mut Run<'_>) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            if self.procs.is_empty() {
                return Ok(());
            }
            let names: Vec<&str> = self.procs.iter().map(|(n, _)| *n).collect();
            for m in run.members.iter() {
                self.tables
                    .push(Table::create(&m.dir.plane(), plane::header(&names))?);
            }
            // The baseline, before the load.
            self.row()?;
            self.next = Instant::now() + self.interval;
            Ok(())
        })
    }

    fn tick<'a>(&'a mut self, _run: &'a mut Run<'_>) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            if !self.tables.is_empty() && Instant::now() >= self.next {
                self.row()?;
                self.next = Instant::now() + self.interval;
            }
            Ok(())
        })
    }

    fn after_window<'a>(&'a mut self, _run: &'a mut Run<'_>) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            if !self.tables.is_empty() {
                self.row()?;
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    /// This process's own CPU and memory, read as the plane's are.
    #[test]
    fn usage_reads_proc() {
        let (cpu, rss) = super::usage(std::process::id()).unwrap();
        assert!(cpu >= 0.0);
        let own = ctrlbench_plane::process::own_peak_rss_bytes().unwrap();
        assert!(rss > 0 && rss <= own, "{rss} vs peak {own}");
        assert!(super::usage(u32::MAX).is_none());
    }
}
