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

/// One process's CPU and memory as /proc has them: the one reading of a
/// process that this measurement and the controllers' (`controller_os`) share.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Usage {
    /// utime + stime: its own CPU seconds.
    pub cpu_s: f64,
    /// cutime + cstime: the CPU seconds of the children it has reaped.
    pub reaped_cpu_s: f64,
    /// VmRSS now.
    pub rss_bytes: u64,
    /// VmHWM: its largest resident set since it started.
    pub peak_rss_bytes: u64,
}

/// `pid`'s usage, None when it is gone (or a zombie, which has no memory left).
pub fn usage(pid: u32) -> Option<Usage> {
    let f = stat_fields(&pid.to_string())?;
    // utime, stime, cutime and cstime are fields 14 to 17 (index N-3).
    let ticks = |i: usize| -> Option<f64> { Some(f.get(i)?.parse::<u64>().ok()? as f64) };
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let rss_bytes = kb_field(&status, "VmRSS")?;
    Some(Usage {
        cpu_s: (ticks(11)? + ticks(12)?) / TICKS_PER_S,
        reaped_cpu_s: (ticks(13)? + ticks(14)?) / TICKS_PER_S,
        rss_bytes,
        peak_rss_bytes: kb_field(&status, "VmHWM").unwrap_or(rss_bytes),
    })
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
                Some(u) => {
                    cells.push(format!("{}", u.cpu_s));
                    cells.push(u.rss_bytes.to_string());
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
        let u = super::usage(std::process::id()).unwrap();
        assert!(u.cpu_s >= 0.0 && u.reaped_cpu_s >= 0.0);
        let own = ctrlbench_plane::process::own_peak_rss_bytes().unwrap();
        assert!(
            u.rss_bytes > 0 && u.rss_bytes <= u.peak_rss_bytes,
            "{} vs peak {}",
            u.rss_bytes,
            u.peak_rss_bytes
        );
        // VmHWM only grows: read later, this process's own is no lower.
        assert!(u.peak_rss_bytes <= own, "{} vs {own}", u.peak_rss_bytes);
        assert!(super::usage(u32::MAX).is_none());
    }
}
