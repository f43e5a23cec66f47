//! Each apiserver's peak memory while the controllers start and run: the
//! kernel's own high-water mark of the process's resident set (VmHWM in
//! /proc/<pid>/status), reset (writing 5 to /proc/<pid>/clear_refs) the
//! moment every controller has started, read when the window ends. A peak
//! between two scrapes is caught too, which the apiserver's
//! process_resident_memory_bytes, sampled once a scrape interval, would
//! miss. Local plane only: an existing cluster's processes are not ours.

use anyhow::Result;
use ctrlbench_plane::Member as PlaneMember;
use ctrlbench_record::Summary;
use futures::future::BoxFuture;

use super::{Measurement, Run};

#[derive(Default)]
pub struct ApiserverPeak {
    /// The apiservers' pids, once their high-water marks were reset.
    reset: Option<Vec<u32>>,
    /// Their resident memory at the reset (what earlier runs left).
    at_start: Vec<f64>,
    peaks: Vec<f64>,
}

impl ApiserverPeak {
    pub fn new() -> ApiserverPeak {
        ApiserverPeak::default()
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
        if self.reset.is_none()
            && run.members.iter().all(|m| !m.pending)
            && let Some(p) = run.ctx.cluster.plane.as_ref()
        {
            let pids: Vec<u32> = (0..p.apiserver_urls().len())
                .filter_map(|k| p.pid(PlaneMember::ApiServer(k)).map(|(pid, _)| pid))
                .filter(|pid| reset(*pid))
                .collect();
            self.at_start = pids
                .iter()
                .map(|p| status_bytes(*p, "VmRSS:").unwrap_or(0.0))
                .collect();
            self.reset = Some(pids);
        }
        Box::pin(async { Ok(()) })
    }

    fn after_window<'a>(&'a mut self, _run: &'a mut Run<'_>) -> BoxFuture<'a, Result<()>> {
        self.peaks = self
            .reset
            .iter()
            .flatten()
            .filter_map(|pid| high_water(*pid))
            .collect();
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
