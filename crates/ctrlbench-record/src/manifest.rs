//! `manifest.json`: one per results directory — versions, the machine, the
//! experiment file as run, whether it finished, the probe's figures, the
//! questions the experiment asks (equivalence margin, `[[compare]]` pairs),
//! how many repeats it ran and why it stopped, where its processes were
//! placed, and every run's summary.

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
    /// Fake nodes (KWOK) on the local plane, with kube-scheduler and the
    /// controller-manager's workload controllers; absent: none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub nodes: usize,
    /// Each fake node's pod capacity, when there are nodes.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub node_pods: usize,
    /// The client-limit flags kube-controller-manager ran with, when it ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub controller_manager_args: Vec<String>,
    /// kube-scheduler's, when there were nodes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scheduler_args: Vec<String>,
    /// kube-scheduler ran without PodTopologySpread's default constraints
    /// (`[cluster] scheduler_default_spread = false`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub scheduler_without_default_spread: bool,
    /// The local planes' binaries and where each came from; absent for an
    /// existing cluster, and in results older than the record.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plane_binaries: Vec<PlaneBinary>,
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
    /// The experiment's equivalence margin, a fraction (0.05: two figures
    /// within ±5 % of each other count as equivalent); absent: the report's
    /// default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub margin: Option<f64>,
    /// The experiment's growth margin δ on an exponent (0.15: within ±0.15
    /// of 0 is flat, of 1 linear); absent: the report's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub growth_margin: Option<f64>,
    /// The experiment file's `[[compare]]` questions, in its order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub compare: Vec<CompareQuestion>,
    /// The experiment file's `[[goal]]` targets, in its order; absent (older
    /// results, and every file that declares none): no goals, and the
    /// report has no goals section.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub goals: Vec<Goal>,
    /// The experiment file's `[budget]` limits, in the key table's order;
    /// absent (older results, and every file without a `[budget]`): the
    /// report judges no budget.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub budgets: Vec<Budget>,
    /// What `run --grow` planned and what its re-estimate after round 1
    /// decided (kept, dropped, re-picked or stopped), a line each; absent
    /// without `--grow`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub grow: Vec<String>,
    /// How many repeats ran and why the runner stopped there; absent in
    /// older results (the repeat count is then read off the run directories).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats: Option<Repeats>,
    /// Which CPUs the plane, the controller and the harness were pinned to;
    /// absent: no placement (every process shares every core).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<Placement>,
    /// What one repeat may decide: the machine's between-run spread per
    /// figure and the looks the runner takes; absent in older results
    /// (their intervals come from the repeats alone, one look).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<Evidence>,
    /// The seed that ordered the variants within each repeat (a Williams
    /// square's rows in a seeded order); absent in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order_seed: Option<u64>,
    /// The `build` steps of command variants: what was built, from which
    /// tree, and the program that ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub builds: Vec<Build>,
}

/// A binary a local plane ran.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PlaneBinary {
    /// etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok.
    pub name: String,
    pub path: String,
    /// downloaded, built, cached (kept before origins were, or replaced
    /// since), environment (named by `TEST_ASSET_*` or `KUBEBUILDER_ASSETS`).
    pub how: String,
    /// The URL it was downloaded from, or the Go package built.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub from: String,
    /// The file's SHA-256; absent for the environment's binaries.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub sha256: String,
}

/// One `build` of command variants.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Build {
    /// The variants whose program it builds.
    pub variants: Vec<String>,
    pub dir: String,
    pub command: Vec<String>,
    /// The source tree's git commit, when it is a git work tree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_commit: Option<String>,
    /// A digest of the tree's files (the cache key).
    pub tree_hash: String,
    /// false: the tree was as at the last success and the program there.
    pub ran: bool,
    pub seconds: f64,
    pub program: String,
    pub program_sha256: String,
}

/// The spread a paired log ratio B_k/A_k shows between runs on this
/// machine, known before the run (from an A/A run, or a conservative
/// default), and how many looks at the questions the runner plans. The
/// report pools the spread with the repeats' own (as prior degrees of
/// freedom) and splits the 5 % error over the looks, so a large effect is
/// decided from one repeat and peeking after every repeat stays valid.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// "default", or where the calibration came from ("calibrated by
    /// results/… on 2026-12-03").
    pub source: String,
    /// Per figure label ("Ready/s", "writes/s", …); others take `default`.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub spread: std::collections::BTreeMap<String, Spread>,
    pub default: Spread,
    /// The default instead for figures that time the controller (rates,
    /// latencies, CPU per reconcile), whose short runs spread most; absent
    /// in older results (`default` then stands for every figure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timing: Option<Spread>,
    /// Planned looks: 1 for a fixed repeat count, max − min + 1 for "auto".
    pub looks: u32,
}

/// A pair's log-ratio standard deviation and the degrees of freedom it is
/// worth (repeats − 1 of the A/A run that measured it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub s: f64,
    pub df: f64,
}

/// One `[[compare]]` entry: is variant `b` higher, lower or equivalent to
/// variant `a` on `figure`? `figure` is a label or a column heading of the
/// report's metric catalogue ("Ready/s", "peak RSS", "reconcile p99", …).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CompareQuestion {
    pub a: String,
    pub b: String,
    pub figure: String,
}

/// One `[[goal]]`: at every scale, each pair of variants `<b>-X` / `<a>-X`
/// should have B/A on `figure` at least or at most `bound`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Goal {
    /// A label of the report's metric catalogue ("Ready/s", "peak RSS", …).
    pub figure: String,
    /// The variant-name prefixes of the two sides: "go" and "rust" pair
    /// `rust-good` with `go-good`.
    pub a: String,
    pub b: String,
    /// True: B/A ≥ `bound`; false: B/A ≤ `bound`.
    pub at_least: bool,
    pub bound: f64,
    /// Judged only at scales N ≥ this; absent: at every scale.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_scale: Option<u64>,
}

/// One `[budget]` limit: the figure must stay at or below `limit` for
/// every variant (the median over its repeats).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Budget {
    /// The key as written in `[budget]` ("requests_per_object").
    pub key: String,
    /// What it reads: a label of the report's metric catalogue ("requests
    /// per object"), or "peak RSS per object (KiB)".
    pub figure: String,
    pub limit: f64,
}

/// The repeats an experiment ran: a fixed count, or repeats added until
/// every question was decided (`auto`, between `min` and `max`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Repeats {
    /// "fixed" or "auto".
    pub mode: String,
    /// Repeats completed.
    pub done: u32,
    pub min: u32,
    pub max: u32,
    /// Why the runner stopped: "all decided", "max_repeats", "interrupted"
    /// or "fixed".
    pub stopped: String,
}

/// CPU lists ("0-1", "2") the processes were pinned to; None: not pinned.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Placement {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plane: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harness: Option<String>,
    /// Anything a reader should know about it (e.g. "isolcpus not set").
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
    /// The CPU quota of each variant that has one (`cpu_limit`), in
    /// millicores: how much, where the sets above say where.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub cpu_limits: std::collections::BTreeMap<String, u32>,
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

fn is_zero(v: &usize) -> bool {
    *v == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_repeats_and_placement_are_optional() {
        let old: Manifest = serde_json::from_str(r#"{"experiment":"x","complete":true}"#).unwrap();
        assert_eq!(
            (old.margin, old.compare.len(), &old.repeats, &old.placement),
            (None, 0, &None, &None)
        );
        let out = serde_json::to_string(&old).unwrap();
        for k in ["margin", "compare", "repeats", "placement"] {
            assert!(!out.contains(&format!("\"{k}\"")), "{out}");
        }
        let new: Manifest = serde_json::from_str(
            r#"{"margin":0.03,"compare":[{"a":"go-good","b":"rust-good","figure":"Ready/s"}],
                "repeats":{"mode":"auto","done":3,"min":2,"max":5,"stopped":"all decided"},
                "placement":{"plane":"0","controller":"1","note":""}}"#,
        )
        .unwrap();
        assert_eq!(new.margin, Some(0.03));
        assert_eq!(new.compare[0].figure, "Ready/s");
        assert_eq!(new.repeats.as_ref().unwrap().done, 3);
        let p = new.placement.as_ref().unwrap();
        assert_eq!(
            (p.plane.as_deref(), p.harness.as_deref()),
            (Some("0"), None)
        );
        let back: Manifest = serde_json::from_str(&serde_json::to_string(&new).unwrap()).unwrap();
        assert_eq!(back, new);
    }
}
