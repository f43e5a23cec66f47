//! etcd on loopback: one member, client, peer and metrics URLs on free
//! 127.0.0.1 ports. fsync stays on unless asked: the disk is part of what a
//! benchmark measures (envtest turns it off; we make that a choice).

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::process::Process;

/// How etcd is started.
#[derive(Debug, Clone)]
pub struct EtcdConfig {
    pub bin: PathBuf,
    pub data_dir: PathBuf,
    pub client_port: u16,
    pub peer_port: u16,
    pub metrics_port: u16,
    pub fsync: bool,
    pub extra_args: Vec<String>,
}

/// A running etcd.
#[derive(Debug)]
pub struct Etcd {
    pub config: EtcdConfig,
    pub process: Process,
}

impl EtcdConfig {
    pub fn client_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.client_port)
    }

    pub fn metrics_url(&self) -> String {
        format!("http://127.0.0.1:{}/metrics", self.metrics_port)
    }

    fn args(&self) -> Vec<String> {
        let peer = format!("http://127.0.0.1:{}", self.peer_port);
        let mut args = vec![
            "--name=ctrlbench".to_string(),
            format!("--data-dir={}", self.data_dir.display()),
            format!("--listen-client-urls={}", self.client_url()),
            format!("--advertise-client-urls={}", self.client_url()),
            format!("--listen-peer-urls={peer}"),
            format!("--initial-advertise-peer-urls={peer}"),
            format!("--initial-cluster=ctrlbench={peer}"),
            format!(
                "--listen-metrics-urls=http://127.0.0.1:{}",
                self.metrics_port
            ),
            "--log-level=warn".to_string(),
        ];
        if !self.fsync {
            args.push("--unsafe-no-fsync=true".to_string());
        }
        args.extend(self.extra_args.iter().cloned());
        args
    }
}

impl Etcd {
    /// Starts etcd; readiness is observed through the apiserver's `/readyz`.
    pub fn start(config: EtcdConfig, log: &Path, detached: bool) -> Result<Etcd> {
        std::fs::create_dir_all(&config.data_dir)?;
        let process = Process::spawn("etcd", &config.bin, &config.args(), log, detached)?;
        Ok(Etcd { config, process })
    }

    pub fn stop(&mut self) {
        self.process.stop(super::process::STOP_TIMEOUT);
    }
}
