//! kube-apiserver on loopback, with the flags a machine without a default
//! route and without a controller-manager needs (docs/architecture.md#local-plane-configuration).

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::flags::Flags;
use crate::process::Process;
use crate::tinyca::Certs;

/// How kube-apiserver is started.
#[derive(Debug, Clone)]
pub struct ApiServerConfig {
    pub bin: PathBuf,
    pub port: u16,
    /// Every etcd member's client URL, comma-separated.
    pub etcd_url: String,
    /// Its own serving pair in `serving_cert`/`serving_key` (see `Certs::for_apiserver`).
    pub certs: Certs,
    /// `--service-account-issuer`: one for every apiserver of a plane, so a
    /// token one issues the others accept (None: this apiserver's URL).
    pub issuer: Option<String>,
    pub feature_gates: Vec<String>,
    pub extra_args: Vec<String>,
    /// The audit log of writes, when on.
    pub audit: Option<crate::audit::AuditFiles>,
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

    /// kube-apiserver's flags: the defaults, then `extra_args` replacing any of the same name.
    pub fn flags(&self) -> Result<Flags> {
        let c = &self.certs;
        let path = |p: &Path| p.display().to_string();
        let mut f = Flags::default();
        f.set("advertise-address", "127.0.0.1");
        f.set("bind-address", "127.0.0.1");
        f.set("secure-port", self.port.to_string());
        f.set("etcd-servers", &self.etcd_url);
        f.set("etcd-cafile", path(&c.ca_cert));
        f.set("etcd-certfile", path(&c.etcd_client_cert));
        f.set("etcd-keyfile", path(&c.etcd_client_key));
        f.set("tls-cert-file", path(&c.serving_cert));
        f.set("tls-private-key-file", path(&c.serving_key));
        f.set("client-ca-file", path(&c.ca_cert));
        f.set("service-account-key-file", path(&c.sa_public));
        f.set("service-account-signing-key-file", path(&c.sa_private));
        f.set(
            "service-account-issuer",
            self.issuer.clone().unwrap_or_else(|| self.url()),
        );
        f.set("authorization-mode", "RBAC");
        f.set("anonymous-auth", "false");
        f.set("service-cluster-ip-range", "10.0.0.0/24");
        // No controller-manager mints service-account tokens here: identities
        // get theirs from the TokenRequest API.
        f.set("disable-admission-plugins", "ServiceAccount");
        f.set("endpoint-reconciler-type", "none");
        if !self.feature_gates.is_empty() {
            f.set("feature-gates", self.feature_gates.join(","));
        }
        if let Some(a) = &self.audit {
            a.set_flags(&mut f);
        }
        f.apply(&self.extra_args)?;
        Ok(f)
    }
}

impl ApiServer {
    /// Starts the process; the plane waits for `/readyz`.
    pub fn start(config: ApiServerConfig, log: &Path, detached: bool) -> Result<ApiServer> {
        let process = Process::spawn(
            "kube-apiserver",
            &config.bin,
            &config.flags()?.to_args(),
            log,
            detached,
        )?;
        Ok(ApiServer { config, process })
    }

    pub fn stop(&mut self) {
        self.process.stop(super::process::STOP_TIMEOUT);
    }
}
