//! What a plane is started with: its options, checked before anything
//! starts, the binaries they need, and the names of its members. Kept
//! apart from the plane itself so that the assembly of its processes
//! (`assemble`) and the plane (`plane`) both read it without reading each
//! other.

use std::time::Duration;

use anyhow::{Result, bail};

use super::binaries::{self, Binaries};
use super::fetch::Downloads;

/// The most etcd members and apiservers a plane may have.
pub const MAX_ETCD_MEMBERS: usize = 7;
pub const MAX_APISERVERS: usize = 5;
/// The most fake nodes a plane may have (each is a Node object KWOK heartbeats).
pub const MAX_NODES: usize = 1000;
/// Pods each fake node takes by default (kubelet's default limit), and the
/// most it may be given.
pub const DEFAULT_NODE_PODS: usize = 110;
pub const MAX_NODE_PODS: usize = 10_000;

/// A plane component's client-side rate limit towards the apiserver (its
/// `--kube-api-qps` and `--kube-api-burst`). The defaults are the
/// components' own, which bound how fast pods can be made at scale: the
/// controller manager's 20 requests a second made 10 002 pods take 965 s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientLimits {
    pub qps: u32,
    pub burst: u32,
}

impl ClientLimits {
    /// The flags that set it.
    pub fn args(&self) -> Vec<String> {
        vec![
            format!("--kube-api-qps={}", self.qps),
            format!("--kube-api-burst={}", self.burst),
        ]
    }
}

/// kube-controller-manager's own defaults.
pub const CONTROLLER_MANAGER_CLIENT: ClientLimits = ClientLimits { qps: 20, burst: 30 };
/// kube-scheduler's own defaults.
pub const SCHEDULER_CLIENT: ClientLimits = ClientLimits {
    qps: 50,
    burst: 100,
};
/// The most either may be given, per second and in a burst.
pub const MAX_CLIENT_QPS: u32 = 100_000;

/// What a plane is started with.
#[derive(Debug, Clone)]
pub struct PlaneOptions {
    pub k8s_version: String,
    pub feature_gates: Vec<String>,
    pub apiserver_args: Vec<String>,
    pub etcd_args: Vec<String>,
    pub etcd_fsync: bool,
    /// etcd cluster size (1: a single member, as envtest).
    pub etcd_members: usize,
    /// kube-apiservers sharing etcd (more than 1: clients go through the front).
    pub apiservers: usize,
    /// The apiserver's audit log of writes (per-caller server-side
    /// figures; see `audit`).
    pub audit_log: bool,
    /// kube-controller-manager's namespace and garbage-collector controllers
    /// (off: ctrlbench finalizes the namespaces it deletes itself).
    pub controller_manager: bool,
    /// Fake nodes managed by KWOK, with kube-scheduler (0: none; more needs
    /// `controller_manager`, whose workload controllers then run too).
    pub nodes: usize,
    /// Each fake node's pod capacity.
    pub node_pods: usize,
    /// kube-controller-manager's client limits.
    pub controller_manager_client: ClientLimits,
    /// kube-scheduler's client limits (with fake nodes).
    pub scheduler_client: ClientLimits,
    /// kube-scheduler without PodTopologySpread's default constraints,
    /// which count every pod on every scored node for each pod scheduled.
    pub scheduler_without_default_spread: bool,
    pub install_crd: bool,
    pub startup_timeout: Duration,
    /// Where missing binaries are downloaded from (an experiment file's
    /// `[cluster] mirror` and `offline`), under the environment's
    /// `CTRLBENCH_MIRROR` and `CTRLBENCH_OFFLINE`.
    pub downloads: Downloads,
}

impl Default for PlaneOptions {
    fn default() -> Self {
        PlaneOptions {
            k8s_version: binaries::DEFAULT_K8S_VERSION.to_string(),
            feature_gates: vec![],
            apiserver_args: vec![],
            etcd_args: vec![],
            etcd_fsync: true,
            etcd_members: 1,
            apiservers: 1,
            audit_log: false,
            controller_manager: false,
            nodes: 0,
            node_pods: DEFAULT_NODE_PODS,
            controller_manager_client: CONTROLLER_MANAGER_CLIENT,
            scheduler_client: SCHEDULER_CLIENT,
            scheduler_without_default_spread: false,
            install_crd: true,
            startup_timeout: Duration::from_secs(90),
            downloads: Downloads::default(),
        }
    }
}

impl PlaneOptions {
    /// Checks the topology (sizes, and what only a single apiserver has).
    pub fn check(&self) -> Result<()> {
        if !(1..=MAX_ETCD_MEMBERS).contains(&self.etcd_members) {
            bail!(
                "etcd members must be from 1 to {MAX_ETCD_MEMBERS}, not {}",
                self.etcd_members
            );
        }
        if !(1..=MAX_APISERVERS).contains(&self.apiservers) {
            bail!(
                "apiservers must be from 1 to {MAX_APISERVERS}, not {}",
                self.apiservers
            );
        }
        if self.audit_log && self.apiservers > 1 {
            bail!(
                "the audit log needs a single apiserver (each apiserver would log a part of the writes)"
            );
        }
        if self.nodes > MAX_NODES {
            bail!("nodes must be at most {MAX_NODES}, not {}", self.nodes);
        }
        if !(1..=MAX_NODE_PODS).contains(&self.node_pods) {
            bail!(
                "pods per node must be from 1 to {MAX_NODE_PODS}, not {}",
                self.node_pods
            );
        }
        if self.nodes > 0 && !self.controller_manager {
            bail!(
                "fake nodes need kube-controller-manager (its workload controllers make the pods): add --controller-manager"
            );
        }
        Ok(())
    }

    /// The binaries these options need, downloaded or built into the cache if missing
    /// (kube-controller-manager, kube-scheduler and kwok only when asked for).
    /// kwok, a module of its own, builds beside the Kubernetes binaries;
    /// those share packages, so they build one after another. Every build
    /// is awaited before any error counts.
    pub async fn binaries(&self) -> Result<Binaries> {
        let kwok =
            (self.nodes > 0).then(|| tokio::task::spawn_blocking(crate::kwok_build::install_kwok));
        let k8s = self.kubernetes_binaries().await;
        let kwok = match kwok {
            Some(k) => Some(k.await?),
            None => None,
        };
        let mut bins = k8s?;
        bins.kwok = kwok.transpose()?;
        Ok(bins)
    }

    async fn kubernetes_binaries(&self) -> Result<Binaries> {
        let mut bins = install_blocking(&self.k8s_version, &self.downloads).await?;
        if self.controller_manager {
            let (v, d) = (self.k8s_version.clone(), self.downloads.clone());
            bins.kube_controller_manager = Some(
                tokio::task::spawn_blocking(move || binaries::install_controller_manager(&v, &d))
                    .await??,
            );
        }
        if self.nodes > 0 {
            let (v, d) = (self.k8s_version.clone(), self.downloads.clone());
            bins.kube_scheduler = Some(
                tokio::task::spawn_blocking(move || binaries::install_scheduler(&v, &d)).await??,
            );
        }
        Ok(bins)
    }
}

/// One process of a plane: etcd member `k` or apiserver `k` (from 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Member {
    Etcd(usize),
    ApiServer(usize),
}

impl std::fmt::Display for Member {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Member::Etcd(k) => write!(f, "etcd:{k}"),
            Member::ApiServer(k) => write!(f, "apiserver:{k}"),
        }
    }
}

/// Runs the (blocking, possibly long) binary install (download or build) off the async threads,
/// then keeps the gate table beside a cached kube-apiserver, so later runs
/// check their gates before anything starts.
pub async fn install_blocking(version: &str, downloads: &Downloads) -> Result<Binaries> {
    let (v, d) = (version.to_string(), downloads.clone());
    tokio::task::spawn_blocking(move || {
        let b = binaries::install(&v, &d)?;
        if matches!(
            b.source,
            binaries::Source::Cache | binaries::Source::Downloaded | binaries::Source::Built
        ) && let Err(e) = crate::known::remember_gates(&v)
        {
            eprintln!("warning: {e:#}");
        }
        Ok(b)
    })
    .await?
}
