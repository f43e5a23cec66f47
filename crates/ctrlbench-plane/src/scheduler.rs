//! kube-scheduler on loopback, for a plane with fake nodes (`--nodes`): it
//! binds the pods of workload controllers to the KWOK nodes, the way a real
//! cluster's scheduler does, so a pod gets a node name and KWOK can make it
//! Running.
//!
//! It authenticates as `system:kube-scheduler` with a client certificate
//! (the apiserver's bootstrap RBAC binds that role), serves its secure port
//! on 127.0.0.1 only, with a self-signed certificate kept in the plane
//! directory, and does not elect a leader (one process).

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::flags::Flags;
use crate::process::Process;

/// How kube-scheduler is started.
#[derive(Debug, Clone)]
pub struct SchedulerConfig {
    pub bin: PathBuf,
    /// Its kubeconfig (0600), also for delegated authentication and
    /// authorization of its secure port.
    pub kubeconfig: PathBuf,
    /// Its secure port on 127.0.0.1 (healthz, metrics).
    pub port: u16,
    /// Where it writes its self-signed serving certificate.
    pub cert_dir: PathBuf,
    pub extra_args: Vec<String>,
}

impl SchedulerConfig {
    /// Its flags: the defaults, then `extra_args` replacing any of the same name.
    pub fn flags(&self) -> Result<Flags> {
        let kubeconfig = self.kubeconfig.display().to_string();
        let mut f = Flags::default();
        f.set("kubeconfig", kubeconfig.clone());
        f.set("authentication-kubeconfig", kubeconfig.clone());
        f.set("authorization-kubeconfig", kubeconfig);
        f.set("leader-elect", "false");
        f.set("bind-address", "127.0.0.1");
        f.set("secure-port", self.port.to_string());
        f.set("cert-dir", self.cert_dir.display().to_string());
        f.apply(&self.extra_args)?;
        Ok(f)
    }

    /// Starts the process.
    pub fn start(&self, log: &Path, detached: bool) -> Result<Process> {
        Process::spawn(
            "kube-scheduler",
            &self.bin,
            &self.flags()?.to_args(),
            log,
            detached,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_stay_on_loopback_without_election() {
        let c = SchedulerConfig {
            bin: "ks".into(),
            kubeconfig: "/p/ks.kubeconfig".into(),
            port: 4321,
            cert_dir: "/p/ks".into(),
            extra_args: vec![],
        };
        let args = c.flags().unwrap().to_args();
        for want in [
            "--bind-address=127.0.0.1",
            "--secure-port=4321",
            "--leader-elect=false",
            "--kubeconfig=/p/ks.kubeconfig",
            "--cert-dir=/p/ks",
        ] {
            assert!(args.iter().any(|a| a == want), "{want} in {args:?}");
        }
    }
}
