//! The types of `[[variant]]` key values: what the key table (`keys.rs`)
//! declares its keys with and the file's other sections (`schema.rs`)
//! re-export. They depend on nothing in the experiment module, so both
//! can use them without a circle.

use serde::{Deserialize, Serialize};

/// When a variant's controller starts (the record's type, so what the file
/// says is what summary.json says).
pub use ctrlbench_record::summary::StartMode;

/// One RBAC rule of a command controller's Role or ClusterRole.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RbacRule {
    #[serde(default)]
    pub api_groups: Vec<String>,
    pub resources: Vec<String>,
    pub verbs: Vec<String>,
}

/// A preset name, one of `deploy/presets.toml`'s (`widget_api::presets::names`).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(transparent)]
pub struct Preset(String);

impl Preset {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl<'de> Deserialize<'de> for Preset {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        let names = widget_api::presets::names();
        if names.contains(&name.as_str()) {
            Ok(Preset(name))
        } else {
            Err(serde::de::Error::custom(format!(
                "unknown preset {name:?}, expected one of {}",
                names.join(", ")
            )))
        }
    }
}

/// The Go controller's re-read on a conflict retry (`--conflict-reread`).
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ConflictReread {
    Api,
    Cache,
}

impl ConflictReread {
    pub fn as_str(self) -> &'static str {
        match self {
            ConflictReread::Api => "api",
            ConflictReread::Cache => "cache",
        }
    }
}

/// The framework a user's controller is written with (`framework`): the
/// diagnosis's own type, whose fixes it picks (`init --from` writes it).
pub use ctrlbench_report::diagnosis::Framework;

/// The controllers' own setting types: what the file accepts is what they accept.
pub use widget_api::presets::{LogLevel, Predicate, Queue, StatusWrite};
