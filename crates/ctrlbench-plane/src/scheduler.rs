//! kube-scheduler on loopback, for a plane with fake nodes (`--nodes`): it
//! binds the pods of workload controllers to the KWOK nodes, the way a real
//! cluster's scheduler does, so a pod gets a node name and KWOK can make it
//! Running.
//!
//! It authenticates as `system:kube-scheduler` with a client certificate
//! (the apiserver's bootstrap RBAC binds that role), serves its secure port
//! on 127.0.0.1 only, with a self-signed certificate kept in the plane
//! directory, and does not elect a leader (one process). Without the
//! default spreading it reads a configuration file of its own, written
//! beside its certificate directory, which then also holds its client
//! settings (the flags for them are ignored once a file is given).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::flags::Flags;
use crate::options::ClientLimits;
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
    /// Its client's requests a second and burst.
    pub client: ClientLimits,
    /// No PodTopologySpread default constraints: upstream's defaults spread
    /// each ReplicaSet's pods over hosts and zones, and scoring them counts
    /// every pod on every scored node, for each pod scheduled.
    pub without_default_spread: bool,
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
        f.set("kube-api-qps", self.client.qps.to_string());
        f.set("kube-api-burst", self.client.burst.to_string());
        if self.without_default_spread {
            f.set("config", self.config_path().display().to_string());
        }
        f.apply(&self.extra_args)?;
        Ok(f)
    }

    /// The configuration file, when there is one.
    fn config_path(&self) -> PathBuf {
        self.cert_dir.with_extension("yaml")
    }

    /// The configuration file's text: the same client and election as the
    /// flags say, and PodTopologySpread with no default constraints.
    pub fn config_yaml(&self) -> String {
        // A JSON string is a YAML string: the path needs no other quoting.
        let kubeconfig = serde_json::Value::from(self.kubeconfig.display().to_string());
        format!(
            "apiVersion: kubescheduler.config.k8s.io/v1\n\
             kind: KubeSchedulerConfiguration\n\
             clientConnection:\n  kubeconfig: {kubeconfig}\n  qps: {}\n  burst: {}\n\
             leaderElection:\n  leaderElect: false\n\
             profiles:\n\
             - schedulerName: default-scheduler\n  pluginConfig:\n\
             \x20 - name: PodTopologySpread\n    args:\n      defaultingType: List\n      defaultConstraints: []\n",
            self.client.qps, self.client.burst
        )
    }

    /// Starts the process.
    pub fn start(&self, log: &Path, detached: bool) -> Result<Process> {
        if self.without_default_spread {
            let path = self.config_path();
            std::fs::write(&path, self.config_yaml())
                .with_context(|| format!("writing {}", path.display()))?;
        }
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

    /// A scheduler on port 4321 of `/p`, its client at 300 qps, burst 600.
    fn config(without_default_spread: bool) -> SchedulerConfig {
        SchedulerConfig {
            bin: "ks".into(),
            kubeconfig: "/p/ks.kubeconfig".into(),
            port: 4321,
            cert_dir: "/p/ks".into(),
            client: ClientLimits {
                qps: 300,
                burst: 600,
            },
            without_default_spread,
            extra_args: vec![],
        }
    }

    #[test]
    fn flags_stay_on_loopback_without_election() {
        let c = config(false);
        let args = c.flags().unwrap().to_args();
        for want in [
            "--bind-address=127.0.0.1",
            "--secure-port=4321",
            "--leader-elect=false",
            "--kubeconfig=/p/ks.kubeconfig",
            "--cert-dir=/p/ks",
            "--kube-api-qps=300",
            "--kube-api-burst=600",
        ] {
            assert!(args.iter().any(|a| a == want), "{want} in {args:?}");
        }
        assert!(!args.iter().any(|a| a.starts_with("--config")), "{args:?}");
    }

    /// Without the default spreading, a file beside the certificates holds
    /// what the flags say (a file makes kube-scheduler ignore them) and a
    /// PodTopologySpread with no default constraints.
    #[test]
    fn without_default_spread_a_config_file_says_it_all() {
        let c = config(true);
        let args = c.flags().unwrap().to_args();
        assert!(args.iter().any(|a| a == "--config=/p/ks.yaml"), "{args:?}");
        let want = "apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: \"/p/ks.kubeconfig\"
  qps: 300
  burst: 600
leaderElection:
  leaderElect: false
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: PodTopologySpread
    args:
      defaultingType: List
      defaultConstraints: []
";
        assert_eq!(c.config_yaml(), want);
    }
}
