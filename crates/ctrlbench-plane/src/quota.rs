//! A CPU quota for one child process, the way a Pod's CPU limit works: a
//! cgroup of its own under the cpu controller, allowed `millicores / 1000`
//! CPUs per CFS period (cgroup v2's `cpu.max`, v1's `cpu.cfs_quota_us` over
//! `cpu.cfs_period_us`). The child enters the cgroup between fork and exec,
//! so everything it runs, and every process it starts, is limited from its
//! first instruction. Affinity (`cpus`) says where a process may run; a
//! quota says how much, and throttles it the way the kubelet's limit does.
//! The cgroup is removed when the quota is dropped; one left by a killed
//! harness is empty and is swept by the next (`sweep`).

use std::fs::OpenOptions;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use anyhow::{Context, Result, bail};

/// The CFS period the quota is a share of: the kernel's default, the one
/// the kubelet uses.
const PERIOD_US: u64 = 100_000;

/// Where cgroups with a cpu controller can be made: v2's unified tree
/// (with `cpu` among its controllers) or v1's cpu hierarchy, at the
/// cgroup this process runs in.
#[derive(Debug, Clone)]
enum Hierarchy {
    V2(PathBuf),
    V1(PathBuf),
}

/// This process's cgroup path in the hierarchy whose controllers include
/// `cpu` (v1), or the unified one ("0::/…", v2).
fn own_path(v2: bool) -> Option<String> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    text.lines().find_map(|l| {
        let mut parts = l.splitn(3, ':');
        let (id, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let hit = if v2 {
            id == "0" && controllers.is_empty()
        } else {
            controllers.split(',').any(|c| c == "cpu")
        };
        hit.then(|| path.trim_start_matches('/').to_string())
    })
}

fn hierarchy() -> Result<Hierarchy> {
    let root = Path::new("/sys/fs/cgroup");
    let controllers = std::fs::read_to_string(root.join("cgroup.controllers")).unwrap_or_default();
    if controllers.split_whitespace().any(|c| c == "cpu")
        && let Some(p) = own_path(true)
    {
        // A v2 cgroup's processes live in leaves: the quota's cgroup is a
        // sibling of ours.
        let ours = root.join(p);
        let parent = ours.parent().unwrap_or(root).to_path_buf();
        return Ok(Hierarchy::V2(parent));
    }
    for dir in ["cpu", "cpu,cpuacct"] {
        let base = root.join(dir);
        if base.join("cpu.cfs_quota_us").is_file() {
            let p = own_path(false).unwrap_or_default();
            return Ok(Hierarchy::V1(base.join(p)));
        }
    }
    bail!("no cgroup cpu controller under /sys/fs/cgroup")
}

/// A cgroup with a CPU quota, removed on drop.
#[derive(Debug)]
pub struct Quota {
    dir: PathBuf,
    millicores: u32,
}

impl Quota {
    /// A new cgroup named `ctrlbench-<our pid>-<n>` allowing `millicores`
    /// (1000 = one CPU). Fails, saying why and what to do, where no cgroup
    /// with a cpu controller is writable.
    pub fn create(millicores: u32) -> Result<Quota> {
        if millicores == 0 {
            bail!("a CPU quota of 0 runs nothing");
        }
        let h = hierarchy().context("cpu_limit needs a writable cgroup cpu controller")?;
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let leaf = format!(
            "ctrlbench-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let quota_us = u64::from(millicores) * PERIOD_US / 1000;
        let (dir, files): (PathBuf, Vec<(&str, String)>) = match &h {
            Hierarchy::V2(parent) => (
                parent.join(&leaf),
                vec![("cpu.max", format!("{quota_us} {PERIOD_US}"))],
            ),
            Hierarchy::V1(parent) => (
                parent.join(&leaf),
                vec![
                    ("cpu.cfs_period_us", PERIOD_US.to_string()),
                    ("cpu.cfs_quota_us", quota_us.to_string()),
                ],
            ),
        };
        std::fs::create_dir(&dir).with_context(|| {
            format!(
                "cpu_limit: cannot create the cgroup {} (it needs root or a delegated cgroup): drop cpu_limit or run where cgroups are writable",
                dir.display()
            )
        })?;
        let q = Quota { dir, millicores };
        for (file, value) in files {
            std::fs::write(q.dir.join(file), &value).with_context(|| {
                format!(
                    "cpu_limit: cannot write {value:?} to {}",
                    q.dir.join(file).display()
                )
            })?;
        }
        Ok(q)
    }

    /// The quota in millicores.
    pub fn millicores(&self) -> u32 {
        self.millicores
    }

    /// The cgroup's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `cmd`'s child joins the cgroup before it execs.
    pub fn apply(&self, cmd: &mut Command) -> Result<()> {
        let procs: OwnedFd = OpenOptions::new()
            .write(true)
            .open(self.dir.join("cgroup.procs"))
            .with_context(|| format!("cpu_limit: cannot open {}/cgroup.procs", self.dir.display()))?
            .into();
        // SAFETY: between fork and exec only getpid, formatting into a stack
        // buffer and one write(2); no allocation, no lock.
        unsafe {
            cmd.pre_exec(move || {
                let mut buf = [0u8; 20];
                let mut n = rustix::process::getpid().as_raw_nonzero().get() as u32;
                let mut i = buf.len();
                loop {
                    i -= 1;
                    buf[i] = b'0' + (n % 10) as u8;
                    n /= 10;
                    if n == 0 {
                        break;
                    }
                }
                rustix::io::write(procs.as_fd(), &buf[i..])?;
                Ok(())
            });
        }
        Ok(())
    }

    /// The CPU time the cgroup was throttled for, in seconds (v1's
    /// `throttled_time` is in ns, v2's `throttled_usec` in µs).
    pub fn throttled_s(&self) -> Option<f64> {
        let stat = std::fs::read_to_string(self.dir.join("cpu.stat")).ok()?;
        let value = |key: &str| {
            stat.lines().find_map(|l| {
                let (k, v) = l.split_once(' ')?;
                (k == key).then(|| v.trim().parse::<f64>().ok()).flatten()
            })
        };
        value("throttled_usec")
            .map(|us| us / 1e6)
            .or_else(|| value("throttled_time").map(|ns| ns / 1e9))
    }
}

impl Drop for Quota {
    fn drop(&mut self) {
        // The last process may still be exiting: an occupied cgroup cannot
        // be removed, so try a few times.
        for _ in 0..20 {
            if std::fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// Whether [`Quota::create`] could make its cgroup, asked of the kernel
/// without making one: a cpu hierarchy, and write access where the cgroup
/// would go.
pub fn check_writable() -> Result<()> {
    let h = hierarchy().context("cpu_limit needs a writable cgroup cpu controller")?;
    let (Hierarchy::V2(parent) | Hierarchy::V1(parent)) = &h;
    let access = rustix::fs::Access::WRITE_OK | rustix::fs::Access::EXEC_OK;
    if rustix::fs::access(parent, access).is_err() {
        bail!(
            "cpu_limit: cannot create a cgroup under {} (it needs root or a delegated cgroup): drop cpu_limit or run where cgroups are writable",
            parent.display()
        );
    }
    Ok(())
}

/// Removes the empty quota cgroups of harnesses that no longer run.
pub fn sweep() {
    let Ok(h) = hierarchy() else { return };
    let parent = match h {
        Hierarchy::V2(p) | Hierarchy::V1(p) => p,
    };
    let Ok(entries) = std::fs::read_dir(&parent) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix("ctrlbench-")
            .and_then(|r| r.split('-').next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir(e.path());
        }
    }
}

/// Parses a Kubernetes CPU quantity ("500m", "1", "1.5") into millicores.
pub fn parse_millicores(s: &str) -> Result<u32, String> {
    let s = s.trim();
    let bad =
        || format!("{s:?} is not a CPU quantity: write millicores (\"500m\") or CPUs (\"1.5\")");
    let m = if let Some(m) = s.strip_suffix('m') {
        m.parse::<u32>().map_err(|_| bad())?
    } else {
        let cpus: f64 = s.parse().map_err(|_| bad())?;
        if !(0.0..=1024.0).contains(&cpus) {
            return Err(bad());
        }
        (cpus * 1000.0).round() as u32
    };
    if m == 0 {
        return Err(format!("{s:?} is no CPU at all: at least 1m"));
    }
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_read_as_kubernetes_writes_them() {
        assert_eq!(parse_millicores("500m"), Ok(500));
        assert_eq!(parse_millicores("1"), Ok(1000));
        assert_eq!(parse_millicores("1.5"), Ok(1500));
        assert_eq!(parse_millicores("0.25"), Ok(250));
        assert!(parse_millicores("0").is_err());
        assert!(parse_millicores("0m").is_err());
        assert!(parse_millicores("half").is_err());
        assert!(parse_millicores("-1").is_err());
    }

    /// A busy child in a 200m quota gets about a fifth of a CPU: over 1.5 s
    /// of wall time it uses at most 0.45 CPU-s (unthrottled it would use
    /// 1.5), the cgroup counts throttled time, and it is gone once the
    /// quota is dropped.
    #[test]
    fn a_busy_child_is_held_to_its_quota() {
        let q = Quota::create(200).expect("this machine's cgroup cpu controller is writable");
        let dir = q.dir().to_path_buf();
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "cat /proc/self/cgroup; end=$(($(date +%s%N) + 1500000000)); while [ $(date +%s%N) -lt $end ]; do :; done; cat /proc/$$/stat"]);
        q.apply(&mut cmd).unwrap();
        let out = cmd.output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let leaf = dir.file_name().unwrap().to_string_lossy().into_owned();
        assert!(text.contains(&leaf), "the child is not in {leaf}: {text}");
        // utime + stime of the shell (fields 14 and 15, in clock ticks),
        // children included (16, 17: date's), read by the shell itself.
        let stat = text.lines().last().unwrap();
        let fields: Vec<&str> = stat.rsplit(") ").next().unwrap().split(' ').collect();
        let ticks: f64 = fields[11..15]
            .iter()
            .map(|f| f.parse::<f64>().unwrap())
            .sum();
        let hz = rustix::param::clock_ticks_per_second() as f64;
        let cpu_s = ticks / hz;
        assert!(cpu_s < 0.45, "{cpu_s} CPU-s in a 200m quota over 1.5 s");
        assert!(q.throttled_s().unwrap() > 0.0, "no throttled time");
        drop(q);
        assert!(!dir.exists(), "{} left behind", dir.display());
    }
}
