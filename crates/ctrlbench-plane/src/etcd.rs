//! etcd on loopback: one member per process, client, peer and metrics URLs
//! on free 127.0.0.1 ports; an HA plane starts several that name each other
//! in `--initial-cluster`. A member restarts with the same flags and data
//! directory (etcd then ignores the initial-cluster flags and rejoins). Client and peer traffic is TLS from the plane's CA and
//! requires a client certificate; the metrics listener (metrics and health
//! only, no data) stays plain HTTP on 127.0.0.1. fsync stays on unless
//! asked: the disk is part of what a benchmark measures (envtest turns it
//! off; we make that a choice).

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::flags::Flags;
use crate::process::Process;

/// How etcd is started.
#[derive(Debug, Clone)]
pub struct EtcdConfig {
    pub bin: PathBuf,
    /// The member's name (`ctrlbench` for a single member, `etcd-<k>` in a cluster).
    pub name: String,
    /// Every member as `name=peer URL`, comma-separated (`--initial-cluster`);
    /// empty: this member alone.
    pub initial_cluster: String,
    pub data_dir: PathBuf,
    pub client_port: u16,
    pub peer_port: u16,
    pub metrics_port: u16,
    pub fsync: bool,
    /// CA, serving/peer certificate and key (PEM files).
    pub tls: EtcdTls,
    pub extra_args: Vec<String>,
}

/// etcd's TLS files.
#[derive(Debug, Clone)]
pub struct EtcdTls {
    pub ca: PathBuf,
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// A running etcd.
#[derive(Debug)]
pub struct Etcd {
    pub config: EtcdConfig,
    pub process: Process,
}

impl EtcdConfig {
    pub fn client_url(&self) -> String {
        format!("https://127.0.0.1:{}", self.client_port)
    }

    pub fn peer_url(&self) -> String {
        format!("https://127.0.0.1:{}", self.peer_port)
    }

    pub fn metrics_url(&self) -> String {
        format!("http://127.0.0.1:{}/metrics", self.metrics_port)
    }

    /// etcd's flags: the defaults, then `extra_args` replacing any of the same name.
    pub fn flags(&self) -> Result<Flags> {
        let peer = self.peer_url();
        let path = |p: &Path| p.display().to_string();
        let mut f = Flags::default();
        f.set("name", &self.name);
        f.set("data-dir", self.data_dir.display().to_string());
        f.set("listen-client-urls", self.client_url());
        f.set("advertise-client-urls", self.client_url());
        f.set("listen-peer-urls", &peer);
        f.set("initial-advertise-peer-urls", &peer);
        if self.initial_cluster.is_empty() {
            f.set("initial-cluster", format!("{}={peer}", self.name));
        } else {
            f.set("initial-cluster", &self.initial_cluster);
            f.set("initial-cluster-token", "ctrlbench");
        }
        f.set(
            "listen-metrics-urls",
            format!("http://127.0.0.1:{}", self.metrics_port),
        );
        f.set("cert-file", path(&self.tls.cert));
        f.set("key-file", path(&self.tls.key));
        f.set("trusted-ca-file", path(&self.tls.ca));
        f.set("client-cert-auth", "true");
        f.set("peer-cert-file", path(&self.tls.cert));
        f.set("peer-key-file", path(&self.tls.key));
        f.set("peer-trusted-ca-file", path(&self.tls.ca));
        f.set("peer-client-cert-auth", "true");
        f.set("log-level", "warn");
        if !self.fsync {
            f.set("unsafe-no-fsync", "true");
        }
        f.apply(&self.extra_args)?;
        Ok(f)
    }
}

impl Etcd {
    /// Starts etcd; readiness is observed through the apiserver's `/readyz`.
    pub fn start(config: EtcdConfig, log: &Path, detached: bool) -> Result<Etcd> {
        std::fs::create_dir_all(&config.data_dir)?;
        // 0700, as etcd wants its data directory.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&config.data_dir, std::fs::Permissions::from_mode(0o700))?;
        let process = Process::spawn(
            "etcd",
            &config.bin,
            &config.flags()?.to_args(),
            log,
            detached,
        )?;
        Ok(Etcd { config, process })
    }

    pub fn stop(&mut self) {
        self.process.stop(super::process::STOP_TIMEOUT);
    }
}
