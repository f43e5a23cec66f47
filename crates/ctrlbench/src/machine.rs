//! What else the machine is doing, from /proc: the CPU time every process
//! but ours used (the machine's busy time minus ctrlbench's own process
//! tree — the plane, the controllers and ctrlbench itself are all its
//! descendants), the hypervisor's steal, the load average, the CPU
//! frequency governor, memory, swap and disk. A run records it
//! (run/measure/machine.rs) and `ctrlbench doctor` prints it before one.

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

/// The machine's CPU ticks since boot (/proc/stat's first line).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CpuTicks {
    /// user, nice, system, irq and softirq (guest time is inside user).
    pub busy: u64,
    pub steal: u64,
}

/// Parses /proc/stat's `cpu` line.
pub fn parse_stat(text: &str) -> Option<CpuTicks> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    // user nice system idle iowait irq softirq steal guest guest_nice
    Some(CpuTicks {
        busy: at(0) + at(1) + at(2) + at(5) + at(6),
        steal: at(7),
    })
}

/// One process as /proc/<pid>/stat has it.
#[derive(Clone, Debug, PartialEq)]
pub struct Proc {
    pub pid: u32,
    pub ppid: u32,
    pub comm: String,
    /// utime + stime of the process itself.
    pub own_ticks: u64,
    /// cutime + cstime: its children it has waited for.
    pub children_ticks: u64,
}

/// Parses one /proc/<pid>/stat (the command name may hold spaces and parentheses).
pub fn parse_proc_stat(pid: u32, text: &str) -> Option<Proc> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text[open + 1..close].to_string();
    let rest: Vec<&str> = text[close + 1..].split_whitespace().collect();
    // rest[0] is the state (field 3); ppid is field 4, utime 14 … cstime 17.
    let f = |n: usize| -> u64 { rest.get(n - 3).and_then(|x| x.parse().ok()).unwrap_or(0) };
    Some(Proc {
        pid,
        ppid: f(4) as u32,
        comm,
        own_ticks: f(14) + f(15),
        children_ticks: f(16) + f(17),
    })
}

/// Every process now.
pub fn processes() -> Vec<Proc> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            parse_proc_stat(pid, &text)
        })
        .collect()
}

/// `root` and all its descendants in `procs`.
pub fn tree(procs: &[Proc], root: u32) -> Vec<&Proc> {
    let mut children: HashMap<u32, Vec<&Proc>> = HashMap::new();
    for p in procs {
        children.entry(p.ppid).or_default().push(p);
    }
    let mut out: Vec<&Proc> = procs.iter().filter(|p| p.pid == root).collect();
    let mut i = 0;
    while i < out.len() {
        if let Some(c) = children.get(&out[i].pid) {
            out.extend(c.iter().copied());
        }
        i += 1;
    }
    out
}

/// The CPU ticks a tree has used: each live process's own, and what each
/// has collected from children it reaped (so a child that exits between
/// two readings moves from one term to the other, never out of the sum).
pub fn tree_ticks(procs: &[Proc], root: u32) -> u64 {
    tree(procs, root)
        .iter()
        .map(|p| p.own_ticks + p.children_ticks)
        .sum()
}

fn ticks_per_second() -> f64 {
    rustix::param::clock_ticks_per_second() as f64
}

/// A reading of the machine and of ctrlbench's own tree.
#[derive(Clone, Debug)]
pub struct Reading {
    pub at: Instant,
    pub cpu: CpuTicks,
    pub ours: u64,
}

impl Reading {
    pub fn now() -> Option<Reading> {
        let cpu = parse_stat(&std::fs::read_to_string("/proc/stat").ok()?)?;
        let ours = tree_ticks(&processes(), std::process::id());
        Some(Reading {
            at: Instant::now(),
            cpu,
            ours,
        })
    }

    /// Between `earlier` and this reading: (other processes' CPU seconds,
    /// wall seconds, steal seconds).
    pub fn since(&self, earlier: &Reading) -> Usage {
        let hz = ticks_per_second();
        let busy = self.cpu.busy.saturating_sub(earlier.cpu.busy) as f64 / hz;
        let ours = self.ours.saturating_sub(earlier.ours) as f64 / hz;
        Usage {
            other_cpu_s: (busy - ours).max(0.0),
            wall_s: self.at.duration_since(earlier.at).as_secs_f64(),
            steal_s: self.cpu.steal.saturating_sub(earlier.cpu.steal) as f64 / hz,
        }
    }
}

/// What other processes used over an interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Usage {
    pub other_cpu_s: f64,
    pub wall_s: f64,
    pub steal_s: f64,
}

impl Usage {
    /// Other processes' CPU as a fraction of one core.
    pub fn core_fraction(&self) -> f64 {
        if self.wall_s > 0.0 {
            self.other_cpu_s / self.wall_s
        } else {
            0.0
        }
    }
}

/// The 1-minute load average.
pub fn load_avg_1m() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The CPU frequency governor of cpu0, where the kernel shows one.
pub fn governor() -> Option<String> {
    std::fs::read_to_string("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
        .ok()
        .map(|s| s.trim().to_string())
}

/// A /proc/meminfo value in bytes.
pub fn meminfo(key: &str) -> Option<u64> {
    ctrlbench_plane::process::kb_field(&std::fs::read_to_string("/proc/meminfo").ok()?, key)
}

/// Free bytes on the file system holding `path`.
pub fn disk_free(path: &Path) -> Option<u64> {
    let s = rustix::fs::statvfs(path).ok()?;
    Some(s.f_bavail * s.f_frsize)
}

/// The processes outside ctrlbench's tree that used CPU over `over`, with
/// their share of one core, busiest first.
pub fn busy_processes(over: Duration) -> Vec<(Proc, f64)> {
    let before: HashMap<u32, u64> = processes()
        .into_iter()
        .map(|p| (p.pid, p.own_ticks))
        .collect();
    std::thread::sleep(over);
    let now = processes();
    let ours: Vec<u32> = tree(&now, std::process::id())
        .iter()
        .map(|p| p.pid)
        .collect();
    let hz = ticks_per_second();
    let mut out: Vec<(Proc, f64)> = now
        .into_iter()
        .filter(|p| !ours.contains(&p.pid))
        .filter_map(|p| {
            let used = p.own_ticks.saturating_sub(*before.get(&p.pid)?) as f64 / hz;
            let share = used / over.as_secs_f64();
            (share > 0.0).then_some((p, share))
        })
        .collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_stat_lines_are_read_field_by_field() {
        let s = parse_stat("cpu  100 20 30 400 5 6 7 8 9 10\ncpu0 1 2 3 4 5 6 7 8 9 10\n").unwrap();
        assert_eq!(
            s,
            CpuTicks {
                busy: 100 + 20 + 30 + 6 + 7,
                steal: 8
            }
        );
        let p = parse_proc_stat(
            42,
            "42 (tokio (x) y) S 7 42 42 0 -1 4194560 1 0 0 0 11 22 33 44 20 0 1 0 5 0 0",
        )
        .unwrap();
        assert_eq!(
            (p.ppid, p.comm.as_str(), p.own_ticks, p.children_ticks),
            (7, "tokio (x) y", 33, 77)
        );
    }

    #[test]
    fn a_tree_holds_its_descendants_only() {
        let p = |pid, ppid, own| Proc {
            pid,
            ppid,
            comm: String::new(),
            own_ticks: own,
            children_ticks: 1,
        };
        let procs = [
            p(1, 0, 100),
            p(10, 1, 5),
            p(11, 10, 7),
            p(12, 10, 9),
            p(20, 1, 50),
        ];
        let mut t: Vec<u32> = tree(&procs, 10).iter().map(|p| p.pid).collect();
        t.sort();
        assert_eq!(t, [10, 11, 12]);
        assert_eq!(tree_ticks(&procs, 10), 5 + 7 + 9 + 3);
    }

    #[test]
    fn our_own_spinning_is_not_counted_as_others() {
        use ctrlbench_plane::process::own_cpu_seconds;
        let a = Reading::now().expect("/proc/stat");
        // 0.3 s of this process's CPU, however long a busy machine takes to
        // give it (other test threads may add to it: ours only grows).
        let cpu0 = own_cpu_seconds();
        let mut x = 0u64;
        while own_cpu_seconds() - cpu0 < 0.3 {
            x = x.wrapping_add(std::hint::black_box(1));
        }
        std::hint::black_box(x);
        let b = Reading::now().unwrap();
        let hz = ticks_per_second();
        let ours = (b.ours - a.ours) as f64 / hz;
        // Our tree holds our own spinning (to the 10 ms tick).
        assert!(ours >= 0.28, "ours {ours}");
    }
}
