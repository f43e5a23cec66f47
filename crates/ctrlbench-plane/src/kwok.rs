//! KWOK on loopback, for a plane with fake nodes (`--nodes`): it plays the
//! kubelet of every Node annotated `kwok.x-k8s.io/node=fake` (and of no
//! other), keeping the node Ready and moving the pods bound to it through
//! the default stages (pod-ready: Running and Ready; pod-complete;
//! pod-delete), so workload controllers see their pods run without a
//! container runtime.
//!
//! It authenticates as `kwok-controller` with a client certificate (bound
//! by the plane to KWOK's own cluster role, see `nodes`) and serves its HTTP
//! endpoints (metrics, healthz) on 127.0.0.1 only.

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::flags::Flags;
use crate::process::Process;

/// The KWOK release built.
pub const KWOK_VERSION: &str = "v0.8.0";

/// The annotation that puts a Node under KWOK.
pub const NODE_ANNOTATION: (&str, &str) = ("kwok.x-k8s.io/node", "fake");

/// The kwok binary and its stages file (`kwok_build` makes both).
#[derive(Debug, Clone)]
pub struct Kwok {
    pub bin: PathBuf,
    pub stages: PathBuf,
}

/// How kwok is started.
#[derive(Debug, Clone)]
pub struct KwokConfig {
    pub bin: PathBuf,
    /// Its stages (`--config`), from the install.
    pub stages: PathBuf,
    /// Its kubeconfig (0600).
    pub kubeconfig: PathBuf,
    /// Its server's port on 127.0.0.1.
    pub port: u16,
    pub extra_args: Vec<String>,
}

impl KwokConfig {
    /// Its flags: the defaults, then `extra_args` replacing any of the same name.
    pub fn flags(&self) -> Result<Flags> {
        let mut f = Flags::default();
        f.set("kubeconfig", self.kubeconfig.display().to_string());
        f.set("config", self.stages.display().to_string());
        f.set("manage-all-nodes", "false");
        f.set(
            "manage-nodes-with-annotation-selector",
            format!("{}={}", NODE_ANNOTATION.0, NODE_ANNOTATION.1),
        );
        f.set("server-address", format!("127.0.0.1:{}", self.port));
        f.set("node-ip", "127.0.0.1");
        f.apply(&self.extra_args)?;
        Ok(f)
    }

    /// Starts the process.
    pub fn start(&self, log: &Path, detached: bool) -> Result<Process> {
        Process::spawn("kwok", &self.bin, &self.flags()?.to_args(), log, detached)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_manage_only_annotated_nodes_on_loopback() {
        let c = KwokConfig {
            bin: "kwok".into(),
            stages: "/c/stages.yaml".into(),
            kubeconfig: "/p/kwok.kubeconfig".into(),
            port: 5432,
            extra_args: vec![],
        };
        let args = c.flags().unwrap().to_args();
        for want in [
            "--manage-all-nodes=false",
            "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
            "--server-address=127.0.0.1:5432",
            "--config=/c/stages.yaml",
        ] {
            assert!(args.iter().any(|a| a == want), "{want} in {args:?}");
        }
    }
}
