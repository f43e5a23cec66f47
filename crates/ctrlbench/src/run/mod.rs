//! `ctrlbench run`: executes an experiment's plan, phase by phase —
//! [`target`] (which cluster), then per run [`group`] (namespaces,
//! identities, controllers), [`measure`] (baseline, loader, watch, sampler),
//! [`summary`] and the [`manifest`]. Ctrl-C stops the loader and the
//! controllers, deletes the namespaces and marks the results incomplete.

pub mod audit;
mod controller;
pub mod faults;
pub mod group;
pub mod identity;
pub mod loader;
pub mod manifest;
pub mod measure;
pub mod member;
pub mod namespace;
pub mod probe;
pub mod quiet;
pub mod sampler;
pub mod summary;
pub mod target;
pub mod watch;

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Result, bail};
use ctrlbench_record::time::now_rfc3339;
use ctrlbench_record::{Manifest, ResultsDir};
use tokio_util::sync::CancellationToken;

use crate::cluster::process::own_cpu_seconds;
use crate::experiment::plan;
use crate::experiment::{Experiment, Impl};
pub use target::Cluster;

/// Widgets per concurrency level when an experiment asks for the probe.
const PROBE_OBJECTS: u64 = 500;

/// Seconds a controller gets after SIGTERM.
const STOP_GRACE: Duration = Duration::from_secs(10);
/// … after an interrupt, when the user is waiting.
const STOP_GRACE_INTERRUPTED: Duration = Duration::from_secs(2);

/// How `ctrlbench run` was invoked.
pub struct RunOptions {
    pub results_root: PathBuf,
    pub progress: bool,
    pub kubeconfig: Option<PathBuf>,
    pub context: Option<String>,
}

/// Where the results went and whether the experiment finished.
pub struct Outcome {
    pub dir: PathBuf,
    pub complete: bool,
}

/// What every phase of a run needs.
pub struct Ctx<'a> {
    pub exp: &'a Experiment,
    pub cluster: &'a Cluster,
    pub binaries: &'a HashMap<Impl, PathBuf>,
    pub results: &'a ResultsDir,
    pub opts: &'a RunOptions,
    pub cancel: &'a CancellationToken,
}

impl Ctx<'_> {
    /// How long a stopping controller gets: shorter once interrupted.
    pub fn stop_grace(&self) -> Duration {
        if self.cancel.is_cancelled() {
            STOP_GRACE_INTERRUPTED
        } else {
            STOP_GRACE
        }
    }
}

/// How long the plane's processes get after SIGTERM at the end: shortly
/// after an interrupt (the user is waiting, the plane's data goes anyway).
fn plane_grace(cancel: &CancellationToken) -> Duration {
    if cancel.is_cancelled() {
        Duration::from_secs(1)
    } else {
        crate::cluster::process::STOP_TIMEOUT
    }
}

/// `fut`'s output, or None as soon as `cancel` fires (`fut` is dropped).
pub async fn until_cancelled<T>(
    cancel: &CancellationToken,
    fut: impl std::future::Future<Output = T>,
) -> Option<T> {
    tokio::select! {
        r = fut => Some(r),
        _ = cancel.cancelled() => None,
    }
}

/// Runs the whole experiment; returns the results directory.
pub async fn execute(
    exp: &Experiment,
    opts: &RunOptions,
    cancel: CancellationToken,
) -> Result<Outcome> {
    let runs = plan::expand(exp);
    // Build every controller first: a failed build should cost no cluster time.
    let mut binaries = HashMap::new();
    for v in &exp.variants {
        if !binaries.contains_key(&v.implementation) {
            let imp = v.implementation.clone();
            let build = tokio::task::spawn_blocking(move || crate::controllers::binary(&imp));
            let Some(bin) = until_cancelled(&cancel, build).await else {
                bail!("interrupted while building the controllers");
            };
            binaries.insert(v.implementation.clone(), bin??);
        }
    }
    // The cluster before the results directory: a cluster that cannot be
    // reached leaves nothing behind. Dropping the start-up future on an
    // interrupt stops a half-started plane and removes its directory.
    let Some(cluster) = until_cancelled(&cancel, target::connect(exp, opts)).await else {
        bail!("interrupted while starting the cluster");
    };
    let cluster = cluster?;
    let results = ResultsDir::create(&opts.results_root, exp.name())?;
    let mut manifest = manifest::new(exp);
    manifest.write(&results.manifest())?;
    let interrupted = |mut manifest: Manifest, phase: &str| -> Result<Outcome> {
        manifest.errors.push(format!("interrupted {phase}"));
        manifest.finished_at = Some(now_rfc3339());
        manifest.write(&results.manifest())?;
        Ok(Outcome {
            dir: results.path.clone(),
            complete: false,
        })
    };
    manifest.kubernetes_version = cluster.version.clone();
    manifest.local_plane = cluster.plane.is_some();
    let prepared = async {
        target::warm_up(&cluster).await?;
        if exp.spec.probe {
            manifest.probe = Some(
                probe::run(
                    &cluster.client,
                    PROBE_OBJECTS,
                    cluster.no_namespace_controller,
                )
                .await?,
            );
        }
        anyhow::Ok(())
    };
    match until_cancelled(&cancel, prepared).await {
        Some(r) => r?,
        None => {
            cluster.close_within(plane_grace(&cancel)).await?;
            return interrupted(manifest, "during warm-up or the probe");
        }
    }
    manifest.write(&results.manifest())?;
    // The apiserver's idle request rate, the level each run waits to return to.
    let idle = quiet::idle_rate(&cluster.client, Duration::from_secs(2)).await;

    let ctx = Ctx {
        exp,
        cluster: &cluster,
        binaries: &binaries,
        results: &results,
        opts,
        cancel: &cancel,
    };
    let mut complete = true;
    for (i, run) in runs.iter().enumerate() {
        if cancel.is_cancelled() {
            complete = false;
            break;
        }
        let names: Vec<&str> = run
            .variants
            .iter()
            .map(|v| exp.variants[*v].name.as_str())
            .collect();
        eprintln!(
            "run {}/{}: N={} rep {} {}",
            i + 1,
            runs.len(),
            run.scale,
            run.repeat,
            names.join(" + ")
        );
        let quiet_wait = match idle {
            Some(i) => match until_cancelled(&cancel, quiet::wait(&cluster.client, i)).await {
                Some(q) => Some(q),
                None => {
                    complete = false;
                    break;
                }
            },
            None => None,
        };
        if let Some(q) = quiet_wait.as_ref().filter(|q| !q.quiet) {
            eprintln!(
                "warning: the cluster did not quiet down in {:.0} s ({:.1} requests/s, idle {:.1}/s); running anyway",
                q.waited_s, q.rate_per_s, q.idle_per_s
            );
        }
        let (result, not_cleaned) = group::run(&ctx, run, quiet_wait).await;
        manifest.not_cleaned.extend(not_cleaned);
        match result {
            Ok(summaries) => manifest.runs.extend(summaries),
            Err(e) => {
                manifest.errors.push(format!(
                    "N={} rep {} {}: {e:#}",
                    run.scale,
                    run.repeat,
                    names.join("+")
                ));
                eprintln!("run failed: {e:#}");
            }
        }
        manifest.write(&results.manifest())?;
        if cancel.is_cancelled() {
            complete = false;
        }
    }
    manifest.complete = complete && manifest.errors.is_empty();
    manifest.finished_at = Some(now_rfc3339());
    manifest.harness_cpu_seconds = own_cpu_seconds();
    manifest.write(&results.manifest())?;
    // After an interrupt the plane is thrown away: no long graceful shutdown.
    cluster.close_within(plane_grace(&cancel)).await?;
    Ok(Outcome {
        dir: results.path,
        complete: manifest.complete,
    })
}
