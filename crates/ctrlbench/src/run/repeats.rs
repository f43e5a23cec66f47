//! Repeats until decided: after every interleaved repeat of a scale the
//! experiment's questions (counterpart pairs, rust-X / go-X pairs,
//! `[[compare]]`) are answered from the results so far, paired over the
//! repeats done; once none is undecided — or at `max_repeats` — the scale's
//! repeats end. The progress shows the questions still open with their
//! current intervals; the manifest records the repeats done and why they
//! stopped.

use std::collections::BTreeMap;
use std::path::Path;

use ctrlbench_record::manifest::Repeats as Record;
use ctrlbench_report::questions::{self, Answer};

use crate::experiment::Experiment;
use crate::experiment::spec::Repeats;

/// Why a scale's repeats end after `repeat` (at or past `min`), with
/// `asked` questions of which `open` are undecided; `None` to go on.
fn stop_reason(asked: usize, open: usize, repeat: u32, min: u32, max: u32) -> Option<String> {
    if asked == 0 {
        Some(format!(
            "no questions to decide (stopped at min_repeats = {min})"
        ))
    } else if open == 0 {
        Some("all decided".to_string())
    } else if repeat >= max {
        Some("max_repeats".to_string())
    } else {
        None
    }
}

/// Where each scale's repeats stand.
pub struct Decided {
    repeats: Repeats,
    margin: f64,
    /// scale → (repeats done, why it stopped once it has).
    scales: BTreeMap<u64, (u32, Option<String>)>,
}

impl Decided {
    pub fn new(exp: &Experiment) -> Decided {
        Decided {
            repeats: exp.repeats,
            margin: exp.margin,
            scales: BTreeMap::new(),
        }
    }

    /// Whether `scale` needs no more repeats.
    pub fn done_with(&self, scale: u64) -> bool {
        self.scales
            .get(&scale)
            .is_some_and(|(_, why)| why.is_some())
    }

    /// Repeat `repeat` of `scale` is complete: decide whether another is needed.
    pub fn after_repeat(&mut self, scale: u64, repeat: u32, results: &Path) {
        let entry = self.scales.entry(scale).or_insert((0, None));
        entry.0 = repeat;
        let Repeats::Auto { min, max } = self.repeats else {
            return;
        };
        if repeat < min {
            return;
        }
        let answers: Vec<Answer> = match questions::questions(results, self.margin) {
            Ok(a) => a.into_iter().filter(|a| a.scale == scale).collect(),
            Err(e) => {
                eprintln!("warning: cannot answer the questions after repeat {repeat}: {e:#}");
                Vec::new()
            }
        };
        let open: Vec<&Answer> = answers.iter().filter(|a| !a.verdict.decided()).collect();
        eprintln!(
            "after repeat {repeat} of N={scale}: {} of {} question(s) open",
            open.len(),
            answers.len()
        );
        for a in &open {
            eprintln!("  {}", a.line());
        }
        entry.1 = stop_reason(answers.len(), open.len(), repeat, min, max);
    }

    /// An interruption ends every scale still going.
    pub fn interrupted(&mut self) {
        for (_, why) in self.scales.values_mut() {
            why.get_or_insert_with(|| "interrupted".to_string());
        }
    }

    /// What the manifest records.
    pub fn record(&self) -> Record {
        let (mode, min, max) = match self.repeats {
            Repeats::Fixed(n) => ("fixed", n, n),
            Repeats::Auto { min, max } => ("auto", min, max),
        };
        let done = self.scales.values().map(|(n, _)| *n).max().unwrap_or(0);
        let mut why: Vec<String> = Vec::new();
        for (scale, (n, w)) in &self.scales {
            let w = match (self.repeats, w) {
                (Repeats::Fixed(_), _) => "fixed".to_string(),
                (_, Some(w)) => w.clone(),
                (_, None) => "running".to_string(),
            };
            if self.scales.len() == 1 {
                why.push(w);
            } else {
                why.push(format!("N={scale}: {w} after {n}"));
            }
        }
        why.dedup();
        Record {
            mode: mode.to_string(),
            done,
            min,
            max,
            stopped: why.join("; "),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decided(repeats: Repeats) -> Decided {
        Decided {
            repeats,
            margin: 0.05,
            scales: BTreeMap::new(),
        }
    }

    #[test]
    fn repeats_stop_when_all_are_decided_or_at_the_maximum() {
        /// (asked, open, repeat, min, max), and why the repeats stop.
        type Case = ((usize, usize, u32, u32, u32), Option<&'static str>);
        let cases: &[Case] = &[
            ((3, 0, 1, 1, 5), Some("all decided")),
            ((3, 1, 1, 1, 5), None),
            ((3, 1, 4, 1, 5), None),
            ((3, 1, 5, 1, 5), Some("max_repeats")),
            ((3, 3, 6, 1, 5), Some("max_repeats")),
            ((3, 0, 5, 1, 5), Some("all decided")),
            (
                (0, 0, 2, 2, 5),
                Some("no questions to decide (stopped at min_repeats = 2)"),
            ),
        ];
        for &((asked, open, repeat, min, max), want) in cases {
            assert_eq!(
                stop_reason(asked, open, repeat, min, max).as_deref(),
                want,
                "asked {asked}, open {open}, repeat {repeat} of {min}..={max}"
            );
        }
    }

    #[test]
    fn before_min_repeats_no_question_is_asked_and_nothing_stops() {
        let mut d = decided(Repeats::Auto { min: 2, max: 4 });
        // No results directory: were the questions asked, a warning would
        // be printed and the scale would stop with "no questions".
        d.after_repeat(100, 1, Path::new("/nonexistent/ctrlbench-results"));
        assert!(!d.done_with(100));
        assert_eq!(d.record().stopped, "running");
        assert_eq!(d.record().done, 1);
    }

    #[test]
    fn fixed_repeats_never_stop_early_and_record_fixed() {
        let mut d = decided(Repeats::Fixed(3));
        d.after_repeat(50, 1, Path::new("/nonexistent/ctrlbench-results"));
        assert!(!d.done_with(50));
        let r = d.record();
        assert_eq!((r.mode.as_str(), r.min, r.max), ("fixed", 3, 3));
        assert_eq!(r.stopped, "fixed");
    }

    #[test]
    fn an_interruption_ends_only_the_scales_still_going() {
        let mut d = decided(Repeats::Auto { min: 1, max: 4 });
        d.scales.insert(10, (2, Some("all decided".to_string())));
        d.scales.insert(20, (1, None));
        d.interrupted();
        assert!(d.done_with(10) && d.done_with(20));
        assert_eq!(
            d.record().stopped,
            "N=10: all decided after 2; N=20: interrupted after 1"
        );
        assert_eq!(d.record().done, 2);
    }
}
