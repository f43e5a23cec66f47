//! What every section of the report reads, built once per report: the
//! results directory as loaded, each run's figures grouped by scale ×
//! variant, the equivalence margin and where it came from, the questions'
//! answers, and the plots (drawn up front, since drawing can fail and a
//! section cannot).

use std::path::Path;

use anyhow::Result;

use crate::figures::{self, Group};
use crate::load::Results;
use crate::questions::{self, Answer};
use crate::verdict::DEFAULT_MARGIN;
use crate::{Block, Options, forest, plots};

pub struct ReportCtx {
    pub results: Results,
    /// Scale × variant groups, in the experiment's order.
    pub groups: Vec<Group>,
    pub plots: Vec<Block>,
    /// The equivalence margin every verdict uses (a fraction).
    pub margin: f64,
    /// Where the margin came from: "--margin", "manifest.json" or "default".
    pub margin_from: &'static str,
    pub answers: Vec<Answer>,
    /// `[[compare]]` questions that could not be asked (an unknown figure).
    pub answer_problems: Vec<String>,
    /// The answers' forest plot (None without questions).
    pub forest: Option<Block>,
}

/// The margin: the command line's, else the experiment's, else ±5 %.
pub fn margin(opts: &Options, results: &Results) -> (f64, &'static str) {
    match (opts.margin, results.manifest.margin) {
        (Some(m), _) => (m, "--margin"),
        (None, Some(m)) => (m, "manifest.json"),
        (None, None) => (DEFAULT_MARGIN, "default"),
    }
}

impl ReportCtx {
    pub fn load(dir: &Path, opts: &Options) -> Result<ReportCtx> {
        let results = Results::load(dir)?;
        let groups = figures::groups(&results);
        let plots = plots::all(&results, &groups)?;
        let (margin, margin_from) = margin(opts, &results);
        let (answers, answer_problems) = questions::answers(&results, &groups, margin);
        let forest = if answers.is_empty() {
            None
        } else {
            Some(Block::Plot {
                title: "Answers: B/A per question, its 95 % interval and the ±margin band \
                        (forest plot)"
                    .into(),
                svg: forest::svg(&answers, margin)?,
            })
        };
        Ok(ReportCtx {
            results,
            groups,
            plots,
            margin,
            margin_from,
            answers,
            answer_problems,
            forest,
        })
    }
}
