//! Target selection: the cluster a run talks to — a fresh local plane, or an
//! existing cluster that a kubeconfig or context names — the workload's CRD
//! (installed when missing, removed at the end only if we installed it), and
//! the throw-away create that warms a freshly established CRD before anything
//! is measured and checks the object template against it.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Resource;
use kube::api::{Api, DeleteParams, ListParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use widget_api::Widget;

use super::{RunOptions, namespace};
use crate::experiment::Experiment;
use crate::experiment::workload::Workload;
use ctrlbench_plane::{ControlPlane, PlaneOptions, binaries};

/// How long an existing cluster gets to answer its first request.
const FIRST_CONTACT: Duration = Duration::from_secs(10);

/// The CRD's name, from the Widget type (`widgets.benchmark.example.com`).
fn crd_name() -> String {
    format!("{}.{}", Widget::plural(&()), Widget::group(&()))
}

/// An existing cluster, reached.
pub struct Existing {
    pub kubeconfig: Kubeconfig,
    pub client: kube::Client,
    /// Its apiserver's gitVersion.
    pub version: String,
}

/// The cluster a kubeconfig (the default one when None) and a context
/// name: read, parsed, its context there, and its apiserver answering.
pub async fn existing(
    kubeconfig_path: Option<&std::path::Path>,
    context: Option<&str>,
) -> Result<Existing> {
    let mut kc = match kubeconfig_path {
        Some(p) => Kubeconfig::read_from(p)
            .with_context(|| format!("cannot read kubeconfig {}", p.display()))?,
        None => Kubeconfig::read().context("cannot read the default kubeconfig")?,
    };
    if let Some(ctx) = context {
        if !kc.contexts.iter().any(|c| c.name == ctx) {
            let names: Vec<&str> = kc.contexts.iter().map(|c| c.name.as_str()).collect();
            anyhow::bail!(
                "the kubeconfig has no context {ctx:?} (it has {}): pick one with --context",
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            );
        }
        kc.current_context = Some(ctx.to_string());
    }
    let mut config =
        kube::Config::from_custom_kubeconfig(kc.clone(), &KubeConfigOptions::default())
            .await
            .context("cannot use the kubeconfig")?;
    // No silent retries of harness requests (see cluster::kubeconfig::client).
    config.default_retry = false;
    let server = config.cluster_url.to_string();
    let client = kube::Client::try_from(config)?;
    // A server that accepts connections and never answers must not hang the run.
    let version = tokio::time::timeout(FIRST_CONTACT, client.apiserver_version())
        .await
        .map_err(|_| {
            anyhow::anyhow!(
                "cannot reach the cluster at {server}: no answer within {FIRST_CONTACT:?}"
            )
        })?
        .with_context(|| format!("cannot reach the cluster at {server}"))?
        .git_version;
    Ok(Existing {
        kubeconfig: kc,
        client,
        version,
    })
}

/// The cluster a run talks to.
pub struct Cluster {
    pub client: kube::Client,
    pub kubeconfig: Kubeconfig,
    pub plane: Option<ControlPlane>,
    crd_installed_by_us: bool,
    /// Workload CRDs (besides the Widget one) this run installed.
    installed_crds: Vec<super::workload::CrdToInstall>,
    /// No kube-controller-manager: ctrlbench must empty and finalize its namespaces.
    pub no_namespace_controller: bool,
    pub version: String,
}

/// The kubeconfig and context that name an existing cluster, the command
/// line's over the file's; both None: a local plane.
pub fn named(exp: &Experiment, opts: &RunOptions) -> (Option<PathBuf>, Option<String>) {
    let c = &exp.cluster;
    let kubeconfig_path = opts
        .kubeconfig
        .clone()
        .or_else(|| c.kubeconfig.as_deref().map(expand_home));
    let context = opts.context.clone().or_else(|| c.context.clone());
    (kubeconfig_path, context)
}

/// The experiment's cluster, unless the command line names another.
pub async fn connect(exp: &Experiment, opts: &RunOptions) -> Result<Cluster> {
    let c = &exp.cluster;
    let (kubeconfig_path, context) = named(exp, opts);
    let popts = PlaneOptions {
        k8s_version: binaries::normalize_version(
            c.k8s_version
                .as_deref()
                .unwrap_or(binaries::DEFAULT_K8S_VERSION),
        )?,
        feature_gates: c.feature_gates.clone(),
        apiserver_args: c.apiserver_args.clone(),
        etcd_args: c.etcd_args.clone(),
        etcd_fsync: c.etcd_fsync,
        audit_log: c.audit_log,
        etcd_members: c.etcd_members,
        apiservers: c.apiservers,
        controller_manager: c.controller_manager || c.nodes > 0,
        nodes: c.nodes,
        node_pods: c.node_pods,
        controller_manager_client: c
            .controller_manager_client
            .unwrap_or(ctrlbench_plane::options::CONTROLLER_MANAGER_CLIENT),
        scheduler_client: c
            .scheduler_client
            .unwrap_or(ctrlbench_plane::options::SCHEDULER_CLIENT),
        scheduler_without_default_spread: c.scheduler_without_default_spread,
        downloads: exp.cluster.downloads(),
        ..PlaneOptions::default()
    };
    Cluster::connect(popts, kubeconfig_path, context).await
}

impl Cluster {
    /// A local plane started with `popts`, unless a kubeconfig or a context
    /// names an existing cluster (where the CRD is installed if missing).
    pub async fn connect(
        popts: PlaneOptions,
        kubeconfig_path: Option<PathBuf>,
        context: Option<String>,
    ) -> Result<Cluster> {
        if kubeconfig_path.is_none() && context.is_none() {
            eprintln!(
                "starting the local control plane (Kubernetes {}) …",
                popts.k8s_version
            );
            let plane = ControlPlane::start(&popts).await?;
            eprintln!(
                "plane ready in {:.1} s at {}",
                plane.ready_after.as_secs_f64(),
                plane.url()
            );
            return Ok(Cluster {
                client: plane.client().await?,
                kubeconfig: plane.kubeconfig.clone(),
                version: plane.version.clone(),
                plane: Some(plane),
                crd_installed_by_us: false,
                installed_crds: Vec::new(),
                // kube-controller-manager finalizes namespaces when it runs.
                no_namespace_controller: !popts.controller_manager,
            });
        }
        let Existing {
            kubeconfig: kc,
            client,
            version,
        } = existing(kubeconfig_path.as_deref(), context.as_deref()).await?;
        let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
        let installed = crds.get_opt(&crd_name()).await?.is_none();
        if installed {
            ctrlbench_plane::plane::install_crd(&client).await?;
        }
        // kube-controller-manager publishes kube-root-ca.crt into every
        // namespace; its absence means nothing will finalize deleted namespaces.
        let cms: Api<k8s_openapi::api::core::v1::ConfigMap> =
            Api::namespaced(client.clone(), "default");
        let no_namespace_controller = matches!(cms.get_opt("kube-root-ca.crt").await, Ok(None));
        Ok(Cluster {
            client,
            kubeconfig: kc,
            plane: None,
            crd_installed_by_us: installed,
            installed_crds: Vec::new(),
            version,
            no_namespace_controller,
        })
    }

    /// Removes the CRD if this run installed it, and stops a plane it started.
    /// Removes the CRD only if this run installed it and no widget remains
    /// anywhere (this run's namespaces are gone by now: any widget left is
    /// someone else's, and deleting the CRD would delete it too).
    pub async fn close(self) -> Result<()> {
        self.close_within(ctrlbench_plane::process::STOP_TIMEOUT)
            .await
    }

    /// Installs a workload's CRD unless the cluster serves it already (the
    /// Widget CRD is there from the start).
    /// A kind without a CRD must be one the cluster serves.
    pub async fn ensure_workload(&mut self, w: &Workload) -> Result<()> {
        use super::workload::CrdToInstall;
        if !w.has_crd() {
            super::workload::discover_kind(&self.client, w).await?;
        }
        let own = (w.has_crd() && !w.is_builtin()).then(|| CrdToInstall::of_workload(w));
        for c in own.into_iter().chain(CrdToInstall::extras(w)) {
            if self.installed_crds.iter().any(|i| i.name == c.name) {
                continue;
            }
            if super::workload::ensure_crd(&self.client, &c).await? {
                eprintln!("installed the CRD {}", c.name);
                self.installed_crds.push(c);
            }
        }
        Ok(())
    }

    /// `close`, giving the plane's processes only `grace` after SIGTERM.
    pub async fn close_within(self, grace: std::time::Duration) -> Result<()> {
        // On a local plane the CRDs go with it.
        if self.plane.is_none() {
            for c in &self.installed_crds {
                super::workload::remove_crd(&self.client, c).await;
            }
        }
        if self.crd_installed_by_us {
            let widgets: Api<Widget> = Api::all(self.client.clone());
            match widgets.list(&ListParams::default().limit(1)).await {
                Ok(l) if l.items.is_empty() => {
                    let crds: Api<CustomResourceDefinition> = Api::all(self.client.clone());
                    let _ = crds.delete(&crd_name(), &DeleteParams::default()).await;
                }
                Ok(l) => eprintln!(
                    "keeping the Widget CRD this run installed: widgets outside this run exist (e.g. {}/{})",
                    l.items[0].metadata.namespace.as_deref().unwrap_or_default(),
                    l.items[0].metadata.name.as_deref().unwrap_or_default()
                ),
                Err(e) => {
                    eprintln!("keeping the Widget CRD this run installed: cannot list widgets: {e}")
                }
            }
        }
        if let Some(plane) = self.plane {
            tokio::task::spawn_blocking(move || plane.stop_within(grace)).await?;
        }
        Ok(())
    }
}

/// `~/x` → `$HOME/x`.
pub fn expand_home(p: &str) -> PathBuf {
    match p.strip_prefix("~/") {
        Some(rest) => dirs::home_dir().unwrap_or_default().join(rest),
        None => PathBuf::from(p),
    }
}

/// One throw-away object of the workload before anything is measured: the
/// first writes to a freshly established CRD are slow (the apiserver builds
/// its handlers), and the first run should not pay for that. It is also the
/// first create of the template: one the CRD refuses fails here, with the
/// apiserver's message, before any controller starts.
pub async fn warm_up(cluster: &Cluster, w: &Workload) -> Result<()> {
    let ns = format!("cb-warmup-{:04x}", std::process::id() & 0xffff);
    namespace::create(&cluster.client, &ns, "warmup").await?;
    let created = async {
        let o = super::workload::object(w, 1, &ns, "warmup")?;
        super::workload::api(&cluster.client, &ns, w)
            .create(&kube::api::PostParams::default(), &o)
            .await
            .map_err(|e| match e {
                kube::Error::Api(s) => anyhow::anyhow!(
                    "the apiserver refused the first {} the object template{} renders: {} ({})",
                    w.resource.kind,
                    w.object_file
                        .as_ref()
                        .map(|f| format!(" {}", f.display()))
                        .unwrap_or_default(),
                    s.message,
                    s.reason
                ),
                e => anyhow::Error::new(e).context(format!(
                    "cannot create a {} (is its CRD {} served?)",
                    w.resource.kind,
                    w.crd_name()
                )),
            })
    }
    .await;
    namespace::delete(
        &cluster.client,
        &ns,
        cluster.no_namespace_controller,
        Duration::from_secs(20),
        Duration::from_secs(120),
        std::slice::from_ref(&w.resource),
    )
    .await?;
    created?;
    Ok(())
}
