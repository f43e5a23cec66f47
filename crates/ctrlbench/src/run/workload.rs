//! The runtime side of a workload (see `experiment::workload` for the spec
//! and the readiness rule): installing its CRD when the cluster lacks it and
//! removing it again only if this run installed it and no object of the kind
//! remains, the dynamic API of its kind (kube's `DynamicObject` /
//! `ApiResource`: no code per kind), and the label that marks each object a
//! run created so that our watch and clean-up see only those.

use std::time::Duration;

use anyhow::{Context, Result, anyhow};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams};
use kube::runtime::wait::{await_condition, conditions};

use crate::experiment::workload::Workload;

/// Label on every object a run creates; its value is the run's id (`{{run}}`).
pub const RUN_LABEL: &str = "ctrlbench.dev/run-id";

/// How long removing a CRD may take before we stop waiting.
const CRD_GONE: Duration = Duration::from_secs(30);

/// The field manager of CRD installs.
const MANAGER: &str = "ctrlbench";

/// The kind's API in `ns`.
pub fn api(client: &kube::Client, ns: &str, w: &Workload) -> Api<DynamicObject> {
    Api::namespaced_with(client.clone(), ns, &w.resource)
}

/// The kind's API across namespaces.
pub fn api_all(client: &kube::Client, w: &Workload) -> Api<DynamicObject> {
    Api::all_with(client.clone(), &w.resource)
}

/// The i-th object of run `run` in `ns`, labelled with the run id.
pub fn object(w: &Workload, i: u64, ns: &str, run: &str) -> Result<DynamicObject> {
    Ok(serde_json::from_value(object_json(w, i, ns, run)?)?)
}

/// `object` as the JSON the apiserver is sent, without the typed step: the
/// loader's creates cost the harness no more CPU than the probe's.
pub fn object_json(w: &Workload, i: u64, ns: &str, run: &str) -> Result<serde_json::Value> {
    let mut v = w
        .render(i, ns, run)
        .map_err(|e| anyhow!("the object template cannot be rendered: {e}"))?;
    if let Some(meta) = v.get_mut("metadata").and_then(|m| m.as_object_mut()) {
        let labels = meta
            .entry("labels")
            .or_insert_with(|| serde_json::json!({}));
        if let Some(l) = labels.as_object_mut() {
            l.insert(RUN_LABEL.into(), run.into());
        }
    }
    Ok(v)
}

/// A CRD a run may install: its name, its object, the file it came from
/// and the kind it serves (to see whether objects of it remain).
pub struct CrdToInstall {
    pub name: String,
    pub crd: serde_json::Value,
    pub file: Option<std::path::PathBuf>,
    pub resource: kube::core::ApiResource,
}

impl CrdToInstall {
    /// The workload's own CRD.
    pub fn of_workload(w: &Workload) -> CrdToInstall {
        CrdToInstall {
            name: w.crd_name(),
            crd: w.crd.clone(),
            file: w.crd_file.clone(),
            resource: w.resource.clone(),
        }
    }

    /// The CRDs of `[workload] extra_crds`.
    pub fn extras(w: &Workload) -> impl Iterator<Item = CrdToInstall> + '_ {
        w.extra_crds.iter().map(|e| CrdToInstall {
            name: e.name.clone(),
            crd: e.crd.clone(),
            file: Some(e.file.clone()),
            resource: e.resource.clone(),
        })
    }
}

/// Installs the workload's CRD unless the cluster has one of that name;
/// true if this call installed it. Waits until it is Established.
pub async fn ensure_crd(client: &kube::Client, c: &CrdToInstall) -> Result<bool> {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let name = &c.name;
    if crds.get_opt(name).await?.is_some() {
        return Ok(false);
    }
    let mut crd = c.crd.clone();
    // The file's status (if any) is the server's to write.
    if let Some(m) = crd.as_object_mut() {
        m.remove("status");
    }
    crds.patch(
        name,
        &PatchParams::apply(MANAGER).force(),
        &Patch::Apply(&crd),
    )
    .await
    .with_context(|| {
        format!(
            "cannot install the CRD {name}{}",
            c.file
                .as_ref()
                .map(|f| format!(" from {}", f.display()))
                .unwrap_or_default()
        )
    })?;
    tokio::time::timeout(
        Duration::from_secs(30),
        await_condition(crds, name, conditions::is_crd_established()),
    )
    .await
    .map_err(|_| anyhow!("the CRD {name} was not Established within 30 s"))??;
    Ok(true)
}

/// Checks by discovery that the cluster serves a CRD-less workload's kind,
/// namespaced and under the plural its API is built with; the error names
/// the template file, its `object` key and the apiVersion/kind.
pub async fn discover_kind(client: &kube::Client, w: &Workload) -> Result<()> {
    let r = &w.resource;
    let gvk = kube::core::GroupVersionKind::gvk(&r.group, &r.version, &r.kind);
    let file = w
        .object_file
        .as_ref()
        .map_or("the built-in template".to_string(), |f| {
            f.display().to_string()
        });
    let (found, caps) = kube::discovery::pinned_kind(client, &gvk)
        .await
        .map_err(|e| {
            anyhow!(
                "{file}: [workload] object: the cluster does not serve {} ({e}): name a kind `kubectl api-resources` lists, or give [workload] crd",
                w.kind_name()
            )
        })?;
    if caps.scope != kube::discovery::Scope::Namespaced {
        anyhow::bail!(
            "{file}: [workload] object: {} is cluster-scoped, and ctrlbench creates the objects in a fresh namespace per run: the kind must be namespaced",
            w.kind_name()
        );
    }
    if found.plural != r.plural {
        anyhow::bail!(
            "{file}: [workload] object: {} is served as {:?}, not as the plural {:?} ctrlbench derives from its kind",
            w.kind_name(),
            found.plural,
            r.plural
        );
    }
    Ok(())
}

/// Removes the CRD this run installed, unless objects of its kind remain
/// anywhere (this run's namespaces are gone by now: what remains is someone
/// else's, and deleting the CRD would delete it too). Says why it keeps it.
pub async fn remove_crd(client: &kube::Client, c: &CrdToInstall) {
    let name = &c.name;
    match Api::<DynamicObject>::all_with(client.clone(), &c.resource)
        .list(&ListParams::default().limit(1))
        .await
    {
        Ok(l) if l.items.is_empty() => {
            let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
            if let Err(e) = crds.delete(name, &DeleteParams::default()).await {
                eprintln!("warning: cannot remove the CRD {name} this run installed: {e}");
                return;
            }
            // The apiserver finalizes a deleted CRD itself: wait (bounded)
            // so that nothing of ours is left when the command returns.
            let t0 = std::time::Instant::now();
            while t0.elapsed() < CRD_GONE {
                if matches!(crds.get_opt(name).await, Ok(None)) {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            eprintln!("warning: the CRD {name} is still being removed after {CRD_GONE:?}");
        }
        Ok(l) => eprintln!(
            "keeping the CRD {name} this run installed: objects outside this run exist (e.g. {}/{})",
            l.items[0].metadata.namespace.as_deref().unwrap_or_default(),
            l.items[0].metadata.name.as_deref().unwrap_or_default()
        ),
        Err(e) => {
            eprintln!("keeping the CRD {name} this run installed: cannot list its objects: {e}")
        }
    }
}

/// Deletes run `run`'s objects in `ns` (a namespace the run does not own)
/// and waits, within `bound`, until they are gone — finalizers included.
pub async fn delete_run_objects(
    client: &kube::Client,
    w: &Workload,
    ns: &str,
    run: &str,
    bound: Duration,
) -> Result<()> {
    let api = api(client, ns, w);
    let lp = ListParams::default().labels(&format!("{RUN_LABEL}={run}"));
    api.delete_collection(&DeleteParams::default(), &lp)
        .await
        .with_context(|| format!("cannot delete this run's {} in {ns}", w.resource.plural))?;
    let t0 = std::time::Instant::now();
    loop {
        let left = api.list(&lp.clone().limit(1)).await?;
        if left.items.is_empty() {
            return Ok(());
        }
        if t0.elapsed() > bound {
            anyhow::bail!(
                "{} of this run still in namespace {ns} after {bound:?} (finalizers?)",
                w.resource.plural
            );
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
