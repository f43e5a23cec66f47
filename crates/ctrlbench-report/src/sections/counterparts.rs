//! Presets against their counterparts, grouped by the question they answer.
//! deploy/presets.toml gives each preset a question (throughput, coverage,
//! steady-state cost, memory) and the preset it is measured against;
//! summary.json carries both. For every variant whose counterpart ran at the
//! same scale, with the same implementation and like-for-like settings, this
//! section prints the question's headline figure (Ready/s; Ready; the
//! controller's requests/s in an idle phase, else its writes/s; a delete
//! phase's length; peak RSS) on both sides and their
//! ratio, oriented so that > 1 means the variant is worse, with the 95 %
//! bootstrap interval over the repeats and the preset's description.

use ctrlbench_record::summary::Settings;

use super::Section;
use crate::context::ReportCtx;
use crate::figures::{Group, RunFigures};
use crate::interval::Ratio;
use crate::metrics::Metric;
use crate::stats::{fmt_duration, fmt_stat, stat};
use crate::{Block, Table};

pub struct Counterparts;

impl Section for Counterparts {
    fn render(&self, ctx: &ReportCtx, out: &mut Vec<Block>) {
        out.extend(blocks(&ctx.groups));
    }
}

/// The questions in the order the report prints them, and whether higher
/// is better on their headline figure.
const QUESTIONS: &[(&str, &str, bool)] = &[
    ("throughput", "Throughput", true),
    ("coverage", "Correctness and coverage", true),
    ("steady-state", "Steady-state cost", false),
    ("deletion", "Deletion", false),
    ("memory", "Memory", false),
];

/// A headline figure: a table metric, or one from a phase after the create phase.
#[derive(Clone, Copy)]
enum Figure {
    Metric(Metric),
    /// The controller's requests/s during the (first) idle phase.
    IdleRequests,
    /// The (first) delete phase's length: until every object was gone.
    DeleteLength,
}

impl Figure {
    fn label(self) -> &'static str {
        match self {
            Figure::Metric(m) => m.label(),
            Figure::IdleRequests => "controller requests/s when idle",
            Figure::DeleteLength => "delete phase length",
        }
    }

    fn of(self, r: &RunFigures) -> Option<f64> {
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

    fn cell(self, g: &Group) -> String {
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
            "steady-state" => Figure::Metric(Metric::WritesPerS),
            "deletion" if has(Figure::DeleteLength) => Figure::DeleteLength,
            "memory" => Figure::Metric(Metric::PeakRss),
            _ => return None,
        })
    }
}

/// The preset row a group's runs recorded: (preset, description, question, counterpart).
fn info(g: &Group) -> Option<(&str, &str, &str, &str)> {
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
        s.queue.clone(),
        s.priority_queue,
        s.debounce_ms,
        s.watch_list,
        s.strip_managed_fields,
    )
}

/// The counterpart group of `g`: same scale, same implementation, the
/// counterpart preset and like-for-like settings. When several qualify, the
/// one whose name is `g`'s with the preset name swapped; otherwise none.
fn counterpart_of<'a>(g: &Group, counterpart: &str, groups: &'a [Group]) -> Option<&'a Group> {
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

/// The ratio oriented so that > 1 means `bad` is worse, and its verdict.
fn worse_by(bad: &[f64], good: &[f64], higher_is_better: bool) -> (String, &'static str) {
    let r = if higher_is_better {
        Ratio::of(bad, good)
    } else {
        Ratio::of(good, bad)
    };
    let zero = |v: &[f64]| !v.is_empty() && v.iter().all(|x| *x == 0.0);
    match r {
        None if zero(bad) && zero(good) => ("— (both 0)".into(), "same"),
        None if higher_is_better && zero(bad) => ("∞ (variant at 0)".into(), "worse"),
        None if !higher_is_better && zero(good) && !bad.is_empty() => {
            ("∞ (counterpart at 0)".into(), "worse")
        }
        None => ("—".into(), "not measured"),
        Some(r) => {
            let verdict = match r.within_noise() {
                None => "one sample: cannot tell",
                Some(true) => "within noise",
                Some(false) if r.ratio > 1.0 => "worse",
                Some(false) => "better",
            };
            (r.cell(), verdict)
        }
    }
}

/// The section's blocks, or none when no variant ran beside its counterpart.
fn blocks(groups: &[Group]) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut described: Vec<String> = Vec::new();
    for &(question, title, higher_is_better) in QUESTIONS {
        let mut rows = Vec::new();
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
            let (bad, good) = (figure.values(g), figure.values(h));
            let (ratio, verdict) = worse_by(&bad, &good, higher_is_better);
            rows.push(vec![
                g.scale.to_string(),
                format!("{}{}", g.variant, g.marker()),
                format!("{}{}", h.variant, h.marker()),
                figure.label().to_string(),
                figure.cell(g),
                figure.cell(h),
                ratio,
                verdict.to_string(),
            ]);
            let line = format!("{preset} — {description} (measured against {counterpart})");
            if !described.contains(&line) {
                described.push(line);
            }
        }
        if rows.is_empty() {
            continue;
        }
        blocks.push(Block::Heading(3, title.to_string()));
        blocks.push(Block::Table(Table {
            head: [
                "N",
                "variant",
                "measured against",
                "figure",
                "variant",
                "counterpart",
                if higher_is_better {
                    "counterpart / variant"
                } else {
                    "variant / counterpart"
                },
                "verdict",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        }));
    }
    if blocks.is_empty() {
        return blocks;
    }
    let mut out = vec![
        Block::Heading(2, "Presets against their counterparts, by question".into()),
        Block::Para(
            "Each variant beside the variant of its counterpart preset (deploy/presets.toml) at the \
             same scale, with the same implementation and the same work, client limit, queue and \
             watch settings, on the headline figure of the question its preset answers. The ratio \
             is oriented so that above 1 the variant is worse; the interval is a 95 % bootstrap \
             over the repeats of both sides (\"within noise\" when it includes 1)."
                .into(),
        ),
    ];
    out.extend(blocks);
    out.push(Block::List(described));
    out
}

#[cfg(test)]
mod tests {
    use ctrlbench_record::summary::PresetInfo;

    use super::*;

    fn group(
        variant: &str,
        imp: &str,
        preset: &str,
        q: &str,
        cp: &str,
        m: Metric,
        vals: &[f64],
    ) -> Group {
        let runs = vals
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let mut r = RunFigures::empty(100, variant, i as u32 + 1);
                r.implementation = Some(imp.into());
                r.settings = Some(Settings {
                    preset: preset.into(),
                    work_ms: 10,
                    ..Settings::default()
                });
                r.preset_info = Some(PresetInfo {
                    description: format!("{preset} does things."),
                    question: q.into(),
                    counterpart: cp.into(),
                });
                r.set(m, Some(*v));
                r
            })
            .collect();
        Group {
            scale: 100,
            variant: variant.into(),
            runs,
        }
    }

    fn tables(blocks: &[Block]) -> Vec<&Table> {
        blocks
            .iter()
            .filter_map(|b| match b {
                Block::Table(t) => Some(t),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn throughput_ratio_is_counterpart_over_variant() {
        let m = Metric::ReadyPerS;
        let groups = vec![
            group(
                "rust-good",
                "rust",
                "good",
                "throughput",
                "",
                m,
                &[100.0, 110.0, 90.0],
            ),
            group(
                "go-good",
                "go@v0.22",
                "good",
                "throughput",
                "",
                m,
                &[300.0, 300.0, 300.0],
            ),
            group(
                "rust-list",
                "rust",
                "list-in-reconcile",
                "throughput",
                "good",
                m,
                &[25.0, 20.0, 30.0],
            ),
        ];
        let s = blocks(&groups);
        let t = tables(&s);
        assert_eq!(t.len(), 1);
        // Medians 100 and 25 (computed by hand): 4.00, clearly worse; the Go
        // good variant is not the Rust variant's counterpart.
        assert_eq!(t[0].rows.len(), 1);
        let row = &t[0].rows[0];
        assert_eq!(row[1], "rust-list");
        assert_eq!(row[2], "rust-good");
        assert!(row[6].starts_with("4.00 ["), "{row:?}");
        assert_eq!(row[7], "worse");
        let Some(Block::List(d)) = s.last() else {
            panic!("no descriptions")
        };
        assert_eq!(
            d[0],
            "list-in-reconcile — list-in-reconcile does things. (measured against good)"
        );
    }

    #[test]
    fn lower_is_better_figures_are_variant_over_counterpart() {
        let m = Metric::PeakRss;
        let groups = vec![
            group("g", "rust", "good", "throughput", "", m, &[40.0, 42.0]),
            group(
                "wide",
                "rust",
                "cache-cluster-wide",
                "memory",
                "good",
                m,
                &[80.0, 84.0],
            ),
        ];
        let t = blocks(&groups);
        let row = &tables(&t)[0].rows[0];
        // Medians 41 and 82: 2.00, every resample between 80/42 and 84/40.
        assert!(row[6].starts_with("2.00 ["), "{row:?}");
        assert_eq!(row[7], "worse");
    }

    #[test]
    fn a_variant_at_zero_and_single_samples_are_said_so() {
        let m = Metric::Ready;
        let groups = vec![
            group(
                "good-single",
                "rust",
                "good-single",
                "throughput",
                "",
                m,
                &[50.0],
            ),
            group("bad", "rust", "bad", "coverage", "good-single", m, &[0.0]),
        ];
        let t = blocks(&groups);
        assert_eq!(tables(&t)[0].rows[0][6], "∞ (variant at 0)");
        // A steady-state cost where the counterpart costs nothing at all.
        let w = Metric::WritesPerS;
        let groups = vec![
            group("good", "rust", "good", "throughput", "", w, &[0.0]),
            group(
                "poll",
                "rust",
                "requeue-after",
                "steady-state",
                "good",
                w,
                &[150.0],
            ),
            group(
                "quiet",
                "rust",
                "conditional-status",
                "steady-state",
                "good",
                w,
                &[0.0],
            ),
        ];
        let t = blocks(&groups);
        let rows = &tables(&t)[0].rows;
        assert_eq!(
            (rows[0][6].as_str(), rows[0][7].as_str()),
            ("∞ (counterpart at 0)", "worse")
        );
        assert_eq!(
            (rows[1][6].as_str(), rows[1][7].as_str()),
            ("— (both 0)", "same")
        );
        let groups = vec![
            group(
                "good-single",
                "rust",
                "good-single",
                "throughput",
                "",
                m,
                &[50.0],
            ),
            group("bad", "rust", "bad", "coverage", "good-single", m, &[25.0]),
        ];
        let t = blocks(&groups);
        let row = &tables(&t)[0].rows[0];
        assert_eq!(row[6], "2.00 (single sample)");
        assert_eq!(row[7], "one sample: cannot tell");
    }

    #[test]
    fn unlike_settings_or_no_counterpart_give_no_section() {
        let m = Metric::ReadyPerS;
        let mut other = group("rust-good", "rust", "good", "throughput", "", m, &[100.0]);
        for r in &mut other.runs {
            r.settings.as_mut().unwrap().queue = Some("fifo".into());
        }
        let groups = vec![
            other,
            group(
                "rust-list",
                "rust",
                "list-in-reconcile",
                "throughput",
                "good",
                m,
                &[25.0],
            ),
        ];
        assert!(blocks(&groups).is_empty());
        assert!(blocks(&groups[1..]).is_empty());
    }
}
