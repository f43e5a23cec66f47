//! One child process of the control plane: started with its output in a log
//! file, in its own process group, and stopped with SIGTERM then SIGKILL.
//!
//! Two lifetimes exist. An *attached* child gets a parent-death signal so it
//! never outlives the harness (note: Linux sends it when the spawning *thread*
//! exits, so spawn from a thread that lives as long as the plane). A *detached*
//! child (`cluster up`) starts its own session and is found again by pid, with
//! its start time recorded so a recycled pid is never signalled.

use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use rustix::process::Pid;
pub use rustix::process::Signal;

/// How long we wait for a process to vanish after SIGKILL.
pub const KILL_WAIT: Duration = Duration::from_secs(5);

/// How long a process gets between SIGTERM and SIGKILL.
pub const STOP_TIMEOUT: Duration = Duration::from_secs(10);

/// A started child process.
#[derive(Debug)]
pub struct Process {
    pub name: &'static str,
    pub pid: u32,
    pub start_time: u64,
    pub log: PathBuf,
    child: Option<Child>,
    /// How it was started, for `restart` (empty for a recorded process).
    command: Option<(PathBuf, Vec<String>, bool)>,
}

impl Process {
    /// Starts `bin args…` with stdout and stderr appended to `log`.
    pub fn spawn(
        name: &'static str,
        bin: &Path,
        args: &[String],
        log: &Path,
        detached: bool,
    ) -> Result<Process> {
        let out = File::create(log).with_context(|| format!("cannot create {}", log.display()))?;
        Process::spawn_to(name, bin, args, log, out, detached)
    }

    /// Starts the same command again (same flags, log appended), for a
    /// process that was killed or exited: a fault's restart. Call it from a
    /// thread that lives as long as the process (see [`Lifetime::Attached`]).
    pub fn restart(&mut self) -> Result<()> {
        let Some((bin, args, detached)) = self.command.clone() else {
            anyhow::bail!("{} (pid {}) was not started here", self.name, self.pid);
        };
        self.stop(KILL_WAIT);
        let out = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(&self.log)
            .with_context(|| format!("cannot open {}", self.log.display()))?;
        *self = Process::spawn_to(self.name, &bin, &args, &self.log.clone(), out, detached)?;
        Ok(())
    }

    fn spawn_to(
        name: &'static str,
        bin: &Path,
        args: &[String],
        log: &Path,
        out: File,
        detached: bool,
    ) -> Result<Process> {
        let err = out.try_clone()?;
        let mut cmd = Command::new(bin);
        cmd.args(args).stdin(Stdio::null()).stdout(out).stderr(err);
        if let Some(cpus) = super::cpus::plane() {
            super::cpus::pin_command(&mut cmd, &cpus);
        }
        own(
            &mut cmd,
            if detached {
                Lifetime::Detached
            } else {
                Lifetime::Attached
            },
        );
        let child = cmd
            .spawn()
            .with_context(|| format!("cannot start {name} ({})", bin.display()))?;
        let pid = child.id();
        Ok(Process {
            name,
            pid,
            start_time: start_time(pid).unwrap_or(0),
            log: log.to_path_buf(),
            child: Some(child),
            command: Some((bin.to_path_buf(), args.to_vec(), detached)),
        })
    }

    /// Re-attaches to a detached process recorded earlier.
    pub fn recorded(name: &'static str, pid: u32, start_time: u64, log: PathBuf) -> Process {
        Process {
            name,
            pid,
            start_time,
            log,
            child: None,
            command: None,
        }
    }

    /// Signals the process only while it is ours: with a child handle the pid
    /// cannot be reused before we reap it; a recorded process is pinned with a
    /// pidfd and checked against its recorded start time first.
    fn signal(&self, sig: Signal) {
        if self.child.is_some() {
            signal(self.pid, sig);
        } else {
            signal_recorded(self.pid, self.start_time, sig);
        }
    }

    /// True while the process runs (a zombie counts as gone).
    pub fn is_running(&mut self) -> bool {
        if let Some(child) = self.child.as_mut() {
            return matches!(child.try_wait(), Ok(None));
        }
        is_alive(self.pid, self.start_time)
    }

    /// SIGTERM, then SIGKILL after `timeout`; returns once the process is gone.
    pub fn stop(&mut self, timeout: Duration) {
        if !self.is_running() {
            self.reap();
            return;
        }
        self.signal(Signal::TERM);
        // A stopped process (a fault's SIGSTOP) acts on SIGTERM only once continued.
        self.signal(Signal::CONT);
        let deadline = Instant::now() + timeout;
        while self.is_running() {
            if Instant::now() >= deadline {
                tracing::warn!(
                    process = self.name,
                    pid = self.pid,
                    "no exit after SIGTERM; sending SIGKILL"
                );
                self.signal(Signal::KILL);
                // Bounded: a process in uninterruptible sleep is reported, not waited for forever.
                let killed = Instant::now();
                while self.is_running() && killed.elapsed() < KILL_WAIT {
                    std::thread::sleep(Duration::from_millis(20));
                }
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.reap();
    }

    /// Sends `sig` while the process is still the one started (faults: KILL, STOP, CONT).
    pub fn send(&self, sig: Signal) {
        self.signal(sig)
    }

    /// Lets the process outlive this handle (a detached plane after `cluster up`).
    pub fn release(&mut self) {
        self.child.take();
    }

    fn reap(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.wait();
        }
    }

    /// The most telling line of the log: an `Error:` line, else the last
    /// klog error or fatal line, else the last non-empty line.
    pub fn log_summary(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        let pick = lines
            .iter()
            .find(|l| l.starts_with("Error:") || l.starts_with("panic:"))
            .or_else(|| lines.iter().find(|l| l.contains("\"level\":\"panic\"")))
            .or_else(|| {
                lines.iter().rev().find(|l| {
                    l.starts_with('E')
                        || l.starts_with('F')
                        || l.contains("\"level\":\"fatal\"")
                        || l.contains("\"level\":\"error\"")
                })
            })
            .or_else(|| lines.last());
        pick.map(|s| s.to_string())
            .unwrap_or_else(|| "(no output)".into())
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        // A child never outlives its handle unless it was released.
        if self.child.is_some() {
            self.stop(STOP_TIMEOUT);
        }
    }
}

/// Sends `sig` to `pid` (a pid that is not a process is ignored).
pub fn signal(pid: u32, sig: Signal) {
    if let Some(pid) = Pid::from_raw(pid as i32) {
        let _ = rustix::process::kill_process(pid, sig);
    }
}

/// Sends `sig` to the process group `pid` leads: an `Attached` child and
/// whatever it started (a wrapper script's controller, a profiler's target),
/// which a signal to the pid alone would leave running. Only for a child
/// not yet reaped, so the group id cannot have been reused.
pub fn signal_group(pid: u32, sig: Signal) {
    if let Some(pid) = Pid::from_raw(pid as i32) {
        let _ = rustix::process::kill_process_group(pid, sig);
    }
}

/// Signals `pid` only if it is still the process started at `start_time`
/// (clock ticks since boot; 0 = unknown): the pidfd pins the process, so a
/// pid reused after the check cannot receive the signal. False if not sent.
pub fn signal_recorded(pid: u32, start_time: u64, sig: Signal) -> bool {
    let Some(p) = Pid::from_raw(pid as i32) else {
        return false;
    };
    let Ok(fd) = rustix::process::pidfd_open(p, rustix::process::PidfdFlags::empty()) else {
        return false;
    };
    if start_time != 0 && self::start_time(pid) != Some(start_time) {
        return false;
    }
    rustix::process::pidfd_send_signal(&fd, sig).is_ok()
}

/// How a child relates to the harness.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lifetime {
    /// Dies with the harness: its own process group (a terminal's Ctrl-C
    /// reaches the harness only, which then stops children in order) and a
    /// parent-death SIGKILL. Linux sends that signal when the spawning
    /// *thread* exits: spawn from a thread that lives as long as the child.
    Attached,
    /// Outlives the harness in a session of its own (`cluster up`).
    Detached,
}

/// The one way ctrlbench starts a child (etcd, kube-apiserver, controllers,
/// `go build`, the plane supervisor): sets, between fork and exec, what
/// `lifetime` asks for. For tokio, pass `Command::as_std_mut()`.
pub fn own(cmd: &mut Command, lifetime: Lifetime) {
    let parent = rustix::process::getpid();
    // SAFETY: only async-signal-safe system calls between fork and exec, no allocation.
    unsafe {
        cmd.pre_exec(move || {
            match lifetime {
                Lifetime::Detached => {
                    rustix::process::setsid()?;
                }
                Lifetime::Attached => {
                    rustix::process::setpgid(None, None)?;
                    rustix::process::set_parent_process_death_signal(Some(Signal::KILL))?;
                    // The parent may have died before the signal was armed.
                    if rustix::process::getppid() != Some(parent) {
                        return Err(rustix::io::Errno::SRCH.into());
                    }
                }
            }
            Ok(())
        });
    }
}

/// The process's start time in clock ticks since boot (field 22 of /proc/PID/stat).
pub fn start_time(pid: u32) -> Option<u64> {
    let fields = stat_fields(&pid.to_string())?;
    if fields.first().map(String::as_str) == Some("Z") {
        return None;
    }
    fields.get(19)?.parse().ok()
}

/// The fields of /proc/PID/stat from field 3 (state) on, so field N is at
/// index N-3. `pid` may be "self".
pub fn stat_fields(pid: &str) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces; fields resume after the last ')'.
    let rest = stat.get(stat.rfind(')')? + 2..)?;
    Some(rest.split_whitespace().map(str::to_string).collect())
}

/// Raises this process's open-file soft limit to its hard limit: a loader
/// with up to 1024 creates in flight, watches and scrapes needs more than
/// the usual 1024 descriptors.
pub fn raise_open_file_limit() {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let mut l = getrlimit(Resource::Nofile);
    if l.current < l.maximum {
        l.current = l.maximum;
        let _ = setrlimit(Resource::Nofile, l);
    }
}

/// CPU seconds this process has used (user + system, all threads), to the
/// nanosecond: /proc's utime and stime count 10 ms ticks, too coarse for
/// the harness's share of a short phase.
pub fn own_cpu_seconds() -> f64 {
    use rustix::time::{ClockId, clock_gettime};
    let t = clock_gettime(ClockId::ProcessCPUTime);
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// This process's peak resident set (VmHWM in /proc/self/status), in bytes.
pub fn own_peak_rss_bytes() -> Option<u64> {
    kb_field(&std::fs::read_to_string("/proc/self/status").ok()?, "VmHWM")
}

/// A `Key:   123 kB` line of /proc's status and meminfo files, in bytes.
pub fn kb_field(text: &str, key: &str) -> Option<u64> {
    let kb: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb * 1024)
}

/// True if `pid` runs and is the same process that was recorded.
pub fn is_alive(pid: u32, recorded_start: u64) -> bool {
    match start_time(pid) {
        Some(t) => recorded_start == 0 || t == recorded_start,
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::own_cpu_seconds;
    use std::time::{Duration, Instant};

    /// Busy time counts, at a finer grain than /proc's 10 ms ticks. (Not
    /// "sleep does not": other tests run on this process's threads meanwhile.)
    /// The spin is bounded by CPU time, not wall time: on a loaded runner
    /// 30 ms of wall time once got 9 ms of a core.
    #[test]
    fn own_cpu_counts_work_finer_than_a_tick() {
        let t1 = own_cpu_seconds();
        let start = Instant::now();
        let mut x = 0u64;
        while own_cpu_seconds() - t1 < 0.015 && start.elapsed() < Duration::from_secs(10) {
            for _ in 0..1000 {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(1));
            }
        }
        let busy = own_cpu_seconds() - t1;
        // Spinning reached 15 ms of CPU within 10 s of wall time.
        assert!((0.015..5.0).contains(&busy), "busy: {busy}");
        let ticks = busy * 100.0;
        assert!((ticks - ticks.round()).abs() > 1e-6, "whole ticks: {busy}");
    }
}
