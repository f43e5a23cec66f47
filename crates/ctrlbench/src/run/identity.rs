//! A controller's own identity: a ServiceAccount allowed only its namespace
//! (Role + RoleBinding: on widgets and widgets/status for ours, the
//! experiment file's `rbac` rules for a command), a token from the
//! TokenRequest API, and a kubeconfig (0600) carrying it. A preset whose
//! cache spans all namespaces (`cache = "cluster"`) also gets a ClusterRole
//! and ClusterRoleBinding that allow list/watch of widgets cluster-wide, and
//! nothing else; a command gets its file's `cluster_rbac` (reads only, see
//! `experiment::spec::check_rbac`). [`delete_cluster_scope`] removes them.

use std::path::Path;

use anyhow::{Context, Result};
use k8s_openapi::api::authentication::v1::TokenRequest;
use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use kube::Resource;
use kube::api::{Api, DeleteParams, PostParams};
use kube::config::Kubeconfig;
use serde_json::json;
use widget_api::Widget;

use ctrlbench_plane::kubeconfig::{self, Credentials};

/// Token lifetime asked of the TokenRequest API (the server may shorten it).
const TOKEN_SECONDS: i64 = 24 * 3600;

/// A namespaced identity and its kubeconfig.
pub struct Identity {
    pub namespace: String,
    pub service_account: String,
    pub kubeconfig: Kubeconfig,
}

/// The ClusterRole and ClusterRoleBinding of a cluster-scoped identity in `ns`.
pub fn cluster_scope_name(ns: &str) -> String {
    format!("ctrlbench-{ns}")
}

/// What an identity may do: RBAC rules (as the API writes them) in its
/// namespace and cluster-wide.
#[derive(Debug, Clone, Default)]
pub struct Grants {
    pub namespaced: Vec<serde_json::Value>,
    pub cluster: Vec<serde_json::Value>,
}

impl Grants {
    /// Ours: widgets and widgets/status in the namespace; with
    /// `cluster_scope`, list/watch of widgets in every namespace.
    pub fn widgets(cluster_scope: bool) -> Grants {
        let (group, plural) = (Widget::group(&()), Widget::plural(&()));
        Grants {
            namespaced: vec![
                json!({"apiGroups": [group], "resources": [plural],
                       "verbs": ["get", "list", "watch", "update", "patch"]}),
                json!({"apiGroups": [group], "resources": [format!("{plural}/status")],
                       "verbs": ["get", "update", "patch"]}),
            ],
            cluster: if cluster_scope {
                vec![
                    json!({"apiGroups": [group], "resources": [plural], "verbs": ["list", "watch"]}),
                ]
            } else {
                Vec::new()
            },
        }
    }

    /// These and what a leader election needs in the namespace: the Lease
    /// (controller-runtime's resource lock and kube-lease-manager) and the
    /// events controller-runtime records on it (kubebuilder's
    /// leader-election Role has the same).
    pub fn with_leases(mut self) -> Grants {
        self.namespaced.push(json!({"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
                                    "verbs": ["get", "list", "watch", "create", "update", "patch"]}));
        self.namespaced
            .push(json!({"apiGroups": [""], "resources": ["events"],
                                    "verbs": ["create", "patch"]}));
        self
    }

    /// A command's: its experiment file's `rbac` and `cluster_rbac`.
    pub fn of_rules(
        rbac: &[crate::experiment::spec::RbacRule],
        cluster_rbac: &[crate::experiment::spec::RbacRule],
    ) -> Grants {
        let conv = |r: &crate::experiment::spec::RbacRule| json!({"apiGroups": r.api_groups, "resources": r.resources, "verbs": r.verbs});
        Grants {
            namespaced: rbac.iter().map(conv).collect(),
            cluster: cluster_rbac.iter().map(conv).collect(),
        }
    }

    /// The cluster-wide grants, one line each ("list, watch on
    /// apps/deployments"), for the summary and the report.
    pub fn describe_cluster(&self) -> Vec<String> {
        let strs = |v: &serde_json::Value, k: &str| -> Vec<String> {
            v[k].as_array()
                .into_iter()
                .flatten()
                .filter_map(|x| x.as_str().map(String::from))
                .collect()
        };
        self.cluster
            .iter()
            .map(|r| {
                let groups = strs(r, "apiGroups");
                let res: Vec<String> = strs(r, "resources")
                    .iter()
                    .flat_map(|x| {
                        groups.iter().map(move |g| {
                            if g.is_empty() {
                                x.clone()
                            } else {
                                format!("{g}/{x}")
                            }
                        })
                    })
                    .collect();
                format!("{} on {}", strs(r, "verbs").join(", "), res.join(", "))
            })
            .collect()
    }
}

/// Creates ServiceAccount `name`, a Role and RoleBinding of the same name in
/// `ns`, and a kubeconfig for it that talks to the same server as `admin_kc`.
/// Cluster-wide grants become a ClusterRole and ClusterRoleBinding
/// ([`cluster_scope_name`]).
pub async fn create(
    client: &kube::Client,
    admin_kc: &Kubeconfig,
    ns: &str,
    name: &str,
    grants: &Grants,
) -> Result<Identity> {
    let pp = PostParams::default();
    let sas: Api<ServiceAccount> = Api::namespaced(client.clone(), ns);
    sas.create(
        &pp,
        &serde_json::from_value(json!({"metadata": {"name": name}}))?,
    )
    .await
    .with_context(|| format!("cannot create ServiceAccount {ns}/{name}"))?;
    let roles: Api<Role> = Api::namespaced(client.clone(), ns);
    roles
        .create(
            &pp,
            &serde_json::from_value(json!({
                "metadata": {"name": name},
                "rules": grants.namespaced,
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
    if !grants.cluster.is_empty() {
        let cname = cluster_scope_name(ns);
        Api::<ClusterRole>::all(client.clone())
            .create(
                &pp,
                &serde_json::from_value(json!({
                    "metadata": {"name": cname, "labels": {super::namespace::LABEL: ns}},
                    "rules": grants.cluster,
                }))?,
            )
            .await
            .with_context(|| format!("cannot create ClusterRole {cname}"))?;
        Api::<ClusterRoleBinding>::all(client.clone())
            .create(
                &pp,
                &serde_json::from_value(json!({
                    "metadata": {"name": cname},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": cname},
                    "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": ns}],
                }))?,
            )
            .await
            .with_context(|| format!("cannot create ClusterRoleBinding {cname}"))?;
    }
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

/// Removes what `create(.., cluster_scope = true)` made outside `ns` (absent: fine).
pub async fn delete_cluster_scope(client: &kube::Client, ns: &str) -> Result<()> {
    let cname = cluster_scope_name(ns);
    let dp = DeleteParams::default();
    for r in [
        Api::<ClusterRoleBinding>::all(client.clone())
            .delete(&cname, &dp)
            .await
            .map(|_| ()),
        Api::<ClusterRole>::all(client.clone())
            .delete(&cname, &dp)
            .await
            .map(|_| ()),
    ] {
        match r {
            Err(kube::Error::Api(s)) if s.code == 404 => {}
            r => r.with_context(|| format!("cannot delete ClusterRole(Binding) {cname}"))?,
        }
    }
    Ok(())
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
