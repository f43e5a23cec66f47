//! One experiment's session, in the order it happens: the controllers are
//! built first (`super::builds`: a failed build costs no cluster time), then the cluster,
//! the results directory and its manifest (and the likely lines of the
//! operator's source, `super::likely`), the workload's CRD and a warm-up,
//! the background objects and decoys; then every run of the plan — the probe before a
//! repeat, a plane of another Kubernetes version where a variant needs one,
//! a quiet cluster — and last the clean-up. The manifest is rewritten after
//! every step, so an interruption keeps what was measured.

use std::time::Duration;

use anyhow::{Result, bail};
use ctrlbench_plane::process::own_cpu_seconds;
use ctrlbench_record::time::now_rfc3339;
use ctrlbench_record::{Manifest, ResultsDir};
use tokio_util::sync::CancellationToken;

use super::background::{self, Background};
use super::builds::Builds;
use super::placement::Placement;
use super::{Ctx, Outcome, RunOptions, group, manifest, plane_grace, probe, quiet, target};
use super::{etcd_versions, until_cancelled};
use crate::experiment::spec::{FreshPlane, PlaneOf};
use crate::experiment::{Experiment, plan};

/// An experiment under way.
pub struct Session<'a> {
    exp: &'a Experiment,
    opts: &'a RunOptions,
    cancel: &'a CancellationToken,
    /// None once closed (between planes of two versions, or at the end).
    cluster: Option<target::Cluster>,
    results: ResultsDir,
    pub manifest: Manifest,
    /// The background objects' and the decoys' namespaces.
    background: Vec<Background>,
    /// The apiserver's idle request rate, the level each run waits to return to.
    idle: Option<f64>,
    /// The plane's version and gates when variants name them.
    version: Option<PlaneOf>,
    versions_seen: Vec<String>,
    /// The (scale, repeat) the probe last ran before.
    probed: Option<(u64, u32)>,
    placement: Placement,
}

/// Where opening a session ended.
pub enum Opened<'a> {
    Ready(Box<Session<'a>>),
    /// Interrupted before the first run: the results so far.
    Interrupted(Outcome),
}

/// The plane `run` needs (variants that name a version or feature gates).
fn plane_of(exp: &Experiment, run: &plan::Run) -> Option<PlaneOf> {
    exp.variant_plane(run.variants[0])
}

/// Whether `fresh_plane` asks for a new plane between `prev` and `run`.
fn fresh_due(fresh: FreshPlane, run: &plan::Run, prev: Option<&plan::Run>) -> bool {
    match (fresh, prev) {
        (_, None) | (FreshPlane::Experiment, _) => false,
        (FreshPlane::Run, Some(_)) => true,
        (FreshPlane::Repeat, Some(p)) => (p.scale, p.repeat) != (run.scale, run.repeat),
    }
}

/// Whether the plane `run` ran on is thrown away after it: the last run, or
/// the next one needs another version or a fresh plane. Its namespaces then
/// need no deleting (at N=50 000 that took minutes per run).
fn plane_goes_after(exp: &Experiment, run: &plan::Run, next: Option<&plan::Run>) -> bool {
    next.is_none_or(|n| {
        plane_of(exp, n) != plane_of(exp, run) || fresh_due(exp.fresh_plane, n, Some(run))
    })
}

/// `exp` on the plane `p`, when one is named.
fn on(exp: &Experiment, p: &Option<PlaneOf>) -> Option<Experiment> {
    p.as_ref().map(|p| exp.on_plane(p))
}

impl<'a> Session<'a> {
    /// The cluster before the results directory: a cluster that cannot be
    /// reached leaves nothing behind. Dropping the start-up future on an
    /// interrupt stops a half-started plane and removes its directory.
    pub async fn open(
        exp: &'a Experiment,
        opts: &'a RunOptions,
        cancel: &'a CancellationToken,
        runs: &[plan::Run],
    ) -> Result<Opened<'a>> {
        // The placement first: the plane's processes start on their set.
        let placement = Placement::of(exp, &ctrlbench_plane::cpus::available())?;
        ctrlbench_plane::cpus::set_plane(placement.plane.clone());
        let version = runs.first().and_then(|r| plane_of(exp, r));
        let first = on(exp, &version);
        let Some(cluster) =
            until_cancelled(cancel, target::connect(first.as_ref().unwrap_or(exp), opts)).await
        else {
            bail!("interrupted while starting the cluster");
        };
        let cluster = cluster?;
        if let Some(h) = &placement.harness {
            ctrlbench_plane::cpus::pin_this_process(h)?;
        }
        let results = ResultsDir::create(&opts.results_root, &exp.name)?;
        let mut manifest = manifest::new(exp);
        manifest.kubernetes_version = cluster.version.clone();
        manifest.local_plane = cluster.plane.is_some();
        if let Some(p) = &cluster.plane {
            manifest::record_binaries(&mut manifest, p.binaries.clone()).await?;
        }
        manifest.placement = placement.record();
        if let Some(p) = manifest.placement.as_mut() {
            p.cpu_limits = exp
                .variants
                .iter()
                .filter_map(|v| Some((v.name.clone(), v.cpu_limit()?)))
                .collect();
        }
        manifest.write(&results.manifest())?;
        write_workload(exp, &results)?;
        if let Some(source) = &exp.source {
            // Reading a repository takes seconds: on the blocking pool, so
            // the one runtime thread still sees SIGINT and SIGTERM.
            let (dir, source) = (results.clone(), source.clone());
            let scan = tokio::task::spawn_blocking(move || super::likely::write(&dir, &source));
            match until_cancelled(cancel, scan).await {
                Some(Ok(Err(e))) => eprintln!("note: no likely lines for the findings: {e:#}"),
                Some(Err(e)) => eprintln!("note: no likely lines for the findings: {e}"),
                // Interrupted: the runs that follow see it and stop.
                Some(Ok(Ok(_))) | None => {}
            }
        }
        let mut s = Session {
            exp,
            opts,
            cancel,
            versions_seen: vec![cluster.version.clone()],
            cluster: Some(cluster),
            results,
            manifest,
            background: Vec::new(),
            idle: None,
            version,
            probed: None,
            placement,
        };
        if let Some(o) = s.prepare().await? {
            return Ok(Opened::Interrupted(o));
        }
        Ok(Opened::Ready(Box::new(s)))
    }

    fn cluster(&self) -> &target::Cluster {
        self.cluster
            .as_ref()
            .expect("the session's cluster is open")
    }

    fn cluster_mut(&mut self) -> &mut target::Cluster {
        self.cluster
            .as_mut()
            .expect("the session's cluster is open")
    }

    /// Stops the plane (or lets go of the existing cluster), once.
    async fn close_cluster(&mut self) -> Result<()> {
        match self.cluster.take() {
            Some(c) => c.close_within(plane_grace(self.cancel)).await,
            None => Ok(()),
        }
    }

    /// The workload's CRD, a warm-up, the background objects and decoys; an
    /// interruption ends the session (its outcome), an error too.
    async fn prepare(&mut self) -> Result<Option<Outcome>> {
        let (exp, cancel) = (self.exp, self.cancel);
        let cluster = self.cluster_mut();
        let prepared = async {
            cluster.ensure_workload(&exp.workload).await?;
            target::warm_up(cluster, &exp.workload).await?;
            anyhow::Ok(())
        };
        match until_cancelled(cancel, prepared).await {
            Some(Ok(())) => {}
            Some(Err(e)) => {
                // Flagged in the manifest; the CRD we installed and the plane go.
                self.manifest
                    .errors
                    .push(format!("before the first run: {e:#}"));
                self.manifest.finished_at = Some(now_rfc3339());
                self.manifest.write(&self.results.manifest())?;
                self.close_cluster().await?;
                return Err(e.context(format!(
                    "no run started (results in {})",
                    self.results.path.display()
                )));
            }
            None => return self.interrupted("during warm-up").await.map(Some),
        }
        self.manifest.write(&self.results.manifest())?;
        let workload = std::sync::Arc::new(self.exp.workload.clone());
        for decoys in [false, true] {
            let (k, what) = if decoys {
                (self.exp.decoys, "the decoys")
            } else {
                (self.exp.background_objects, "the background objects")
            };
            if k == 0 {
                continue;
            }
            let (client, name) = (&self.cluster().client, &self.exp.name);
            let n = self.exp.concurrency as usize;
            let create = async {
                if decoys {
                    background::create_decoys(client, &workload, name, k, n, self.cancel).await
                } else {
                    background::create(client, &workload, name, k, n, self.cancel).await
                }
            };
            match until_cancelled(self.cancel, create).await {
                Some(b) => self.background.push(b?),
                None => {
                    return self
                        .interrupted(&format!("while creating {what}"))
                        .await
                        .map(Some);
                }
            }
        }
        self.idle = quiet::idle_rate(&self.cluster().client, Duration::from_secs(2)).await;
        if self.version.is_some() {
            self.manifest.etcd_version = etcd_versions(&self.versions_seen);
        }
        Ok(None)
    }

    /// Stops the plane and records the interruption.
    async fn interrupted(&mut self, phase: &str) -> Result<Outcome> {
        self.close_cluster().await?;
        self.manifest.errors.push(format!("interrupted {phase}"));
        self.manifest.finished_at = Some(now_rfc3339());
        self.manifest.write(&self.results.manifest())?;
        Ok(Outcome {
            dir: self.results.path.clone(),
            complete: false,
        })
    }

    /// Every run of the plan in order; false when interrupted. An error
    /// here ends the experiment (a plane that cannot start). With repeats
    /// = "auto", a scale's repeats end once its questions are decided.
    pub async fn run_all(&mut self, runs: &[plan::Run], builds: &Builds) -> Result<bool> {
        let mut decided = super::repeats::Decided::new(self.exp);
        // `--grow`: the scales its re-estimate drops, or re-picks (the
        // runs after it then take the new scales).
        let mut grow = crate::experiment::regrow::Watch::new(self.exp);
        let mut runs = runs.to_vec();
        for i in 0..runs.len() {
            let run = &runs[i].clone();
            if self.cancel.is_cancelled() {
                decided.interrupted();
                self.manifest.repeats = Some(decided.record());
                return Ok(false);
            }
            if decided.done_with(run.scale) || grow.as_ref().is_some_and(|g| g.skips(run.scale)) {
                continue;
            }
            if !self
                .fresh_plane(run, i.checked_sub(1).map(|k| &runs[k]))
                .await?
            {
                return Ok(false);
            }
            if !self.probe_before(run).await? {
                return Ok(false);
            }
            let plane_goes = plane_goes_after(self.exp, run, runs.get(i + 1));
            let began = std::time::Instant::now();
            if !self.one(i, runs.len(), run, builds, plane_goes).await? {
                decided.interrupted();
                self.manifest.repeats = Some(decided.record());
                return Ok(false);
            }
            let last_of_repeat = runs
                .get(i + 1)
                .is_none_or(|n| (n.scale, n.repeat) != (run.scale, run.repeat));
            if let Some(g) = &mut grow {
                match g.after_run(
                    self.exp,
                    run,
                    began.elapsed(),
                    last_of_repeat,
                    &self.manifest.runs,
                    &runs[i + 1..],
                ) {
                    Ok(None) => self.manifest.grow.extend(g.take_line()),
                    Ok(Some(scales)) => {
                        self.manifest.grow.extend(g.take_line());
                        let planned = &self.exp.scales;
                        let later =
                            crate::experiment::regrow::rescaled(&runs[i + 1..], planned, &scales);
                        runs.truncate(i + 1);
                        runs.extend(later);
                    }
                    Err(line) => {
                        eprintln!("{line}");
                        self.manifest.errors.push(line);
                        self.manifest.repeats = Some(decided.record());
                        self.manifest.write(&self.results.manifest())?;
                        return Ok(false);
                    }
                }
            }
            if last_of_repeat && run.repeat > 0 {
                decided.after_repeat(run.scale, run.repeat, &self.results.path);
                self.manifest.repeats = Some(decided.record());
                self.manifest.write(&self.results.manifest())?;
            }
        }
        Ok(true)
    }

    /// probe = true: the probe runs before each repeat (of each scale),
    /// interleaved with the runs like the variants are, so the loader and
    /// status-patch comparisons divide each run by a probe of the cluster
    /// as that repeat found it (etcd's history grows over an experiment),
    /// not by one taken on a fresh plane only. With `fresh_plane = "run"`
    /// the probe gets a fresh plane like a run, and the run after it another,
    /// so that the two meet the same plane. False when interrupted.
    async fn probe_before(&mut self, run: &plan::Run) -> Result<bool> {
        if !self.exp.probe || self.probed == Some((run.scale, run.repeat)) {
            return Ok(true);
        }
        self.probed = Some((run.scale, run.repeat));
        let at = format!("N={} rep {}", run.scale, run.repeat);
        eprintln!("probe before {at}");
        let c = self.cluster();
        let p = probe::run(&c.client, self.exp.probe_objects, c.no_namespace_controller);
        let going = match until_cancelled(self.cancel, p).await {
            Some(Ok(rows)) => {
                self.manifest
                    .probe
                    .get_or_insert_default()
                    .extend(rows.into_iter().map(|r| probe::ProbeRow {
                        scale: Some(run.scale),
                        repeat: Some(run.repeat),
                        ..r
                    }));
                true
            }
            Some(Err(e)) => {
                self.manifest
                    .errors
                    .push(format!("probe before {at}: {e:#}"));
                true
            }
            None => {
                self.manifest
                    .errors
                    .push(format!("interrupted during the probe before {at}"));
                false
            }
        };
        self.manifest.write(&self.results.manifest())?;
        if going && self.exp.fresh_plane == FreshPlane::Run {
            eprintln!("a fresh local plane after the probe (fresh_plane = \"run\")");
            return self.restart_plane(self.version.clone()).await;
        }
        Ok(going)
    }

    /// A plane of the version `run` needs, when it is not the one running.
    /// A new local plane before `run` when it needs another Kubernetes
    /// version, or when `fresh_plane` asks for one (each run, each repeat).
    async fn fresh_plane(&mut self, run: &plan::Run, prev: Option<&plan::Run>) -> Result<bool> {
        let want = plane_of(self.exp, run);
        if want != self.version {
            let v = self.describe(&want);
            eprintln!("switching the local plane to {v}");
            return self.restart_plane(want).await;
        }
        if !fresh_due(self.exp.fresh_plane, run, prev) {
            return Ok(true);
        }
        eprintln!(
            "a fresh local plane (fresh_plane = {:?})",
            self.exp.fresh_plane
        );
        self.restart_plane(want).await
    }

    /// How progress and errors name the plane `p` (the `[cluster]`'s: None).
    fn describe(&self, p: &Option<PlaneOf>) -> String {
        let version = self
            .exp
            .cluster
            .k8s_version
            .clone()
            .unwrap_or_else(|| self.cluster().version.clone());
        p.as_ref()
            .map_or(format!("Kubernetes {version}"), |p| p.describe(&version))
    }

    /// Stops the plane and starts the one `want` names; false when interrupted.
    async fn restart_plane(&mut self, want: Option<PlaneOf>) -> Result<bool> {
        let v = self.describe(&want);
        self.close_cluster().await?;
        let next = on(self.exp, &want);
        let (exp, opts) = (self.exp, self.opts);
        let start = async {
            let c = target::connect(next.as_ref().unwrap_or(exp), opts).await?;
            target::warm_up(&c, &exp.workload).await?;
            anyhow::Ok(c)
        };
        match until_cancelled(self.cancel, start).await {
            Some(Ok(c)) => self.cluster = Some(c),
            Some(Err(e)) => {
                self.manifest
                    .errors
                    .push(format!("cannot start a plane of {v}: {e:#}"));
                self.manifest.write(&self.results.manifest())?;
                return Err(e.context(format!("starting {v}")));
            }
            None => {
                self.manifest
                    .errors
                    .push(format!("interrupted while starting {v}"));
                return Ok(false);
            }
        }
        self.version = want;
        if let Some(p) = &self.cluster().plane {
            let named = p.binaries.clone();
            manifest::record_binaries(&mut self.manifest, named).await?;
        }
        let version = self.cluster().version.clone();
        if !self.versions_seen.contains(&version) {
            self.versions_seen.push(version);
            self.manifest.kubernetes_version = self.versions_seen.join(", ");
            self.manifest.etcd_version = etcd_versions(&self.versions_seen);
        }
        self.idle = quiet::idle_rate(&self.cluster().client, Duration::from_secs(2)).await;
        Ok(true)
    }

    /// Run `i` of `n`, once the cluster is quiet; false when interrupted.
    /// `plane_goes`: a local plane is thrown away after this run.
    async fn one(
        &mut self,
        i: usize,
        n: usize,
        run: &plan::Run,
        builds: &Builds,
        plane_goes: bool,
    ) -> Result<bool> {
        let exp = self.exp;
        let names: Vec<&str> = run
            .variants
            .iter()
            .map(|v| exp.variants[*v].name.as_str())
            .collect();
        let rep = match run.repeat {
            0 => "warm-up (discarded)".to_string(),
            k => format!("rep {k}"),
        };
        eprintln!(
            "run {}/{n}: N={} {rep} {}",
            i + 1,
            run.scale,
            names.join(" + ")
        );
        let quiet_wait = match self.idle {
            Some(idle) => {
                match until_cancelled(self.cancel, quiet::wait(&self.cluster().client, idle)).await
                {
                    Some(q) => Some(q),
                    None => return Ok(false),
                }
            }
            None => None,
        };
        if let Some(q) = quiet_wait.as_ref().filter(|q| !q.quiet) {
            eprintln!(
                "warning: the cluster did not quiet down in {:.0} s ({:.1} requests/s, idle {:.1}/s); running anyway",
                q.waited_s, q.rate_per_s, q.idle_per_s
            );
        }
        let ctx = Ctx {
            exp,
            cluster: self.cluster(),
            binaries: &builds.binaries,
            programs: &builds.programs,
            results: &self.results,
            opts: self.opts,
            cancel: self.cancel,
            placement: &self.placement,
            plane_goes,
        };
        let (result, not_cleaned) = group::run(&ctx, run, quiet_wait).await;
        self.manifest.not_cleaned.extend(not_cleaned);
        match result {
            // A warm-up is not a repeat: nothing of it is kept.
            Ok(_) if run.repeat == 0 => {
                for v in &run.variants {
                    let dir = self.results.run(run.scale, &exp.variants[*v].name, 0);
                    let _ = std::fs::remove_dir_all(&dir.path);
                }
            }
            Ok(summaries) => self.manifest.runs.extend(summaries),
            Err(e) => {
                // etcd's NOSPACE alarm stays raised: every later write fails
                // the same way, so the cause is named once, with the remedy.
                let full = format!("{e:#}").contains("database space exceeded");
                let cause = if full {
                    " (etcd is full: its NOSPACE alarm refuses every write until the plane is restarted; \
                     set [cluster] etcd_args = [\"--quota-backend-bytes=…\"] or use fewer or smaller objects)"
                } else {
                    ""
                };
                self.manifest.errors.push(format!(
                    "N={} rep {} {}: {e:#}{cause}",
                    run.scale,
                    run.repeat,
                    names.join("+")
                ));
                eprintln!("run failed: {e:#}{cause}");
            }
        }
        self.manifest.write(&self.results.manifest())?;
        Ok(!self.cancel.is_cancelled())
    }

    /// The background objects and decoys go, the manifest is finished, the plane stops
    /// (shortly after an interrupt: no long graceful shutdown).
    pub async fn close(mut self, complete: bool) -> Result<Outcome> {
        let cancelled = self.cancel.is_cancelled();
        for b in &self.background {
            if let Some(c) = &self.cluster
                && !(cancelled && c.plane.is_some())
                && let Err(e) = background::remove(&c.client, b, c.no_namespace_controller).await
            {
                self.manifest
                    .not_cleaned
                    .push(format!("namespace {}: {e:#}", b.namespace));
            }
        }
        let m = &mut self.manifest;
        m.complete = complete && !cancelled && m.errors.is_empty();
        m.finished_at = Some(now_rfc3339());
        m.harness_cpu_seconds = own_cpu_seconds();
        m.harness_peak_rss_bytes = ctrlbench_plane::process::own_peak_rss_bytes();
        m.write(&self.results.manifest())?;
        self.close_cluster().await?;
        Ok(Outcome {
            dir: self.results.path,
            complete: self.manifest.complete,
        })
    }
}

/// The workload's files next to the manifest (which holds the experiment
/// file's text): the results say what was created and when it counted as ready.
fn write_workload(exp: &Experiment, results: &ResultsDir) -> Result<()> {
    if exp.workload.is_builtin() {
        return Ok(());
    }
    let dir = results.path.join("workload");
    std::fs::create_dir_all(&dir)?;
    if exp.workload.has_crd() {
        std::fs::write(
            dir.join("crd.json"),
            serde_json::to_string_pretty(&exp.workload.crd)?,
        )?;
    }
    std::fs::write(dir.join("object-template.yaml"), &exp.workload.template)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Which runs of a two-variant, two-repeat plan end their plane.
    fn goes(fresh: &str) -> Vec<bool> {
        let text = format!(
            "name = \"t\"\nscales = [5]\nrepeats = 2\nfresh_plane = \"{fresh}\"\n\
             [[variant]]\nname = \"a\"\npreset = \"good\"\n[[variant]]\nname = \"b\"\npreset = \"good\"\n"
        );
        let exp = crate::experiment::spec::parse(std::path::Path::new("t.toml"), &text).unwrap();
        let runs = crate::experiment::plan::expand(&exp);
        (0..runs.len())
            .map(|i| plane_goes_after(&exp, &runs[i], runs.get(i + 1)))
            .collect()
    }

    #[test]
    fn a_plane_about_to_go_is_the_last_runs_or_a_fresh_planes_predecessors() {
        assert_eq!(goes("run"), [true, true, true, true]);
        assert_eq!(goes("repeat"), [false, true, false, true]);
        assert_eq!(goes("experiment"), [false, false, false, true]);
    }
}
