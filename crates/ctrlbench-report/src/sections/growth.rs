//! "Growth with N": for a results directory with three or more scales
//! spanning 10× or more, each per-object figure's values by N (medians over
//! the rounds, one column per variant) and, per variant, its exponent with
//! its interval and verdict (`crate::growth` decides). Nothing otherwise,
//! which is every recorded fixture: they have fewer scales.

use super::Section;
use crate::context::ReportCtx;
use crate::growth::{self, Growth};
use crate::metrics::Unit;
use crate::verdict::percent;
use crate::{Block, Table};

pub struct GrowthWithN;

impl Section for GrowthWithN {
    fn render(&self, ctx: &ReportCtx, out: &mut Vec<Block>) {
        let delta = growth::delta_of(&ctx.results.manifest);
        let all = growth::of(&ctx.groups, delta);
        if all.is_empty() {
            return;
        }
        out.push(Block::Heading(2, "Growth with N".into()));
        out.push(Block::Para(format!(
            "How each per-object cost grows with N: ln(value per object) fitted against ln N by \
             least squares with each round (repeat number) as a block, so a round that ran slow \
             moves all its scales alike (time-to-Ready p99 and pod start p99 are levels and are fitted as they are). \
             b is the exponent: 0 when the cost per object stays flat, 1 when it grows linearly \
             (quadratic in total). Its interval is a two-sided {} t interval, the error split over \
             the {} fits asked; a verdict only when the whole interval lies inside a region of \
             ±{} (flat: within ±δ of 0; linear: within ±δ of 1), otherwise the side it decides, \
             or undecided. A curvature flag (a separate quadratic fit) gives the local exponent \
             at the largest N and does not change the verdict. The verdict describes the tested \
             range, not what happens beyond it.",
            percent(1.0 - 2.0 * growth::ALPHA),
            all.len(),
            delta,
        )));
        for f in growth::FIGURES {
            let of: Vec<&Growth> = all.iter().filter(|g| g.figure.name == f.name).collect();
            if of.is_empty() {
                continue;
            }
            out.push(Block::Heading(3, f.name.to_string()));
            let mut scales: Vec<u64> = of
                .iter()
                .flat_map(|g| g.by_scale.iter().map(|(n, _)| *n))
                .collect();
            scales.sort_unstable();
            scales.dedup();
            let mut head = vec!["N".to_string()];
            head.extend(of.iter().map(|g| g.variant.clone()));
            let rows = scales
                .iter()
                .map(|&n| {
                    let mut row = vec![growth::fmt_n(n as f64)];
                    row.extend(of.iter().map(|g| {
                        g.by_scale
                            .iter()
                            .find(|(s, _)| *s == n)
                            .and_then(|(_, v)| *v)
                            .map_or("—".into(), |v| fmt_value(f, v))
                    }));
                    row
                })
                .collect();
            out.push(Block::Table(Table { head, rows }));
            out.push(Block::List(of.iter().map(|g| line(g)).collect()));
            let fits: Vec<_> = of
                .iter()
                .enumerate()
                .map(|(i, g)| (*g, crate::plots::PALETTE[i % crate::plots::PALETTE.len()]))
                .collect();
            let title = format!("{} against N (log-log)", f.name);
            if let Ok(Some(svg)) = growth::plot::svg(&title, &fits, f.budget.map(|b| b.0)) {
                out.push(Block::Plot { title, svg });
            }
        }
    }
}

/// "rust-good: flat (O(1) per object): b = 0.03 [−0.06, 0.11] over N = 300–10 000".
pub fn line(g: &Growth) -> String {
    match &g.fit {
        Err(why) => format!("{}: not estimable ({why})", g.variant),
        Ok(fit) => {
            let mut s = format!(
                "{}: {}: {}{}",
                g.variant,
                match g.figure.per {
                    growth::Per::Level => fit.verdict.level_words(),
                    _ => fit.verdict.words(),
                },
                fit.line(),
                fit.curvature_words()
            );
            if let (Some(c), Some((_, limit))) = (g.crossing, g.figure.budget) {
                s.push_str(&format!("; {}", c.words(limit)));
            }
            s
        }
    }
}

/// A per-object value in the figure's unit: counts to three significant
/// figures, seconds per object in ms or µs, bytes per object in KiB.
fn fmt_value(f: &growth::GrowthFigure, v: f64) -> String {
    match (f.per, f.metric.def().unit) {
        (growth::Per::Level, _) => f.metric.fmt(v),
        (_, Unit::Bytes) => format!("{:.1} KiB", v / 1024.0),
        (_, Unit::Seconds | Unit::Duration) if v < 1e-3 => format!("{:.1} µs", v * 1e6),
        (_, Unit::Seconds | Unit::Duration) => format!("{:.2} ms", v * 1e3),
        _ => format!("{v:.3}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::{Group, RunFigures};
    use crate::metrics::Metric;

    #[test]
    fn a_verdict_line_names_the_variant_the_verdict_the_interval_and_the_crossing() {
        // The exactness fixture's level, as time-to-Ready p99 of two rounds.
        let p99 = [
            (300, [0.52, 0.47]),
            (1000, [1.01, 1.12]),
            (3000, [2.10, 1.93]),
            (10000, [3.95, 4.30]),
        ];
        let groups: Vec<Group> = p99
            .iter()
            .map(|&(n, v)| Group {
                scale: n,
                variant: "rust-good".into(),
                runs: (1..=2)
                    .map(|rep| {
                        let mut r = RunFigures::empty(n, "rust-good", rep);
                        r.set(Metric::TtrP99, Some(v[rep as usize - 1]));
                        r
                    })
                    .collect(),
            })
            .collect();
        let all = growth::of(&groups, growth::DEFAULT_DELTA);
        assert_eq!(all.len(), 1);
        assert_eq!(
            line(&all[0]),
            "rust-good: sublinear growth: b = 0.60 [0.57, 0.64] over N = 300–10 000; reaches \
             5 s (the pod-startup SLO's p99, a soft reference) at N ≈ 13 600 [12 100, 15 400] \
             (extrapolated)"
        );
    }
}
