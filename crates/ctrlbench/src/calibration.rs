//! This machine's between-run spread, per figure, kept in the cache
//! (`~/.cache/ctrlbench/calibration.json`): `ctrlbench calibrate DIR` reads
//! it off an A/A results directory (`run noise`), and every run records it
//! in its manifest (the conservative default where there is none), so the
//! report judges one repeat by what this machine's runs are known to do
//! and the figures stay traceable to the results directory alone.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use ctrlbench_record::manifest::Evidence;
use ctrlbench_report::evidence;

use crate::experiment::Experiment;
use crate::experiment::spec::Repeats;

/// Where the calibration is kept.
pub fn file() -> Result<PathBuf> {
    let base = dirs::cache_dir().context("no cache directory: set XDG_CACHE_HOME or HOME")?;
    Ok(base.join("ctrlbench/calibration.json"))
}

/// The evidence rule a run of `exp` records: the calibration when one is
/// kept, else the default; the looks its repeats plan.
pub fn for_run(exp: &Experiment) -> Evidence {
    let looks = match exp.repeats {
        Repeats::Fixed(_) => 1,
        Repeats::Auto { min, max } => max.saturating_sub(min) + 1,
    };
    let mut e = file()
        .ok()
        .and_then(|f| std::fs::read_to_string(f).ok())
        .and_then(|t| serde_json::from_str::<Evidence>(&t).ok())
        .unwrap_or_else(|| evidence::default_evidence(looks));
    e.looks = looks;
    e
}

/// `ctrlbench calibrate DIR`: the A/A pairs' spread per figure, kept for
/// the runs that follow; returns what it wrote, in words.
pub fn calibrate(dir: &Path) -> Result<String> {
    let rows = ctrlbench_report::noise::noise(dir)?;
    let measured = ctrlbench_report::noise::calibration(&rows);
    if measured.is_empty() {
        bail!(
            "{} has no A/A pair with two or more repeats: run `ctrlbench run noise` (or an experiment whose [[compare]] pairs two identical variants) first",
            dir.display()
        );
    }
    // The footprint's defaults stand where the A/A did not measure them.
    let mut spread = evidence::footprint_spreads();
    spread.extend(measured);
    let day = ctrlbench_record::time::now_rfc3339();
    let e = Evidence {
        source: format!(
            "calibrated by {} on {}",
            dir.file_name().unwrap_or_default().to_string_lossy(),
            &day[..10.min(day.len())]
        ),
        spread,
        default: evidence::DEFAULT_SPREAD,
        timing: Some(evidence::DEFAULT_TIMING_SPREAD),
        looks: 1,
    };
    let f = file()?;
    if let Some(p) = f.parent() {
        std::fs::create_dir_all(p)?;
    }
    ctrlbench_record::files::write_json(&f, &e)?;
    let mut out = format!("{}: {}\n", f.display(), e.source);
    for (fig, s) in &e.spread {
        out.push_str(&format!(
            "  {fig}: a pair's spread {:.1} % ({} degrees of freedom)\n",
            s.s * 100.0,
            s.df
        ));
    }
    Ok(out)
}
