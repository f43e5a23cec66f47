//! Our pod watch against a plane with fake nodes: a Deployment's pods are
//! recorded with the Deployment as their owner (followed up from the
//! ReplicaSet) and every stage in order; a watch started again over the
//! same records lists them without adding or moving any; deleted pods keep
//! their rows. The plane names the processes plane.csv samples.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ctrlbench::run::measure::pods::{PodTimes, watch_pods};
use ctrlbench_plane::{ControlPlane, PlaneOptions};
use ctrlbench_record::pods::PodRecord;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Namespace, Pod};
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// Polls `times` until `done` holds of its rows, for at most 60 s.
async fn until(
    times: &PodTimes,
    origin: Instant,
    done: impl Fn(&[PodRecord]) -> bool,
) -> Vec<PodRecord> {
    let t0 = Instant::now();
    loop {
        let rows = times.rows("web", origin);
        if done(&rows) {
            return rows;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "after 60 s: {rows:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn a_deployments_pods_are_timed_from_our_watch() {
    let opts = PlaneOptions {
        etcd_fsync: false,
        controller_manager: true,
        nodes: 2,
        ..PlaneOptions::default()
    };
    let plane = ControlPlane::start(&opts).await.unwrap();
    // What plane.csv samples: the three processes beyond etcd and the apiserver, running.
    let extra = plane.extra_processes();
    let names: Vec<&str> = extra.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, ["kube-controller-manager", "kube-scheduler", "kwok"]);
    for (n, pid) in &extra {
        assert!(
            std::path::Path::new(&format!("/proc/{pid}/stat")).exists(),
            "{n}"
        );
    }
    let c = plane.client().await.unwrap();
    let ns: Api<Namespace> = Api::all(c.clone());
    ns.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": "web"}})).unwrap(),
    )
    .await
    .unwrap();
    let origin = Instant::now();
    let times = Arc::new(PodTimes::default());
    let cancel = CancellationToken::new();
    let watch = tokio::spawn(watch_pods(
        c.clone(),
        "web".into(),
        times.clone(),
        cancel.clone(),
    ));
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
    let rows = until(&times, origin, |r| {
        r.len() == 2 && r.iter().all(|p| p.ready_s.is_some())
    })
    .await;
    let pods: Api<Pod> = Api::namespaced(c.clone(), "web");
    let names: Vec<String> = pods
        .list(&ListParams::default().labels("app=web"))
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|p| p.metadata.name)
        .collect();
    for p in &rows {
        assert!(names.contains(&p.pod), "{p:?} not among {names:?}");
        assert_eq!(
            (
                p.namespace.as_str(),
                p.owner_kind.as_str(),
                p.owner.as_str()
            ),
            ("web", "Deployment", "web")
        );
        let stages = [p.created_s, p.scheduled_s, p.running_s, p.ready_s].map(|s| s.unwrap());
        assert!(stages[0] >= 0.0, "{p:?}");
        assert!(
            stages.windows(2).all(|w| w[0] <= w[1]),
            "out of order: {p:?}"
        );
    }
    // A watch that starts again lists the same pods: no row added or moved.
    cancel.cancel();
    watch.await.unwrap();
    let cancel = CancellationToken::new();
    let watch = tokio::spawn(watch_pods(
        c.clone(),
        "web".into(),
        times.clone(),
        cancel.clone(),
    ));
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(times.rows("web", origin), rows);
    // Deleted: the pods are gone from the namespace, not from the record.
    deployments
        .delete("web", &DeleteParams::foreground())
        .await
        .unwrap();
    let t0 = Instant::now();
    while !pods
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .is_empty()
    {
        assert!(t0.elapsed() < Duration::from_secs(60), "pods not deleted");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(times.rows("web", origin), rows);
    cancel.cancel();
    watch.await.unwrap();
}
