//! The apiserver's audit log: the one source that names the caller of each
//! request (the apiserver's metrics do not). Metadata level (no bodies),
//! each request once it completes, a watch also when it starts. Every
//! request of every controller is kept, reads included, so a run's API
//! footprint (GETs, LISTs, watches, child objects, Events, conflicts) is its
//! controller's own even when controllers share the apiserver. Left out:
//! the plane's own components and ctrlbench's own reads (its loader, watch
//! and sampler), its Events and Leases; ctrlbench's writes stay, so a run's
//! creates and patches of the workload have their server-side times. Any
//! kind is logged, so the harness selects what it reads from a run's span.
//! Written by the log backend in blocking mode, so a run's events are all
//! on disk when its last request has returned.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::flags::Flags;

/// The policy: every controller's requests at Metadata level, without the
/// plane's own chatter or ctrlbench's reads.
pub fn policy() -> String {
    format!(
        "\
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, Panic]
rules:
- level: None
  users: [system:kube-controller-manager, system:apiserver, {scheduler}, {kwok}]
- level: None
  userGroups: [system:nodes, system:serviceaccounts:kube-system]
- level: None
  namespaces: [kube-system, kube-public, kube-node-lease]
- level: None
  users: [{admin}]
  verbs: [get, list, watch]
- level: None
  users: [{admin}]
  resources:
  - group: coordination.k8s.io
  - group: events.k8s.io
  - group: \"\"
    resources: [events]
- level: Metadata
",
        scheduler = crate::tinyca::SCHEDULER_USER,
        kwok = crate::tinyca::KWOK_USER,
        admin = crate::tinyca::ADMIN_USER,
    )
}

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
        crate::tinyca::write(&self.policy, &policy(), 0o600)
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
