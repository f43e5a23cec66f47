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
        if !ctx.answer_problems.is_empty() {
            out.push(Block::Warning(ctx.answer_problems.clone()));
        }
        if !ctx.answers.is_empty() {
            out.push(Block::List(ctx.answers.iter().map(|a| a.line()).collect()));
        }
        out.extend(ctx.forest.iter().cloned());
    }
}
