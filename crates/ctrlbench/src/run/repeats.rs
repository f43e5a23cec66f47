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
        entry.1 = if answers.is_empty() {
            Some(format!(
                "no questions to decide (stopped at min_repeats = {min})"
            ))
        } else if open.is_empty() {
            Some("all decided".to_string())
        } else if repeat >= max {
            Some("max_repeats".to_string())
        } else {
            None
        };
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
