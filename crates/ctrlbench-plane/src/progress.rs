//! The one progress display of ctrlbench (binary builds, runs, plane
//! benchmarks): indicatif bars on a terminal, plain periodic lines otherwise
//! (CI logs, pipes, `--no-progress`), so a long step is never silent and a
//! log never fills with redraws. One [`Progress`] holds one bar per item.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};

/// Bars of `total` steps, one per label.
pub struct Progress {
    bars: Vec<ProgressBar>,
    labels: Vec<String>,
    total: u64,
    /// The word after `pos/total` in plain lines ("Ready", or empty).
    unit: &'static str,
    every: Duration,
    plain: Option<Mutex<Plain>>,
    _multi: Option<MultiProgress>,
}

struct Plain {
    pos: Vec<u64>,
    messages: Vec<String>,
    last: Instant,
}

impl Progress {
    /// One bar per label. Plain lines (on stderr, every `every`) when stderr
    /// is not a terminal or `enabled` is false.
    pub fn new(
        labels: &[String],
        total: u64,
        unit: &'static str,
        every: Duration,
        enabled: bool,
    ) -> Progress {
        let plain = !enabled || !std::io::stderr().is_terminal();
        let multi = (!plain).then(MultiProgress::new);
        let template = format!(
            "{{prefix:<20}} [{{elapsed_precise}}] {{bar:30}} {{pos}}/{{len}} {unit} {{wide_msg}}"
        );
        let bars = labels
            .iter()
            .map(|l| {
                let Some(m) = &multi else {
                    return ProgressBar::hidden();
                };
                let b = m.add(ProgressBar::new(total));
                b.set_style(ProgressStyle::with_template(&template).expect("valid template"));
                b.set_prefix(l.clone());
                b.enable_steady_tick(Duration::from_millis(200));
                b
            })
            .collect();
        if plain {
            for l in labels {
                eprintln!("{l}: started ({total} steps)");
            }
        }
        Progress {
            bars,
            labels: labels.to_vec(),
            total,
            unit,
            every,
            plain: plain.then(|| {
                Mutex::new(Plain {
                    pos: vec![0; labels.len()],
                    messages: vec![String::new(); labels.len()],
                    last: Instant::now(),
                })
            }),
            _multi: multi,
        }
    }

    /// One bar labelled `label` (builds and other long single steps).
    pub fn bar(total: u64, label: &str) -> Progress {
        Progress::new(
            &[label.to_string()],
            total,
            "",
            Duration::from_secs(15),
            true,
        )
    }

    /// Advances bar 0.
    pub fn inc(&self, n: u64) {
        let pos = self.bars[0].position() + n;
        let pos = match &self.plain {
            Some(p) => p.lock().expect("progress lock").pos[0] + n,
            None => pos,
        };
        self.set(0, pos, None);
    }

    /// The message of bar 0.
    pub fn set_message(&self, msg: String) {
        match &self.plain {
            Some(p) => p.lock().expect("progress lock").messages[0] = msg,
            None => self.bars[0].set_message(msg),
        }
    }

    /// Sets bar `i` (and its message); in plain mode prints every bar's line
    /// at most once per interval.
    pub fn set(&self, i: usize, pos: u64, msg: Option<String>) {
        let Some(p) = &self.plain else {
            self.bars[i].set_position(pos);
            if let Some(m) = msg {
                self.bars[i].set_message(m);
            }
            return;
        };
        let mut p = p.lock().expect("progress lock");
        p.pos[i] = pos;
        if let Some(m) = msg {
            p.messages[i] = m;
        }
        if p.last.elapsed() < self.every {
            return;
        }
        p.last = Instant::now();
        for (k, l) in self.labels.iter().enumerate() {
            eprintln!(
                "  {l:<20} {}/{} {} {}",
                p.pos[k], self.total, self.unit, p.messages[k]
            );
        }
    }

    pub fn finish(&self) {
        for b in &self.bars {
            b.finish();
        }
    }

    pub fn finish_and_clear(&self) {
        for b in &self.bars {
            b.finish_and_clear();
        }
    }
}
