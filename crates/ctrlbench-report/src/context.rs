//! What every section of the report reads, built once per report: the
//! results directory as loaded, each run's figures grouped by scale ×
//! variant, and the plots (drawn up front, since drawing can fail and a
//! section cannot).

use std::path::Path;

use anyhow::Result;

use crate::Block;
use crate::figures::{self, Group};
use crate::load::Results;
use crate::plots;

pub struct ReportCtx {
    pub results: Results,
    /// Scale × variant groups, in the experiment's order.
    pub groups: Vec<Group>,
    pub plots: Vec<Block>,
}

impl ReportCtx {
    pub fn load(dir: &Path) -> Result<ReportCtx> {
        let results = Results::load(dir)?;
        let groups = figures::groups(&results);
        let plots = plots::all(&results, &groups)?;
        Ok(ReportCtx {
            results,
            groups,
            plots,
        })
    }
}
