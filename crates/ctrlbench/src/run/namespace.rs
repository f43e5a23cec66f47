//! Fresh namespaces per run, and their removal. A local plane has no
//! kube-controller-manager, so nothing would empty and finalize a deleted
//! namespace: there ctrlbench deletes the run's objects itself (the
//! workload's kind, and what controllers commonly create: Deployments,
//! ReplicaSets, Pods, Services, ConfigMaps, Events, Leases) and finalizes.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind, Resource};
use serde_json::json;
use widget_api::Widget;

/// Label on every namespace ctrlbench creates.
pub const LABEL: &str = "ctrlbench.dev/run";

pub async fn create(client: &kube::Client, name: &str, run: &str) -> Result<()> {
    let api: Api<Namespace> = Api::all(client.clone());
    let ns: Namespace =
        serde_json::from_value(json!({"metadata": {"name": name, "labels": {LABEL: run}}}))?;
    api.create(&PostParams::default(), &ns)
        .await
        .with_context(|| format!("cannot create namespace {name}"))?;
    Ok(())
}

fn not_found(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 404)
}

/// Deletes namespace `name` and waits until it is gone. With `finalize`
/// (local plane) it empties and finalizes the namespace at once; otherwise it
/// leaves that to the cluster's namespace controller and falls back to doing
/// it itself when nothing finishes the namespace within `grace` (clusters
/// without kube-controller-manager, like envtest's).
pub async fn delete(
    client: &kube::Client,
    name: &str,
    finalize: bool,
    grace: Duration,
    timeout: Duration,
    kinds: &[ApiResource],
) -> Result<()> {
    let nss: Api<Namespace> = Api::all(client.clone());
    match nss.delete(name, &DeleteParams::default()).await {
        Err(e) if not_found(&e) => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("cannot delete namespace {name}")),
        Ok(_) => {}
    }
    let t0 = Instant::now();
    let mut finalized = false;
    loop {
        if nss.get_opt(name).await?.is_none() {
            return Ok(());
        }
        if !finalized && (finalize || t0.elapsed() >= grace) {
            empty_and_finalize(client, name, kinds).await?;
            finalized = true;
            continue;
        }
        if t0.elapsed() > timeout {
            bail!("namespace {name} still exists after {timeout:?}");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Kinds controllers commonly create besides the workload's (group,
/// version, kind, plural); absent ones cost a 404.
const COMMON_KINDS: [(&str, &str, &str, &str); 8] = [
    ("apps", "v1", "Deployment", "deployments"),
    ("apps", "v1", "ReplicaSet", "replicasets"),
    ("", "v1", "Pod", "pods"),
    ("", "v1", "Service", "services"),
    ("", "v1", "ConfigMap", "configmaps"),
    ("", "v1", "Event", "events"),
    ("events.k8s.io", "v1", "Event", "events"),
    ("coordination.k8s.io", "v1", "Lease", "leases"),
];

/// Names of the objects of `api` that carry finalizers, listed as metadata
/// in pages of 500.
async fn with_finalizers(api: &Api<DynamicObject>) -> Vec<String> {
    let mut names = Vec::new();
    let mut lp = ListParams::default().limit(500);
    loop {
        let Ok(page) = api.list_metadata(&lp).await else {
            return names;
        };
        names.extend(
            page.items
                .iter()
                .filter(|o| {
                    o.metadata
                        .finalizers
                        .as_ref()
                        .is_some_and(|f| !f.is_empty())
                })
                .filter_map(|o| o.metadata.name.clone()),
        );
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(c) => lp = lp.continue_token(&c),
            None => return names,
        }
    }
}

/// DELETE of a whole collection whose response — every deleted object,
/// hundreds of megabytes at 100 000 widgets — is never read: the body is
/// dropped unread (best effort, like the rest of the clean-up).
async fn delete_all(client: &kube::Client, url_path: &str) {
    let Ok(req) = kube::core::Request::new(url_path)
        .delete_collection(&DeleteParams::default(), &ListParams::default())
    else {
        return;
    };
    let _ = client.send(req.map(kube::client::Body::from)).await;
}

/// What the namespace controller would do for the objects a run creates:
/// the widgets, `kinds` (the workload's), the common kinds, the identity.
async fn empty_and_finalize(
    client: &kube::Client,
    name: &str,
    kinds: &[ApiResource],
) -> Result<()> {
    let dp = DeleteParams::default();
    let lp = ListParams::default();
    let widget = ApiResource::erase::<Widget>(&());
    for ar in std::iter::once(&widget).chain(kinds) {
        let api = Api::<DynamicObject>::namespaced_with(client.clone(), name, ar);
        // The controller is stopped by now: drop the finalizers it added
        // (e.g. the finalizer preset) so that the objects can go. Metadata
        // only, a page at a time: a run may hold 100 000 objects.
        for n in with_finalizers(&api).await {
            let _ = api
                .patch(
                    &n,
                    &PatchParams::default(),
                    &Patch::Merge(json!({"metadata": {"finalizers": null}})),
                )
                .await;
        }
        delete_all(client, &DynamicObject::url_path(ar, Some(name))).await;
    }
    for (g, v, k, p) in COMMON_KINDS {
        let ar = ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(g, v, k), p);
        delete_all(client, &DynamicObject::url_path(&ar, Some(name))).await;
    }
    let _ = Api::<RoleBinding>::namespaced(client.clone(), name)
        .delete_collection(&dp, &lp)
        .await;
    let _ = Api::<Role>::namespaced(client.clone(), name)
        .delete_collection(&dp, &lp)
        .await;
    let _ = Api::<ServiceAccount>::namespaced(client.clone(), name)
        .delete_collection(&dp, &lp)
        .await;
    let body = serde_json::to_vec(&json!({
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": name}, "spec": {"finalizers": []}
    }))?;
    let req = http::Request::put(format!("/api/v1/namespaces/{name}/finalize"))
        .header("Content-Type", "application/json")
        .body(body)?;
    match client.request_text(req).await {
        Err(e) if !not_found(&e) => {
            Err(e).with_context(|| format!("cannot finalize namespace {name}"))
        }
        _ => Ok(()),
    }
}
