//! The local control plane, tested against itself: one shared plane for this
//! binary (ctrlbench_plane::testing), plus CLI runs for the lifecycle cases.

mod common;
use common::assert_success;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ctrlbench_plane::process::is_alive;
use ctrlbench_plane::testing::shared_plane;
use ctrlbench_plane::{ControlPlane, PlaneOptions};
use futures::StreamExt;
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;
use widget_api::{Widget, WidgetStatus};

async fn namespace(client: &kube::Client, name: &str) {
    let api: Api<Namespace> = Api::all(client.clone());
    api.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": name}})).unwrap(),
    )
    .await
    .unwrap();
}

fn status_code(e: &kube::Error) -> Option<u16> {
    match e {
        kube::Error::Api(s) => Some(s.code),
        _ => None,
    }
}

#[tokio::test]
async fn crd_is_established_with_printer_columns() {
    let client = shared_plane().client().await;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let crd = crds.get("widgets.benchmark.example.com").await.unwrap();
    let established = crd
        .status
        .unwrap()
        .conditions
        .unwrap_or_default()
        .into_iter()
        .any(|c| c.type_ == "Established" && c.status == "True");
    assert!(established);

    namespace(&client, "table").await;
    let widgets: Api<Widget> = Api::namespaced(client.clone(), "table");
    widgets
        .create(&PostParams::default(), &Widget::numbered(5))
        .await
        .unwrap();
    let (cols, rows) = ctrlbench::demo::widget_table(&client, "table")
        .await
        .unwrap();
    for c in ["Phase", "Count", "Age"] {
        assert!(
            cols.iter().any(|x| x == c),
            "column {c} missing from {cols:?}"
        );
    }
    let count_col = cols.iter().position(|c| c == "Count").unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0][count_col], "5");
}

#[tokio::test]
async fn status_subresource_semantics() {
    let client = shared_plane().client().await;
    namespace(&client, "semantics").await;
    let api: Api<Widget> = Api::namespaced(client.clone(), "semantics");
    let name = "widget-000001";
    let mut w = Widget::numbered(1);
    w.status = Some(WidgetStatus {
        phase: Some("Sent-on-create".into()),
        ..Default::default()
    });
    let created = api.create(&PostParams::default(), &w).await.unwrap();
    assert_eq!(
        created.status, None,
        "status sent on create must be dropped"
    );
    assert_eq!(created.metadata.generation, Some(1));

    // A status write does not bump generation.
    let s = api
        .patch_status(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "Ready", "processedCount": 1}})),
        )
        .await
        .unwrap();
    assert!(s.is_ready());
    assert_eq!(s.metadata.generation, Some(1));

    // Replacing the main resource keeps the stored status and ignores the one sent.
    let mut replace = s.clone();
    replace.status = Some(WidgetStatus {
        phase: Some("Ignored".into()),
        ..Default::default()
    });
    let r = api
        .replace(name, &PostParams::default(), &replace)
        .await
        .unwrap();
    assert_eq!(r.status.as_ref().unwrap().phase.as_deref(), Some("Ready"));
    assert_eq!(
        api.get(name)
            .await
            .unwrap()
            .status
            .unwrap()
            .phase
            .as_deref(),
        Some("Ready")
    );

    // An annotation change does not bump generation; a spec change does.
    let a = api
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {"bad-controller/last-seen": "1"}}})),
        )
        .await
        .unwrap();
    assert_eq!(a.metadata.generation, Some(1));
    assert!(a.metadata.resource_version != r.metadata.resource_version);
    let sp = api
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"count": 2}})),
        )
        .await
        .unwrap();
    assert_eq!(sp.metadata.generation, Some(2));
}

#[tokio::test]
async fn stale_status_update_conflicts_and_merge_patch_does_not() {
    let client = shared_plane().client().await;
    namespace(&client, "conflicts").await;
    let api: Api<Widget> = Api::namespaced(client.clone(), "conflicts");
    let name = "widget-000001";
    let stale = api
        .create(&PostParams::default(), &Widget::numbered(1))
        .await
        .unwrap();
    api.patch(
        name,
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"annotations": {"touch": "1"}}})),
    )
    .await
    .unwrap();
    let mut update = stale.clone();
    update.status = Some(WidgetStatus {
        phase: Some("Ready".into()),
        ..Default::default()
    });
    let err = api
        .replace_status(name, &PostParams::default(), &update)
        .await
        .unwrap_err();
    assert_eq!(status_code(&err), Some(409), "{err}");

    let ok = api
        .patch_status(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "Ready"}})),
        )
        .await
        .unwrap();
    assert!(ok.is_ready());
}

#[tokio::test]
async fn namespaced_identity_is_confined_to_its_namespace() {
    let plane = shared_plane();
    let admin = plane.client().await;
    namespace(&admin, "own").await;
    namespace(&admin, "other").await;
    for ns in ["own", "other"] {
        let api: Api<Widget> = Api::namespaced(admin.clone(), ns);
        api.create(&PostParams::default(), &Widget::numbered(1))
            .await
            .unwrap();
    }
    let id = ctrlbench::run::identity::create(
        &admin,
        &plane.kubeconfig,
        "own",
        "ctrl",
        &ctrlbench::run::identity::Grants::widgets(false),
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kc_path = dir.path().join("kubeconfig");
    id.write(&kc_path).unwrap();
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&kc_path).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let client = ctrlbench_plane::kubeconfig::client_from_file(&kc_path)
        .await
        .unwrap();

    let own: Api<Widget> = Api::namespaced(client.clone(), "own");
    let name = "widget-000001";
    let w = own.get(name).await.unwrap();
    assert_eq!(
        own.list(&ListParams::default()).await.unwrap().items.len(),
        1
    );
    let mut stream = own
        .watch(&kube::api::WatchParams::default(), "0")
        .await
        .unwrap()
        .boxed();

    let first = tokio::time::timeout(Duration::from_secs(10), stream.next())
        .await
        .unwrap();
    assert!(first.unwrap().is_ok());
    own.replace(name, &PostParams::default(), &w).await.unwrap();
    let mut s = own.get_status(name).await.unwrap();
    s.status = Some(WidgetStatus {
        phase: Some("Ready".into()),
        ..Default::default()
    });
    own.replace_status(name, &PostParams::default(), &s)
        .await
        .unwrap();
    own.patch_status(
        name,
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"processedCount": 1}})),
    )
    .await
    .unwrap();

    let other: Api<Widget> = Api::namespaced(client.clone(), "other");
    assert_eq!(status_code(&other.get(name).await.unwrap_err()), Some(403));
    assert_eq!(
        status_code(&other.list(&ListParams::default()).await.unwrap_err()),
        Some(403)
    );
    let err = other
        .patch_status(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "Ready"}})),
        )
        .await
        .unwrap_err();
    assert_eq!(status_code(&err), Some(403));
    let all: Api<Widget> = Api::all(client);
    assert_eq!(
        status_code(&all.list(&ListParams::default()).await.unwrap_err()),
        Some(403)
    );
}

#[tokio::test]
async fn shared_plane_kubeconfig_is_private() {
    use std::os::unix::fs::PermissionsExt;
    let p = shared_plane();
    assert!(p.version.starts_with("v1."), "{}", p.version);
    let mode = std::fs::metadata(&p.kubeconfig_path)
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    assert!(p.url.starts_with("https://127.0.0.1:"));
}

#[tokio::test]
async fn two_planes_run_at_once() {
    let opts = PlaneOptions {
        etcd_fsync: false,
        ..PlaneOptions::default()
    };
    let (a, b) = tokio::join!(ControlPlane::start(&opts), ControlPlane::start(&opts));
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_ne!(a.url(), b.url());
    assert_ne!(a.etcd_client_urls(), b.etcd_client_urls());
    for p in [&a, &b] {
        let c = p.client().await.unwrap();
        assert!(
            c.apiserver_version()
                .await
                .unwrap()
                .git_version
                .starts_with("v1.")
        );
        namespace(&c, "same-name").await;
    }
    let dirs = [a.dir.clone(), b.dir.clone()];
    tokio::task::spawn_blocking(move || {
        a.stop();
        b.stop();
    })
    .await
    .unwrap();
    for d in dirs {
        assert!(!d.exists(), "{} left behind", d.display());
    }
}

/// With kube-controller-manager, a deleted owner's dependents are
/// collected and a deleted namespace is emptied and finalized by the plane
/// itself (nothing here finalizes it); stopping the plane stops it too.
#[tokio::test]
async fn controller_manager_collects_garbage_and_deletes_namespaces() {
    use k8s_openapi::api::core::v1::ConfigMap;
    let opts = PlaneOptions {
        etcd_fsync: false,
        controller_manager: true,
        ..PlaneOptions::default()
    };
    let plane = ControlPlane::start(&opts).await.unwrap();
    let kcm = plane
        .controller_manager
        .lock()
        .unwrap()
        .as_ref()
        .map(|c| c.process.pid)
        .expect("a kube-controller-manager process");
    let c = plane.client().await.unwrap();
    namespace(&c, "gc").await;
    let widgets: Api<Widget> = Api::namespaced(c.clone(), "gc");
    let cms: Api<ConfigMap> = Api::namespaced(c.clone(), "gc");
    let owner = widgets
        .create(
            &PostParams::default(),
            &Widget::new(
                "owner",
                widget_api::WidgetSpec {
                    count: 1,
                    message: None,
                },
            ),
        )
        .await
        .unwrap();
    let child = |name: &str| -> ConfigMap {
        serde_json::from_value(json!({"metadata": {"name": name, "ownerReferences": [{
            "apiVersion": "benchmark.example.com/v1alpha1", "kind": "Widget",
            "name": "owner", "uid": owner.metadata.uid.clone().unwrap()}]}}))
        .unwrap()
    };
    cms.create(&PostParams::default(), &child("child"))
        .await
        .unwrap();
    widgets.delete("owner", &Default::default()).await.unwrap();
    let gone = |f: Result<Option<ConfigMap>, kube::Error>| matches!(f, Ok(None));
    let t = Instant::now();
    while !gone(cms.get_opt("child").await) {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "the dependent was not collected"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // A namespace with objects in it: the namespace controller empties it.
    widgets
        .create(
            &PostParams::default(),
            &Widget::new(
                "w",
                widget_api::WidgetSpec {
                    count: 1,
                    message: None,
                },
            ),
        )
        .await
        .unwrap();
    cms.create(&PostParams::default(), &child("other"))
        .await
        .unwrap();
    let nss: Api<Namespace> = Api::all(c.clone());
    nss.delete("gc", &Default::default()).await.unwrap();
    let t = Instant::now();
    while nss.get_opt("gc").await.unwrap().is_some() {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "namespace gc not deleted"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let dir = plane.dir.clone();
    tokio::task::spawn_blocking(move || plane.stop())
        .await
        .unwrap();
    assert!(
        !is_alive(kcm, 0),
        "kube-controller-manager outlived its plane"
    );
    assert!(!dir.exists());
}

// ---- the CLI, with its plane state in a private directory ----

fn ctrlbench(state: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ctrlbench"));
    c.env("XDG_STATE_HOME", state);
    c
}

/// `cluster up` with `args`, which must succeed: (its stdout, the kubeconfig
/// path of its `export KUBECONFIG=` line).
fn up(state: &Path, args: &[&str]) -> (String, String) {
    let out = ctrlbench(state)
        .args(["cluster", "up"])
        .args(args)
        .output()
        .unwrap();
    assert_success(&out);
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let kc = stdout
        .lines()
        .find_map(|l| l.strip_prefix("export KUBECONFIG="))
        .expect("export line")
        .to_string();
    (stdout, kc)
}

/// Pids of processes whose command line mentions `needle`.
fn processes_mentioning(needle: &str) -> Vec<u32> {
    let mut out = vec![];
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if let Ok(cmd) = std::fs::read(format!("/proc/{pid}/cmdline"))
            && String::from_utf8_lossy(&cmd).contains(needle)
            && is_alive(pid, 0)
        {
            out.push(pid);
        }
    }
    out
}

fn wait_gone(pids: &[u32], within: Duration) -> Vec<u32> {
    let t0 = Instant::now();
    loop {
        let alive: Vec<u32> = pids.iter().copied().filter(|p| is_alive(*p, 0)).collect();
        if alive.is_empty() || t0.elapsed() > within {
            return alive;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn unknown_feature_gate_fails_cleanly() {
    let state = tempfile::tempdir().unwrap();
    let out = ctrlbench(state.path())
        .args([
            "cluster",
            "up",
            "--name",
            "badgate",
            "--feature-gates",
            "NoSuchGate=true",
            "--etcd-fsync",
            "off",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("NoSuchGate"), "{stderr}");
    assert!(
        stderr.contains("unrecognized feature gate"),
        "apiserver's own message missing: {stderr}"
    );
    let error_lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(error_lines.len(), 1, "{stderr}");
    let dir = state.path().join("ctrlbench/planes/badgate");
    assert!(!dir.exists(), "{} left behind", dir.display());
    let left = wait_gone(
        &processes_mentioning(&dir.display().to_string()),
        Duration::from_secs(10),
    );
    assert!(left.is_empty(), "processes left: {left:?}");
}

/// SIGKILL of `cluster up --foreground`, for a plain plane and for one with
/// fake nodes: each process it printed (etcd, kube-apiserver, and with nodes
/// kube-controller-manager, kube-scheduler and kwok) goes with it.
#[test]
fn sigkill_of_the_starter_leaves_no_process() {
    let cases: [(&str, &[&str], &[&str]); 2] = [
        ("killed", &[], &["etcd", "kube-apiserver"]),
        (
            "killed-nodes",
            &["--nodes", "2"],
            &[
                "etcd",
                "kube-apiserver",
                "kube-controller-manager",
                "kube-scheduler",
                "kwok",
            ],
        ),
    ];
    for (name, extra, expected) in cases {
        let state = tempfile::tempdir().unwrap();
        let mut child = ctrlbench(state.path())
            .args([
                "cluster",
                "up",
                "--name",
                name,
                "--foreground",
                "--etcd-fsync",
                "off",
            ])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut pids = vec![];
        for line in BufReader::new(child.stdout.take().unwrap()).lines() {
            let line = line.unwrap();
            if let Some(p) = line.strip_prefix("pid=") {
                let (pid, what) = p.split_once(' ').unwrap();
                pids.push((what.to_string(), pid.parse::<u32>().unwrap()));
            }
            if line.starts_with("export KUBECONFIG=") {
                break;
            }
        }
        let names: Vec<&str> = pids.iter().map(|(w, _)| w.as_str()).collect();
        assert_eq!(names, expected, "{name}: the processes printed");
        assert!(
            pids.iter().all(|(_, p)| is_alive(*p, 0)),
            "{name}: {pids:?}"
        );
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let pids: Vec<u32> = pids.iter().map(|(_, p)| *p).collect();
        let left = wait_gone(&pids, Duration::from_secs(10));
        assert!(
            left.is_empty(),
            "{name}: still running after SIGKILL of the starter: {left:?}"
        );

        // The recorded state is now stale: status says so and cleans up.
        let out = ctrlbench(state.path())
            .args(["cluster", "status", "--name", name])
            .output()
            .unwrap();
        assert!(String::from_utf8_lossy(&out.stdout).contains("stale"));
        assert!(!state.path().join("ctrlbench/planes").join(name).exists());
    }
}

/// A detached plane with fake nodes: `status` lists kube-scheduler and kwok
/// beside the others, and `down` from another process stops all five.
#[test]
fn down_stops_a_plane_with_fake_nodes() {
    let state = tempfile::tempdir().unwrap();
    let (stdout, _) = up(
        state.path(),
        &["--name", "noded", "--etcd-fsync", "off", "--nodes", "1"],
    );
    let pids: Vec<u32> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("pid="))
        .map(|p| p.split_whitespace().next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(pids.len(), 5, "{stdout}");
    let st = ctrlbench(state.path())
        .args(["cluster", "status", "--name", "noded"])
        .output()
        .unwrap();
    assert_success(&st);
    let status = String::from_utf8_lossy(&st.stdout);
    for what in [
        "kube-scheduler",
        "kwok",
        "kube-controller-manager (workload",
    ] {
        assert!(
            status.contains(what),
            "{what} missing from status:\n{status}"
        );
    }
    let down = ctrlbench(state.path())
        .args(["cluster", "down", "--name", "noded"])
        .output()
        .unwrap();
    assert_success(&down);
    let left = wait_gone(&pids, Duration::from_secs(10));
    assert!(left.is_empty(), "still running after down: {left:?}");
    assert!(!state.path().join("ctrlbench/planes/noded").exists());
}

#[test]
fn up_status_kubeconfig_down_from_other_processes() {
    let state = tempfile::tempdir().unwrap();
    let (_, kc) = up(state.path(), &["--name", "life", "--etcd-fsync", "off"]);
    let again = ctrlbench(state.path())
        .args(["cluster", "up", "--name", "life"])
        .output()
        .unwrap();
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("already running"));

    let st = ctrlbench(state.path())
        .args(["cluster", "status", "--name", "life"])
        .output()
        .unwrap();
    let st = String::from_utf8_lossy(&st.stdout).to_string();
    let pids: Vec<u32> = st
        .split_whitespace()
        .filter_map(|w| w.strip_prefix("pid=")?.parse().ok())
        .collect();
    assert_eq!(pids.len(), 2, "{st}");
    let path = ctrlbench(state.path())
        .args(["cluster", "kubeconfig", "--name", "life"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&path.stdout).trim(), kc);

    let down = ctrlbench(state.path())
        .args(["cluster", "down", "--name", "life"])
        .output()
        .unwrap();
    assert!(down.status.success());
    assert!(wait_gone(&pids, Duration::from_secs(5)).is_empty());
    assert!(!Path::new(&kc).exists());
    let down_again = ctrlbench(state.path())
        .args(["cluster", "down", "--name", "life"])
        .output()
        .unwrap();
    assert!(!down_again.status.success());
}

/// etcd serves TLS only and requires a client certificate from the plane's CA:
/// plain HTTP and TLS without a certificate get no data; the apiserver's own
/// etcd client certificate does (so the refusals are not just a dead port).
#[tokio::test]
async fn etcd_refuses_clients_without_a_certificate() {
    let plane = shared_plane();
    let range = format!("{}/v3/kv/range", plane.etcd_url);
    let body = r#"{"key":"AA==","range_end":"AA=="}"#;
    let ca =
        reqwest::Certificate::from_pem(&std::fs::read(plane.pki.join("ca.crt")).unwrap()).unwrap();

    // Plain HTTP to the client port.
    let plain = reqwest::Client::builder().no_proxy().build().unwrap();
    let r = plain
        .post(range.replace("https://", "http://"))
        .body(body)
        .send()
        .await;
    assert!(
        r.as_ref().map_or(true, |r| !r.status().is_success()),
        "plain HTTP answered: {r:?}"
    );

    // TLS, trusting the CA, without a client certificate.
    let anon = reqwest::Client::builder()
        .no_proxy()
        .add_root_certificate(ca.clone())
        .build()
        .unwrap();
    let r = anon.post(&range).body(body).send().await;
    assert!(
        r.as_ref().map_or(true, |r| !r.status().is_success()),
        "TLS without a client certificate answered: {r:?}"
    );

    // The apiserver's etcd client certificate is let in.
    let mut pem = std::fs::read(plane.pki.join("apiserver-etcd-client.crt")).unwrap();
    pem.extend(std::fs::read(plane.pki.join("apiserver-etcd-client.key")).unwrap());
    let with_cert = reqwest::Client::builder()
        .no_proxy()
        .add_root_certificate(ca)
        .identity(reqwest::Identity::from_pem(&pem).unwrap())
        .build()
        .unwrap();
    let r = with_cert.post(&range).body(body).send().await.unwrap();
    assert!(r.status().is_success(), "{:?}", r.status());
}

/// Two `cluster up --name same` started 200 ms apart: exactly one plane; the
/// other says the name is taken; after `down` nothing of it is left.
#[test]
fn one_plane_per_name() {
    let state = tempfile::tempdir().unwrap();
    let start = || {
        ctrlbench(state.path())
            .args(["cluster", "up", "--name", "twin", "--etcd-fsync", "off"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let a = start();
    std::thread::sleep(Duration::from_millis(200));
    let b = start();
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    let ok = [&a, &b].iter().filter(|o| o.status.success()).count();
    let loser = if a.status.success() { &b } else { &a };
    assert_eq!(
        ok,
        1,
        "a: {}\nb: {}",
        String::from_utf8_lossy(&a.stderr),
        String::from_utf8_lossy(&b.stderr)
    );
    let err = String::from_utf8_lossy(&loser.stderr);
    assert!(err.contains("already running or starting"), "{err}");
    let plane_dir = state.path().join("ctrlbench/planes/twin");
    let pids = processes_mentioning(&plane_dir.display().to_string());
    assert_eq!(pids.len(), 2, "one etcd and one kube-apiserver: {pids:?}");

    let down = ctrlbench(state.path())
        .args(["cluster", "down", "--name", "twin"])
        .output()
        .unwrap();
    assert!(down.status.success());
    assert!(wait_gone(&pids, Duration::from_secs(15)).is_empty());
    assert!(!plane_dir.exists());
}

/// On an existing cluster a run removes the Widget CRD only if it installed
/// it and no widget remains anywhere (someone else's widgets would go with it).
#[tokio::test]
async fn the_crd_is_removed_only_if_ours_and_unused() {
    let plane = ControlPlane::start(&PlaneOptions {
        install_crd: false,
        etcd_fsync: false,
        ..PlaneOptions::default()
    })
    .await
    .unwrap();
    let admin = plane.client().await.unwrap();
    let crds: Api<CustomResourceDefinition> = Api::all(admin.clone());
    let crd = "widgets.benchmark.example.com";
    let connect = || {
        ctrlbench::run::Cluster::connect(
            PlaneOptions::default(),
            Some(plane.kubeconfig_path.clone()),
            None,
        )
    };
    let wait_gone = || async {
        let t0 = Instant::now();
        while crds.get_opt(crd).await.unwrap().is_some() {
            assert!(t0.elapsed() < Duration::from_secs(60), "CRD never went");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    };

    // Installed by the run, and someone else's widget appears: kept.
    let c = connect().await.unwrap();
    namespace(&admin, "foreign").await;
    let w: Api<Widget> = Api::namespaced(admin.clone(), "foreign");
    w.create(&PostParams::default(), &Widget::numbered(1))
        .await
        .unwrap();
    c.close().await.unwrap();
    assert!(
        crds.get_opt(crd).await.unwrap().is_some(),
        "a used CRD was removed"
    );

    // Present before the run: kept, even with no widget left.
    w.delete("widget-000001", &Default::default())
        .await
        .unwrap();
    let c = connect().await.unwrap();
    c.close().await.unwrap();
    assert!(
        crds.get_opt(crd).await.unwrap().is_some(),
        "a CRD we did not install was removed"
    );

    // Installed by the run and unused: removed.
    crds.delete(crd, &Default::default()).await.unwrap();
    wait_gone().await;
    let c = connect().await.unwrap();
    c.close().await.unwrap();
    wait_gone().await;
    drop(plane);
}

/// An HA plane from the CLI: 3 etcd members and 2 apiservers start, answer
/// through the front the kubeconfig names, keep answering with one apiserver
/// killed, and `down` leaves no process and no directory.
#[test]
fn ha_plane_survives_an_apiserver_kill_and_down_leaves_nothing() {
    let state = tempfile::tempdir().unwrap();
    let (_, kc) = up(
        state.path(),
        &[
            "--name",
            "ha",
            "--etcd-fsync",
            "off",
            "--etcd-members",
            "3",
            "--apiservers",
            "2",
        ],
    );
    let dir = state.path().join("ctrlbench/planes/ha");
    let st = ctrlbench(state.path())
        .args(["cluster", "status", "--name", "ha"])
        .output()
        .unwrap();
    let st = String::from_utf8_lossy(&st.stdout).to_string();
    let pid_of = |what: &str| -> Vec<u32> {
        st.lines()
            .filter(|l| l.contains(what))
            .filter_map(|l| {
                l.split_whitespace()
                    .next()?
                    .strip_prefix("pid=")?
                    .parse()
                    .ok()
            })
            .collect()
    };
    let (etcd, apis) = (pid_of(" etcd "), pid_of(" kube-apiserver "));
    assert_eq!((etcd.len(), apis.len()), (3, 2), "{st}");
    assert!(st.contains("front https://127.0.0.1:"), "{st}");

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let ok = rt.block_on(async {
        let client = ctrlbench_plane::kubeconfig::client_from_file(Path::new(&kc))
            .await
            .unwrap();
        let ns: Api<Namespace> = Api::all(client.clone());
        ns.list(&ListParams::default())
            .await
            .expect("through the front");
        ctrlbench_plane::process::signal(apis[0], ctrlbench_plane::process::Signal::KILL);
        tokio::time::sleep(Duration::from_secs(2)).await;
        let mut ok = 0;
        for _ in 0..10 {
            // A fresh client each time: new connections, as the check makes them.
            let c = ctrlbench_plane::kubeconfig::client_from_file(Path::new(&kc))
                .await
                .unwrap();
            let ns: Api<Namespace> = Api::all(c);
            ok += usize::from(ns.list(&ListParams::default()).await.is_ok());
        }
        ok
    });
    assert!(
        ok >= 9,
        "{ok}/10 requests succeeded with one apiserver killed"
    );

    let down = ctrlbench(state.path())
        .args(["cluster", "down", "--name", "ha"])
        .output()
        .unwrap();
    assert_success(&down);
    let all: Vec<u32> = etcd.iter().chain(&apis).copied().collect();
    assert!(wait_gone(&all, Duration::from_secs(5)).is_empty());
    let left = processes_mentioning(&dir.display().to_string());
    assert!(left.is_empty(), "processes left: {left:?}");
    assert!(!dir.exists(), "{} left behind", dir.display());
}

/// `ctrlbench probe` on its own plane: every writer level measures creates,
/// status patches, and the same patches again with a watch open (the probe's
/// figure for a controller's informer), without a failed write.
#[test]
fn probe_measures_writes_with_and_without_a_watch() {
    let state = tempfile::tempdir().unwrap();
    let out = ctrlbench(state.path())
        .args(["probe", "--objects", "20", "--json", "--etcd-fsync", "off"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    let writers: Vec<u64> = rows.iter().filter_map(|r| r["writers"].as_u64()).collect();
    assert_eq!(writers, [1, 4, 16, 64]);
    for r in &rows {
        assert_eq!(r["objects"], 20, "{r}");
        assert_eq!(r["errors"], 0, "{r}");
        for k in [
            "create_per_s",
            "status_patch_per_s",
            "watched_status_patch_per_s",
        ] {
            assert!(r[k].as_f64().is_some_and(|v| v > 0.0), "{k}: {r}");
        }
    }
    assert_eq!(stderr.matches("with a watch open").count(), 4, "{stderr}");
}
