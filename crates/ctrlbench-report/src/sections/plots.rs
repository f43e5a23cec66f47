//! "Plots": the inline SVG plots drawn when the context was built
//! (crate::plots), under one heading; nothing when there are none.

use super::Section;
use crate::Block;
use crate::context::ReportCtx;

pub struct Plots;

impl Section for Plots {
    fn render(&self, ctx: &ReportCtx, out: &mut Vec<Block>) {
        if !ctx.plots.is_empty() {
            out.push(Block::Heading(2, "Plots".into()));
            out.extend(ctx.plots.iter().cloned());
        }
    }
}
