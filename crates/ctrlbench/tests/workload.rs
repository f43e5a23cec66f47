//! Workloads from files and controllers ctrlbench did not write, end to end
//! through the CLI against this binary's shared plane (as an existing
//! cluster): k8s.io/sample-controller as impl = "command" (its CRD, a
//! template, RBAC from the file only; on its own plane with the fake nodes
//! its file asks for, so its Deployments' pods run), the Widget workload written out as
//! `[workload]`, an external controller, and the bad inputs (a rule that never
//! holds, a command that exits at once, a metrics URL that never answers, a
//! template the CRD refuses) — each a clear error or a flagged run, and
//! nothing left behind.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ctrlbench_plane::testing::shared_plane;
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::api::rbac::v1::ClusterRole;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ListParams};

mod common;
use common::only_results_dir;
use common::{ctrlbench, widget_controller};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs experiment `exp` (a file or a built-in name) with `extra` arguments
/// against the shared plane.
fn run(exp: &str, results: &Path, extra: &[&str]) -> Output {
    ctrlbench()
        .args(["run", exp, "--no-progress", "--results"])
        .arg(results)
        .arg("--kubeconfig")
        .arg(&shared_plane().kubeconfig_path)
        .args(extra)
        .output()
        .unwrap()
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// objects.csv: (name, ready_at, first_write_at) per row.
fn objects(path: &Path) -> Vec<(String, String, String)> {
    let mut r = csv::Reader::from_path(path).unwrap();
    let h: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(h, ["name", "created_at", "ready_at", "first_write_at"]);
    r.records()
        .map(|x| {
            let x = x.unwrap();
            (x[0].to_string(), x[2].to_string(), x[3].to_string())
        })
        .collect()
}

/// Namespaces whose name starts with `prefix`, and ClusterRoles named after them.
fn leftovers(prefix: &str) -> Vec<String> {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let client = shared_plane().client().await;
        let mut left: Vec<String> = Api::<Namespace>::all(client.clone())
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .into_iter()
            .filter_map(|n| n.metadata.name)
            .filter(|n| n.starts_with(prefix))
            .collect();
        left.extend(
            Api::<ClusterRole>::all(client)
                .list(&ListParams::default())
                .await
                .unwrap()
                .items
                .into_iter()
                .filter_map(|n| n.metadata.name)
                .filter(|n| n.starts_with(&format!("ctrlbench-{prefix}"))),
        );
        left
    })
}

fn crd_exists(name: &str) -> bool {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let client = shared_plane().client().await;
        Api::<CustomResourceDefinition>::all(client)
            .get_opt(name)
            .await
            .unwrap()
            .is_some()
    })
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn sample_controller_reaches_the_rule_with_rbac_from_the_file_only() {
    let tmp = tempfile::tempdir().unwrap();
    let results = tmp.path().join("results");
    // Its own local plane, as the file asks: three fake nodes run the
    // Foos' Deployments' pods (the shared plane has no nodes).
    let out = ctrlbench()
        .args(["run", "sample-controller", "--no-progress", "--results"])
        .arg(&results)
        .args(["--scales", "20", "--window", "60"])
        .env("XDG_STATE_HOME", tmp.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let dir = only_results_dir(&results);
    assert_eq!(json(&dir.join("manifest.json"))["complete"], true);
    let manifest = json(&dir.join("manifest.json"));
    assert_eq!(manifest["local_plane"], true);
    // Each binary the plane ran, with its origin and hash: checked here
    // against coreutils' sha256sum of the same file.
    let bins = manifest["plane_binaries"]
        .as_array()
        .expect("plane_binaries");
    let names: Vec<&str> = bins.iter().map(|b| b["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "etcd",
            "kube-apiserver",
            "kube-controller-manager",
            "kube-scheduler",
            "kwok"
        ]
    );
    for b in bins {
        let path = b["path"].as_str().unwrap();
        let out = std::process::Command::new("sha256sum")
            .arg(path)
            .output()
            .unwrap();
        let want = String::from_utf8_lossy(&out.stdout);
        assert_eq!(b["sha256"].as_str(), want.split_whitespace().next(), "{b}");
        assert!(
            ["downloaded", "built", "cached"].contains(&b["how"].as_str().unwrap()),
            "{b}"
        );
    }
    let run = dir.join("N20/sample-controller/rep1");
    let s = json(&run.join("summary.json"));
    assert_eq!(s["impl"], "command");
    assert_eq!(s["ready"], 20, "{s:#}");
    assert_eq!(s["converged"], true);
    assert_eq!(s["controller_metrics"], false);
    assert!(
        s["workload"].as_str().unwrap().contains("Foo"),
        "{}",
        s["workload"]
    );
    let grants = s["cluster_grants"].to_string();
    assert!(grants.contains("samplecontroller.k8s.io/foos"), "{grants}");
    // No metrics URL: no controller scrape, every other source still there.
    assert!(!run.join("metrics-sample-controller.csv").exists());
    assert!(run.join("apiserver.csv").is_file());
    // The apiserver's requests for foos fill the workload's columns: the 20
    // creates and the controller's status updates.
    let api = ctrlbench_record::series::Series::read(&run.join("apiserver.csv"))
        .unwrap()
        .unwrap();
    let creates: f64 = api
        .bucket_delta("widget_create_latency")
        .last()
        .map_or(0.0, |b| b.1);
    assert!(creates >= 20.0, "creates of foos seen: {creates}");
    assert!(api.delta("widget_update_writes_total").unwrap_or(0.0) >= 20.0);
    // Ready means availableReplicas has reached the Foo's replicas, which
    // the template sets to 1: every Foo's pod ran on the fake nodes.
    let foo = std::fs::read_to_string(workspace().join("experiments/sample-controller/foo.yaml"))
        .unwrap();
    assert!(foo.contains("\n  replicas: 1\n"), "{foo}");
    let rows = objects(&run.join("objects.csv"));
    assert_eq!(rows.len(), 20);
    assert!(rows[0].0.starts_with("foo-0000"), "{rows:?}");
    for (name, ready, written) in &rows {
        assert!(!ready.is_empty(), "{name} never ready");
        assert!(
            !written.is_empty(),
            "{name}: no first write by the controller"
        );
    }
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(report.contains("sample-controller"), "{report}");
    assert!(report.contains("Cluster-scoped grant"), "{report}");
    assert!(report.contains("Workload: Foo"), "{report}");
    assert!(
        !report.contains("no metrics-sample-controller.csv"),
        "{report}"
    );
}

/// The audit log keeps the workload's own kind: on a local plane with the
/// audit log on, sample-controller's run gets audit.csv with the loader's
/// creates of foos and the controller's writes to them, by its own
/// ServiceAccount, and none of the Deployments it creates beside them.
#[test]
fn a_workload_of_another_kind_is_audited_like_widgets() {
    let tmp = tempfile::tempdir().unwrap();
    let results = tmp.path().join("results");
    let ws = workspace().join("experiments");
    std::fs::create_dir(tmp.path().join("sample-controller")).unwrap();
    for f in ["crd.yaml", "foo.yaml"] {
        let to = tmp.path().join("sample-controller").join(f);
        std::fs::copy(ws.join("sample-controller").join(f), to).unwrap();
    }
    let text = std::fs::read_to_string(ws.join("sample-controller.toml"))
        .unwrap()
        .replacen("[cluster]\n", "[cluster]\naudit_log = true\n", 1);
    assert!(text.contains("audit_log = true"), "{text}");
    let exp = write(tmp.path(), "sample-controller.toml", &text);
    let out = ctrlbench()
        .args(["run", exp.to_str().unwrap(), "--no-progress"])
        .args(["--scales", "20", "--window", "60", "--results"])
        .arg(&results)
        .env("XDG_STATE_HOME", tmp.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let dir = only_results_dir(&results);
    let run = dir.join("N20/sample-controller/rep1");
    let s = json(&run.join("summary.json"));
    assert_eq!(s["ready"], 20, "{s:#}");
    let audit = ctrlbench_record::audit::read(&run.join("audit.csv"))
        .unwrap()
        .expect("audit.csv");
    let creates: Vec<_> = audit.iter().filter(|r| r.verb == "create").collect();
    assert_eq!(creates.len(), 20, "{audit:?}");
    assert!(
        creates.iter().all(|r| r.name.starts_with("foo-")),
        "{creates:?}"
    );
    let sa = format!(
        "system:serviceaccount:{}:",
        s["namespace"].as_str().unwrap()
    );
    let updates: Vec<_> = audit.iter().filter(|r| r.is_update()).collect();
    assert!(updates.len() >= 20, "{audit:?}");
    assert!(
        updates.iter().all(|r| r.user.starts_with(&sa)),
        "{updates:?}"
    );
    // Every row is a foo: the loader names them foo-NNNNNN, and the
    // Deployments the controller creates are named after their Foo but
    // are another resource.
    let names: std::collections::BTreeSet<_> = audit.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names.len(), 20, "{names:?}");
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(md.contains("from the apiserver's audit log"), "{md}");
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

const WIDGET_TEMPLATE: &str = "apiVersion: benchmark.example.com/v1alpha1\nkind: Widget\nmetadata:\n  name: \"{{name}}\"\nspec:\n  count: {{index}}\n  message: \"run {{run}} object {{index}}\"\n";

/// An experiment on the Widget workload written out as `[workload]`.
fn widget_experiment(dir: &Path, name: &str, ready: &str, window: u32, variant: &str) -> PathBuf {
    write(dir, "widget.yaml", WIDGET_TEMPLATE);
    let crd = workspace().join("deploy/crd.yaml");
    write(
        dir,
        &format!("{name}.toml"),
        &format!(
            "name = \"{name}\"\nscales = [20]\nwindow_s = {window}\nstop_when_converged = true\n\n\
             [workload]\ncrd = {crd:?}\nobject = \"widget.yaml\"\nready = {ready}\n\n{variant}"
        ),
    )
}

#[test]
fn the_widget_workload_written_out_runs_like_the_builtin_one() {
    let tmp = tempfile::tempdir().unwrap();
    let exp = widget_experiment(
        tmp.path(),
        "widgets-explicit",
        "{ jsonpath = \"{.status.phase}\", equals = \"Ready\" }",
        30,
        "[[variant]]\nname = \"good\"\nimpl = \"rust\"\npreset = \"good\"\n",
    );
    let results = tmp.path().join("results");
    let out = run(exp.to_str().unwrap(), &results, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let dir = only_results_dir(&results);
    let run = dir.join("N20/good/rep1");
    let s = json(&run.join("summary.json"));
    assert_eq!(
        (s["ready"].as_u64(), s["converged"].as_bool()),
        (Some(20), Some(true)),
        "{s:#}"
    );
    assert!(run.join("metrics-good.csv").is_file());
    let rows = objects(&run.join("objects.csv"));
    assert_eq!(rows.len(), 20);
    assert!(
        rows.iter()
            .all(|(n, r, w)| n.starts_with("widget-0000") && !r.is_empty() && !w.is_empty()),
        "{rows:?}"
    );
    // The Widget CRD was there before: kept.
    assert!(crd_exists("widgets.benchmark.example.com"));
    assert!(leftovers("cb-good-n20").is_empty());
}

/// `[workload] field_managers`: the apiserver keeps the appliers' entries
/// each create carries, and summary.json's sample weighs them. The
/// controller is a process that writes nothing, so no object may count as
/// written by others: the appliers' entries came with the create.
#[test]
fn the_appliers_managed_fields_come_with_each_create() {
    let tmp = tempfile::tempdir().unwrap();
    let exp = write(
        tmp.path(),
        "appliers.toml",
        "name = \"appliers\"\nscales = [20]\nwindow_s = 5\n\n\
         [workload]\nfield_managers = 4\n\n\
         [[variant]]\nname = \"idle\"\nimpl = \"command\"\ncommand = [\"/bin/sh\", \"-c\", \"sleep 120\"]\n",
    );
    let results = tmp.path().join("results");
    let out = run(exp.to_str().unwrap(), &results, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let run = only_results_dir(&results).join("N20/idle/rep1");
    let s = json(&run.join("summary.json"));
    assert_eq!(s["field_managers"].as_u64(), Some(4), "{s:#}");
    // Four entries of at least 800 bytes each (16 keys of 32 characters
    // and the Widget's apiVersion) besides the loader's; without them a
    // new Widget's managedFields are under 400 bytes.
    let sample = &s["object_sample"];
    let fields = sample["managed_fields_bytes"].as_u64().unwrap_or(0);
    let whole = sample["bytes"].as_u64().unwrap_or(0);
    assert_eq!(sample["objects"].as_u64(), Some(20), "{s:#}");
    assert!(fields >= 4 * 800 && whole > fields, "{s:#}");
    let rows = objects(&run.join("objects.csv"));
    assert_eq!(rows.len(), 20);
    assert!(rows.iter().all(|(_, _, w)| w.is_empty()), "{rows:?}");
}

#[test]
fn a_rule_that_never_holds_ends_unconverged_and_the_report_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let exp = widget_experiment(
        tmp.path(),
        "never",
        "{ jsonpath = \"{.status.nothing}\", exists = true }",
        6,
        "[[variant]]\nname = \"never\"\nimpl = \"rust\"\npreset = \"good\"\n",
    );
    let results = tmp.path().join("results");
    let t0 = std::time::Instant::now();
    let out = run(exp.to_str().unwrap(), &results, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(t0.elapsed().as_secs() < 60, "{:?}", t0.elapsed());
    let dir = only_results_dir(&results);
    let s = json(&dir.join("N20/never/rep1/summary.json"));
    assert_eq!(
        (s["ready"].as_u64(), s["converged"].as_bool()),
        (Some(0), Some(false)),
        "{s:#}"
    );
    assert_eq!(s["stop_reason"], "window");
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(report.contains("0/20"), "{report}");
    assert!(report.contains("{.status.nothing} exists"), "{report}");
    assert!(leftovers("cb-never-").is_empty());
}

#[test]
fn a_template_the_crd_refuses_fails_at_the_first_create_with_the_apiservers_message() {
    let tmp = tempfile::tempdir().unwrap();
    write(
        tmp.path(),
        "crd.yaml",
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: strictthings.test.ctrlbench.dev\nspec:\n  group: test.ctrlbench.dev\n  scope: Namespaced\n  names: {kind: StrictThing, plural: strictthings}\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n          spec:\n            type: object\n            properties:\n              size: {type: integer}\n",
    );
    write(
        tmp.path(),
        "thing.yaml",
        "apiVersion: test.ctrlbench.dev/v1\nkind: StrictThing\nmetadata:\n  name: \"{{name}}\"\nspec:\n  size: large\n",
    );
    let exp = write(
        tmp.path(),
        "strict.toml",
        "name = \"strict\"\nscales = [5]\nwindow_s = 5\n[workload]\ncrd = \"crd.yaml\"\nobject = \"thing.yaml\"\nready = { observed_generation = true }\n[[variant]]\nname = \"strict\"\nimpl = \"external\"\n",
    );
    let results = tmp.path().join("results");
    let out = run(exp.to_str().unwrap(), &results, &[]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("refused the first StrictThing"), "{err}");
    assert!(err.contains("spec.size"), "{err}");
    let dir = only_results_dir(&results);
    let m = json(&dir.join("manifest.json"));
    assert_eq!(m["complete"], false);
    assert!(m["errors"].to_string().contains("spec.size"), "{m:#}");
    assert!(leftovers("cb-warmup").is_empty());
    assert!(!crd_exists("strictthings.test.ctrlbench.dev"));
}

#[test]
fn a_command_that_exits_at_once_is_an_error_and_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let exp = widget_experiment(
        tmp.path(),
        "quitter",
        "{ condition = \"Ready\" }",
        10,
        "[[variant]]\nname = \"quitter\"\nimpl = \"command\"\ncommand = [\"/bin/sh\", \"-c\", \"echo giving up on {namespace}; exit 3\"]\n\
         cluster_rbac = [{ api_groups = [\"benchmark.example.com\"], resources = [\"widgets\"], verbs = [\"list\"] }]\n",
    );
    let results = tmp.path().join("results");
    let out = run(exp.to_str().unwrap(), &results, &[]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("exited at once"), "{err}");
    assert!(err.contains("giving up on cb-quitter"), "{err}");
    let m = json(&only_results_dir(&results).join("manifest.json"));
    assert_eq!(m["complete"], false);
    assert!(
        leftovers("cb-quitter").is_empty(),
        "{:?}",
        leftovers("cb-quitter")
    );
}

#[test]
fn a_metrics_url_that_never_answers_is_an_error_not_a_hang() {
    let tmp = tempfile::tempdir().unwrap();
    let exp = widget_experiment(
        tmp.path(),
        "silent",
        "{ condition = \"Ready\" }",
        10,
        "[[variant]]\nname = \"silent\"\nimpl = \"command\"\ncommand = [\"/bin/sh\", \"-c\", \"sleep 120\", \"sh\", \"{port}\"]\n\
         metrics = \"http://127.0.0.1:{port}/metrics\"\n",
    );
    let results = tmp.path().join("results");
    let t0 = std::time::Instant::now();
    let out = run(exp.to_str().unwrap(), &results, &[]);
    assert!(!out.status.success());
    assert!(t0.elapsed().as_secs() < 90, "{:?}", t0.elapsed());
    let err = stderr(&out);
    assert!(err.contains("did not answer"), "{err}");
    assert!(leftovers("cb-silent").is_empty());
}

#[test]
fn an_external_controller_is_measured_in_its_own_namespace_which_stays() {
    let plane = shared_plane();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let client = plane.client().await;
        Api::<Namespace>::all(client)
            .create(
                &Default::default(),
                &serde_json::from_value(serde_json::json!({"metadata": {"name": "ext-ops"}}))
                    .unwrap(),
            )
            .await
            .unwrap();
    });
    // "Deployed" by someone else: the Rust controller with the admin identity.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut ctl = Command::new(widget_controller())
        .args([
            "--namespace",
            "ext-ops",
            "--preset",
            "good",
            "--metrics-bind-address",
        ])
        .arg(format!("127.0.0.1:{port}"))
        .env("KUBECONFIG", &plane.kubeconfig_path)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let exp = write(
        tmp.path(),
        "ext.toml",
        &format!(
            "name = \"ext\"\nscales = [20]\nwindow_s = 30\nstop_when_converged = true\n\
             [[variant]]\nname = \"ext\"\nimpl = \"external\"\nnamespace = \"ext-ops\"\n\
             metrics = \"http://127.0.0.1:{port}/metrics\"\n"
        ),
    );
    let results = tmp.path().join("results");
    let out = run(exp.to_str().unwrap(), &results, &[]);
    let _ = ctl.kill();
    let _ = ctl.wait();
    assert!(out.status.success(), "{}", stderr(&out));
    let dir = only_results_dir(&results);
    let run = dir.join("N20/ext/rep1");
    let s = json(&run.join("summary.json"));
    assert_eq!(
        (s["ready"].as_u64(), s["converged"].as_bool()),
        (Some(20), Some(true)),
        "{s:#}"
    );
    assert!(s["reconciles"]["total"].as_f64().unwrap() >= 20.0, "{s:#}");
    assert!(run.join("metrics-ext.csv").is_file());
    // The namespace was the user's: it stays, our objects are gone.
    rt.block_on(async {
        let client = plane.client().await;
        assert!(
            Api::<Namespace>::all(client.clone())
                .get_opt("ext-ops")
                .await
                .unwrap()
                .is_some()
        );
        let left = Api::<widget_api::Widget>::namespaced(client, "ext-ops")
            .list(&ListParams::default())
            .await
            .unwrap();
        assert!(left.items.is_empty(), "{} widgets left", left.items.len());
    });
}

#[test]
fn a_command_that_dies_mid_run_flags_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let exp = widget_experiment(
        tmp.path(),
        "dier",
        "{ condition = \"Ready\" }",
        8,
        "[[variant]]\nname = \"dier\"\nimpl = \"command\"\ncommand = [\"/bin/sh\", \"-c\", \"sleep 4; exit 5\"]\n",
    );
    let results = tmp.path().join("results");
    let out = run(exp.to_str().unwrap(), &results, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let dir = only_results_dir(&results);
    let s = json(&dir.join("N20/dier/rep1/summary.json"));
    assert_eq!(s["controller_exited_early"], true, "{s:#}");
    assert_eq!(s["controller_exit_code"], 5, "{s:#}");
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(
        report.contains("the controller exited during the window (exit code 5"),
        "{report}"
    );
    assert!(leftovers("cb-dier").is_empty());
}

/// A command without a metrics URL still gets its CPU and peak memory, read
/// from /proc: here a wrapper shell whose child (python) holds 64 MiB and
/// spins, so only the process's descendants account for either.
#[test]
fn a_command_without_metrics_gets_its_cpu_and_memory_from_the_os() {
    let tmp = tempfile::tempdir().unwrap();
    let exp = widget_experiment(
        tmp.path(),
        "burner",
        "{ condition = \"Ready\" }",
        6,
        r#"[[variant]]
name = "burner"
impl = "command"
command = ["/bin/sh", "-c", "python3 -c \"b = bytes(range(256)) * (1 << 18); any(iter(int, 1))\" & wait"]
"#,
    );
    let results = tmp.path().join("results");
    let out = run(exp.to_str().unwrap(), &results, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let dir = only_results_dir(&results);
    let s = json(&dir.join("N20/burner/rep1/summary.json"));
    assert_eq!(s["controller_metrics"], false, "{s:#}");
    let cpu = s["controller_os"]["cpu_s"].as_f64().expect("cpu_s");
    let peak = s["controller_os"]["peak_rss_bytes"]
        .as_f64()
        .expect("peak_rss_bytes");
    // Seconds of spinning, on however busy a machine: more than a few ticks.
    assert!(cpu > 0.1, "{s:#}");
    assert!(peak >= (64 << 20) as f64, "{s:#}");
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    // The throughput table's last two cells: controller CPU, peak RSS.
    let table = &report[report.find("## Throughput and cost").unwrap()..];
    let row = table
        .lines()
        .find(|l| l.starts_with("| 20 | burner"))
        .unwrap_or_else(|| panic!("{report}"));
    let cells: Vec<&str> = row.trim_matches('|').split('|').map(str::trim).collect();
    let (cpu_cell, rss_cell) = (cells[cells.len() - 2], cells[cells.len() - 1]);
    assert!(cpu_cell.ends_with(" s") && cpu_cell != "0.00 s", "{row}");
    assert!(rss_cell.ends_with(" MiB"), "{row}");
    assert!(
        report.contains("Read from /proc here: controller CPU of burner; peak RSS of burner."),
        "{report}"
    );
    assert!(leftovers("cb-burner").is_empty());
}

/// A command controller honours start = "after-load": it starts once every
/// object exists, so no object was written before the last create. The
/// command is our own widget-controller, run as any user's program through a
/// wrapper shell that does not exec it: stopping the command must stop what
/// it started too.
#[test]
fn a_command_controller_starts_after_the_load_when_asked() {
    let tmp = tempfile::tempdir().unwrap();
    let exp = widget_experiment(
        tmp.path(),
        "late",
        "{ jsonpath = \"{.status.phase}\", equals = \"Ready\" }",
        40,
        &format!(
            "[[variant]]\nname = \"late\"\nimpl = \"command\"\nstart = \"after-load\"\n\
             command = [\"/bin/sh\", \"-c\", \"\\\"$0\\\" \\\"$@\\\" & wait\", {:?}, \"--namespace\", \"{{namespace}}\", \"--preset\", \"good\", \"--metrics-bind-address\", \"127.0.0.1:{{port}}\"]\n\
             metrics = \"http://127.0.0.1:{{port}}/metrics\"\n\
             rbac = [{{ api_groups = [\"benchmark.example.com\"], resources = [\"widgets\", \"widgets/status\"], verbs = [\"get\", \"list\", \"watch\", \"update\", \"patch\"] }}]\n",
            widget_controller().display().to_string()
        ),
    );
    let results = tmp.path().join("results");
    let out = run(exp.to_str().unwrap(), &results, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let dir = only_results_dir(&results);
    let run = dir.join("N20/late/rep1");
    let s = json(&run.join("summary.json"));
    assert_eq!(s["ready"].as_u64(), Some(20), "{s:#}");
    assert_eq!(s["start"]["mode"], "after-load", "{s:#}");
    assert!(
        s["start"]["controller_started_s"].as_f64().unwrap() > 0.0,
        "{s:#}"
    );
    let rows = ctrlbench_record::objects::read(&run.join("objects.csv")).unwrap();
    assert_eq!(rows.len(), 20);
    let last_create = rows
        .iter()
        .filter_map(|o| o.created_at.clone())
        .max()
        .unwrap();
    let first_write = rows
        .iter()
        .map(|o| o.first_write_at.clone().expect("written"))
        .min()
        .unwrap();
    // RFC 3339 UTC stamps of one format compare as text.
    assert!(first_write > last_create, "{first_write} ≤ {last_create}");
    assert!(leftovers("cb-late").is_empty());
    // The wrapper's child got the stop signal too (its graceful stop is short).
    let t0 = std::time::Instant::now();
    while !processes_mentioning("--namespace\0cb-late-").is_empty() {
        assert!(
            t0.elapsed().as_secs() < 15,
            "the wrapped controller outlived its command: {:?}",
            processes_mentioning("--namespace\0cb-late-")
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

/// Pids of processes whose NUL-separated command line contains `needle`.
fn processes_mentioning(needle: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(needle))
        })
        .collect()
}

/// fresh_plane = "run" with the probe: the probe has a local plane of its
/// own and the run after it another, so no run starts on the probe's writes.
#[test]
fn with_fresh_planes_the_run_after_the_probe_gets_its_own_plane() {
    let tmp = tempfile::tempdir().unwrap();
    let exp = write(
        tmp.path(),
        "fresh.toml",
        "name = \"fresh\"\nscales = [10]\nwindow_s = 30\nstop_when_converged = true\n\
         quiet_s = 1\nrepeats = 1\nconcurrency = 4\nprobe = true\nprobe_objects = 10\n\
         fresh_plane = \"run\"\n\n\
         [[variant]]\nname = \"a\"\nimpl = \"rust\"\npreset = \"good\"\nstart = \"after-load\"\n",
    );
    let out = ctrlbench()
        .args(["run", exp.to_str().unwrap(), "--no-progress", "--results"])
        .arg(tmp.path().join("results"))
        .env("XDG_STATE_HOME", tmp.path())
        .output()
        .unwrap();
    common::assert_success(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    // Which step each plane start came before, in order.
    let steps: Vec<&str> = err
        .lines()
        .filter_map(|l| {
            [
                ("plane ready in ", "plane"),
                ("probe before ", "probe"),
                ("run 1/1: ", "run"),
            ]
            .into_iter()
            .find_map(|(prefix, step)| l.starts_with(prefix).then_some(step))
        })
        .collect();
    assert_eq!(steps, ["plane", "probe", "plane", "run"], "{err}");
    let dir = only_results_dir(&tmp.path().join("results"));
    let m = json(&dir.join("manifest.json"));
    assert_eq!(m["probe"].as_array().map(Vec::len), Some(4), "{m}");
    let s = json(&dir.join("N10/a/rep1/summary.json"));
    assert_eq!(s["ready"].as_u64(), Some(10), "{s}");
}

/// probe = true probes before each repeat: manifest.json holds one set of
/// probe rows per repeat, tagged with its scale and repeat; each summary
/// records the loader's concurrency; the report divides each after-load run
/// by its own repeat's probe (the status-patch overhead and loader rows); no probe namespace
/// stays.
#[test]
fn the_probe_runs_before_each_repeat_and_each_run_is_divided_by_its_own() {
    let tmp = tempfile::tempdir().unwrap();
    let exp = write(
        tmp.path(),
        "probed.toml",
        "name = \"probed\"\nscales = [10]\nwindow_s = 30\nstop_when_converged = true\n\
         quiet_s = 1\nrepeats = 2\nconcurrency = 4\nprobe = true\nprobe_objects = 10\n\n\
         [[variant]]\nname = \"rust-p\"\nimpl = \"rust\"\npreset = \"good-single-patch\"\n\
         work_ms = 0\nclient_qps = -1\nstart = \"after-load\"\n",
    );
    let results = tmp.path().join("results");
    let out = run(exp.to_str().unwrap(), &results, &[]);
    common::assert_success(&out);
    let dir = only_results_dir(&results);
    let m = json(&dir.join("manifest.json"));
    let probe = m["probe"].as_array().unwrap();
    let tags: Vec<(u64, u64, u64)> = probe
        .iter()
        .map(|p| {
            assert!(p["status_patch_per_s"].as_f64().unwrap() > 0.0, "{p}");
            assert_eq!(p["errors"].as_u64(), Some(0), "{p}");
            (
                p["scale"].as_u64().unwrap(),
                p["repeat"].as_u64().unwrap(),
                p["writers"].as_u64().unwrap(),
            )
        })
        .collect();
    let want: Vec<(u64, u64, u64)> = [1, 2]
        .into_iter()
        .flat_map(|r| [1, 4, 16, 64].map(|w| (10, r, w)))
        .collect();
    assert_eq!(tags, want);
    for r in m["runs"].as_array().unwrap() {
        assert_eq!(r["load"]["concurrency"].as_u64(), Some(4), "{r}");
    }
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    // Two probes' 1-writer rates: the figures cell shows their range.
    let p1: Vec<f64> = probe
        .iter()
        .filter(|p| p["writers"] == 1)
        .map(|p| p["status_patch_per_s"].as_f64().unwrap())
        .collect();
    let cell = |v: &[f64]| {
        let (lo, hi) = (v[0].min(v[1]), v[0].max(v[1]));
        format!("÷ {:.1} [{lo:.1}–{hi:.1}]/s", (lo + hi) / 2.0)
    };
    let overhead = md
        .lines()
        .find(|l| l.starts_with("| 10 | rust-p | status-patch overhead against the probe"))
        .unwrap_or_else(|| panic!("no status-patch overhead row:\n{md}"));
    assert!(overhead.contains(&cell(&p1)), "{overhead}\nprobes {p1:?}");
    let p2 = md
        .lines()
        .find(|l| l.contains("| loader alone (2 after-load runs) | loader against the probe"))
        .unwrap_or_else(|| panic!("no loader row:\n{md}"));
    assert!(p2.contains("at 4 writers"), "{p2}");
    assert!(leftovers("cb-probe-").is_empty());
    assert!(leftovers("cb-probed-").is_empty());
}
