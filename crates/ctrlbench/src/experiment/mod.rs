//! Experiments: the TOML files users write (`spec`), the built-in ones
//! (`builtin`), and their expansion into runs (`plan`; `grow` and `regrow`
//! for the scales `run --grow` picks).

pub mod appliers;
pub mod builtin;
pub mod decoys;
pub mod from_cargo;
pub mod from_code;
pub mod from_kopf;
pub mod from_project;
pub mod grow;
pub mod init;
pub mod init_workload;
pub mod jsonpath;
pub mod overrides;
pub mod pads;
pub mod phase;
pub mod plan;
pub mod project_file;
pub mod readiness;
pub mod ready;
pub mod regrow;
pub mod scan;
pub mod spec;
pub mod workload;
pub mod yaml;

use std::path::Path;

use anyhow::{Context, Result};

pub use crate::controllers::Impl;
pub use overrides::Overrides;
pub use spec::{Experiment, Schedule, Variant};

/// Loads an experiment by built-in name or by path.
pub fn load(name_or_path: &str) -> Result<Experiment> {
    let path = Path::new(name_or_path);
    if !path.exists()
        && let Some(b) = builtin::get(name_or_path)
    {
        return Ok(builtin::parse(b)?);
    }
    let bytes = std::fs::read(path).with_context(|| {
        format!(
            "cannot read experiment {name_or_path:?}: not a file and not a built-in ({})",
            builtin::BUILTIN
                .iter()
                .map(|b| b.name)
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

/// A built-in experiment as `ctrlbench experiments` lists it.
pub struct Listed {
    pub name: &'static str,
    /// The first line of its `description`.
    pub description: String,
    /// One of ctrlbench's own studies (`experiments/lab/`).
    pub lab: bool,
}

/// Every built-in experiment, the user's first, then the lab's.
pub fn list() -> Vec<Listed> {
    let mut v: Vec<Listed> = builtin::BUILTIN
        .iter()
        .map(|b| Listed {
            name: b.name,
            description: builtin::parse(b)
                .map(|e| e.description.lines().next().unwrap_or_default().to_string())
                .unwrap_or_else(|e| format!("(invalid: {e})")),
            lab: b.lab,
        })
        .collect();
    // Stable: each group keeps the table's order.
    v.sort_by_key(|l| l.lab);
    v
}

/// The heading above the lab's experiments in `ctrlbench experiments`.
pub const LAB_HEADING: &str = "lab (ctrlbench's own studies of its controllers):";

/// `ctrlbench experiments`: one aligned line each, the user's experiments, then the
/// lab's under [`LAB_HEADING`], each of those marked `[lab]` so that a line
/// read alone (grep) still says it is not meant for the user's operator.
pub fn listing(listed: &[Listed]) -> String {
    let width = listed.iter().map(|l| l.name.len()).max().unwrap_or(0);
    let mut out = String::new();
    let mut heading = false;
    for l in listed {
        let mark = if l.lab { "[lab] " } else { "" };
        if l.lab && !heading {
            out.push_str(LAB_HEADING);
            out.push('\n');
            heading = true;
        }
        out.push_str(&format!("{:<width$} {mark}{}\n", l.name, l.description));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lab_is_listed_last_under_its_heading_each_line_marked() {
        let text = listing(&list());
        let (user, lab) = text.split_once(LAB_HEADING).expect("the lab heading");
        for name in [
            "perf",
            "memory",
            "scale",
            "allocators",
            "http2",
            "log-level",
            "pods-scale",
            "diagnosis",
            "growth",
            "scale-growth",
            "managed-fields",
        ] {
            assert!(get_lab(name), "{name} is not a lab experiment");
            assert!(!user.lines().any(|l| l.starts_with(&format!("{name} "))));
        }
        assert!(user.lines().any(|l| l.starts_with("quick ")), "{user}");
        assert!(!user.contains("[lab]"), "{user}");
        let lab: Vec<_> = lab.lines().filter(|l| !l.is_empty()).collect();
        assert_eq!(lab.len(), 11, "{lab:?}");
        assert!(lab.iter().all(|l| l.contains("[lab]")), "{lab:?}");
        assert!(
            lab.iter().any(|l| l.starts_with("perf ")),
            "lab runs by name: {lab:?}"
        );
    }

    fn get_lab(name: &str) -> bool {
        builtin::get(name).is_some_and(|b| b.lab && b.path.starts_with("experiments/lab/"))
    }
}
