//! CPU placement without cgroups: sets of CPUs written as Linux lists
//! ("0-1,3"), and pinning to them with sched_setaffinity — a command's
//! child before it runs (so every thread it starts inherits the set), or
//! every thread of this process. The plane's processes take the set
//! [`set_plane`] names; a measurement puts the plane, the controllers and
//! the harness on disjoint sets so that a comparison measures the
//! controllers, not the scheduler.

use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::Mutex;

use rustix::process::Pid;
use rustix::thread::{CpuSet, sched_getaffinity, sched_setaffinity};

/// "0-1,3" → [0, 1, 3].
pub fn parse(list: &str) -> Result<Vec<usize>, String> {
    let bad = || format!("{list:?} is not a CPU list (e.g. \"0-1,3\")");
    let mut out = Vec::new();
    for part in list.split(',').map(str::trim) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b): (usize, usize) = (
            a.trim().parse().map_err(|_| bad())?,
            b.trim().parse().map_err(|_| bad())?,
        );
        if a > b || b >= CpuSet::MAX_CPU {
            return Err(bad());
        }
        out.extend(a..=b);
    }
    out.sort_unstable();
    out.dedup();
    if out.is_empty() {
        return Err(bad());
    }
    Ok(out)
}

/// [0, 1, 3] → "0-1,3".
pub fn format(cpus: &[usize]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

/// The CPUs this process may run on.
pub fn available() -> Vec<usize> {
    match sched_getaffinity(None) {
        Ok(set) => (0..CpuSet::MAX_CPU).filter(|c| set.is_set(*c)).collect(),
        Err(_) => (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect(),
    }
}

fn set_of(cpus: &[usize]) -> CpuSet {
    let mut set = CpuSet::new();
    for c in cpus {
        set.set(*c);
    }
    set
}

/// `cmd`'s child runs on `cpus` from its first instruction.
pub fn pin_command(cmd: &mut Command, cpus: &[usize]) {
    let set = set_of(cpus);
    // SAFETY: one system call between fork and exec, no allocation.
    unsafe {
        cmd.pre_exec(move || {
            sched_setaffinity(None, &set)?;
            Ok(())
        });
    }
}

/// Every thread of this process on `cpus` (threads started later inherit it).
pub fn pin_this_process(cpus: &[usize]) -> std::io::Result<()> {
    let set = set_of(cpus);
    for t in std::fs::read_dir("/proc/self/task")?.flatten() {
        if let Some(tid) = t
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
            .and_then(Pid::from_raw)
        {
            // A thread may have ended since the listing.
            let _ = sched_setaffinity(Some(tid), &set);
        }
    }
    Ok(())
}

static PLANE: Mutex<Option<Vec<usize>>> = Mutex::new(None);

/// The CPUs every plane process started from now on runs on (None: all).
pub fn set_plane(cpus: Option<Vec<usize>>) {
    *PLANE.lock().unwrap_or_else(|e| e.into_inner()) = cpus;
}

/// The plane's CPUs, if placed.
pub fn plane() -> Option<Vec<usize>> {
    PLANE.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_parse_and_print_as_linux_writes_them() {
        assert_eq!(parse("0-1,3").unwrap(), [0, 1, 3]);
        assert_eq!(parse("2").unwrap(), [2]);
        assert_eq!(parse(" 3, 1-2 ,1").unwrap(), [1, 2, 3]);
        for bad in ["", "a", "2-1", "1-", "99999"] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
        assert_eq!(format(&[0, 1, 3, 5, 6, 7]), "0-1,3,5-7");
        assert_eq!(format(&[4]), "4");
    }

    #[test]
    fn a_pinned_child_runs_on_its_set() {
        let cpu = *available().last().unwrap();
        let mut cmd = Command::new("grep");
        cmd.args(["Cpus_allowed_list", "/proc/self/status"]);
        pin_command(&mut cmd, &[cpu]);
        let out = String::from_utf8(cmd.output().unwrap().stdout).unwrap();
        assert_eq!(
            out.split_whitespace().last(),
            Some(cpu.to_string().as_str()),
            "{out}"
        );
    }
}
