//! Target selection: the cluster a run talks to — a fresh local plane, or an
//! existing cluster that a kubeconfig or context names — and the throw-away
//! write that warms a freshly established CRD before anything is measured.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Resource;
use kube::api::{Api, DeleteParams, ListParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use widget_api::Widget;

use super::{RunOptions, namespace};
use crate::cluster::{ControlPlane, PlaneOptions, binaries};
use crate::experiment::Experiment;

/// How long an existing cluster gets to answer its first request.
const FIRST_CONTACT: Duration = Duration::from_secs(10);

/// The CRD's name, from the Widget type (`widgets.benchmark.example.com`).
fn crd_name() -> String {
    format!("{}.{}", Widget::plural(&()), Widget::group(&()))
}

/// The cluster a run talks to.
pub struct Cluster {
    pub client: kube::Client,
    pub kubeconfig: Kubeconfig,
    pub plane: Option<ControlPlane>,
    crd_installed_by_us: bool,
    /// No kube-controller-manager: ctrlbench must empty and finalize its namespaces.
    pub no_namespace_controller: bool,
    pub version: String,
}

/// The experiment's cluster, unless the command line names another.
pub async fn connect(exp: &Experiment, opts: &RunOptions) -> Result<Cluster> {
    let c = &exp.spec.cluster;
    let kubeconfig_path = opts
        .kubeconfig
        .clone()
        .or_else(|| c.kubeconfig.as_ref().map(|k| expand_home(k.get_ref())));
    let context = opts
        .context
        .clone()
        .or_else(|| c.context.as_ref().map(|k| k.get_ref().clone()));
    let popts = PlaneOptions {
        k8s_version: binaries::normalize_version(
            c.k8s_version
                .as_ref()
                .map(|v| v.get_ref().as_str())
                .unwrap_or(binaries::DEFAULT_K8S_VERSION),
        )?,
        feature_gates: c.feature_gates.clone(),
        apiserver_args: c.apiserver_args.get_ref().clone(),
        etcd_args: c.etcd_args.get_ref().clone(),
        etcd_fsync: c.etcd_fsync.unwrap_or(true),
        audit_log: c.audit_log.unwrap_or(false),
        etcd_members: c.etcd_members.as_ref().map_or(1, |v| *v.get_ref() as usize),
        apiservers: c.apiservers.as_ref().map_or(1, |v| *v.get_ref() as usize),
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
                no_namespace_controller: true,
            });
        }
        let mut kc = match &kubeconfig_path {
            Some(p) => Kubeconfig::read_from(p)
                .with_context(|| format!("cannot read kubeconfig {}", p.display()))?,
            None => Kubeconfig::read().context("cannot read the default kubeconfig")?,
        };
        if let Some(ctx) = &context {
            kc.current_context = Some(ctx.clone());
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
        let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
        let installed = crds.get_opt(&crd_name()).await?.is_none();
        if installed {
            crate::cluster::plane::install_crd(&client).await?;
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
            version,
            no_namespace_controller,
        })
    }

    /// Removes the CRD if this run installed it, and stops a plane it started.
    /// Removes the CRD only if this run installed it and no widget remains
    /// anywhere (this run's namespaces are gone by now: any widget left is
    /// someone else's, and deleting the CRD would delete it too).
    pub async fn close(self) -> Result<()> {
        self.close_within(crate::cluster::process::STOP_TIMEOUT)
            .await
    }

    /// `close`, giving the plane's processes only `grace` after SIGTERM.
    pub async fn close_within(self, grace: std::time::Duration) -> Result<()> {
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

/// One throw-away widget before anything is measured: the first writes to a
/// freshly established CRD are slow (the apiserver builds its handlers), and
/// the first run should not pay for that.
pub async fn warm_up(cluster: &Cluster) -> Result<()> {
    let ns = format!("cb-warmup-{:04x}", std::process::id() & 0xffff);
    namespace::create(&cluster.client, &ns, "warmup").await?;
    let api: Api<widget_api::Widget> = Api::namespaced(cluster.client.clone(), &ns);
    let created = api
        .create(
            &kube::api::PostParams::default(),
            &widget_api::Widget::numbered(1),
        )
        .await;
    namespace::delete(
        &cluster.client,
        &ns,
        cluster.no_namespace_controller,
        Duration::from_secs(20),
        Duration::from_secs(120),
    )
    .await?;
    created.context("cannot create a widget (is the Widget CRD served?)")?;
    Ok(())
}
