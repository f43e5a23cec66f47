//! The CPU time and peak memory of every controller process ctrlbench
//! started (each replica of a `rust`, `go@…` or `command` variant), read
//! from /proc with the reading `plane_processes` uses, every scrape
//! interval from the measurement's start to the end of the window. It
//! fills summary.json's `controller_os`, and only the figures the metrics
//! page did not give (a command without `metrics`, such as a kopf or kube-rs
//! operator, or a page without `process_*`): the page stays the source
//! wherever it has them. An external controller runs nowhere we can see, so
//! it gets nothing.
//!
//! What is covered: the started process and every descendant it has at a
//! reading (by parent pid, so that a wrapper — `sh -c`, `python -m kopf`,
//! `go run` — counts the controller it started), with the CPU of the
//! children each of them reaped (cutime + cstime), so a child that exits
//! between two readings moves into its parent's sum instead of out of it. A
//! descendant that daemonised away (reparented outside the tree) is lost,
//! and the sum is kept from going back when one leaves. Memory is a lower
//! bound of the tree's peak: the larger of any one process's VmHWM (exact
//! for a controller of one process) and the largest sampled sum of VmRSS
//! over the tree (a page shared by two processes counts twice).

use std::time::{Duration, Instant};

use anyhow::Result;
use ctrlbench_record::Summary;
use ctrlbench_record::summary::ControllerOs;
use futures::future::BoxFuture;

use super::plane_processes::usage;
use super::{Measurement, Run};
use crate::machine::{self, Proc};

/// One tree's reading: CPU seconds (own and reaped, over the tree), the sum
/// of its resident bytes and the largest VmHWM in it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct TreeUsage {
    cpu_s: f64,
    rss_bytes: u64,
    peak_rss_bytes: u64,
}

/// `root` and its descendants in `procs`, now; None when `root` is gone
/// (or a zombie: its time is its parent's, ours, and it holds no memory).
fn tree_usage(procs: &[Proc], root: u32) -> Option<TreeUsage> {
    usage(root)?;
    let mut t = TreeUsage::default();
    for p in machine::tree(procs, root) {
        // A process that exited since `procs` was read has nothing left to add.
        if let Some(u) = usage(p.pid) {
            t.cpu_s += u.cpu_s + u.reaped_cpu_s;
            t.rss_bytes += u.rss_bytes;
            t.peak_rss_bytes = t.peak_rss_bytes.max(u.peak_rss_bytes);
        }
    }
    Some(t)
}

/// One replica's CPU over the measurement, across restarts: like a
/// counter's increase, the first process counts from the first reading, a
/// restarted one (a new pid) from its own start.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Track {
    pid: Option<u32>,
    /// The reading the current process counts from.
    base: f64,
    /// Its largest reading so far.
    last: f64,
    /// What earlier processes of this replica used.
    done: f64,
}

impl Track {
    fn read(&mut self, pid: u32, cpu_s: f64) {
        match self.pid {
            Some(p) if p == pid => {}
            Some(_) => {
                self.done += self.last - self.base;
                (self.base, self.last) = (0.0, 0.0);
            }
            None => (self.base, self.last) = (cpu_s, cpu_s),
        }
        self.pid = Some(pid);
        // A descendant that left the tree took its time with it: the sum
        // never goes back, as a counter does not.
        self.last = self.last.max(cpu_s);
    }

    /// CPU seconds since the first reading; None before any.
    fn cpu_s(&self) -> Option<f64> {
        self.pid.map(|_| self.done + self.last - self.base)
    }
}

pub struct ControllersOs {
    /// Per member, per replica.
    tracks: Vec<Vec<Track>>,
    /// Per member: the largest resident memory seen (see the file's note).
    peak: Vec<u64>,
    interval: Duration,
    next: Instant,
}

impl ControllersOs {
    pub fn new(run: &Run<'_>) -> ControllersOs {
        ControllersOs {
            tracks: run
                .members
                .iter()
                .map(|m| vec![Track::default(); m.replicas.len()])
                .collect(),
            peak: vec![0; run.members.len()],
            interval: Duration::from_secs_f64(run.ctx.exp.scrape_interval_s),
            next: Instant::now(),
        }
    }

    /// One reading of every started replica; one scan of /proc for all.
    fn read(&mut self, run: &Run<'_>) {
        let started =
            |m: &crate::run::member::Member| m.replicas.iter().any(|r| r.process.is_some());
        if !run.members.iter().any(started) {
            return;
        }
        let procs = machine::processes();
        for (i, m) in run.members.iter().enumerate() {
            let mut rss = 0;
            for (k, r) in m.replicas.iter().enumerate() {
                let Some(pid) = r.process.as_ref().map(|p| p.pid).filter(|p| *p != 0) else {
                    continue;
                };
                if let Some(t) = tree_usage(&procs, pid) {
                    self.tracks[i][k].read(pid, t.cpu_s);
                    rss += t.rss_bytes;
                    self.peak[i] = self.peak[i].max(t.peak_rss_bytes);
                }
            }
            self.peak[i] = self.peak[i].max(rss);
        }
    }
}

/// What goes into summary.json for one member: each figure only where the
/// page did not give it, nothing without a reading.
fn figures(tracks: &[Track], peak: u64, gave_cpu: bool, gave_rss: bool) -> Option<ControllerOs> {
    let cpu = tracks
        .iter()
        .filter_map(Track::cpu_s)
        .reduce(|a, b| a + b)?;
    let os = ControllerOs {
        // /proc counts 10 ms ticks: no more digits than that.
        cpu_s: (!gave_cpu).then_some((cpu * 100.0).round() / 100.0),
        peak_rss_bytes: (!gave_rss && peak > 0).then_some(peak as f64),
    };
    (os.cpu_s.is_some() || os.peak_rss_bytes.is_some()).then_some(os)
}

impl Measurement for ControllersOs {
    fn start<'a>(&'a mut self, run: &'a mut Run<'_>) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            self.read(run);
            self.next = Instant::now() + self.interval;
            Ok(())
        })
    }

    fn tick<'a>(&'a mut self, run: &'a mut Run<'_>) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            if Instant::now() >= self.next {
                self.read(run);
                self.next = Instant::now() + self.interval;
            }
            Ok(())
        })
    }

    /// The last reading, while the controllers still run (they are stopped,
    /// and their /proc entries gone, before `finish`).
    fn after_window<'a>(&'a mut self, run: &'a mut Run<'_>) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            self.read(run);
            Ok(())
        })
    }

    fn finish<'a>(
        &'a mut self,
        run: &'a mut Run<'_>,
        summaries: &'a mut [Summary],
    ) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            for (i, s) in summaries.iter_mut().enumerate() {
                let c = &run.sampler.controllers[i];
                s.controller_os = figures(&self.tracks[i], self.peak[i], c.gave_cpu, c.gave_rss);
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The test process's own tree, read as a controller's is: after
    /// burning CPU and touching 64 MiB, its CPU has grown and its peak holds
    /// the 64 MiB; a pid that does not exist reads as gone.
    #[test]
    fn the_tree_of_this_process_reads_its_cpu_and_memory() {
        let me = std::process::id();
        let before = tree_usage(&machine::processes(), me).unwrap();
        let start = Instant::now();
        let mut x = 0u64;
        while start.elapsed() < Duration::from_millis(300) {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(1));
        }
        let block = std::hint::black_box(vec![1u8; 64 << 20]);
        let after = tree_usage(&machine::processes(), me).unwrap();
        drop(block);
        // 300 ms spinning on a shared machine: at least a few 10 ms ticks.
        assert!(after.cpu_s - before.cpu_s >= 0.03, "{before:?} → {after:?}");
        assert!(after.peak_rss_bytes >= 64 << 20, "{after:?}");
        assert!(after.rss_bytes > 0, "{after:?}");
        assert!(tree_usage(&machine::processes(), u32::MAX).is_none());
    }

    /// A wrapper's child counts in the wrapper's tree: `sh -c "loop & wait"`
    /// uses next to no CPU itself, the loop it started all of it. Once
    /// waited for, a child's CPU is its parent's reaped CPU.
    #[test]
    fn a_wrappers_children_count_while_they_run_and_once_reaped() {
        use std::os::unix::process::CommandExt;
        let mut wrapper = std::process::Command::new("/bin/sh")
            .args(["-c", "while :; do :; done & wait"])
            .process_group(0)
            .spawn()
            .unwrap();
        let pid = wrapper.id();
        let t0 = Instant::now();
        let mut tree = TreeUsage::default();
        while tree.cpu_s < 0.2 && t0.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(100));
            tree = tree_usage(&machine::processes(), pid).unwrap();
        }
        let own = usage(pid).unwrap();
        ctrlbench_plane::process::signal_group(pid, ctrlbench_plane::process::Signal::KILL);
        wrapper.wait().unwrap();
        assert!(tree.cpu_s >= 0.2, "{tree:?}");
        assert!(own.cpu_s < tree.cpu_s / 2.0, "{own:?} vs {tree:?}");
        assert!(tree.rss_bytes > own.rss_bytes, "{own:?} vs {tree:?}");

        let me = std::process::id();
        let before = usage(me).unwrap().reaped_cpu_s;
        std::process::Command::new("/bin/sh")
            .args(["-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done"])
            .status()
            .unwrap();
        let after = usage(me).unwrap().reaped_cpu_s;
        assert!(after - before >= 0.05, "{before} → {after}");
    }

    /// CPU counts from the first reading; a restart (a new pid) adds the
    /// new process's whole time to what the first one used; a reading that
    /// went back (a descendant gone) does not lower the sum.
    #[test]
    fn a_replica_counts_from_the_first_reading_across_restarts() {
        let mut t = Track::default();
        assert_eq!(t.cpu_s(), None);
        t.read(10, 5.0);
        t.read(10, 7.0);
        t.read(10, 6.5);
        assert_eq!(t.cpu_s(), Some(2.0));
        t.read(11, 0.5);
        t.read(11, 1.5);
        assert_eq!(t.cpu_s(), Some(3.5));
    }

    /// Each figure only where the page lacked it; nothing without a reading.
    #[test]
    fn only_what_the_page_did_not_give() {
        let mut a = Track::default();
        a.read(1, 1.0);
        a.read(1, 3.0);
        let mut b = Track::default();
        b.read(2, 0.0);
        b.read(2, 0.5);
        let both = [a, b];
        assert_eq!(
            figures(&both, 100, false, false),
            Some(ControllerOs {
                cpu_s: Some(2.5),
                peak_rss_bytes: Some(100.0)
            })
        );
        assert_eq!(
            figures(&both, 100, true, false),
            Some(ControllerOs {
                cpu_s: None,
                peak_rss_bytes: Some(100.0)
            })
        );
        assert_eq!(figures(&both, 100, true, true), None);
        assert_eq!(figures(&[Track::default()], 0, false, false), None);
    }
}
