//! One variant's part of a run group: its namespace and run directory, the
//! objects our watch times, the controller process and what it resolved its
//! flags to. Set up by `group`, measured by `measure`, summed up by `summary`.

use std::path::PathBuf;
use std::sync::Arc;

use ctrlbench_record::{RunDir, Settings};

use super::controller::ControllerProcess;
use super::watch::Objects;

/// One variant's part of a run.
pub struct Member {
    pub variant: usize,
    pub ns: String,
    pub dir: RunDir,
    pub objects: Arc<Objects>,
    pub process: Option<ControllerProcess>,
    /// What the controller binary resolved its flags to (`--print-settings`).
    pub settings: Option<Settings>,
    pub flags: Vec<String>,
    /// How the controller was started, to start it again the same way (faults).
    pub launch: Option<Launch>,
    /// Holds the identity's kubeconfig; removed with the member.
    pub secrets: tempfile::TempDir,
}

/// A controller's command: binary, arguments and environment (its identity's
/// kubeconfig among them).
#[derive(Clone, Debug)]
pub struct Launch {
    pub bin: PathBuf,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
}
