//! Progress for long steps: an indicatif bar on a terminal, plain periodic
//! lines otherwise (CI logs, pipes), so a long build is never silent.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

/// A progress counter that draws itself appropriately for stderr.
pub struct Progress {
    bar: Option<ProgressBar>,
    plain: Mutex<Plain>,
    label: String,
    total: u64,
}

struct Plain {
    pos: u64,
    last: Instant,
    message: String,
}

const PLAIN_EVERY: Duration = Duration::from_secs(15);

/// A bar of `total` steps labelled `label`.
pub fn bar(total: u64, label: &str) -> Progress {
    let bar = std::io::stderr().is_terminal().then(|| {
        let b = ProgressBar::new(total);
        b.set_style(
            ProgressStyle::with_template(
                "{prefix} [{elapsed_precise}] {bar:30} {pos}/{len} {wide_msg}",
            )
            .expect("valid template"),
        );
        b.set_prefix(label.to_string());
        b.enable_steady_tick(Duration::from_millis(200));
        b
    });
    if bar.is_none() {
        eprintln!("{label}: started ({total} steps)");
    }
    Progress {
        bar,
        plain: Mutex::new(Plain {
            pos: 0,
            last: Instant::now(),
            message: String::new(),
        }),
        label: label.to_string(),
        total,
    }
}

impl Progress {
    pub fn inc(&self, n: u64) {
        if let Some(b) = &self.bar {
            b.inc(n);
            return;
        }
        let mut p = self.plain.lock().expect("progress lock");
        p.pos += n;
        if p.last.elapsed() >= PLAIN_EVERY {
            p.last = Instant::now();
            eprintln!("{}: {}/{} {}", self.label, p.pos, self.total, p.message);
        }
    }

    pub fn set_message(&self, msg: String) {
        match &self.bar {
            Some(b) => b.set_message(msg),
            None => self.plain.lock().expect("progress lock").message = msg,
        }
    }

    pub fn finish_and_clear(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
