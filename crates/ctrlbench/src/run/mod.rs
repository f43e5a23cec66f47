//! `ctrlbench run`: executes an experiment's plan, phase by phase —
//! [`target`] (which cluster), then per run [`group`] (namespaces,
//! identities, controllers), [`measure`] (baseline, loader, watch, sampler),
//! [`summary`] and the [`manifest`]. Ctrl-C stops the loader and the
//! controllers, deletes the namespaces and marks the results incomplete.

pub mod audit;
pub mod background;
mod controller;
pub mod faults;
pub mod group;
pub mod identity;
pub mod loader;
pub mod manifest;
pub mod measure;
pub mod member;
pub mod namespace;
pub mod phase;
pub mod probe;
pub mod quiet;
pub mod sampler;
pub mod summary;
pub mod target;
pub mod watch;
pub mod workload;

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Result, bail};
use ctrlbench_record::time::now_rfc3339;
use ctrlbench_record::{Manifest, ResultsDir};
use tokio_util::sync::CancellationToken;

use crate::experiment::plan;
use crate::experiment::{Experiment, Impl};
use ctrlbench_plane::process::own_cpu_seconds;
pub use target::Cluster;

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
    /// The program of each command variant (by variant index).
    pub programs: &'a HashMap<usize, PathBuf>,
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
        ctrlbench_plane::process::STOP_TIMEOUT
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

/// The etcd releases the planes of these Kubernetes versions ran ("v1.36.3").
fn etcd_versions(k8s: &[String]) -> String {
    let mut v: Vec<&str> = k8s
        .iter()
        .map(|k| ctrlbench_plane::binaries::etcd_version(k.trim_start_matches('v')))
        .collect();
    v.dedup();
    v.join(", ")
}

/// A command variant's program: `@<name>` is a controller ctrlbench builds,
/// a path with a `/` is relative to the experiment file, a bare name is
/// looked up in PATH.
fn command_program(exp_file: &std::path::Path, first: &str) -> Result<PathBuf> {
    if first.starts_with('@') {
        return crate::controllers::command_program(first);
    }
    if first.contains('/') {
        let p = crate::experiment::workload::relative_to(exp_file, first);
        if !p.is_file() {
            bail!(
                "the command's program {} (from {first:?}, relative to {}) does not exist",
                p.display(),
                exp_file.display()
            );
        }
        return Ok(p);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join(first))
        .find(|p| p.is_file())
        .ok_or_else(|| anyhow::anyhow!("the command's program {first:?} is not in PATH"))
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
    let mut programs = HashMap::new();
    for (i, v) in exp.variants.iter().enumerate() {
        if v.implementation == Impl::Command {
            let first = v.command().first().cloned();
            let exp_file = exp.file.clone();
            let resolve = tokio::task::spawn_blocking(move || {
                command_program(&exp_file, &first.unwrap_or_default())
            });
            let Some(program) = until_cancelled(&cancel, resolve).await else {
                bail!("interrupted while building the controllers");
            };
            programs.insert(i, program??);
            continue;
        }
        if !v.is_own() {
            continue;
        }
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
    // Variants that name a Kubernetes version (the `versions` experiment)
    // run on a plane of that version: the plane changes between runs.
    let version_of = |run: &plan::Run| exp.variant_k8s_version(run.variants[0]);
    let mut current_version = runs.first().and_then(version_of);
    let on = |v: &Option<String>| v.as_ref().map(|v| exp.on_version(v));
    let first = on(&current_version);
    let Some(cluster) = until_cancelled(
        &cancel,
        target::connect(first.as_ref().unwrap_or(exp), opts),
    )
    .await
    else {
        bail!("interrupted while starting the cluster");
    };
    let mut cluster = cluster?;
    let results = ResultsDir::create(&opts.results_root, &exp.name)?;
    let mut manifest = manifest::new(exp);
    manifest.write(&results.manifest())?;
    // The workload's files next to the manifest (which holds the experiment
    // file's text): the results say what was created and when it counted as ready.
    if !exp.workload.is_builtin() {
        let dir = results.path.join("workload");
        std::fs::create_dir_all(&dir)?;
        std::fs::write(
            dir.join("crd.json"),
            serde_json::to_string_pretty(&exp.workload.crd)?,
        )?;
        std::fs::write(dir.join("object-template.yaml"), &exp.workload.template)?;
    }
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
        cluster.ensure_workload(&exp.workload).await?;
        target::warm_up(&cluster, &exp.workload).await?;
        anyhow::Ok(())
    };
    match until_cancelled(&cancel, prepared).await {
        Some(Ok(())) => {}
        Some(Err(e)) => {
            // Flagged in the manifest; the CRD we installed and the plane go.
            manifest.errors.push(format!("before the first run: {e:#}"));
            manifest.finished_at = Some(now_rfc3339());
            manifest.write(&results.manifest())?;
            cluster.close_within(plane_grace(&cancel)).await?;
            return Err(e.context(format!(
                "no run started (results in {})",
                results.path.display()
            )));
        }
        None => {
            cluster.close_within(plane_grace(&cancel)).await?;
            return interrupted(manifest, "during warm-up");
        }
    }
    manifest.write(&results.manifest())?;
    let k = exp.background_objects;
    let background = if k > 0 {
        let workload = std::sync::Arc::new(exp.workload.clone());
        let create = background::create(
            &cluster.client,
            &workload,
            &exp.name,
            k,
            exp.concurrency as usize,
            &cancel,
        );
        match until_cancelled(&cancel, create).await {
            Some(b) => Some(b?),
            None => {
                cluster.close_within(plane_grace(&cancel)).await?;
                return interrupted(manifest, "while creating the background objects");
            }
        }
    } else {
        None
    };
    // The apiserver's idle request rate, the level each run waits to return to.
    let mut idle = quiet::idle_rate(&cluster.client, Duration::from_secs(2)).await;
    let mut versions_seen: Vec<String> = vec![cluster.version.clone()];
    if current_version.is_some() {
        manifest.etcd_version = etcd_versions(&versions_seen);
    }

    let mut complete = true;
    let mut probed = None;
    for (i, run) in runs.iter().enumerate() {
        if cancel.is_cancelled() {
            complete = false;
            break;
        }
        // probe = true: the probe runs before each repeat (of each scale),
        // interleaved with the runs like the variants are, so the loader
        // and status-patch comparisons divide each run by a probe of the
        // cluster as that repeat found it (etcd's history grows over an
        // experiment), not by one taken on a fresh plane only.
        if exp.probe && probed != Some((run.scale, run.repeat)) {
            probed = Some((run.scale, run.repeat));
            eprintln!("probe before N={} rep {}", run.scale, run.repeat);
            let p = probe::run(
                &cluster.client,
                exp.probe_objects,
                cluster.no_namespace_controller,
            );
            match until_cancelled(&cancel, p).await {
                Some(Ok(rows)) => {
                    manifest
                        .probe
                        .get_or_insert_default()
                        .extend(rows.into_iter().map(|r| probe::ProbeRow {
                            scale: Some(run.scale),
                            repeat: Some(run.repeat),
                            ..r
                        }))
                }
                Some(Err(e)) => manifest.errors.push(format!(
                    "probe before N={} rep {}: {e:#}",
                    run.scale, run.repeat
                )),
                None => {
                    manifest.errors.push(format!(
                        "interrupted during the probe before N={} rep {}",
                        run.scale, run.repeat
                    ));
                    complete = false;
                    break;
                }
            }
            manifest.write(&results.manifest())?;
        }
        let want = version_of(run);
        if want != current_version {
            let v = want.clone().unwrap_or_default();
            eprintln!("switching the local plane to Kubernetes {v}");
            cluster.close_within(plane_grace(&cancel)).await?;
            let next = on(&want);
            let start = async {
                let c = target::connect(next.as_ref().unwrap_or(exp), opts).await?;
                target::warm_up(&c, &exp.workload).await?;
                anyhow::Ok(c)
            };
            match until_cancelled(&cancel, start).await {
                Some(Ok(c)) => cluster = c,
                Some(Err(e)) => {
                    manifest
                        .errors
                        .push(format!("cannot start a plane of Kubernetes {v}: {e:#}"));
                    manifest.write(&results.manifest())?;
                    return Err(e.context(format!("starting Kubernetes {v}")));
                }
                None => return interrupted(manifest, &format!("while starting Kubernetes {v}")),
            }
            current_version = want;
            if !versions_seen.contains(&cluster.version) {
                versions_seen.push(cluster.version.clone());
                manifest.kubernetes_version = versions_seen.join(", ");
                manifest.etcd_version = etcd_versions(&versions_seen);
            }
            idle = quiet::idle_rate(&cluster.client, Duration::from_secs(2)).await;
        }
        let ctx = Ctx {
            exp,
            cluster: &cluster,
            binaries: &binaries,
            programs: &programs,
            results: &results,
            opts,
            cancel: &cancel,
        };
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
    if let Some(b) = &background
        && !(cancel.is_cancelled() && cluster.plane.is_some())
        && let Err(e) =
            background::remove(&cluster.client, b, cluster.no_namespace_controller).await
    {
        manifest
            .not_cleaned
            .push(format!("namespace {}: {e:#}", b.namespace));
    }
    manifest.complete = complete && manifest.errors.is_empty();
    manifest.finished_at = Some(now_rfc3339());
    manifest.harness_cpu_seconds = own_cpu_seconds();
    manifest.harness_peak_rss_bytes = ctrlbench_plane::process::own_peak_rss_bytes();
    manifest.write(&results.manifest())?;
    // After an interrupt the plane is thrown away: no long graceful shutdown.
    cluster.close_within(plane_grace(&cancel)).await?;
    Ok(Outcome {
        dir: results.path,
        complete: manifest.complete,
    })
}
