//! How to read the cells of the tables that follow: median [min–max] over
//! the runs without problems when there are repeats, and counters as deltas.

use super::Section;
use crate::Block;
use crate::context::ReportCtx;

pub struct Legend;

impl Section for Legend {
    fn render(&self, ctx: &ReportCtx, out: &mut Vec<Block>) {
        let repeats = ctx.groups.iter().any(|g| g.used().len() > 1);
        out.push(Block::Para(if repeats {
            "Cells with repeats show median [min–max] over the runs without problems. \
             Counters are deltas from each run's baseline scrape to its last good scrape."
                .into()
        } else {
            "Counters are deltas from each run's baseline scrape to its last good scrape.".into()
        }));
    }
}
