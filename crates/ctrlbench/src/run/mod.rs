//! `ctrlbench run`: executes an experiment's plan, phase by phase —
//! [`preflight`] (every check that needs no build), [`target`] (which cluster), then per run [`group`] (namespaces,
//! identities, controllers), [`measure`] (the loader and every measurement),
//! [`summary`] and the [`manifest`]. Ctrl-C stops the loader and the
//! controllers, deletes the namespaces and marks the results incomplete.

pub mod background;
pub mod baseline;
pub mod build;
pub mod builds;
mod controller;
pub mod first_builds;
pub mod group;
pub mod identity;
pub mod likely;
pub mod loader;
pub mod manifest;
pub mod measure;
pub mod member;
pub mod namespace;
pub mod objects;
pub mod placement;
pub mod preflight;
pub mod probe;
pub mod quiet;
pub mod repeats;
pub mod session;
pub mod summary;
pub mod target;
pub mod watched;
pub mod workload;

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Result, bail};
use ctrlbench_record::ResultsDir;
use tokio_util::sync::CancellationToken;

use crate::experiment::plan;
use crate::experiment::{Experiment, Impl};
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
    /// `--dry-run`: the checks write nothing and ask no network.
    pub dry_run: bool,
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
    /// Where the processes run.
    pub placement: &'a placement::Placement,
    /// A local plane is thrown away after this run (with everything in it).
    pub plane_goes: bool,
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
    // A local plane's binaries build beside the controllers: a cold Go
    // build of kube-apiserver fills the core a Rust link or a module
    // download leaves idle. Both are awaited before either's error counts,
    // so no build outlives the command.
    let plane = match target::named(exp, opts) {
        (None, None) => Some(ctrlbench_plane::binaries::normalize_version(
            exp.cluster
                .k8s_version
                .as_deref()
                .unwrap_or(ctrlbench_plane::binaries::DEFAULT_K8S_VERSION),
        )?),
        _ => None,
    }
    .map(|v| {
        let d = exp.cluster.downloads();
        tokio::spawn(async move { ctrlbench_plane::options::install_blocking(&v, &d).await })
    });
    let builds = builds::Builds::prepare(exp, &cancel).await;
    if let Some(plane) = plane {
        let Some(installed) = until_cancelled(&cancel, plane).await else {
            bail!("interrupted while building the plane");
        };
        installed??;
    }
    let builds = builds?;
    let mut s = match session::Session::open(exp, opts, &cancel, &runs).await? {
        session::Opened::Ready(s) => s,
        session::Opened::Interrupted(outcome) => return Ok(outcome),
    };
    s.manifest.builds = builds.user.clone();
    let complete = s.run_all(&runs, &builds).await?;
    s.close(complete).await
}
