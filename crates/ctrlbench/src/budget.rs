//! Budgets from the command line: `run --fail-on-budget`'s verdict after
//! the report (one `BUDGET EXCEEDED` line per limit exceeded, and exit
//! [`EXCEEDED_EXIT`]), and `ctrlbench budget RESULTS`, which measures a
//! `[budget]` table from a results directory so that a first budget is
//! pasted rather than guessed. The keys and their figures are the spec's
//! table (`experiment/spec/budget.rs`); the judging is the report's.

use std::path::Path;

use anyhow::Result;
use ctrlbench_report::budget;
use ctrlbench_report::figures;
use ctrlbench_report::load::Results;

use crate::experiment::spec::budget::KEYS;

/// `run --fail-on-budget`'s exit code when a limit is exceeded: its own,
/// so that CI tells it apart from 1 (an error, or a regression of
/// `--fail-on-regression`), 2 (a usage error) and 130 (interrupted).
pub const EXCEEDED_EXIT: u8 = 3;

/// One `BUDGET EXCEEDED <variant> <key> = <value> > <limit>` line per
/// variant (and scale) above a limit of the manifest's `[budget]`.
pub fn exceeded(dir: &Path) -> Result<Vec<String>> {
    let results = Results::load(dir)?;
    let groups = figures::groups(&results);
    Ok(budget::judge(&results.manifest.budgets, &groups)
        .iter()
        .filter(|j| j.exceeded())
        .map(|j| {
            format!(
                "BUDGET EXCEEDED {} {} = {} > {}",
                j.variant, j.key, j.measured_cell, j.limit_cell
            )
        })
        .collect())
}

/// A `[budget]` table measured from `dir`: each key's highest value over
/// every variant and repeat × (1 + `headroom`), rounded up to two
/// significant digits, with a comment saying what was measured. A key
/// this directory does not measure is written commented out.
pub fn table(dir: &Path, headroom: f64) -> Result<String> {
    let results = Results::load(dir)?;
    let groups = figures::groups(&results);
    let mut s = format!(
        "# Measured from {}: the highest value over every variant and repeat,\n# plus {} headroom, rounded up to two significant digits.\n[budget]\n",
        dir.display(),
        ctrlbench_report::verdict::percent(headroom)
    );
    for k in KEYS {
        match budget::highest(&groups, k.figure) {
            Some((v, g, repeat)) => {
                let (_, limit) = budget::round_up_2(v * (1.0 + headroom));
                s.push_str(&format!(
                    "# {}: highest {} ({}, N={}, repeat {repeat})\n{} = {limit}\n",
                    k.figure.label(),
                    plain(v),
                    g.variant,
                    g.scale,
                    k.name
                ));
            }
            None => s.push_str(&format!(
                "# {}: not measured in this directory{}\n# {} =\n",
                k.figure.label(),
                if k.footprint {
                    " (its runs had no audit log)"
                } else {
                    ""
                },
                k.name
            )),
        }
    }
    Ok(s)
}

/// The measured value in the key's own unit (seconds, KiB, a count), as
/// the limit below it is written.
fn plain(v: f64) -> String {
    // A count of none can come out as -0.0; it reads 0.
    let v = if v.abs() < 5e-4 { 0.0 } else { v };
    let r = format!("{v:.3}");
    r.trim_end_matches('0').trim_end_matches('.').to_string()
}
