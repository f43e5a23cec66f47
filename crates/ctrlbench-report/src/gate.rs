//! The regression gate: what a gate found (which headline figures have a
//! better side is `direction`'s). `compare` gates two results directories with it;
//! [`of_answers`] gates one run's own `[[compare]]` answers
//! (`run --fail-on-regression`, with `--baseline` the working tree against
//! a git ref).

use crate::metrics::Metric;
use crate::questions::{Answer, Source};
use crate::verdict::{Verdict, decide, mde};

pub use crate::direction::{GATE, UNGATED, better};

/// What the regression gate found: decided regressions (it fails on them)
/// and the rows it could not decide (it never fails on those), one line each.
#[derive(Debug, Default)]
pub struct Gate {
    pub regressions: Vec<String>,
    pub undecided: Vec<String>,
    /// Which normalisation the gate used, in words.
    pub normalised: String,
}

/// The regression gate of one run: each `[[compare]]` answer on a figure
/// with a better side whose whole interval lies beyond `threshold` (0.10 =
/// 10 %) on B's worse side is a regression; one that straddles it is
/// undecided, never a failure. Answers on figures without a better side
/// are skipped.
pub fn of_answers(answers: &[Answer], threshold: f64) -> Gate {
    let pct = crate::verdict::percent(threshold);
    let mut out = Gate {
        normalised: "paired within one run".into(),
        ..Default::default()
    };
    for a in answers.iter().filter(|a| a.source == Source::Compare) {
        let Some(higher_is_better) = Metric::named(&a.figure).and_then(better) else {
            continue;
        };
        let interval = a.lo.zip(a.hi);
        let v = decide(interval, threshold);
        let worse = matches!(
            (v, higher_is_better),
            (Verdict::Lower, true) | (Verdict::Higher, false)
        );
        if worse {
            out.regressions.push(format!(
                "{} = {}: {} worse than {} by more than {pct}",
                a.label, a.cell, a.b, a.a
            ));
        } else if v == Verdict::Undecided {
            let can = match mde(interval) {
                Some(d) if d.is_finite() => format!(
                    "could only tell a change beyond {}",
                    crate::verdict::plus_minus(d)
                ),
                Some(_) => "interval unbounded".into(),
                None => "no interval".into(),
            };
            out.undecided.push(format!(
                "{} = {}: undecided against ±{pct} ({can})",
                a.label, a.cell
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(figure: &str, lo: f64, hi: f64) -> Answer {
        Answer {
            source: Source::Compare,
            label: format!("N=50 {figure}: b / a"),
            scale: 50,
            a: "a".into(),
            b: "b".into(),
            figure: figure.into(),
            ratio: Some((lo * hi).sqrt()),
            lo: Some(lo),
            hi: Some(hi),
            pairs: 3,
            paired: true,
            verdict: Verdict::Undecided,
            mde: None,
            higher_is_better: None,
            words: String::new(),
            cell: String::new(),
            evidence: String::new(),
        }
    }

    #[test]
    fn every_direction_is_stated_once() {
        for (i, (m, _)) in GATE.iter().chain(UNGATED).enumerate() {
            let n = GATE.iter().chain(UNGATED).filter(|g| g.0 == *m).count();
            assert_eq!(n, 1, "{m:?} (entry {i}) is stated {n} times");
        }
    }

    /// Writes/s rises when the same writes take less time: it has no
    /// better side, and writes per object, lower is better, is gated.
    #[test]
    fn writes_per_s_has_no_side_and_writes_per_object_is_lower_is_better() {
        assert_eq!(better(Metric::WritesPerS), None);
        assert_eq!(better(Metric::WritesPerObject), Some(false));
        let g = of_answers(
            &[
                answer("writes/s", 1.5, 1.7),
                answer("writes per object", 1.3, 1.6),
                answer("writes per object", 0.6, 0.8),
            ],
            0.10,
        );
        assert_eq!(g.regressions.len(), 1, "{:?}", g.regressions);
        assert!(g.regressions[0].starts_with("N=50 writes per object"));
        assert!(g.undecided.is_empty(), "{:?}", g.undecided);
    }

    #[test]
    fn only_a_decided_change_to_the_worse_side_beyond_the_threshold_fails() {
        let g = of_answers(
            &[
                // Ready/s wholly below 0.9: worse beyond 10 %.
                answer("Ready/s", 0.21, 0.32),
                // T100 wholly below 0.9: better, not a regression, decided.
                answer("T100", 0.5, 0.8),
                // Peak RSS straddling 1.1: undecided, never a failure.
                answer("peak RSS", 0.95, 1.2),
                // T100 wholly above 1.1: worse.
                answer("T100", 1.2, 1.4),
                // No better side: skipped.
                answer("409s", 0.1, 0.2),
            ],
            0.10,
        );
        assert_eq!(g.regressions.len(), 2, "{:?}", g.regressions);
        assert!(g.regressions[0].starts_with("N=50 Ready/s"));
        assert!(g.regressions[1].starts_with("N=50 T100"));
        assert_eq!(g.undecided.len(), 1, "{:?}", g.undecided);
        assert!(g.undecided[0].starts_with("N=50 peak RSS"));
    }
}
