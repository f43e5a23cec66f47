//! The manifest a run starts with: tool and git revision, the experiment
//! file as run, the machine; the runner fills in versions, runs and
//! completeness as it goes and rewrites it (atomically) after each run.

use ctrlbench_record::Manifest;
use ctrlbench_record::manifest::{CompareQuestion, Machine};
use ctrlbench_record::time::now_rfc3339;

use crate::experiment::Experiment;
use ctrlbench_plane::binaries;

pub fn new(exp: &Experiment) -> Manifest {
    let git = std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    Manifest {
        tool: "ctrlbench".into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        git_revision: git,
        experiment: exp.name.clone(),
        experiment_file: exp.file.display().to_string(),
        experiment_text: exp.text.clone(),
        started_at: now_rfc3339(),
        finished_at: None,
        complete: false,
        kubernetes_version: String::new(),
        etcd_version: binaries::etcd_version(
            exp.cluster
                .k8s_version
                .as_deref()
                .unwrap_or(binaries::DEFAULT_K8S_VERSION),
        )
        .into(),
        local_plane: exp.is_local(),
        controller_manager: exp.is_local() && exp.cluster.controller_manager,
        nodes: if exp.is_local() { exp.cluster.nodes } else { 0 },
        node_pods: if exp.is_local() && exp.cluster.nodes > 0 {
            exp.cluster.node_pods
        } else {
            0
        },
        controller_manager_args: if exp.is_local() && exp.cluster.controller_manager {
            exp.cluster
                .controller_manager_client
                .unwrap_or(ctrlbench_plane::options::CONTROLLER_MANAGER_CLIENT)
                .args()
        } else {
            vec![]
        },
        scheduler_args: if exp.is_local() && exp.cluster.nodes > 0 {
            exp.cluster
                .scheduler_client
                .unwrap_or(ctrlbench_plane::options::SCHEDULER_CLIENT)
                .args()
        } else {
            vec![]
        },
        scheduler_without_default_spread: exp.is_local()
            && exp.cluster.nodes > 0
            && exp.cluster.scheduler_without_default_spread,
        plane_binaries: vec![],
        machine: Machine::this(),
        harness_cpu_seconds: 0.0,
        harness_peak_rss_bytes: None,
        probe: None,
        runs: vec![],
        errors: vec![],
        not_cleaned: vec![],
        margin: Some(exp.margin),
        growth_margin: Some(exp.growth_margin),
        grow: exp
            .grow
            .as_ref()
            .map(|g| {
                vec![format!(
                    "planned N = {} in {} rounds, the largest set by {}",
                    crate::experiment::grow::list(&g.scales),
                    g.rounds,
                    g.largest_by
                )]
            })
            .unwrap_or_default(),
        compare: exp
            .compare
            .iter()
            .map(|c| CompareQuestion {
                a: c.a.clone(),
                b: c.b.clone(),
                figure: c.figure.clone(),
            })
            .collect(),
        goals: exp.goals.clone(),
        budgets: exp.budgets.clone(),
        repeats: None,
        placement: None,
        evidence: Some(crate::calibration::for_run(exp)),
        order_seed: Some(exp.order_seed()),
        builds: Vec::new(),
    }
}

/// Adds the binaries `named` (a local plane's) that `m` does not list yet,
/// with where each came from. Reading an origin may hash a binary the cache
/// kept before origins were (about a second, once), so it runs off the
/// runtime's threads.
pub async fn record_binaries(
    m: &mut Manifest,
    named: Vec<(String, std::path::PathBuf)>,
) -> anyhow::Result<()> {
    let named: Vec<_> = named
        .into_iter()
        .filter(|(_, p)| {
            !m.plane_binaries
                .iter()
                .any(|b| b.path == p.display().to_string())
        })
        .collect();
    if named.is_empty() {
        return Ok(());
    }
    let found = tokio::task::spawn_blocking(move || binaries::origins(&named)).await??;
    for (name, path, o) in found {
        m.plane_binaries
            .push(ctrlbench_record::manifest::PlaneBinary {
                name,
                path: path.display().to_string(),
                how: o.how,
                from: o.from,
                sha256: o.sha256,
            });
    }
    Ok(())
}
