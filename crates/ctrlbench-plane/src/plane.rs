//! A control plane: etcd + kube-apiserver with their own CA, the Widget CRD
//! installed, an admin kubeconfig written. Start it, use it, drop it.
//!
//! In-process planes (tests, `ctrlbench run`) live in a temporary directory
//! and stop when dropped; `cluster up` starts a detached plane in a named
//! directory and records it (see `state`).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, Patch, PatchParams};
use kube::config::Kubeconfig;
use kube::core::CustomResourceExt;
use kube::runtime::wait::{await_condition, conditions};
use widget_api::Widget;

use super::apiserver::{ApiServer, ApiServerConfig};
use super::audit::AuditFiles;
use super::binaries::{self, Binaries};
use super::etcd::{Etcd, EtcdConfig, EtcdTls};
use super::kubeconfig::{self, Credentials};
use super::tinyca;

/// What a plane is started with.
#[derive(Debug, Clone)]
pub struct PlaneOptions {
    pub k8s_version: String,
    pub feature_gates: Vec<String>,
    pub apiserver_args: Vec<String>,
    pub etcd_args: Vec<String>,
    pub etcd_fsync: bool,
    /// The apiserver's audit log of widget writes (per-caller server-side
    /// figures; see `audit`).
    pub audit_log: bool,
    pub install_crd: bool,
    pub startup_timeout: Duration,
}

impl Default for PlaneOptions {
    fn default() -> Self {
        PlaneOptions {
            k8s_version: binaries::DEFAULT_K8S_VERSION.to_string(),
            feature_gates: vec![],
            apiserver_args: vec![],
            etcd_args: vec![],
            etcd_fsync: true,
            audit_log: false,
            install_crd: true,
            startup_timeout: Duration::from_secs(90),
        }
    }
}

/// A running control plane.
pub struct ControlPlane {
    pub dir: PathBuf,
    pub etcd: Etcd,
    pub apiserver: ApiServer,
    pub kubeconfig: Kubeconfig,
    pub kubeconfig_path: PathBuf,
    /// `gitVersion` the apiserver reports.
    pub version: String,
    /// From spawning etcd to the first `ok` from `/readyz`.
    pub ready_after: Duration,
    released: bool,
}

impl ControlPlane {
    /// The audit log of widget writes, when the plane keeps one.
    pub fn audit_log(&self) -> Option<&Path> {
        self.apiserver
            .config
            .audit
            .as_ref()
            .map(|a| a.log.as_path())
    }

    /// Starts an attached plane in a fresh temporary directory, building the
    /// binaries first if needed.
    pub async fn start(opts: &PlaneOptions) -> Result<ControlPlane> {
        let bins = install_blocking(&opts.k8s_version).await?;
        let dir = tempfile::Builder::new()
            .prefix(TEMP_PREFIX)
            .tempdir()?
            .keep();
        // Who owns it: a later command removes it if this process dies unseen.
        Owner::me().write(&dir)?;
        ControlPlane::start_in(opts, &bins, dir, false).await
    }

    /// Starts a plane whose files live in `dir`. On any failure both processes
    /// are stopped and `dir` is removed.
    pub async fn start_in(
        opts: &PlaneOptions,
        bins: &Binaries,
        dir: PathBuf,
        detached: bool,
    ) -> Result<ControlPlane> {
        let mut guard = DirGuard(Some(dir.clone()));
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let (certs, pems) = tinyca::generate(&dir.join("pki"))?;
        let [client_port, peer_port, metrics_port, api_port] = free_ports()?;

        let started = Instant::now();
        let etcd = Etcd::start(
            EtcdConfig {
                bin: bins.etcd.clone(),
                data_dir: dir.join("etcd"),
                client_port,
                peer_port,
                metrics_port,
                fsync: opts.etcd_fsync,
                tls: EtcdTls {
                    ca: certs.ca_cert.clone(),
                    cert: certs.etcd_cert.clone(),
                    key: certs.etcd_key.clone(),
                },
                extra_args: opts.etcd_args.clone(),
            },
            &dir.join("etcd.log"),
            detached,
        )?;
        let audit = if opts.audit_log {
            let a = AuditFiles::in_dir(&dir);
            a.write_policy()?;
            Some(a)
        } else {
            None
        };
        let apiserver = ApiServer::start(
            ApiServerConfig {
                bin: bins.kube_apiserver.clone(),
                port: api_port,
                etcd_url: etcd.config.client_url(),
                certs,
                feature_gates: opts.feature_gates.clone(),
                extra_args: opts.apiserver_args.clone(),
                audit,
            },
            &dir.join("kube-apiserver.log"),
            detached,
        )?;
        let kc = kubeconfig::build(
            "ctrlbench",
            &apiserver.config.url(),
            &pems.ca_cert,
            Credentials::Cert {
                cert: &pems.admin_cert,
                key: &pems.admin_key,
            },
            None,
        );
        let kubeconfig_path = dir.join("kubeconfig");
        kubeconfig::write(&kubeconfig_path, &kc)?;

        let mut plane = ControlPlane {
            dir,
            etcd,
            apiserver,
            kubeconfig: kc,
            kubeconfig_path,
            version: String::new(),
            ready_after: Duration::ZERO,
            released: false,
        };
        // From here on, dropping `plane` stops the processes and removes the directory.
        guard.0 = None;
        let client = plane.client().await?;
        plane
            .wait_ready(&client, started, opts.startup_timeout)
            .await?;
        plane.ready_after = started.elapsed();
        plane.version = client.apiserver_version().await?.git_version;
        if opts.install_crd {
            install_crd(&client).await?;
        }
        Ok(plane)
    }

    /// A new admin client (one per tokio runtime: a client is bound to the
    /// runtime it was made on).
    pub async fn client(&self) -> Result<kube::Client> {
        kubeconfig::client(&self.kubeconfig).await
    }

    pub fn url(&self) -> String {
        self.apiserver.config.url()
    }

    /// Lets the processes and directory outlive this handle (`cluster up`).
    pub fn detach(mut self) {
        self.etcd.process.release();
        self.apiserver.process.release();
        self.released = true;
    }

    /// Stops the apiserver, then etcd, then removes the directory.
    pub fn stop(self) {
        drop(self)
    }

    /// Like `stop`, but each process gets only `grace` after SIGTERM: for a
    /// plane thrown away on an interrupt (a loaded apiserver can take several
    /// seconds to shut down gracefully, and its data is deleted anyway).
    pub fn stop_within(mut self, grace: Duration) {
        self.apiserver.process.stop(grace);
        self.etcd.process.stop(grace);
    }

    async fn wait_ready(
        &mut self,
        client: &kube::Client,
        started: Instant,
        timeout: Duration,
    ) -> Result<()> {
        let mut last_err;
        loop {
            if !self.etcd.process.is_running() {
                bail!(
                    "etcd exited during start-up: {}",
                    self.etcd.process.log_summary()
                );
            }
            if !self.apiserver.process.is_running() {
                bail!(
                    "kube-apiserver exited during start-up: {}",
                    self.apiserver.process.log_summary()
                );
            }
            let req = http::Request::get("/readyz").body(Vec::new())?;
            match tokio::time::timeout(Duration::from_secs(5), client.request_text(req)).await {
                Ok(Ok(body)) if body.trim() == "ok" => return Ok(()),
                Ok(Ok(body)) => last_err = body,
                Ok(Err(e)) => last_err = e.to_string(),
                Err(_) => last_err = "timed out".into(),
            }
            if started.elapsed() > timeout {
                bail!(
                    "kube-apiserver not ready after {timeout:?}: {last_err} (last log line: {})",
                    self.apiserver.process.log_summary()
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for ControlPlane {
    fn drop(&mut self) {
        if self.released {
            return;
        }
        self.apiserver.stop();
        self.etcd.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Temporary plane directories: `$TMPDIR/ctrlbench-plane-*`.
const TEMP_PREFIX: &str = "ctrlbench-plane-";

/// The process that owns a temporary plane directory (`owner.json`).
#[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
struct Owner {
    pid: u32,
    start_time: u64,
    boot_id: String,
}

impl Owner {
    fn me() -> Owner {
        let pid = std::process::id();
        Owner {
            pid,
            start_time: crate::process::start_time(pid).unwrap_or(0),
            boot_id: boot_id(),
        }
    }

    fn write(&self, dir: &Path) -> Result<()> {
        crate::tinyca::write(
            &dir.join("owner.json"),
            &serde_json::to_string(self)?,
            0o600,
        )
    }

    /// Gone: another boot, or no process with that pid and start time.
    fn gone(&self) -> bool {
        self.boot_id != boot_id() || !crate::process::is_alive(self.pid, self.start_time)
    }
}

/// This boot's id (`/proc/sys/kernel/random/boot_id`).
pub fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// Removes temporary plane directories whose owner is gone (a `ctrlbench`
/// killed with SIGKILL cannot clean up; its etcd and kube-apiserver died with
/// it by the parent-death signal). Returns what was removed.
pub fn sweep_orphans() -> Vec<PathBuf> {
    let mut removed = Vec::new();
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return removed;
    };
    for e in entries.flatten() {
        let path = e.path();
        let ours = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with(TEMP_PREFIX));
        if !ours || !path.is_dir() {
            continue;
        }
        let owner: Option<Owner> = std::fs::read_to_string(path.join("owner.json"))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok());
        if owner.is_some_and(|o| o.gone()) && std::fs::remove_dir_all(&path).is_ok() {
            removed.push(path);
        }
    }
    removed
}

/// Removes a directory unless the plane took ownership of it.
struct DirGuard(Option<PathBuf>);

impl Drop for DirGuard {
    fn drop(&mut self) {
        if let Some(d) = self.0.take() {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

/// Installs (server-side apply) the Widget CRD and waits until it is Established.
pub async fn install_crd(client: &kube::Client) -> Result<()> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let crd = Widget::crd();
    let name = crd.metadata.name.clone().unwrap_or_default();
    api.patch(
        &name,
        &PatchParams::apply("ctrlbench").force(),
        &Patch::Apply(&crd),
    )
    .await
    .context("cannot install the Widget CRD")?;
    tokio::time::timeout(
        Duration::from_secs(30),
        await_condition(api, &name, conditions::is_crd_established()),
    )
    .await
    .map_err(|_| anyhow!("the Widget CRD was not Established within 30 s"))??;
    Ok(())
}

/// Runs the (blocking, possibly long) binary install off the async threads.
pub async fn install_blocking(version: &str) -> Result<Binaries> {
    let v = version.to_string();
    tokio::task::spawn_blocking(move || binaries::install(&v)).await?
}

/// Four distinct free loopback ports. The listeners are held until all four
/// are chosen so the plane never picks the same port twice.
fn free_ports() -> Result<[u16; 4]> {
    let ls: Vec<TcpListener> = (0..4)
        .map(|_| TcpListener::bind("127.0.0.1:0"))
        .collect::<std::io::Result<_>>()
        .context("cannot find free ports on 127.0.0.1")?;
    let ports: Vec<u16> = ls
        .iter()
        .map(|l| l.local_addr().map(|a| a.port()))
        .collect::<std::io::Result<_>>()?;
    Ok([ports[0], ports[1], ports[2], ports[3]])
}

/// True if `path` is a plane directory this tool may remove (it holds our files).
pub fn looks_like_plane_dir(path: &Path) -> bool {
    path.join("pki").is_dir() || path.join("state.json").is_file()
}
