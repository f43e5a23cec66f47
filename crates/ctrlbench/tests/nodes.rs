//! A plane with fake nodes, tested against itself: kube-scheduler binds a
//! Deployment's pods to KWOK nodes, KWOK makes them Running and Ready, and
//! both processes stop with the plane.

use std::time::{Duration, Instant};

use ctrlbench_plane::{ControlPlane, PlaneOptions};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Namespace, Node, Pod};
use kube::api::{Api, ListParams, PostParams};
use serde_json::json;

/// Two fake nodes run a Deployment of two replicas within 60 s; dropping
/// the plane leaves no kube-scheduler or kwok behind.
#[tokio::test]
async fn fake_nodes_run_a_deployment() {
    let opts = PlaneOptions {
        etcd_fsync: false,
        controller_manager: true,
        nodes: 2,
        node_pods: 7,
        ..PlaneOptions::default()
    };
    let plane = ControlPlane::start(&opts).await.unwrap();
    let pids: Vec<u32> = plane
        .nodes
        .lock()
        .unwrap()
        .as_mut()
        .expect("fake nodes' processes")
        .processes()
        .iter()
        .map(|p| p.pid)
        .collect();
    let c = plane.client().await.unwrap();
    // Each node takes the pods the options give it.
    let nodes = Api::<Node>::all(c.clone())
        .list(&ListParams::default())
        .await
        .unwrap();
    assert_eq!(nodes.items.len(), 2);
    for node in nodes {
        let st = node.status.unwrap_or_default();
        for m in [st.capacity, st.allocatable] {
            let pods = m.and_then(|m| m.get("pods").map(|q| q.0.clone()));
            assert_eq!(pods.as_deref(), Some("7"));
        }
    }
    let ns: Api<Namespace> = Api::all(c.clone());
    ns.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": "web"}})).unwrap(),
    )
    .await
    .unwrap();
    let deployments: Api<Deployment> = Api::namespaced(c.clone(), "web");
    let labels = json!({"app": "web"});
    let d = json!({
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "web", "image": "example.invalid/web:1"}]}
            }
        }
    });
    deployments
        .create(&PostParams::default(), &serde_json::from_value(d).unwrap())
        .await
        .unwrap();
    let pods: Api<Pod> = Api::namespaced(c.clone(), "web");
    let t0 = Instant::now();
    loop {
        let available = deployments
            .get("web")
            .await
            .unwrap()
            .status
            .and_then(|s| s.available_replicas)
            .unwrap_or(0);
        let running: Vec<String> = pods
            .list(&ListParams::default().labels("app=web"))
            .await
            .unwrap()
            .items
            .into_iter()
            .filter(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running"))
            .filter_map(|p| p.spec.and_then(|s| s.node_name))
            .collect();
        if available == 2 && running.len() == 2 {
            assert!(
                running.iter().all(|n| n.starts_with("kwok-node-")),
                "{running:?}"
            );
            break;
        }
        if t0.elapsed() > Duration::from_secs(60) {
            let tail = |f: &str| {
                let log = std::fs::read_to_string(plane.dir.join(f)).unwrap_or_default();
                let lines: Vec<&str> = log.lines().collect();
                lines[lines.len().saturating_sub(15)..].join("\n")
            };
            panic!(
                "after 60 s: {available} available, running on {running:?}\n{}\n{}\n{}",
                tail("kube-controller-manager.log"),
                tail("kube-scheduler.log"),
                tail("kwok.log")
            );
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    drop(plane);
    for pid in pids {
        assert!(
            !std::path::Path::new(&format!("/proc/{pid}")).exists()
                || std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .is_ok_and(|s| s.contains(") Z ")),
            "pid {pid} still runs after the plane was dropped"
        );
    }
}
