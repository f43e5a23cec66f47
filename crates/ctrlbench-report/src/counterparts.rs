//! Which variant is measured against which: deploy/presets.toml gives each
//! preset a question (throughput, coverage, steady-state cost, memory,
//! duplicate work) and the preset it is measured against, and summary.json
//! carries both. A pairing is a variant beside its counterpart at the same
//! scale, with the same implementation and like-for-like settings, on its
//! question's headline figure. Computed here, below the sections, because
//! both the report's first questions (`questions`) and the counterparts
//! section (`sections/counterparts.rs`) read the same pairings.

use ctrlbench_record::summary::Settings;

use crate::figures::{Group, RunFigures, interleaved};
use crate::interval::Ratio;
use crate::metrics::Metric;
use crate::stats::{fmt_duration, fmt_stat, stat};

/// The questions in the order the report prints them, their section
/// heading, and whether higher is better on their headline figure (for a
/// figure with a side in `gate::better`, that side: a test keeps them equal;
/// the phase figures have theirs only here).
pub(crate) const QUESTIONS: &[(&str, &str, bool)] = &[
    ("throughput", "Throughput", true),
    ("coverage", "Correctness and coverage", true),
    ("steady-state", "Steady-state cost", false),
    ("deletion", "Deletion", false),
    ("memory", "Memory", false),
    ("duplicates", "Duplicate work", false),
];

/// A headline figure: a table metric, or one from a phase after the create phase.
#[derive(Clone, Copy)]
pub(crate) enum Figure {
    Metric(Metric),
    /// The controller's requests/s during the (first) idle phase.
    IdleRequests,
    /// The (first) delete phase's length: until every object was gone.
    DeleteLength,
}

impl Figure {
    pub(crate) fn label(self) -> &'static str {
        match self {
            Figure::Metric(m) => m.label(),
            Figure::IdleRequests => "controller requests/s when idle",
            Figure::DeleteLength => "delete phase length",
        }
    }

    /// Whether higher is better, where the gate's tables say.
    fn better(self) -> Option<bool> {
        match self {
            Figure::Metric(m) => crate::direction::better(m),
            Figure::IdleRequests | Figure::DeleteLength => None,
        }
    }

    pub(crate) fn of(self, r: &RunFigures) -> Option<f64> {
        let phase = |kind: &str| r.phases.iter().find(|p| p.summary.kind == kind);
        match self {
            Figure::Metric(m) => r.get(m),
            Figure::IdleRequests => phase("idle")?.controller_requests_per_s,
            Figure::DeleteLength => {
                let p = phase("delete")?;
                // A delete phase that did not finish has no length to compare.
                (p.summary.done == p.summary.steps).then_some(p.seconds?)
            }
        }
    }

    fn values(self, g: &Group) -> Vec<f64> {
        g.used().iter().filter_map(|r| self.of(r)).collect()
    }

    /// The group's cell for this figure, as the metric catalogue's tables show it.
    pub(crate) fn cell(self, g: &Group) -> String {
        match self {
            Figure::Metric(m) => g.cell(m),
            Figure::IdleRequests => {
                stat(self.values(g)).map_or("—".into(), |s| fmt_stat(&s, |v| format!("{v:.1}/s")))
            }
            Figure::DeleteLength => {
                stat(self.values(g)).map_or("—".into(), |s| fmt_stat(&s, fmt_duration))
            }
        }
    }

    /// The figure a question compares `g` and `h` on; None when it was not measured.
    fn for_question(question: &str, g: &Group, h: &Group) -> Option<Figure> {
        let has = |f: Figure| !f.values(g).is_empty() && !f.values(h).is_empty();
        Some(match question {
            "throughput" => Figure::Metric(Metric::ReadyPerS),
            "coverage" => Figure::Metric(Metric::Ready),
            "steady-state" if has(Figure::IdleRequests) => Figure::IdleRequests,
            "steady-state" => Figure::Metric(Metric::WritesPerObject),
            "deletion" if has(Figure::DeleteLength) => Figure::DeleteLength,
            "memory" => Figure::Metric(Metric::PeakRss),
            "duplicates" => Figure::Metric(Metric::ReconcilesPerObject),
            _ => return None,
        })
    }
}

/// The preset row a group's runs recorded: (preset, description, question, counterpart).
pub(crate) fn info(g: &Group) -> Option<(&str, &str, &str, &str)> {
    g.runs.iter().find_map(|r| {
        let i = r.preset_info.as_ref()?;
        let preset = r.settings.as_ref().map(|s| s.preset.as_str())?;
        Some((
            preset,
            i.description.as_str(),
            i.question.as_str(),
            i.counterpart.as_str(),
        ))
    })
}

fn implementation(g: &Group) -> Option<&str> {
    g.runs.iter().find_map(|r| r.implementation.as_deref())
}

/// The settings that must agree for a like-for-like comparison: everything
/// the experiment file can change besides the preset's own.
fn like_for_like(s: &Settings) -> impl PartialEq + use<> {
    (
        s.work_ms,
        s.client_limit(),
        s.queue,
        s.priority_queue,
        s.debounce_ms,
        s.watch_list,
        s.strip_managed_fields,
        s.managed_fields_text,
        s.list_semantic.clone(),
        s.tunables.clone(),
    )
}

/// The counterpart group of `g`: same scale, same implementation, the
/// counterpart preset and like-for-like settings. When several qualify, the
/// one whose name is `g`'s with the preset name swapped; otherwise none.
pub(crate) fn counterpart_of<'a>(
    g: &Group,
    counterpart: &str,
    groups: &'a [Group],
) -> Option<&'a Group> {
    let (_, gs) = g.settings()?;
    let (preset, ..) = info(g)?;
    let found: Vec<&Group> = groups
        .iter()
        .filter(|h| {
            h.scale == g.scale
                && implementation(h) == implementation(g)
                && h.settings().is_some_and(|(_, hs)| {
                    hs.preset == counterpart && like_for_like(hs) == like_for_like(gs)
                })
        })
        .collect();
    match found.as_slice() {
        [one] => Some(one),
        [] => None,
        many => {
            let name = g.variant.replace(preset, counterpart);
            many.iter().copied().find(|h| h.variant == name)
        }
    }
}

/// One variant beside its counterpart, on its question's headline figure.
pub(crate) struct Pairing<'a> {
    pub question: &'static str,
    pub higher_is_better: bool,
    pub variant: &'a Group,
    pub counterpart: &'a Group,
    pub figure: Figure,
    /// "preset — description (measured against counterpart)".
    pub description: String,
}

/// Every variant whose counterpart ran beside it, question by question.
pub(crate) fn pairings(groups: &[Group]) -> Vec<Pairing<'_>> {
    let mut out = Vec::new();
    for &(question, _, higher_is_better) in QUESTIONS {
        for g in groups {
            let Some((preset, description, q, counterpart)) = info(g) else {
                continue;
            };
            if q != question || counterpart.is_empty() {
                continue;
            }
            let Some(h) = counterpart_of(g, counterpart, groups) else {
                continue;
            };
            let Some(figure) = Figure::for_question(question, g, h) else {
                continue;
            };
            out.push(Pairing {
                question,
                higher_is_better: figure.better().unwrap_or(higher_is_better),
                variant: g,
                counterpart: h,
                figure,
                description: format!("{preset} — {description} (measured against {counterpart})"),
            });
        }
    }
    out
}

/// What a pairing's figure cannot be a ratio of: zeros, said in words.
pub(crate) enum Zero {
    /// Both sides measured 0.
    Both,
    /// The variant is worse without a finite ratio (it reached 0 of a
    /// higher-is-better figure, or costs something where the counterpart costs 0).
    Worse(&'static str),
}

/// The zero cases of a pairing, where no ratio exists.
pub(crate) fn zero_case(p: &Pairing) -> Option<Zero> {
    let (bad, good) = (p.figure.values(p.variant), p.figure.values(p.counterpart));
    let zero = |v: &[f64]| !v.is_empty() && v.iter().all(|x| *x == 0.0);
    match () {
        _ if zero(&bad) && zero(&good) => Some(Zero::Both),
        _ if p.higher_is_better && zero(&bad) => Some(Zero::Worse("∞ (variant at 0)")),
        _ if !p.higher_is_better && zero(&good) && !bad.is_empty() => {
            Some(Zero::Worse("∞ (counterpart at 0)"))
        }
        _ => None,
    }
}

/// The ratio oriented so that > 1 means the variant is worse, paired by repeat.
pub(crate) fn oriented(p: &Pairing) -> Option<Ratio> {
    let f = |r: &RunFigures| p.figure.of(r);
    if p.higher_is_better {
        interleaved(p.variant, p.counterpart, f)
    } else {
        interleaved(p.counterpart, p.variant, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A question's heading orients its ratios by the question's side; on a
    /// figure the gate's tables give a side, the two must agree.
    #[test]
    fn questions_take_the_side_the_gate_gives_their_figures() {
        let on = [
            ("throughput", Metric::ReadyPerS),
            ("coverage", Metric::Ready),
            ("steady-state", Metric::WritesPerObject),
            ("memory", Metric::PeakRss),
            ("duplicates", Metric::ReconcilesPerObject),
        ];
        for (question, m) in on {
            let side = QUESTIONS.iter().find(|q| q.0 == question).unwrap().2;
            let f = Figure::Metric(m);
            assert!(
                f.better().is_none_or(|b| b == side),
                "{question}: {} is {:?} in gate::better",
                m.label(),
                f.better()
            );
        }
    }
}
