//! Fake nodes for a plane (`nodes = N`): kube-scheduler and KWOK started
//! with their own client certificates and kubeconfigs, KWOK's cluster role
//! bound to its user, then N Node objects annotated for KWOK, Ready once it
//! has taken them over. Pods of workload controllers then get scheduled and
//! become Running and Ready with no container runtime.
//!
//! Kept out of `plane` so the plane's file stays about the plane; it takes
//! what it needs (directory, URL, PEMs, client) rather than the plane.

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use k8s_openapi::api::core::v1::{Node, NodeStatus};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, PolicyRule, RoleRef, Subject};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kube::api::{Api, ObjectMeta, Patch, PatchParams, PostParams};

use crate::binaries::Binaries;
use crate::kubeconfig::{self, Credentials};
use crate::kwok::{KwokConfig, NODE_ANNOTATION};
use crate::options::PlaneOptions;
use crate::process::Process;
use crate::scheduler::SchedulerConfig;
use crate::tinyca::{self, ClientPem, Pems};

/// Each fake node's capacity: pods as the options say (kubelet's default
/// limit unless asked otherwise), and room enough that requests never decide
/// where a pod goes.
pub const NODE_CPU: &str = "32";
pub const NODE_MEMORY: &str = "256Gi";

/// The processes behind the fake nodes.
#[derive(Debug)]
pub struct FakeNodes {
    pub scheduler: Process,
    pub kwok: Process,
}

impl FakeNodes {
    /// Both processes, scheduler first.
    pub fn processes(&mut self) -> [&mut Process; 2] {
        [&mut self.scheduler, &mut self.kwok]
    }
}

/// The name of fake node `k`.
pub fn node_name(k: usize) -> String {
    format!("kwok-node-{k}")
}

/// Binds KWOK's role and starts kube-scheduler and kwok; the caller keeps
/// them (so they stop with the plane) before [`create_and_wait`].
pub async fn start(
    dir: &Path,
    bins: &Binaries,
    url: &str,
    pems: &Pems,
    client: &kube::Client,
    opts: &PlaneOptions,
    detached: bool,
) -> Result<FakeNodes> {
    let scheduler_bin = bins
        .kube_scheduler
        .clone()
        .context("no kube-scheduler binary (PlaneOptions::binaries)")?;
    let kwok = bins
        .kwok
        .clone()
        .context("no kwok binary (PlaneOptions::binaries)")?;
    bind_kwok_role(client).await?;
    let write = |name: &str, creds: &ClientPem| -> Result<std::path::PathBuf> {
        let path = dir.join(format!("{name}.kubeconfig"));
        let creds = Credentials::Cert {
            cert: &creds.cert,
            key: &creds.key,
        };
        kubeconfig::write(
            &path,
            &kubeconfig::build("ctrlbench", url, &pems.ca_cert, creds, None),
        )?;
        Ok(path)
    };
    let [sched_port, kwok_port] = free_ports()?;
    let scheduler = SchedulerConfig {
        bin: scheduler_bin,
        kubeconfig: write("kube-scheduler", &pems.scheduler)?,
        port: sched_port,
        cert_dir: dir.join("kube-scheduler"),
        client: opts.scheduler_client,
        without_default_spread: opts.scheduler_without_default_spread,
        extra_args: vec![],
    }
    .start(&dir.join("kube-scheduler.log"), detached)?;
    let kwok = KwokConfig {
        bin: kwok.bin,
        stages: kwok.stages,
        kubeconfig: write("kwok", &pems.kwok)?,
        port: kwok_port,
        extra_args: vec![],
    }
    .start(&dir.join("kwok.log"), detached)?;
    Ok(FakeNodes { scheduler, kwok })
}

/// Creates the `n` Node objects and waits until KWOK reports each Ready,
/// failing early if either process exits.
pub async fn create_and_wait(
    nodes: &Mutex<Option<FakeNodes>>,
    client: &kube::Client,
    opts: &PlaneOptions,
) -> Result<()> {
    let (n, pods, timeout) = (opts.nodes, opts.node_pods, opts.startup_timeout);
    let api: Api<Node> = Api::all(client.clone());
    for k in 0..n {
        let node = fake_node(&node_name(k), pods);
        match api.create(&PostParams::default(), &node).await {
            Ok(_) => {}
            Err(kube::Error::Api(e)) if e.code == 409 => {}
            Err(e) => return Err(e).context("cannot create a fake node"),
        }
    }
    let t0 = Instant::now();
    loop {
        if let Some(n) = nodes.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
            for p in n.processes() {
                if !p.is_running() {
                    bail!("{} exited during start-up: {}", p.name, p.log_summary());
                }
            }
        }
        let mut ready = 0;
        for k in 0..n {
            if api
                .get_opt(&node_name(k))
                .await?
                .as_ref()
                .is_some_and(is_ready)
            {
                ready += 1;
            }
        }
        if ready == n {
            // The apiserver taints a new node not-ready, and only the node
            // lifecycle controller, which this plane does not run, lifts it.
            let untaint = serde_json::json!({"spec": {"taints": null}});
            for k in 0..n {
                api.patch(
                    &node_name(k),
                    &PatchParams::default(),
                    &Patch::Merge(&untaint),
                )
                .await
                .context("cannot lift a fake node's not-ready taint")?;
            }
            return Ok(());
        }
        if t0.elapsed() > timeout {
            bail!(
                "{ready} of {n} fake nodes Ready after {timeout:?} (see kwok.log in the plane directory)"
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Whether a node's Ready condition is True.
fn is_ready(n: &Node) -> bool {
    n.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

/// A Node for KWOK: annotated so it takes it over, with capacity set at
/// creation (KWOK's node-initialize stage keeps what it finds).
fn fake_node(name: &str, pods: usize) -> Node {
    let resources: BTreeMap<String, Quantity> = [
        ("pods", pods.to_string()),
        ("cpu", NODE_CPU.to_string()),
        ("memory", NODE_MEMORY.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), Quantity(v)))
    .collect();
    Node {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            annotations: Some(BTreeMap::from([(
                NODE_ANNOTATION.0.to_string(),
                NODE_ANNOTATION.1.to_string(),
            )])),
            labels: Some(BTreeMap::from([
                ("type".to_string(), "kwok".to_string()),
                ("kubernetes.io/hostname".to_string(), name.to_string()),
                ("kubernetes.io/os".to_string(), "linux".to_string()),
            ])),
            ..Default::default()
        },
        status: Some(NodeStatus {
            allocatable: Some(resources.clone()),
            capacity: Some(resources),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// KWOK's cluster role (its kustomize/rbac/role.yaml, less its own CRDs,
/// which the plane does not enable) bound to its user.
async fn bind_kwok_role(client: &kube::Client) -> Result<()> {
    let rule = |groups: &[&str], resources: &[&str], verbs: &[&str]| PolicyRule {
        api_groups: Some(groups.iter().map(|s| s.to_string()).collect()),
        resources: Some(resources.iter().map(|s| s.to_string()).collect()),
        verbs: verbs.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    };
    let all = [
        "create", "delete", "get", "list", "patch", "update", "watch",
    ];
    let name = tinyca::KWOK_USER;
    let role = ClusterRole {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        rules: Some(vec![
            rule(&[""], &["events"], &all),
            rule(&[""], &["nodes"], &["get", "list", "watch"]),
            rule(
                &[""],
                &["nodes/status", "pods/status"],
                &["patch", "update"],
            ),
            rule(
                &[""],
                &["pods"],
                &["delete", "get", "list", "patch", "update", "watch"],
            ),
            rule(
                &["coordination.k8s.io"],
                &["leases"],
                &["create", "get", "list", "patch", "update", "watch"],
            ),
        ]),
        ..Default::default()
    };
    let binding = ClusterRoleBinding {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        role_ref: RoleRef {
            api_group: "rbac.authorization.k8s.io".into(),
            kind: "ClusterRole".into(),
            name: name.into(),
        },
        subjects: Some(vec![Subject {
            api_group: Some("rbac.authorization.k8s.io".into()),
            kind: "User".into(),
            name: name.into(),
            ..Default::default()
        }]),
    };
    let pp = PatchParams::apply("ctrlbench").force();
    Api::<ClusterRole>::all(client.clone())
        .patch(name, &pp, &Patch::Apply(&role))
        .await
        .context("cannot apply KWOK's cluster role")?;
    Api::<ClusterRoleBinding>::all(client.clone())
        .patch(name, &pp, &Patch::Apply(&binding))
        .await
        .context("cannot bind KWOK's cluster role")?;
    Ok(())
}

/// Two distinct free loopback ports (both listeners held until both are chosen).
fn free_ports() -> Result<[u16; 2]> {
    let a = TcpListener::bind("127.0.0.1:0").context("no free port on 127.0.0.1")?;
    let b = TcpListener::bind("127.0.0.1:0").context("no free port on 127.0.0.1")?;
    Ok([a.local_addr()?.port(), b.local_addr()?.port()])
}
