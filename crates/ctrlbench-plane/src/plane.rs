//! A control plane: etcd + kube-apiserver with their own CA, the Widget CRD
//! installed, an admin kubeconfig written. Start it, use it, drop it.
//!
//! The topology is `etcd_members` etcd processes forming one cluster (peer
//! TLS) and `apiservers` kube-apiservers sharing it, its CA, service-account
//! keys and issuer, each on its own port; with more than one apiserver a
//! [`Front`] gives clients one URL, and the admin kubeconfig names it. Each
//! process can be signalled and restarted with its own flags and data
//! (faults): the process lists sit behind a lock for that.
//!
//! In-process planes (tests, `ctrlbench run`) live in a temporary directory
//! and stop when dropped; `cluster up` starts a detached plane in a named
//! directory and records it (see `state`).

use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, Patch, PatchParams};
use kube::config::Kubeconfig;
use kube::core::CustomResourceExt;
use kube::runtime::wait::{await_condition, conditions};
use widget_api::Widget;

use super::apiserver::ApiServer;
use super::assemble::{etcd_configs, numbered, start_apiservers};
use super::binaries::Binaries;
use super::controller_manager::{self, ControllerManager, ControllerManagerConfig};
use super::etcd::Etcd;
use super::front::{Front, FrontConfig};
use super::kubeconfig::{self, Credentials};
use super::nodes::{self, FakeNodes};
pub use super::options::install_blocking;
use super::options::{Member, PlaneOptions};
use super::process::{Process, Signal};
use super::tempdir::{DirGuard, Owner, TEMP_PREFIX};
pub use super::tempdir::{boot_id, looks_like_plane_dir, orphans, sweep_orphans};
use super::tinyca;

/// A running control plane.
pub struct ControlPlane {
    pub dir: PathBuf,
    /// The etcd members, in member order.
    pub etcd: Mutex<Vec<Etcd>>,
    /// The apiservers, in order.
    pub apiservers: Mutex<Vec<ApiServer>>,
    /// One URL for several apiservers (None with a single one).
    pub front: Option<Front>,
    /// kube-controller-manager, when the plane runs one.
    pub controller_manager: Mutex<Option<ControllerManager>>,
    /// kube-scheduler and kwok, when the plane has fake nodes.
    pub nodes: Mutex<Option<FakeNodes>>,
    pub kubeconfig: Kubeconfig,
    pub kubeconfig_path: PathBuf,
    /// `gitVersion` the apiserver reports.
    pub version: String,
    /// From spawning etcd to the first `ok` from `/readyz`.
    pub ready_after: Duration,
    /// The binaries it runs, by name, for the manifest's record of origins.
    pub binaries: Vec<(String, PathBuf)>,
    released: bool,
}

impl ControlPlane {
    /// The audit log of writes, when the plane keeps one.
    pub fn audit_log(&self) -> Option<PathBuf> {
        self.apiservers()[0]
            .config
            .audit
            .as_ref()
            .map(|a| a.log.clone())
    }

    /// The etcd members (locked while the guard lives).
    pub fn etcd(&self) -> MutexGuard<'_, Vec<Etcd>> {
        self.etcd.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The apiservers (locked while the guard lives).
    pub fn apiservers(&self) -> MutexGuard<'_, Vec<ApiServer>> {
        self.apiservers.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Every apiserver's own URL, in order (the sampler scrapes each directly).
    pub fn apiserver_urls(&self) -> Vec<String> {
        self.apiservers().iter().map(|a| a.config.url()).collect()
    }

    /// Every etcd member's metrics URL (plain HTTP on 127.0.0.1), in order.
    pub fn etcd_metrics_urls(&self) -> Vec<String> {
        self.etcd().iter().map(|e| e.config.metrics_url()).collect()
    }

    /// Every etcd member's client URL, in order.
    pub fn etcd_client_urls(&self) -> Vec<String> {
        self.etcd().iter().map(|e| e.config.client_url()).collect()
    }

    /// The admin kubeconfig aimed at one apiserver directly (not the front).
    pub fn kubeconfig_for(&self, apiserver: usize) -> Kubeconfig {
        let mut kc = self.kubeconfig.clone();
        if let Some(url) = self.apiserver_urls().get(apiserver) {
            for c in &mut kc.clusters {
                if let Some(cluster) = c.cluster.as_mut() {
                    cluster.server = Some(url.clone());
                }
            }
        }
        kc
    }

    /// The plane's processes beyond etcd and the apiservers, by name:
    /// kube-controller-manager, kube-scheduler and kwok, those it runs.
    pub fn extra_processes(&self) -> Vec<(&'static str, u32)> {
        let mut out = Vec::new();
        let cm = self
            .controller_manager
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(cm) = cm.as_ref() {
            out.push(("kube-controller-manager", cm.process.pid));
        }
        drop(cm);
        let nodes = self.nodes.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = nodes.as_ref() {
            out.push(("kube-scheduler", n.scheduler.pid));
            out.push(("kwok", n.kwok.pid));
        }
        out
    }

    /// The process of `m`: (pid, running).
    pub fn pid(&self, m: Member) -> Option<(u32, bool)> {
        let f = |p: &mut Process| (p.pid, p.is_running());
        match m {
            Member::Etcd(k) => self.etcd().get_mut(k).map(|e| f(&mut e.process)),
            Member::ApiServer(k) => self.apiservers().get_mut(k).map(|a| f(&mut a.process)),
        }
    }

    /// Sends `sig` to `m` (faults: KILL, STOP, CONT); returns its pid.
    pub fn signal(&self, m: Member, sig: Signal) -> Result<u32> {
        let send = |p: &Process| {
            p.send(sig);
            p.pid
        };
        match m {
            Member::Etcd(k) => self.etcd().get(k).map(|e| send(&e.process)),
            Member::ApiServer(k) => self.apiservers().get(k).map(|a| send(&a.process)),
        }
        .with_context(|| format!("the plane has no {m}"))
    }

    /// Starts `m` again with its own flags, data directory and log (killed
    /// first if it still runs); returns the new pid. Call it from a thread
    /// that outlives the process (a runtime worker, not a blocking task).
    pub fn restart(&self, m: Member) -> Result<u32> {
        let restart = |p: &mut Process| p.restart().map(|()| p.pid);
        match m {
            Member::Etcd(k) => match self.etcd().get_mut(k) {
                Some(e) => restart(&mut e.process),
                None => bail!("the plane has no {m}"),
            },
            Member::ApiServer(k) => match self.apiservers().get_mut(k) {
                Some(a) => restart(&mut a.process),
                None => bail!("the plane has no {m}"),
            },
        }
    }

    /// The member that says it leads (`etcd_server_is_leader 1` on its
    /// metrics page), if any answers so.
    pub async fn etcd_leader(&self) -> Option<usize> {
        let urls = self.etcd_metrics_urls();
        for (k, url) in urls.iter().enumerate() {
            if let Some(page) = http_get(url, Duration::from_secs(2)).await
                && page.lines().any(|l| l.trim() == "etcd_server_is_leader 1")
            {
                return Some(k);
            }
        }
        None
    }

    /// Starts an attached plane in a fresh temporary directory, building the
    /// binaries first if needed.
    pub async fn start(opts: &PlaneOptions) -> Result<ControlPlane> {
        let bins = opts.binaries().await?;
        let mut retried = false;
        loop {
            let dir = tempfile::Builder::new()
                .prefix(TEMP_PREFIX)
                .tempdir()?
                .keep();
            // Who owns it: a later command removes it if this process dies unseen.
            Owner::me().write(&dir)?;
            match ControlPlane::start_in(opts, &bins, dir, false).await {
                Err(e) if !retried && startup_exit(&e) => {
                    tracing::warn!(error = %format!("{e:#}"), "plane start failed; trying once more with new ports");
                    retried = true;
                }
                r => return r,
            }
        }
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
        opts.check()?;
        let (n_etcd, n_api) = (opts.etcd_members, opts.apiservers);
        let (certs, pems) = tinyca::generate(&dir.join("pki"), n_etcd, n_api)?;
        let ports = free_ports(3 * n_etcd + n_api)?;
        let etcd_configs = etcd_configs(opts, bins, &dir, &certs, &ports);
        let etcd_urls = etcd_configs
            .iter()
            .map(|c| c.client_url())
            .collect::<Vec<_>>()
            .join(",");

        let started = Instant::now();
        let mut etcd = Vec::new();
        for (k, config) in etcd_configs.into_iter().enumerate() {
            let log = dir.join(numbered("etcd", k, n_etcd, ".log"));
            etcd.push(Etcd::start(config, &log, detached)?);
        }
        let api_ports = &ports[3 * n_etcd..];
        let apiservers =
            start_apiservers(opts, bins, &dir, api_ports, &etcd_urls, &certs, detached)?;
        let admin = kubeconfig::build(
            "ctrlbench",
            &apiservers[0].config.url(),
            &pems.ca_cert,
            Credentials::Cert {
                cert: &pems.admin_cert,
                key: &pems.admin_key,
            },
            None,
        );
        let front = if n_api > 1 {
            Some(Front::start(FrontConfig::new(api_ports.to_vec()), &admin)?)
        } else {
            None
        };
        let url = front
            .as_ref()
            .map(|f| f.url())
            .unwrap_or_else(|| apiservers[0].config.url());
        let kc = kubeconfig::build(
            "ctrlbench",
            &url,
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
            etcd: Mutex::new(etcd),
            apiservers: Mutex::new(apiservers),
            front,
            controller_manager: Mutex::new(None),
            nodes: Mutex::new(None),
            kubeconfig: kc,
            kubeconfig_path,
            version: String::new(),
            ready_after: Duration::ZERO,
            binaries: bins.named(),
            released: false,
        };
        // From here on, dropping `plane` stops the processes and removes the directory.
        guard.0 = None;
        // Every apiserver ready on its own, then the front's URL too.
        for k in 0..n_api {
            let direct = kubeconfig::client(&plane.kubeconfig_for(k)).await?;
            plane
                .wait_ready(k, &direct, started, opts.startup_timeout)
                .await?;
        }
        let client = plane.client().await?;
        if n_api > 1 {
            plane
                .wait_ready(0, &client, started, opts.startup_timeout)
                .await?;
        }
        plane.ready_after = started.elapsed();
        plane.version = client.apiserver_version().await?.git_version;
        if opts.install_crd {
            install_crd(&client).await?;
        }
        if opts.controller_manager {
            plane
                .start_controller_manager(opts, bins, &url, &pems, &client, detached)
                .await?;
        }
        if opts.nodes > 0 {
            let fake = nodes::start(&plane.dir, bins, &url, &pems, &client, opts, detached).await?;
            *plane.nodes.lock().unwrap_or_else(|e| e.into_inner()) = Some(fake);
            nodes::create_and_wait(&plane.nodes, &client, opts).await?;
        }
        Ok(plane)
    }

    /// kube-controller-manager with its own client certificate, once it
    /// runs its controllers.
    async fn start_controller_manager(
        &self,
        opts: &PlaneOptions,
        bins: &Binaries,
        url: &str,
        pems: &tinyca::Pems,
        client: &kube::Client,
        detached: bool,
    ) -> Result<()> {
        let bin = bins
            .kube_controller_manager
            .clone()
            .context("no kube-controller-manager binary (PlaneOptions::binaries)")?;
        let kubeconfig = self.dir.join("kube-controller-manager.kubeconfig");
        kubeconfig::write(
            &kubeconfig,
            &kubeconfig::build(
                "ctrlbench",
                url,
                &pems.ca_cert,
                Credentials::Cert {
                    cert: &pems.controller_manager_cert,
                    key: &pems.controller_manager_key,
                },
                None,
            ),
        )?;
        let kcm = ControllerManager::start(
            ControllerManagerConfig {
                bin,
                kubeconfig,
                workloads: opts.nodes > 0,
                extra_args: opts.controller_manager_client.args(),
            },
            &self.dir.join("kube-controller-manager.log"),
            detached,
        )?;
        *self
            .controller_manager
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some(kcm);
        self.wait_controller_manager(client, opts.startup_timeout)
            .await
    }

    /// Waits until kube-controller-manager has made its controllers'
    /// service accounts: it runs them from then on.
    async fn wait_controller_manager(
        &self,
        client: &kube::Client,
        timeout: Duration,
    ) -> Result<()> {
        use k8s_openapi::api::core::v1::ServiceAccount;
        let sas: Api<ServiceAccount> = Api::namespaced(client.clone(), "kube-system");
        let t0 = Instant::now();
        loop {
            if let Some(kcm) = self
                .controller_manager
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .as_mut()
                && !kcm.process.is_running()
            {
                bail!(
                    "kube-controller-manager exited during start-up: {}",
                    kcm.process.log_summary()
                );
            }
            let mut have = 0;
            for name in controller_manager::SERVICE_ACCOUNTS {
                if sas.get_opt(name).await?.is_some() {
                    have += 1;
                }
            }
            if have == controller_manager::SERVICE_ACCOUNTS.len() {
                return Ok(());
            }
            if t0.elapsed() > timeout {
                bail!(
                    "kube-controller-manager did not start its controllers within {timeout:?} (see kube-controller-manager.log in the plane directory)"
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// A new admin client (one per tokio runtime: a client is bound to the
    /// runtime it was made on).
    pub async fn client(&self) -> Result<kube::Client> {
        kubeconfig::client(&self.kubeconfig).await
    }

    /// The URL clients use: the front's, or the single apiserver's.
    pub fn url(&self) -> String {
        match &self.front {
            Some(f) => f.url(),
            None => self.apiservers()[0].config.url(),
        }
    }

    /// Lets the processes and directory outlive this handle (`cluster up`).
    pub fn detach(mut self) {
        for e in self.etcd.get_mut().unwrap_or_else(|e| e.into_inner()) {
            e.process.release();
        }
        for a in self.apiservers.get_mut().unwrap_or_else(|e| e.into_inner()) {
            a.process.release();
        }
        if let Some(c) = self
            .controller_manager
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
        {
            c.process.release();
        }
        if let Some(n) = self.nodes.get_mut().unwrap_or_else(|e| e.into_inner()) {
            n.processes().into_iter().for_each(Process::release);
        }
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
        self.stop_processes(grace);
    }

    /// Stops kwok and the scheduler, the controller-manager, the front, the
    /// apiservers, then the etcd members.
    fn stop_processes(&mut self, grace: Duration) {
        if let Some(mut n) = self
            .nodes
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            n.processes().into_iter().for_each(|p| p.stop(grace));
        }
        if let Some(mut c) = self
            .controller_manager
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            c.process.stop(grace);
        }
        self.front.take();
        for a in self.apiservers.get_mut().unwrap_or_else(|e| e.into_inner()) {
            a.process.stop(grace);
        }
        for e in self.etcd.get_mut().unwrap_or_else(|e| e.into_inner()) {
            e.process.stop(grace);
        }
    }

    /// Waits for `ok` from `/readyz` through `client` (apiserver `k`, or the front).
    async fn wait_ready(
        &mut self,
        k: usize,
        client: &kube::Client,
        started: Instant,
        timeout: Duration,
    ) -> Result<()> {
        let mut last_err;
        loop {
            for e in self.etcd.get_mut().unwrap_or_else(|e| e.into_inner()) {
                if !e.process.is_running() {
                    bail!("etcd exited during start-up: {}", e.process.log_summary());
                }
            }
            let api = &mut self.apiservers.get_mut().unwrap_or_else(|e| e.into_inner())[k];
            if !api.process.is_running() {
                bail!(
                    "kube-apiserver exited during start-up: {}",
                    api.process.log_summary()
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
                    api.process.log_summary()
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
        self.stop_processes(super::process::STOP_TIMEOUT);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A process of the plane exited while it started: most often a port that
/// another process took between our pick and its bind (several planes start
/// at once in the tests), so one more start with new ports is worth it.
pub fn startup_exit(e: &anyhow::Error) -> bool {
    format!("{e:#}").contains("exited during start-up")
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

/// `n` distinct free loopback ports. The listeners are held until all are
/// chosen so the plane never picks the same port twice.
fn free_ports(n: usize) -> Result<Vec<u16>> {
    let ls: Vec<TcpListener> = (0..n)
        .map(|_| TcpListener::bind("127.0.0.1:0"))
        .collect::<std::io::Result<_>>()
        .context("cannot find free ports on 127.0.0.1")?;
    Ok(ls
        .iter()
        .map(|l| l.local_addr().map(|a| a.port()))
        .collect::<std::io::Result<_>>()?)
}

/// A plain-HTTP GET on loopback (etcd's metrics listener), body as text.
async fn http_get(url: &str, timeout: Duration) -> Option<String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let rest = url.strip_prefix("http://")?;
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    tokio::time::timeout(timeout, async {
        let mut s = tokio::net::TcpStream::connect(host).await.ok()?;
        s.write_all(format!("GET /{path} HTTP/1.0\r\nHost: {host}\r\n\r\n").as_bytes())
            .await
            .ok()?;
        let mut buf = Vec::new();
        s.read_to_end(&mut buf).await.ok()?;
        let text = String::from_utf8(buf).ok()?;
        let (head, body) = text.split_once("\r\n\r\n")?;
        head.starts_with("HTTP/1.1 200")
            .then(|| body.to_string())
            .or_else(|| head.starts_with("HTTP/1.0 200").then(|| body.to_string()))
    })
    .await
    .ok()
    .flatten()
}
