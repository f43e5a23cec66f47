//! Progress of a running group: an indicatif bar per variant (Ready/N,
//! reconciles/s, elapsed/window), or plain periodic lines when stdout is not
//! a terminal or with --no-progress.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};

pub struct Bars {
    bars: Vec<ProgressBar>,
    names: Vec<String>,
    scale: u64,
    window: f64,
    plain: bool,
    last_line: Mutex<Instant>,
    _multi: Option<MultiProgress>,
}

const PLAIN_EVERY: Duration = Duration::from_secs(5);

impl Bars {
    pub fn new(names: &[String], scale: u64, window: f64, progress: bool) -> Bars {
        let plain = !progress || !std::io::stdout().is_terminal();
        let multi = (!plain).then(MultiProgress::new);
        let bars = names
            .iter()
            .map(|n| {
                let Some(m) = &multi else {
                    return ProgressBar::hidden();
                };
                let b = m.add(ProgressBar::new(scale));
                b.set_style(
                    ProgressStyle::with_template("{prefix:<20} {bar:30} {pos}/{len} Ready  {msg}")
                        .expect("template"),
                );
                b.set_prefix(n.clone());
                b
            })
            .collect();
        Bars {
            bars,
            names: names.to_vec(),
            scale,
            window,
            plain,
            last_line: Mutex::new(Instant::now()),
            _multi: multi,
        }
    }

    pub fn update(&self, i: usize, ready: u64, rate: f64, elapsed: Duration, alive: bool) {
        let msg = format!(
            "{rate:>7.1} reconciles/s  {:>5.0}/{:.0} s{}",
            elapsed.as_secs_f64(),
            self.window,
            if alive { "" } else { "  controller exited!" }
        );
        if !self.plain {
            self.bars[i].set_position(ready);
            self.bars[i].set_message(msg);
            return;
        }
        // One block of lines (every variant) at most every PLAIN_EVERY.
        let mut last = self.last_line.lock().expect("progress lock");
        if i == 0 && last.elapsed() < PLAIN_EVERY {
            return;
        }
        if i == 0 {
            *last = Instant::now();
        } else if last.elapsed() > Duration::from_millis(50) {
            return;
        }
        println!(
            "  {:<20} {ready}/{} Ready  {msg}",
            self.names[i], self.scale
        );
    }

    pub fn finish(&self) {
        for b in &self.bars {
            b.finish();
        }
    }
}
