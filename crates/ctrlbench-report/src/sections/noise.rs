//! "Machine noise (A/A)": right after the answers, for every `[[compare]]`
//! pair whose variants ran with identical settings (`crate::noise`), one
//! table per scale — each headline figure's spread between the two names,
//! its paired interval now and the half-width the same spread gives at 3, 6
//! and 10 repeats, ✓ where that is within the margin — and sentences on
//! how many repeats a difference of the margin in Ready/s takes, and the
//! power this spread gives for a 10 % change. It is what
//! an A/A run is for: the smallest difference this machine can decide.
//! Nothing without an A/A pair.

use super::Section;
use crate::context::ReportCtx;
use crate::evidence;
use crate::metrics::Metric;
use crate::noise::{self, NoiseRow, PROJECTED, plus_minus, repeats_to_decide};
use crate::verdict::percent;
use crate::{Block, Table};
use ctrlbench_record::manifest::Spread;

pub struct MachineNoise;

impl Section for MachineNoise {
    fn render(&self, ctx: &ReportCtx, out: &mut Vec<Block>) {
        let rows = noise::rows(&ctx.results, &ctx.groups, ctx.margin);
        if rows.is_empty() {
            return;
        }
        out.push(Block::Heading(2, "Machine noise (A/A)".into()));
        let from = match ctx.margin_from {
            "--margin" => "set with --margin",
            "manifest.json" => "the experiment's",
            _ => "the default",
        };
        out.push(Block::Para(format!(
            "Each pair below is a [[compare]] pair whose two variants ran with identical settings \
             (implementation, flags, preset, the settings the controllers printed, start mode, \
             workload, Kubernetes version), \
             interleaved: every difference between them is this machine's noise. Per figure: the \
             spread of the per-repeat B/A ratios (s, the standard deviation of their logarithms, \
             shown as e^s − 1); K, the repeat pairs (flagged runs left out, as in the answers); \
             B/A with its paired 95 % interval now, and that interval's half-width; and the \
             half-width the same spread gives at K = 3, 6 and 10 repeats, e^(t·s/√K) − 1 with t \
             Student's 97.5 % point for K − 1 degrees of freedom. ✓: at or below the margin, \
             ±{} ({from}), so a difference that large can be decided at that many repeats.",
            percent(ctx.margin)
        )));
        let mut start = 0;
        while start < rows.len() {
            let first = &rows[start];
            let end = rows[start..]
                .iter()
                .position(|r| (r.scale, &r.a, &r.b) != (first.scale, &first.a, &first.b))
                .map_or(rows.len(), |n| start + n);
            let looks = ctx
                .results
                .manifest
                .evidence
                .as_ref()
                .map_or(1, |e| e.looks);
            pair(&rows[start..end], ctx.margin, looks, out);
            let a = ctx
                .groups
                .iter()
                .find(|g| g.scale == first.scale && g.variant == first.a);
            let b = ctx
                .groups
                .iter()
                .find(|g| g.scale == first.scale && g.variant == first.b);
            if let Some(p) = a
                .zip(b)
                .and_then(|(a, b)| noise::position(a, b, Metric::ReadyPerS))
            {
                out.push(Block::Para(position_sentence(&p, first)));
            }
            start = end;
        }
    }
}

/// "Running second: …" — the later run over the earlier one on Ready/s.
fn position_sentence(p: &noise::Position, r: &NoiseRow) -> String {
    let k = match p.ratio.method {
        crate::interval::Method::Paired { pairs } => pairs,
        _ => 0,
    };
    let cell = match p.ratio.interval {
        Some((lo, hi)) => format!("{:.2} [{lo:.2}–{hi:.2}]", p.ratio.ratio),
        None => format!("{:.2} (one pair)", p.ratio.ratio),
    };
    format!(
        "Running second: the later run of each repeat over the earlier one, on Ready/s, is {cell} \
         over {k} repeat{} ({} ran second in {} of them). The two are one controller, so this is \
         the position's own effect (a drifting plane, a warmer cache, the previous run's \
         clean-up); B/A above carries it only as far as the order was unbalanced.",
        if k == 1 { "" } else { "s" },
        r.b,
        p.b_second,
    )
}

/// One pair at one scale: its heading, its table and the Ready/s
/// sentences (the margin's repeats, and the power for a 10 % change with
/// the run's `looks`).
fn pair(rows: &[NoiseRow], margin: f64, looks: u32, out: &mut Vec<Block>) {
    let r0 = &rows[0];
    out.push(Block::Heading(
        3,
        format!("N={}: {} / {}", r0.scale, r0.b, r0.a),
    ));
    let mut head: Vec<String> = [
        "figure",
        "spread (e^s − 1)",
        "K",
        "B/A [95 %]",
        "half-width now",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    head.extend(PROJECTED.iter().map(|k| format!("at K = {k}")));
    let table = rows
        .iter()
        .map(|r| {
            let mut cells = vec![
                r.figure.clone(),
                r.spread
                    .map_or("—".into(), |s| format!("{:.1} %", s * 100.0)),
                r.pairs.to_string(),
                r.cell(),
                r.half_width.map_or("—".into(), plus_minus),
            ];
            cells.extend(PROJECTED.iter().map(|&k| {
                match r.projections.iter().find(|p| p.repeats == k) {
                    Some(p) if p.within_margin => format!("{} ✓", plus_minus(p.half_width)),
                    Some(p) => plus_minus(p.half_width),
                    None => "—".into(),
                }
            }));
            cells
        })
        .collect();
    out.push(Block::Table(Table { head, rows: table }));
    let ready_row = rows.iter().find(|r| r.metric == Metric::ReadyPerS);
    let ready = ready_row.and_then(|r| r.log_sd);
    let m = percent(margin);
    // The power sentence: this spread, worth its pairs − 1 degrees of
    // freedom, as the evidence a later run of this machine is judged by.
    let power = ready_row.zip(ready).map(|(r, s)| {
        let spread = Spread {
            s,
            df: r.pairs.saturating_sub(1) as f64,
        };
        let max = noise::MAX_REPEATS as u32;
        match evidence::repeats_for(spread, 1.10, margin, 0.8, looks, max) {
            Some(k) => format!(
                " Judged by this spread, a true 10 % change in Ready/s is decided (its interval \
                 clears the ±{m} margin) with 80 % probability after {k} repeat{}.",
                if k == 1 { "" } else { "s" }
            ),
            None => format!(
                " Judged by this spread, {max} repeats decide a true change in Ready/s of {} \
                 (its interval clearing the ±{m} margin) with 80 % probability; 10 % is out of \
                 their reach.",
                percent(
                    (evidence::detectable(spread, margin, 0.8, max, looks) * 100.0).ceil() / 100.0
                )
            ),
        }
    });
    let power = power.unwrap_or_default();
    out.push(Block::Para(
        match ready.map(|s| repeats_to_decide(s, margin)) {
            Some(Some(k)) => format!(
                "At this spread, deciding a {m} difference in Ready/s takes {k} paired repeats.{power}"
            ),
            Some(None) => format!(
                "At this spread, deciding a {m} difference in Ready/s takes more than {} paired \
             repeats.{power}",
                noise::MAX_REPEATS
            ),
            None => "Ready/s has no spread yet (fewer than two repeat pairs measured it): nothing \
                 to project from."
                .into(),
        },
    ));
}
