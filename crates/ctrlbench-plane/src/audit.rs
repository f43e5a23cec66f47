//! The apiserver's audit log, narrowed to namespaced writes: the one source
//! that names the caller of each request (the apiserver's metrics do not), so
//! a run can give server-side latency and write counts per controller even
//! when controllers share the apiserver. Metadata level (no bodies), only
//! create/update/patch, only the ResponseComplete stage; Leases, Events and
//! the system namespaces are left out (a plane's own chatter, written every
//! few seconds). Any kind is logged, so the harness selects the workload's
//! own group and resource when it reads a run's span. Written by the log
//! backend in blocking mode, so a run's events are all on disk when its last
//! request has returned.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::flags::Flags;

/// The policy: writes at Metadata level, without the plane's own chatter.
pub const POLICY: &str = "\
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted, Panic]
rules:
- level: None
  resources:
  - group: coordination.k8s.io
  - group: events.k8s.io
  - group: \"\"
    resources: [events]
- level: None
  namespaces: [kube-system, kube-public, kube-node-lease]
- level: Metadata
  verbs: [create, update, patch]
- level: None
";

/// Where a plane in `dir` keeps its policy and its log.
#[derive(Debug, Clone)]
pub struct AuditFiles {
    pub policy: PathBuf,
    pub log: PathBuf,
}

impl AuditFiles {
    pub fn in_dir(dir: &Path) -> AuditFiles {
        AuditFiles {
            policy: dir.join("audit-policy.yaml"),
            log: dir.join("audit.log"),
        }
    }

    /// Writes the policy (0600, like everything else in the plane's directory).
    pub fn write_policy(&self) -> Result<()> {
        crate::tinyca::write(&self.policy, POLICY, 0o600)
            .with_context(|| format!("cannot write {}", self.policy.display()))
    }

    /// The apiserver flags that turn the log on.
    pub fn set_flags(&self, f: &mut Flags) {
        f.set("audit-policy-file", self.policy.display().to_string());
        f.set("audit-log-path", self.log.display().to_string());
        f.set("audit-log-format", "json");
        f.set("audit-log-mode", "blocking");
        // One file for the plane's life: runs read their span by offset.
        f.set("audit-log-maxsize", "0");
    }
}
