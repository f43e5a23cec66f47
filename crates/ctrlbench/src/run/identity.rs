//! A controller's own identity: a ServiceAccount allowed only its namespace
//! (Role + RoleBinding on widgets and widgets/status), a token from the
//! TokenRequest API, and a kubeconfig (0600) carrying it.

use std::path::Path;

use anyhow::{Context, Result};
use k8s_openapi::api::authentication::v1::TokenRequest;
use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use kube::Resource;
use kube::api::{Api, PostParams};
use kube::config::Kubeconfig;
use serde_json::json;
use widget_api::Widget;

use crate::cluster::kubeconfig::{self, Credentials};

/// Token lifetime asked of the TokenRequest API (the server may shorten it).
const TOKEN_SECONDS: i64 = 24 * 3600;

/// A namespaced identity and its kubeconfig.
pub struct Identity {
    pub namespace: String,
    pub service_account: String,
    pub kubeconfig: Kubeconfig,
}

/// Creates ServiceAccount `name`, a Role and RoleBinding of the same name in
/// `ns`, and a kubeconfig for it that talks to the same server as `admin_kc`.
pub async fn create(
    client: &kube::Client,
    admin_kc: &Kubeconfig,
    ns: &str,
    name: &str,
) -> Result<Identity> {
    let pp = PostParams::default();
    let sas: Api<ServiceAccount> = Api::namespaced(client.clone(), ns);
    sas.create(
        &pp,
        &serde_json::from_value(json!({"metadata": {"name": name}}))?,
    )
    .await
    .with_context(|| format!("cannot create ServiceAccount {ns}/{name}"))?;
    let (group, plural) = (Widget::group(&()), Widget::plural(&()));
    let roles: Api<Role> = Api::namespaced(client.clone(), ns);
    roles
        .create(
            &pp,
            &serde_json::from_value(json!({
                "metadata": {"name": name},
                "rules": [
                    {"apiGroups": [group], "resources": [plural],
                     "verbs": ["get", "list", "watch", "update", "patch"]},
                    {"apiGroups": [group], "resources": [format!("{plural}/status")],
                     "verbs": ["get", "update", "patch"]},
                ]
            }))?,
        )
        .await
        .with_context(|| format!("cannot create Role {ns}/{name}"))?;
    let bindings: Api<RoleBinding> = Api::namespaced(client.clone(), ns);
    bindings
        .create(
            &pp,
            &serde_json::from_value(json!({
                "metadata": {"name": name},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
                "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": ns}],
            }))?,
        )
        .await
        .with_context(|| format!("cannot create RoleBinding {ns}/{name}"))?;
    let tr: TokenRequest =
        serde_json::from_value(json!({"spec": {"expirationSeconds": TOKEN_SECONDS}}))?;
    let tr: TokenRequest = sas
        .create_subresource("token", name, &pp, &tr)
        .await
        .with_context(|| format!("TokenRequest for {ns}/{name} failed"))?;
    let token = tr.status.context("TokenRequest returned no token")?.token;

    // The cluster the admin client talks to (the selected context's), with
    // its TLS settings as written: a token must never go to another server.
    let cluster = kubeconfig::current_cluster(admin_kc)?;
    let kc = kubeconfig::for_cluster(name, cluster, Credentials::Token(&token), Some(ns));
    Ok(Identity {
        namespace: ns.to_string(),
        service_account: name.to_string(),
        kubeconfig: kc,
    })
}

impl Identity {
    /// Writes the identity's kubeconfig (mode 0600).
    pub fn write(&self, path: &Path) -> Result<()> {
        kubeconfig::write(path, &self.kubeconfig)
    }

    pub async fn client(&self) -> Result<kube::Client> {
        kubeconfig::client(&self.kubeconfig).await
    }
}
