//! kube-apiserver on loopback, with the flags a machine without a default
//! route and without a controller-manager needs (DESIGN §5).

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::process::Process;
use super::tinyca::Certs;

/// How kube-apiserver is started.
#[derive(Debug, Clone)]
pub struct ApiServerConfig {
    pub bin: PathBuf,
    pub port: u16,
    pub etcd_url: String,
    pub certs: Certs,
    pub feature_gates: Vec<String>,
    pub extra_args: Vec<String>,
}

/// A running kube-apiserver.
#[derive(Debug)]
pub struct ApiServer {
    pub config: ApiServerConfig,
    pub process: Process,
}

impl ApiServerConfig {
    pub fn url(&self) -> String {
        format!("https://127.0.0.1:{}", self.port)
    }

    fn args(&self) -> Vec<String> {
        let c = &self.certs;
        let mut args = vec![
            "--advertise-address=127.0.0.1".to_string(),
            "--bind-address=127.0.0.1".to_string(),
            format!("--secure-port={}", self.port),
            format!("--etcd-servers={}", self.etcd_url),
            format!("--tls-cert-file={}", c.serving_cert.display()),
            format!("--tls-private-key-file={}", c.serving_key.display()),
            format!("--client-ca-file={}", c.ca_cert.display()),
            format!("--service-account-key-file={}", c.sa_public.display()),
            format!(
                "--service-account-signing-key-file={}",
                c.sa_private.display()
            ),
            format!("--service-account-issuer={}", self.url()),
            "--authorization-mode=RBAC".to_string(),
            "--anonymous-auth=false".to_string(),
            "--service-cluster-ip-range=10.0.0.0/24".to_string(),
            // No controller-manager mints service-account tokens here: identities
            // get theirs from the TokenRequest API.
            "--disable-admission-plugins=ServiceAccount".to_string(),
            "--endpoint-reconciler-type=none".to_string(),
        ];
        if !self.feature_gates.is_empty() {
            args.push(format!("--feature-gates={}", self.feature_gates.join(",")));
        }
        args.extend(self.extra_args.iter().cloned());
        args
    }
}

impl ApiServer {
    /// Starts the process; the plane waits for `/readyz`.
    pub fn start(config: ApiServerConfig, log: &Path, detached: bool) -> Result<ApiServer> {
        let process = Process::spawn("kube-apiserver", &config.bin, &config.args(), log, detached)?;
        Ok(ApiServer { config, process })
    }

    pub fn stop(&mut self) {
        self.process.stop(super::process::STOP_TIMEOUT);
    }
}
