//! One variant's part of a run group: its namespace and run directory, the
//! objects our watch times, the controller's replicas (one process each, or
//! one unstarted entry for an external controller) and what it resolved its
//! flags to. Set up by `group`, measured by `measure`, summed up by `summary`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use ctrlbench_record::{RunDir, Settings};

use super::controller::{ControllerProcess, Program};
use super::objects::Objects;

/// One variant's part of a run.
pub struct Member {
    pub variant: usize,
    pub ns: String,
    /// False for an external controller's namespace that existed before the
    /// run: only this run's objects are deleted from it, never the namespace.
    pub owns_namespace: bool,
    /// Labels this run's objects (`{{run}}`); unique per run.
    pub run_id: String,
    /// Cluster-wide grants of the controller's identity, one line each.
    pub cluster_grants: Vec<String>,
    pub dir: RunDir,
    pub objects: Arc<Objects>,
    /// The controller's replicas (at least one).
    pub replicas: Vec<Replica>,
    /// The controller is still to start (start = "after-load": once the
    /// load is done), every replica with its `launch`.
    pub pending: bool,
    /// When the controller's replicas were started.
    pub started_at: Option<Instant>,
    /// What the controller binary resolved its flags to (`--print-settings`).
    pub settings: Option<Settings>,
    pub flags: Vec<String>,
    /// Holds the identity's kubeconfig; removed with the member.
    pub secrets: tempfile::TempDir,
    /// The audit log's length before this group's controllers started (a
    /// local plane with the log on): their start-up lists and watches are
    /// part of their footprint.
    pub audit_from: Option<u64>,
}

/// One process of a variant's controller.
#[derive(Default)]
pub struct Replica {
    /// How it is started, and started again the same way (faults); None:
    /// an external controller, which ctrlbench does not start.
    pub launch: Option<Launch>,
    pub process: Option<ControllerProcess>,
    /// Where its metrics are scraped (None: not scraped).
    pub metrics_url: Option<String>,
}

/// A controller's command: binary, arguments and environment (its identity's
/// kubeconfig among them).
#[derive(Clone, Debug)]
pub struct Launch {
    pub bin: PathBuf,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    /// The CPUs it runs on (placement, controller_cpus); None: all.
    pub cpus: Option<Vec<usize>>,
    /// Its CPU quota in millicores (cpu_limit); None: unlimited.
    pub cpu_limit: Option<u32>,
    pub kind: LaunchKind,
}

impl Replica {
    /// Where its CPU profile is fetched from, if it is profiled: ours on
    /// their metrics address (`--pprof`), a command at its `pprof` URL.
    pub fn pprof_url(&self, own_profiled: bool) -> Option<String> {
        match &self.launch.as_ref()?.kind {
            LaunchKind::Own if own_profiled => self
                .metrics_url
                .as_deref()
                .and_then(|u| u.strip_suffix("/metrics"))
                .map(|base| format!("{base}/debug/pprof/profile")),
            LaunchKind::Own => None,
            LaunchKind::Command { pprof_url, .. } => pprof_url.clone(),
        }
    }
}

/// Whose controller: ours prints its metrics address; a user's command
/// has the metrics URL its variant names (or none).
#[derive(Clone, Debug)]
pub enum LaunchKind {
    Own,
    Command {
        metrics_url: Option<String>,
        /// Its `pprof` URL, `{port}` replaced.
        pprof_url: Option<String>,
    },
}

/// How long a command's metrics URL gets to answer after its start.
pub const COMMAND_METRICS_WAIT: Duration = Duration::from_secs(20);
/// How long our controllers get to print their metrics address.
pub const OWN_START_WAIT: Duration = Duration::from_secs(30);

impl Launch {
    /// Starts the process, appending to `log` when it starts `again` (a
    /// restart fault); returns it with its metrics URL.
    pub async fn spawn(
        &self,
        log: &std::path::Path,
        again: bool,
    ) -> Result<(ControllerProcess, Option<String>)> {
        let program = Program {
            bin: &self.bin,
            args: &self.args,
            env: &self.env,
            cpus: self.cpus.as_deref(),
            cpu_limit: self.cpu_limit,
        };
        match &self.kind {
            LaunchKind::Own => {
                let p = ControllerProcess::start(&program, log, again, OWN_START_WAIT).await?;
                let url = format!("http://{}/metrics", p.metrics_addr);
                Ok((p, Some(url)))
            }
            LaunchKind::Command { metrics_url, .. } => {
                let p = ControllerProcess::start_command(
                    &program,
                    log,
                    again,
                    metrics_url.as_deref(),
                    COMMAND_METRICS_WAIT,
                )
                .await?;
                Ok((p, metrics_url.clone()))
            }
        }
    }
}

impl Member {
    /// Starts the pending controller's replicas at once (no-op without
    /// any); waits for each one's metrics address.
    pub async fn start_controller(&mut self) -> Result<()> {
        if !std::mem::take(&mut self.pending) {
            return Ok(());
        }
        self.started_at = Some(Instant::now());
        let dir = &self.dir;
        let started =
            futures::future::join_all(self.replicas.iter().enumerate().map(|(k, r)| async move {
                match &r.launch {
                    Some(l) => Some(l.spawn(&dir.replica_log(k), false).await),
                    None => None,
                }
            }))
            .await;
        let mut first_error = None;
        for (r, s) in self.replicas.iter_mut().zip(started) {
            match s {
                Some(Ok((process, url))) => {
                    r.metrics_url = url;
                    r.process = Some(process);
                }
                Some(Err(e)) => {
                    first_error.get_or_insert(e);
                }
                None => {}
            }
        }
        // Any replica that did not start fails the run; the others are
        // stopped by the group's teardown.
        first_error.map_or(Ok(()), Err)
    }

    /// The replicas' metrics URLs (None: that replica is not scraped).
    pub fn metrics_urls(&self) -> Vec<Option<String>> {
        self.replicas
            .iter()
            .map(|r| r.metrics_url.clone())
            .collect()
    }

    /// Whether any replica has metrics.
    pub fn has_metrics(&self) -> bool {
        self.replicas.iter().any(|r| r.metrics_url.is_some())
    }
}
