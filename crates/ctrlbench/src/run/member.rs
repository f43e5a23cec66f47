//! One variant's part of a run group: its namespace and run directory, the
//! objects our watch times, the controller process and what it resolved its
//! flags to. Set up by `group`, measured by `measure`, summed up by `summary`.

use std::sync::Arc;

use ctrlbench_record::{RunDir, Settings};

use super::controller::ControllerProcess;
use super::watch::Objects;

/// One variant's part of a run.
pub struct Member {
    pub variant: usize,
    pub ns: String,
    /// False for an external controller's namespace that existed before the
    /// run: only this run's objects are deleted from it, never the namespace.
    pub owns_namespace: bool,
    /// Labels this run's objects (`{{run}}`); unique per run.
    pub run_id: String,
    /// Where the controller's metrics are scraped (None: not scraped).
    pub metrics_url: Option<String>,
    /// Cluster-wide grants of the controller's identity, one line each.
    pub cluster_grants: Vec<String>,
    pub dir: RunDir,
    pub objects: Arc<Objects>,
    pub process: Option<ControllerProcess>,
    /// What the controller binary resolved its flags to (`--print-settings`).
    pub settings: Option<Settings>,
    pub flags: Vec<String>,
    /// Holds the identity's kubeconfig; removed with the member.
    pub secrets: tempfile::TempDir,
}
