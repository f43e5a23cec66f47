//! `ctrlbench doctor`: what would disturb a measurement right now, one line
//! each — other processes using CPU (with their share of a core), the
//! hypervisor's steal, the CPU frequency governor, cores, free memory, swap
//! in use and free disk, and the load average for information — and
//! whether any of it would (the exit code). Thresholds are the ones a run
//! flags by.

use std::path::Path;
use std::time::Duration;

use crate::machine;

/// Other processes above this share of one core make a run "machine busy"
/// (the default of an experiment's `busy_threshold`).
pub const BUSY_THRESHOLD: f64 = 0.10;
/// Less free memory than this risks swapping a large run.
const MIN_FREE_MEMORY: u64 = 2 << 30;
/// Less free disk than this may not hold a run's etcd and results.
const MIN_FREE_DISK: u64 = 2 << 30;
/// Steal above this share of the machine: a noisy neighbour.
const MAX_STEAL: f64 = 0.05;

/// One finding: what was read and whether it would disturb a measurement.
pub struct Line {
    pub text: String,
    pub disturbs: bool,
}

/// Samples the machine for `over` and judges it.
pub fn check(over: Duration, results: &Path) -> Vec<Line> {
    let mut lines = Vec::new();
    let mut line = |disturbs: bool, text: String| lines.push(Line { text, disturbs });
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    line(false, format!("cores: {cores}"));
    let before = machine::Reading::now();
    let busy = machine::busy_processes(over);
    let after = machine::Reading::now();
    // The machine's busy time, so short-lived processes (a compiler's
    // workers) count too; the list below names the long-lived ones.
    let usage = before.zip(after).map(|(a, b)| b.since(&a));
    let total = usage.map_or_else(|| busy.iter().map(|(_, s)| s).sum(), |u| u.core_fraction());
    line(
        total > BUSY_THRESHOLD,
        format!(
            "other processes: {:.0} % of a core over {:.1} s (a run is flagged above {:.0} %)",
            total * 100.0,
            over.as_secs_f64(),
            BUSY_THRESHOLD * 100.0
        ),
    );
    for (p, share) in busy.iter().take(5).filter(|(_, s)| *s >= 0.01) {
        line(
            *share > BUSY_THRESHOLD,
            format!(
                "  pid {} {}: {:.0} % of a core",
                p.pid,
                p.comm,
                share * 100.0
            ),
        );
    }
    if let Some(u) = usage {
        let steal = u.steal_s / (u.wall_s * cores as f64).max(1e-9);
        line(
            steal > MAX_STEAL,
            format!("steal: {:.1} % of the machine", steal * 100.0),
        );
    }
    // Informational: the load average lags by minutes and counts a
    // measurement that just ended; the CPU other processes use now decides.
    if let Some(l) = machine::load_avg_1m() {
        line(
            false,
            format!("load average (1 min): {l:.2} on {cores} core(s)"),
        );
    }
    match machine::governor() {
        Some(g) => line(
            g != "performance",
            format!("CPU frequency governor: {g} (performance keeps the clock steady)"),
        ),
        None => line(
            false,
            "CPU frequency governor: not shown by this kernel".into(),
        ),
    }
    if let Some(m) = machine::meminfo("MemAvailable") {
        line(m < MIN_FREE_MEMORY, format!("free memory: {}", gib(m)));
    }
    if let (Some(t), Some(f)) = (machine::meminfo("SwapTotal"), machine::meminfo("SwapFree")) {
        let used = t.saturating_sub(f);
        line(used > 0, format!("swap in use: {}", gib(used)));
    }
    let dir = if results.exists() {
        results
    } else {
        Path::new(".")
    };
    if let Some(d) = machine::disk_free(dir) {
        line(
            d < MIN_FREE_DISK,
            format!("free disk at {}: {}", dir.display(), gib(d)),
        );
    }
    lines
}

fn gib(b: u64) -> String {
    format!("{:.1} GiB", b as f64 / f64::from(1u32 << 30))
}

/// The lines as printed: ✓ or ✗ each, and "quiet" when nothing disturbs.
pub fn render(lines: &[Line]) -> String {
    let mut s = String::new();
    for l in lines {
        s.push_str(if l.disturbs { "✗ " } else { "✓ " });
        s.push_str(&l.text);
        s.push('\n');
    }
    if !lines.iter().any(|l| l.disturbs) {
        s.push_str("quiet: nothing here would disturb a measurement\n");
    }
    s
}
