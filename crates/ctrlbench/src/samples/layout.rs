//! The results directory (DESIGN §8):
//! `results/<UTC timestamp>-<experiment>/manifest.json`, then
//! `N<scale>/<variant>/rep<k>/` with the run's CSVs, log and summary.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// Creates `results/<UTC timestamp>-<name>/` under `root`.
pub fn create_results_dir(root: &Path, name: &str) -> Result<PathBuf> {
    let ts = k8s_openapi::jiff::Timestamp::now()
        .strftime("%Y%m%dT%H%M%SZ")
        .to_string();
    let dir = root.join(format!("{ts}-{name}"));
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    Ok(dir)
}

/// `N<scale>/<variant>/rep<k>/`.
pub fn run_dir(results: &Path, scale: u64, variant: &str, repeat: u32) -> PathBuf {
    results
        .join(format!("N{scale}"))
        .join(variant)
        .join(format!("rep{repeat}"))
}

/// RFC 3339 UTC with milliseconds.
pub fn now_rfc3339() -> String {
    k8s_openapi::jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}
