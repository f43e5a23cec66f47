//! Built-in kinds as workloads, on real planes: Deployments on a local plane
//! with fake nodes (`[cluster] nodes`), the plane's own controllers under
//! test (`impl = "external"`), run end to end by `ctrlbench run`; and a kind
//! the cluster does not serve, refused by discovery before any run starts.

use std::path::{Path, PathBuf};
use std::process::Output;

use ctrlbench_plane::testing::shared_plane;

mod common;
use common::{ctrlbench, only_results_dir};

const DEPLOYMENT: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: \"{{name}}\"\nspec:\n  replicas: 2\n  selector:\n    matchLabels:\n      app: \"{{name}}\"\n  template:\n    metadata:\n      labels:\n        app: \"{{name}}\"\n    spec:\n      containers:\n        - name: app\n          image: example.invalid/app:1\n";

/// An experiment of `n` Deployments (from `template`) with `cluster` as
/// its `[cluster]` section, the plane's controllers under test.
fn experiment(dir: &Path, template: &str, cluster: &str, n: u32) -> PathBuf {
    std::fs::write(dir.join("deployment.yaml"), template).unwrap();
    let p = dir.join("pods.toml");
    std::fs::write(
        &p,
        format!(
            "name = \"pods-test\"\nscales = [{n}]\nwindow_s = 90\nstop_when_converged = true\nquiet_s = 1\n\n\
             {cluster}\n\
             [workload]\nobject = \"deployment.yaml\"\n\
             ready = {{ jsonpath = \"{{.status.availableReplicas}}\", equals_path = \"{{.spec.replicas}}\" }}\n\n\
             [[variant]]\nname = \"kcm\"\nimpl = \"external\"\n"
        ),
    )
    .unwrap();
    p
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Live processes whose command line mentions `needle` (zombies, already
/// dead and waiting to be reaped, do not count).
fn processes_mentioning(needle: &str) -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|s| s.parse::<u32>().is_ok())
        })
        .filter(|e| {
            !std::fs::read_to_string(e.path().join("stat")).is_ok_and(|s| s.contains(") Z "))
        })
        .filter_map(|e| {
            let c = std::fs::read(e.path().join("cmdline")).ok()?;
            let c = String::from_utf8_lossy(&c).replace('\0', " ");
            c.contains(needle).then_some(c)
        })
        .collect()
}

/// 20 Deployments of 2 replicas on a local plane of 2 fake nodes: the
/// plane's controller manager, scheduler and KWOK make all 40 pods Ready,
/// every Deployment counts as ready, and the plane's processes are gone
/// when the command returns.
#[test]
fn deployments_on_fake_nodes_become_ready_with_the_planes_own_controllers() {
    let tmp = tempfile::tempdir().unwrap();
    // The plane's directory goes under this test's own TMPDIR, so its
    // processes are told apart from other planes' on the machine.
    let planes = tmp.path().join("tmp");
    std::fs::create_dir(&planes).unwrap();
    let exp = experiment(
        tmp.path(),
        DEPLOYMENT,
        "[cluster]\nnodes = 2\netcd_fsync = false\ncontroller_manager_qps = 400\n\
         controller_manager_burst = 800\nscheduler_qps = 300\nscheduler_burst = 600\n\
         scheduler_default_spread = false\n",
        20,
    );
    let results = tmp.path().join("results");
    let (out_log, err_log) = (tmp.path().join("stdout"), tmp.path().join("stderr"));
    let mut child = ctrlbench()
        .args(["run", exp.to_str().unwrap(), "--no-progress", "--results"])
        .arg(&results)
        .env("TMPDIR", &planes)
        .env("XDG_STATE_HOME", tmp.path())
        .stdout(std::fs::File::create(&out_log).unwrap())
        .stderr(std::fs::File::create(&err_log).unwrap())
        .spawn()
        .unwrap();
    // While it runs, the plane's processes are seen under this TMPDIR: the
    // check that none is left afterwards looks where they were.
    let roles = ["kube-scheduler", "kwok", "kube-controller-manager"];
    let mut seen = [false; 3];
    // The client limits the file gave, on each component's command line.
    let limits = [
        (
            "kube-controller-manager",
            ["--kube-api-qps=400", "--kube-api-burst=800"],
        ),
        (
            "kube-scheduler",
            ["--kube-api-qps=300", "--kube-api-burst=600"],
        ),
    ];
    let mut limited = [false; 2];
    // Without the default spreading, kube-scheduler reads its own file.
    let mut configured = false;
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        let running = processes_mentioning(planes.to_str().unwrap());
        for (k, role) in roles.iter().enumerate() {
            seen[k] |= running.iter().any(|c| c.contains(role));
        }
        for (k, (role, flags)) in limits.iter().enumerate() {
            limited[k] |= running
                .iter()
                .any(|c| c.contains(&format!("/{role} ")) && flags.iter().all(|f| c.contains(f)));
        }
        configured |= running
            .iter()
            .any(|c| c.contains("/kube-scheduler ") && c.contains("--config="));
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    let err = std::fs::read_to_string(&err_log).unwrap();
    assert!(status.success(), "{err}");
    assert_eq!(seen, [true; 3], "{roles:?} seen running: {seen:?}");
    assert_eq!(limited, [true; 2], "{limits:?} seen: {limited:?}");
    assert!(configured, "kube-scheduler ran without --config");
    // Nodes were there, so no warning about a rule that waits for pods.
    assert!(!err.contains("set [cluster] nodes"), "{err}");
    let dir = only_results_dir(&results);
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["complete"], true);
    assert_eq!(manifest["controller_manager"], true, "nodes imply it");
    assert_eq!(
        (manifest["nodes"].as_u64(), manifest["node_pods"].as_u64()),
        (Some(2), Some(110)),
        "the fake nodes and the default capacity are recorded"
    );
    assert_eq!(
        (
            &manifest["controller_manager_args"],
            &manifest["scheduler_args"]
        ),
        (
            &serde_json::json!(["--kube-api-qps=400", "--kube-api-burst=800"]),
            &serde_json::json!(["--kube-api-qps=300", "--kube-api-burst=600"])
        ),
        "the plane's client limits are recorded"
    );
    assert_eq!(manifest["scheduler_without_default_spread"], true);
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(
        report.contains("2 fake node(s) of 110 pods each (KWOK), kube-scheduler"),
        "the header names the fake nodes:\n{}",
        report.lines().take(4).collect::<Vec<_>>().join("\n")
    );
    assert!(
        report.contains(
            "; client limits: kube-controller-manager --kube-api-qps=400 --kube-api-burst=800, \
             kube-scheduler --kube-api-qps=300 --kube-api-burst=600"
        ),
        "the header names the plane's client limits:\n{}",
        report.lines().take(4).collect::<Vec<_>>().join("\n")
    );
    assert!(
        report.contains("kube-scheduler without PodTopologySpread's default constraints"),
        "the header names the scheduler's setting:\n{}",
        report.lines().take(4).collect::<Vec<_>>().join("\n")
    );
    let run = dir.join("N20/kcm/rep1");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["impl"], "external");
    assert!(
        summary["workload"].as_str().unwrap().contains("Deployment"),
        "{}",
        summary["workload"]
    );
    let mut r = csv::Reader::from_path(run.join("objects.csv")).unwrap();
    let h: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(h, ["name", "created_at", "ready_at", "first_write_at"]);
    let rows: Vec<(String, String)> = r
        .records()
        .map(|x| {
            let x = x.unwrap();
            (x[0].to_string(), x[2].to_string())
        })
        .collect();
    let want: Vec<String> = (1..=20).map(|i| format!("deployment-{i:06}")).collect();
    let mut names: Vec<String> = rows.iter().map(|r| r.0.clone()).collect();
    names.sort();
    assert_eq!(names, want);
    for (name, ready) in &rows {
        assert!(!ready.is_empty(), "{name} never had 2 available replicas");
    }
    // pods.csv, from our own pod watch: one row per pod of the 20
    // Deployments × 2 replicas, each owned by its Deployment (followed up
    // from the ReplicaSet), every stage present and in order.
    let mut r = csv::Reader::from_path(run.join("pods.csv")).unwrap();
    let h: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(
        h,
        [
            "namespace",
            "pod",
            "owner_kind",
            "owner",
            "created_s",
            "scheduled_s",
            "running_s",
            "ready_s"
        ]
    );
    let pods: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
    assert_eq!(pods.len(), 40, "{pods:?}");
    let mut per_owner = std::collections::BTreeMap::<String, usize>::new();
    for p in &pods {
        assert_eq!(&p[2], "Deployment", "{p:?}");
        *per_owner.entry(p[3].to_string()).or_default() += 1;
        let t: Vec<f64> = (4..8)
            .map(|i| {
                p[i].parse::<f64>()
                    .unwrap_or_else(|_| panic!("{p:?}: column {i} empty"))
            })
            .collect();
        assert!(
            t.windows(2).all(|w| w[0] <= w[1] + 1e-6),
            "stages out of order: {p:?}"
        );
    }
    assert_eq!(per_owner.len(), 20, "{per_owner:?}");
    assert!(per_owner.values().all(|&n| n == 2), "{per_owner:?}");
    assert!(!dir.join("workload/crd.json").exists(), "no CRD to keep");
    for role in roles {
        let left: Vec<String> = processes_mentioning(planes.to_str().unwrap())
            .into_iter()
            .filter(|c| c.contains(role))
            .collect();
        assert!(left.is_empty(), "{role} still runs: {left:?}");
    }
    assert_eq!(
        std::fs::read_dir(&planes).unwrap().count(),
        0,
        "the plane's directory is removed"
    );
}

/// A template of a kind the cluster does not serve is one error naming the
/// template file, `object` and the apiVersion/kind, and no run starts.
#[test]
fn a_kind_the_cluster_does_not_serve_is_refused_before_any_run() {
    let tmp = tempfile::tempdir().unwrap();
    let template = DEPLOYMENT.replace("kind: Deployment", "kind: Deploymint");
    let exp = experiment(tmp.path(), &template, "", 5);
    let results = tmp.path().join("results");
    let out = ctrlbench()
        .args(["run", exp.to_str().unwrap(), "--no-progress", "--results"])
        .arg(&results)
        .arg("--kubeconfig")
        .arg(&shared_plane().kubeconfig_path)
        .env("XDG_STATE_HOME", tmp.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = stderr(&out);
    let line = err
        .lines()
        .find(|l| l.contains("Deploymint"))
        .unwrap_or_else(|| panic!("no line names the kind: {err}"));
    assert!(line.contains("deployment.yaml"), "{line}");
    assert!(line.contains("[workload] object"), "{line}");
    assert!(line.contains("apps/v1 Deploymint"), "{line}");
    // No run started: no run directory, and the manifest says why.
    let dir = only_results_dir(&results);
    assert!(!dir.join("N5").exists());
    let manifest = std::fs::read_to_string(dir.join("manifest.json")).unwrap();
    assert!(manifest.contains("Deploymint"), "{manifest}");
}

/// A rule that waits for pods on a local plane without nodes is warned
/// about before anything starts (here: the dry run's checks), naming
/// `[cluster] nodes`, once.
#[test]
fn a_rule_that_waits_for_pods_without_nodes_is_warned_about() {
    let tmp = tempfile::tempdir().unwrap();
    let exp = experiment(tmp.path(), DEPLOYMENT, "", 5);
    let out = ctrlbench()
        .args(["run", exp.to_str().unwrap(), "--dry-run", "--results"])
        .arg(tmp.path().join("results"))
        .env("XDG_STATE_HOME", tmp.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.matches("set [cluster] nodes").count(), 1, "{text}");
    let with_nodes = experiment(tmp.path(), DEPLOYMENT, "[cluster]\nnodes = 1\n", 5);
    let out = ctrlbench()
        .args([
            "run",
            with_nodes.to_str().unwrap(),
            "--dry-run",
            "--results",
        ])
        .arg(tmp.path().join("results"))
        .env("XDG_STATE_HOME", tmp.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("set [cluster] nodes"), "{text}");
    assert!(text.contains("1 fake node(s) of 110 pods each"), "{text}");
}
