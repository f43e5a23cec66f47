//! kube-controller-manager on loopback, optional (`--controller-manager`):
//! the namespace and garbage-collector controllers (with fake nodes, the
//! workload controllers too: deployment, replicaset, statefulset, job,
//! endpointslice), so a deleted
//! namespace is emptied and finalized, and owner references are collected,
//! the way a real cluster does it. Without it ctrlbench empties and finalizes
//! the namespaces it deletes itself (ctrlbench's run/namespace.rs).
//!
//! It authenticates as `system:kube-controller-manager` with a client
//! certificate and runs each controller under its own service account
//! (`--use-service-account-credentials`: kube-system's
//! namespace-controller and generic-garbage-collector, bound by the
//! apiserver's bootstrap RBAC), serves nothing (`--secure-port=0`) and does
//! not elect a leader (one process).

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::flags::Flags;
use crate::process::Process;

/// The controllers it runs: what namespace deletion and owner references need.
pub const CONTROLLERS: &str = "namespace-controller,garbage-collector-controller";

/// With fake nodes, also the controllers that make workloads' pods.
pub const WORKLOAD_CONTROLLERS: &str = "deployment-controller,replicaset-controller,statefulset-controller,job-controller,endpointslice-controller";

/// The service accounts those controllers run as: present once it runs them.
pub const SERVICE_ACCOUNTS: [&str; 2] = ["namespace-controller", "generic-garbage-collector"];

/// How kube-controller-manager is started.
#[derive(Debug, Clone)]
pub struct ControllerManagerConfig {
    pub bin: PathBuf,
    /// Its kubeconfig (0600): the front's URL, or the single apiserver's.
    pub kubeconfig: PathBuf,
    /// Also run [`WORKLOAD_CONTROLLERS`] (a plane with fake nodes).
    pub workloads: bool,
    pub extra_args: Vec<String>,
}

/// A running kube-controller-manager.
#[derive(Debug)]
pub struct ControllerManager {
    pub config: ControllerManagerConfig,
    pub process: Process,
}

impl ControllerManagerConfig {
    /// Its flags: the defaults, then `extra_args` replacing any of the same name.
    pub fn flags(&self) -> Result<Flags> {
        let mut f = Flags::default();
        f.set("kubeconfig", self.kubeconfig.display().to_string());
        if self.workloads {
            f.set(
                "controllers",
                format!("{CONTROLLERS},{WORKLOAD_CONTROLLERS}"),
            );
        } else {
            f.set("controllers", CONTROLLERS);
        }
        f.set("use-service-account-credentials", "true");
        f.set("leader-elect", "false");
        // No listener at all: nothing of it is reachable, even on loopback.
        f.set("secure-port", "0");
        f.set("bind-address", "127.0.0.1");
        f.apply(&self.extra_args)?;
        Ok(f)
    }
}

impl ControllerManager {
    /// Starts the process; the plane waits for its service accounts.
    pub fn start(
        config: ControllerManagerConfig,
        log: &Path,
        detached: bool,
    ) -> Result<ControllerManager> {
        let process = Process::spawn(
            "kube-controller-manager",
            &config.bin,
            &config.flags()?.to_args(),
            log,
            detached,
        )?;
        Ok(ControllerManager { config, process })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_keep_it_quiet_and_overridable() {
        let c = ControllerManagerConfig {
            bin: "kcm".into(),
            kubeconfig: "/p/kcm.kubeconfig".into(),
            workloads: false,
            extra_args: vec!["--v=2".into()],
        };
        let args = c.flags().unwrap().to_args();
        for want in [
            "--secure-port=0",
            "--leader-elect=false",
            "--kubeconfig=/p/kcm.kubeconfig",
            "--controllers=namespace-controller,garbage-collector-controller",
            "--v=2",
        ] {
            assert!(args.iter().any(|a| a == want), "{want} in {args:?}");
        }
    }
}
