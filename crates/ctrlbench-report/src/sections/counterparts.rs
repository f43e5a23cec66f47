//! Presets against their counterparts, grouped by the question they answer.
//! deploy/presets.toml gives each preset a question (throughput, coverage,
//! steady-state cost, memory, duplicate work) and the preset it is measured against;
//! summary.json carries both. For every variant whose counterpart ran at the
//! same scale, with the same implementation and like-for-like settings, this
//! section prints the question's headline figure (Ready/s; Ready; the
//! controller's requests/s in an idle phase, else its writes/s; a delete
//! phase's length; peak RSS; reconciles per object) on both sides and their
//! ratio, oriented so that > 1 means the variant is worse, paired over the
//! repeats (the variants ran interleaved) with its 95 % interval and a
//! verdict against the margin, and the preset's description. The pairings
//! are computed below the sections (`crate::counterparts`), since they are
//! also the report's first questions (`crate::questions`); this file only
//! lays them out.

use super::Section;
use crate::context::ReportCtx;
use crate::counterparts::{Pairing, QUESTIONS, Zero, oriented, pairings, zero_case};
use crate::figures::Group;
use crate::verdict::{percent, words};
use crate::{Block, Table};

pub struct Counterparts;

impl Section for Counterparts {
    fn render(&self, ctx: &ReportCtx, out: &mut Vec<Block>) {
        out.extend(blocks(&ctx.groups, ctx.margin));
    }
}

/// The ratio cell and the verdict of one pairing.
fn worse_by(p: &Pairing, margin: f64) -> (String, String) {
    match (zero_case(p), oriented(p)) {
        (Some(Zero::Both), _) => ("— (both 0)".into(), "same".into()),
        (Some(Zero::Worse(cell)), _) => (cell.into(), "worse".into()),
        (None, None) => ("—".into(), "not measured".into()),
        (None, Some(r)) => (r.cell(), words(&r, margin, "worse", "better")),
    }
}

/// The section's blocks, or none when no variant ran beside its counterpart.
fn blocks(groups: &[Group], margin: f64) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut described: Vec<String> = Vec::new();
    let all = pairings(groups);
    for &(question, title, higher_is_better) in QUESTIONS {
        let mut rows = Vec::new();
        for p in all.iter().filter(|p| p.question == question) {
            let (g, h) = (p.variant, p.counterpart);
            let (ratio, verdict) = worse_by(p, margin);
            rows.push(vec![
                g.scale.to_string(),
                format!("{}{}", g.variant, g.marker()),
                format!("{}{}", h.variant, h.marker()),
                p.figure.label().to_string(),
                p.figure.cell(g),
                p.figure.cell(h),
                ratio,
                verdict,
            ]);
            if !described.contains(&p.description) {
                described.push(p.description.clone());
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
        Block::Para(format!(
            "Each variant beside the variant of its counterpart preset (deploy/presets.toml) at the \
             same scale, with the same implementation and the same work, client limit, queue and \
             watch settings, on the headline figure of the question its preset answers. The ratio \
             is oriented so that above 1 the variant is worse: the geometric mean of the \
             per-repeat ratios with a 95 % t interval, paired over the repeats (the variants ran \
             interleaved). \"worse\" or \"better\" when the whole interval lies beyond ±{m}, \
             \"equivalent\" when it lies within ±{m}, otherwise \"undecided\" with the smallest \
             difference this many repeats can detect.",
            m = percent(margin)
        )),
    ];
    out.extend(blocks);
    out.push(Block::List(described));
    out
}

#[cfg(test)]
mod tests {
    use ctrlbench_record::summary::{PresetInfo, Settings};

    use super::*;
    use crate::figures::RunFigures;
    use crate::metrics::Metric;

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
        let s = blocks(&groups, 0.05);
        let t = tables(&s);
        assert_eq!(t.len(), 1);
        // Per repeat 100/25, 110/20, 90/30: the geometric mean of 4, 5.5
        // and 3 is 66^(1/3) = 4.04 (by hand), and the t interval [1.90, 8.58]
        // is wholly above 1.05: worse. The Go good variant is not the Rust
        // variant's counterpart.
        assert_eq!(t[0].rows.len(), 1);
        let row = &t[0].rows[0];
        assert_eq!(row[1], "rust-list");
        assert_eq!(row[2], "rust-good");
        assert_eq!(row[6], "4.04 [1.90–8.58]", "{row:?}");
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
        let t = blocks(&groups, 0.05);
        let row = &tables(&t)[0].rows[0];
        // 80/40 and 84/42: 2 in both repeats, so no spread at all.
        assert_eq!(row[6], "2.00 [2.00–2.00]", "{row:?}");
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
        let t = blocks(&groups, 0.05);
        assert_eq!(tables(&t)[0].rows[0][6], "∞ (variant at 0)");
        // A steady-state cost where the counterpart costs nothing at all.
        let w = Metric::WritesPerObject;
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
        let t = blocks(&groups, 0.05);
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
        let t = blocks(&groups, 0.05);
        let row = &tables(&t)[0].rows[0];
        assert_eq!(row[6], "2.00 (one pair)");
        assert_eq!(row[7], "undecided (one pair)");
    }

    #[test]
    fn unlike_settings_or_no_counterpart_give_no_section() {
        let m = Metric::ReadyPerS;
        let mut other = group("rust-good", "rust", "good", "throughput", "", m, &[100.0]);
        for r in &mut other.runs {
            r.settings.as_mut().unwrap().queue = Some(ctrlbench_record::summary::Queue::Fifo);
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
        assert!(blocks(&groups, 0.05).is_empty());
        assert!(blocks(&groups[1..], 0.05).is_empty());
    }
}
