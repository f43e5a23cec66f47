//! Experiments: the TOML files users write (`spec`), the built-in ones
//! (`builtin`), and their expansion into runs (`plan`).

pub mod builtin;
pub mod from_cargo;
pub mod from_project;
pub mod init;
pub mod overrides;
pub mod phase;
pub mod plan;
pub mod spec;
pub mod workload;

use std::path::Path;

use anyhow::{Context, Result};

pub use crate::controllers::Impl;
pub use overrides::Overrides;
pub use spec::{Experiment, Schedule, Variant};

/// Loads an experiment by built-in name or by path.
pub fn load(name_or_path: &str) -> Result<Experiment> {
    let path = Path::new(name_or_path);
    if !path.exists()
        && let Some(text) = builtin::get(name_or_path)
    {
        return Ok(builtin::parse(name_or_path, text)?);
    }
    let bytes = std::fs::read(path).with_context(|| {
        format!(
            "cannot read experiment {name_or_path:?}: not a file and not a built-in ({})",
            builtin::BUILTIN
                .iter()
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(", ")
        )
    })?;
    let text = String::from_utf8(bytes).map_err(|e| {
        anyhow::anyhow!(
            "{}: not UTF-8 at byte {}: save the experiment file as UTF-8",
            path.display(),
            e.utf8_error().valid_up_to()
        )
    })?;
    Ok(spec::parse(path, &text)?)
}

/// One line per built-in experiment: its name and description.
pub fn list() -> Vec<(String, String)> {
    builtin::BUILTIN
        .iter()
        .map(|(name, text)| {
            let desc = builtin::parse(name, text)
                .map(|e| e.description.lines().next().unwrap_or_default().to_string())
                .unwrap_or_else(|e| format!("(invalid: {e})"));
            (name.to_string(), desc)
        })
        .collect()
}
