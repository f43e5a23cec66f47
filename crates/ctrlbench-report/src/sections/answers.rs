//! "Questions, answered": right after the header and the warnings, every
//! question the experiment asks (`crate::questions`: counterparts, rust-X /
//! go-X, `[[compare]]`), one line each with its ratio, its interval and its
//! verdict, then the same as a forest plot. Nothing when there are none.

use super::Section;
use crate::Block;
use crate::context::ReportCtx;
use crate::verdict::percent;

pub struct Answers;

impl Section for Answers {
    fn render(&self, ctx: &ReportCtx, out: &mut Vec<Block>) {
        if ctx.answers.is_empty() && ctx.answer_problems.is_empty() {
            return;
        }
        out.push(Block::Heading(2, "Questions, answered".into()));
        let decided = ctx.answers.iter().filter(|a| a.verdict.decided()).count();
        let from = match ctx.margin_from {
            "--margin" => "set with --margin",
            "manifest.json" => "the experiment's, manifest.json margin",
            _ => "the default",
        };
        out.push(Block::Para(format!(
            "Each question is B/A on one figure, at one scale: a preset against its counterpart, \
             our Rust controller against our controller-runtime one, or an experiment file's \
             [[compare]] pair. The variants of this run ran interleaved, so each repeat's B run is \
             paired with the A run beside it: the ratio is the geometric mean of the per-repeat \
             ratios, with a 95 % t interval on their logarithms (unpaired, the medians' ratio with \
             a bootstrap interval, only where a zero leaves a log ratio undefined). \"higher\" or \
             \"lower\" only when the whole interval lies beyond the margin, ±{m} ({from}), with \
             \"better\" or \"worse\" where the figure has a better side; \"equivalent\" when the \
             whole interval lies within it; otherwise \"undecided\", with the smallest difference \
             this many repeats can detect (the interval's half-width). {decided} of {} decided.",
            ctx.answers.len(),
            m = percent(ctx.margin),
        )));
        if let Some(e) = &ctx.results.manifest.evidence {
            let s = crate::evidence::spread_for(e, "Ready/s");
            out.push(Block::Para(format!(
                "This run recorded the machine's between-run spread ({}; a pair's log-ratio \
                 standard deviation of {:.0} % on Ready/s and {:.0} % on counts per object, worth {} \
                 degrees of freedom, fewer where the repeats contradict it): \
                 it is pooled with the repeats' own, so one repeat has an interval and decides an \
                 effect far beyond the machine's noise. {}",
                e.source,
                s.s * 100.0,
                crate::evidence::spread_for(e, "writes per object").s * 100.0,
                s.df,
                if e.looks > 1 {
                    format!(
                        "The runner looked after every repeat ({} looks planned), so each \
                         interval is at Pocock's level for that many looks ({:.2} % two-sided), \
                         which keeps the whole sequence's false decisions at or below 5 %.",
                        e.looks,
                        crate::evidence::level_per_look(e.looks) * 100.0
                    )
                } else {
                    "One look: the intervals are at 95 %.".to_string()
                }
            )));
        }
        if !ctx.answer_problems.is_empty() {
            out.push(Block::Warning(ctx.answer_problems.clone()));
        }
        if !ctx.answers.is_empty() {
            out.push(Block::List(ctx.answers.iter().map(|a| a.line()).collect()));
        }
        out.extend(ctx.forest.iter().cloned());
    }
}
