//! What the per-reconcile log line costs the controller: CPU per line, with
//! the controller's own subscriber and line (src/logging.rs), written to a
//! file as the harness's controller.log is. With `info` the line is filtered
//! out, which is what the controller pays at log level info. The Go
//! controller's line is timed by `BenchmarkReconcileLogLine` in
//! controllers/go/logline_test.go.
//!
//!     cargo run --release -p widget-controller --example log_line -- debug|info [lines]

use std::fs::File;
use std::sync::Arc;
use std::time::Duration;

use widget_api::presets::{LogFormat, LogLevel};

// The controller's own module: a binary crate has no library to import.
#[path = "../src/logging.rs"]
mod logging;

/// This process's CPU time, user and system.
fn cpu() -> Duration {
    let mut u = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage fills the struct it is given; RUSAGE_SELF is valid.
    let u = unsafe {
        libc::getrusage(libc::RUSAGE_SELF, u.as_mut_ptr());
        u.assume_init()
    };
    let t = |v: libc::timeval| Duration::new(v.tv_sec as u64, v.tv_usec as u32 * 1000);
    t(u.ru_utime) + t(u.ru_stime)
}

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let level: LogLevel = args
        .next()
        .unwrap_or_else(|| "debug".into())
        .parse()
        .map_err(anyhow::Error::msg)?;
    let lines: u32 = args
        .next()
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(200_000);
    let dir = std::env::temp_dir().join(format!("log-line-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("controller.log");
    logging::init(
        level,
        LogFormat::Console,
        Arc::new(File::create(&path)?),
        false,
    );
    let namespace = "cb-rust-good-single-n3000-r1-1a2b";
    let names: Vec<String> = (0..1000).map(|i| format!("widget-{i:06}")).collect();
    for round in 1..=5 {
        let t0 = cpu();
        for i in 0..lines {
            logging::reconciling(namespace, &names[i as usize % names.len()]);
        }
        let per_line = (cpu() - t0).as_secs_f64() * 1e9 / f64::from(lines);
        println!(
            "round {round}: {per_line:.0} ns of CPU per reconcile's log line at {}",
            level.as_str()
        );
    }
    println!("bytes written: {}", std::fs::metadata(&path)?.len());
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
