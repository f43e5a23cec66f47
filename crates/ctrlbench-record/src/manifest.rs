//! `manifest.json`: one per results directory — versions, the machine, the
//! experiment file as run, whether it finished, the probe's figures, and every
//! run's summary.

use std::path::Path;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::summary::Summary;

/// The machine the experiment ran on.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    pub cores: usize,
    pub memory_bytes: u64,
}

impl Machine {
    /// This machine (cores available to us, MemTotal).
    pub fn this() -> Machine {
        let mem_kb = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|m| {
                m.lines().find_map(|l| {
                    l.strip_prefix("MemTotal:")?
                        .trim()
                        .trim_end_matches("kB")
                        .trim()
                        .parse::<u64>()
                        .ok()
                })
            })
            .unwrap_or(0);
        Machine {
            cores: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(0),
            memory_bytes: mem_kb * 1024,
        }
    }
}

/// Raw write capacity at one writer count (`ctrlbench probe`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProbeRow {
    pub writers: usize,
    pub objects: u64,
    pub create_per_s: f64,
    pub status_patch_per_s: f64,
    /// The same patches with one watch on the namespace open and its events
    /// decoded (a controller's informer); absent in older manifests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watched_status_patch_per_s: Option<f64>,
    pub errors: u64,
    /// In an experiment (probe = true) the probe runs before each repeat of
    /// each scale: the scale and repeat whose runs came right after it.
    /// Absent from `ctrlbench probe`'s own rows and older manifests (one
    /// probe, before the first run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<u32>,
}

/// `manifest.json`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Manifest {
    pub tool: String,
    pub tool_version: String,
    pub git_revision: Option<String>,
    pub experiment: String,
    pub experiment_file: String,
    pub experiment_text: String,
    pub started_at: String,
    pub finished_at: Option<String>,
    pub complete: bool,
    pub kubernetes_version: String,
    pub etcd_version: String,
    pub local_plane: bool,
    /// The local plane ran kube-controller-manager (namespace deletion and
    /// garbage collection natively); absent: it did not.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub controller_manager: bool,
    pub machine: Machine,
    pub harness_cpu_seconds: f64,
    /// ctrlbench's own peak resident set over the whole experiment (VmHWM).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harness_peak_rss_bytes: Option<u64>,
    pub probe: Option<Vec<ProbeRow>>,
    pub runs: Vec<Summary>,
    pub errors: Vec<String>,
    /// What teardown could not remove (namespaces still terminating after the bound).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_cleaned: Vec<String>,
}

pub const FILE_NAME: &str = "manifest.json";

impl Manifest {
    pub fn read(path: &Path) -> Result<Manifest> {
        crate::files::read_json(path, "manifest")
    }

    /// Written whole or not at all (temp file + rename).
    pub fn write(&self, path: &Path) -> Result<()> {
        crate::files::write_json(path, self)
    }
}
