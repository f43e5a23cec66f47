//! "Budgets", right after "What to fix": each variant against each limit
//! of the experiment file's `[budget]` (manifest.json's `budgets`), its
//! measured median, the limit and "within" or "EXCEEDED". Nothing without
//! a budget, so reports of files that set none are unchanged.

use super::Section;
use crate::context::ReportCtx;
use crate::{Block, Table, budget};

pub struct Budgets;

impl Section for Budgets {
    fn render(&self, ctx: &ReportCtx, out: &mut Vec<Block>) {
        let budgets = &ctx.results.manifest.budgets;
        if budgets.is_empty() || ctx.groups.is_empty() {
            return;
        }
        let judged = budget::judge(budgets, &ctx.groups);
        out.push(Block::Heading(2, "Budgets".into()));
        let exceeded = judged.iter().filter(|j| j.exceeded()).count();
        out.push(Block::Para(if exceeded == 0 {
            "Every variant within every `[budget]` limit of the experiment file.".into()
        } else {
            format!(
                "{exceeded} limit(s) of the experiment file's `[budget]` EXCEEDED (`run --fail-on-budget` exits 3 on them)."
            )
        }));
        out.push(Block::Table(Table {
            head: ["N", "variant", "budget", "measured (median)", "limit", ""]
                .map(String::from)
                .to_vec(),
            rows: judged
                .iter()
                .map(|j| {
                    vec![
                        j.scale.to_string(),
                        j.variant.clone(),
                        format!("{} ({})", j.key, j.figure),
                        j.measured_cell.clone(),
                        j.limit_cell.clone(),
                        j.verdict().to_string(),
                    ]
                })
                .collect(),
        }));
        out.push(Block::Para(
            "Each measured value is the median over the variant's repeats (runs flagged as disturbed left out); the counts per object are nearly free of the machine's noise, so one repeat decides them. A footprint figure is unmeasured without the local plane's audit log.".into(),
        ));
    }
}
