//! Warnings, shown before any table: an incomplete experiment, failed runs,
//! and every run left out of the medians (or, when its group has no other,
//! shown but marked ⚠), with why.

use super::Section;
use crate::Block;
use crate::context::ReportCtx;

pub struct Warnings;

impl Section for Warnings {
    fn render(&self, ctx: &ReportCtx, out: &mut Vec<Block>) {
        let r = &ctx.results;
        let mut w = Vec::new();
        if !r.complete() {
            w.push(
                "The experiment did not complete (manifest.json: complete=false): runs may be \
                 missing, and every table below comes from an incomplete experiment."
                    .to_string(),
            );
        }
        for e in r.errors() {
            w.push(format!("Run failed: {e}"));
        }
        for g in &ctx.groups {
            for f in g.runs.iter().filter(|f| !f.problems.is_empty()) {
                w.push(format!(
                    "{}: {} — {}.",
                    f.label(),
                    f.problems.join("; "),
                    if g.flagged_only() {
                        "its group has no other runs, so its figures are shown, marked ⚠"
                    } else {
                        "left out of the medians (marked ⚠ runs excluded)"
                    }
                ));
            }
        }
        if r.runs.is_empty() {
            w.push("No run directories (N<scale>/<variant>/rep<k>/) were found.".into());
        }
        if !w.is_empty() {
            out.push(Block::Heading(2, "Warnings".into()));
            out.push(Block::Warning(w));
        }
    }
}
