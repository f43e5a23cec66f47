//! Each apiserver's peak memory while the controllers start and run: the
//! kernel's own high-water mark of the process's resident set (VmHWM in
//! /proc/<pid>/status), reset (writing 5 to /proc/<pid>/clear_refs) the
//! moment every controller has started, read every second and when the
//! window ends. A peak between two scrapes is caught too, which the
//! apiserver's process_resident_memory_bytes, sampled once a scrape
//! interval, would miss; an apiserver restarted by a fault is a new process
//! whose own mark (since its start) counts as well. Local plane only: an
//! existing cluster's processes are not ours.

use std::time::{Duration, Instant};

use anyhow::Result;
use ctrlbench_plane::{ControlPlane, Member as PlaneMember};
use ctrlbench_record::Summary;
use futures::future::BoxFuture;

use super::{Measurement, Run};

#[derive(Default)]
pub struct ApiserverPeak {
    /// When the high-water marks were reset; None before.
    reset_at: Option<Instant>,
    /// Their resident memory at the reset (what earlier runs left).
    at_start: Vec<f64>,
    /// Per apiserver, the highest mark read of any of its processes.
    peaks: Vec<f64>,
    last_read: Option<Instant>,
}

impl ApiserverPeak {
    pub fn new() -> ApiserverPeak {
        ApiserverPeak::default()
    }

    /// Raises each apiserver's peak to its current process's mark.
    fn read(&mut self, p: &ControlPlane) {
        for (k, peak) in self.peaks.iter_mut().enumerate() {
            if let Some(h) = p
                .pid(PlaneMember::ApiServer(k))
                .and_then(|(pid, _)| high_water(pid))
            {
                *peak = peak.max(h);
            }
        }
        self.last_read = Some(Instant::now());
    }
}

/// Resets the process's resident-set high-water mark.
fn reset(pid: u32) -> bool {
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").is_ok()
}

/// The process's resident-set high-water mark, in bytes.
fn high_water(pid: u32) -> Option<f64> {
    status_bytes(pid, "VmHWM:")
}

/// A kB field of /proc/<pid>/status, in bytes.
fn status_bytes(pid: u32, field: &str) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kb: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix(field))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb * 1024.0)
}

impl Measurement for ApiserverPeak {
    fn tick<'a>(&'a mut self, run: &'a mut Run<'_>) -> BoxFuture<'a, Result<()>> {
        if let Some(p) = run.ctx.cluster.plane.as_ref() {
            if self.reset_at.is_none() && run.members.iter().all(|m| !m.pending) {
                // One entry per apiserver, in order (0: its process is gone).
                self.at_start = (0..p.apiserver_urls().len())
                    .map(|k| {
                        p.pid(PlaneMember::ApiServer(k))
                            .filter(|(pid, _)| reset(*pid))
                            .and_then(|(pid, _)| status_bytes(pid, "VmRSS:"))
                            .unwrap_or(0.0)
                    })
                    .collect();
                self.peaks = self.at_start.clone();
                self.reset_at = Some(Instant::now());
            } else if self.reset_at.is_some()
                && self
                    .last_read
                    .is_none_or(|t| t.elapsed() >= Duration::from_secs(1))
            {
                self.read(p);
            }
        }
        Box::pin(async { Ok(()) })
    }

    fn after_window<'a>(&'a mut self, run: &'a mut Run<'_>) -> BoxFuture<'a, Result<()>> {
        if self.reset_at.is_some()
            && let Some(p) = run.ctx.cluster.plane.as_ref()
        {
            self.read(p);
        }
        Box::pin(async { Ok(()) })
    }

    fn finish<'a>(
        &'a mut self,
        _run: &'a mut Run<'_>,
        summaries: &'a mut [Summary],
    ) -> BoxFuture<'a, Result<()>> {
        for s in summaries.iter_mut() {
            s.apiserver_peak_rss_bytes = self.peaks.clone();
            s.apiserver_rss_at_start_bytes = self.at_start.clone();
        }
        Box::pin(async { Ok(()) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn our_own_high_water_mark_resets_and_grows() {
        let me = std::process::id();
        let before = high_water(me).expect("VmHWM of this process");
        assert!(before > 0.0);
        // 64 MiB touched page by page raise the mark above the current RSS.
        let v = vec![1u8; 64 << 20];
        std::hint::black_box(&v);
        let grown = high_water(me).unwrap();
        assert!(grown >= 64.0 * 1024.0 * 1024.0, "{grown}");
        drop(v);
        assert!(reset(me));
        let after = high_water(me).unwrap();
        assert!(after < grown, "reset: {after} ≥ {grown}");
    }
}
