//! `ctrlbench run` end to end through the CLI: against this binary's shared
//! plane (as an existing cluster), and once with its own local plane for the
//! Ctrl-C case.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use ctrlbench_plane::process::{is_alive, start_time};
use ctrlbench_plane::testing::shared_plane;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, ListParams};

mod common;
use common::assert_success;
use common::ctrlbench;
use common::only_results_dir;

const CONTROLLER_HEADER: &str = "timestamp,controller,queue_depth,queue_adds_total,queue_retries_total,reconcile_success_total,reconcile_error_total,reconcile_requeue_total,active_workers,unfinished_work_s,reconcile_latency_sum,reconcile_latency_count";

fn write_experiment(dir: &Path, window: u32, variants: &[(&str, &str)]) -> PathBuf {
    let mut text = format!("name = \"e2e\"\nscales = [20]\nwindow_s = {window}\n");
    for (name, preset) in variants {
        text.push_str(&format!(
            "\n[[variant]]\nname = \"{name}\"\nimpl = \"rust\"\npreset = \"{preset}\"\n"
        ));
    }
    let path = dir.join("e2e.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// Runs `exp` against the cluster `kubeconfig` names; its results directory.
fn run_on(exp: &Path, results: &Path, kubeconfig: &Path) -> PathBuf {
    let out = ctrlbench()
        .args(["run", exp.to_str().unwrap(), "--no-progress", "--results"])
        .arg(results)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .output()
        .unwrap();
    succeeded(&out, results)
}

/// The results directory of a run that must have succeeded.
fn succeeded(out: &std::process::Output, results: &Path) -> PathBuf {
    assert_success(out);
    only_results_dir(results)
}

fn csv_rows(path: &Path) -> (String, Vec<Vec<String>>) {
    let mut r = csv::Reader::from_path(path).unwrap();
    let header = r.headers().unwrap().iter().collect::<Vec<_>>().join(",");
    let rows = r
        .records()
        .map(|x| x.unwrap().iter().map(str::to_string).collect())
        .collect();
    (header, rows)
}

#[test]
fn two_variants_produce_the_documented_directory() {
    let plane = shared_plane();
    let tmp = tempfile::tempdir().unwrap();
    let exp = write_experiment(tmp.path(), 10, &[("good", "good"), ("bad", "bad")]);
    let results = tmp.path().join("results");
    // A bystander namespace with the same label value and a widget: not the run's, so untouched.
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let client = plane.client().await;
        let nss: Api<Namespace> = Api::all(client.clone());
        nss.create(
            &Default::default(),
            &serde_json::from_value(serde_json::json!({"metadata": {
                "name": "bystander", "labels": {"ctrlbench.dev/run": "bystander"}}}))
            .unwrap(),
        )
        .await
        .unwrap();
        let w: Api<widget_api::Widget> = Api::namespaced(client, "bystander");
        w.create(&Default::default(), &widget_api::Widget::numbered(1))
            .await
            .unwrap();
    });
    let dir = run_on(&exp, &results, &plane.kubeconfig_path);
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["complete"], true);
    assert!(
        manifest["experiment_text"]
            .as_str()
            .unwrap()
            .contains("[[variant]]")
    );
    for (variant, all_ready) in [("good", true), ("bad", false)] {
        let run = dir.join("N20").join(variant).join("rep1");
        for f in [
            "apiserver.csv",
            "objects.csv",
            "summary.json",
            "controller.log",
            &format!("metrics-{variant}.csv"),
        ] {
            assert!(run.join(f).is_file(), "{} missing", run.join(f).display());
        }
        let (header, rows) = csv_rows(&run.join(format!("metrics-{variant}.csv")));
        assert!(header.starts_with(CONTROLLER_HEADER), "{header}");
        assert!(rows.len() >= 5, "{variant}: only {} rows", rows.len());
        let stamps: Vec<k8s_openapi::jiff::Timestamp> =
            rows.iter().map(|r| r[0].parse().unwrap()).collect();
        assert!(
            stamps.windows(2).all(|w| w[0] < w[1]),
            "{variant}: timestamps do not increase"
        );
        assert!(rows.iter().all(|r| r[1] == variant));
        let (oh, objects) = csv_rows(&run.join("objects.csv"));
        assert_eq!(oh, "name,created_at,ready_at,first_write_at");
        assert_eq!(objects.len(), 20);
        let ready = objects.iter().filter(|r| !r[2].is_empty()).count();
        assert_eq!(ready, if all_ready { 20 } else { 0 }, "{variant}");
        // Coverage is read off managedFields: good's status writes and bad's
        // annotation writes (its status is dropped) both count. bad loops on
        // its own writes with one worker on kube-runtime's scheduler, so it
        // reaches only some objects.
        let written = objects.iter().filter(|r| !r[3].is_empty()).count();
        if all_ready {
            assert_eq!(written, 20, "{variant}: objects written");
        } else {
            assert!((1..=20).contains(&written), "{variant}: {written} written");
        }
        let s: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(run.join("summary.json")).unwrap())
                .unwrap();
        assert_eq!(s["converged"], all_ready);
        assert_eq!(s["load"]["created"], 20);
        assert!(s["reconciles"]["success"].as_f64().unwrap() >= 20.0);
        // The controller's own resolution of its flags (--print-settings) is recorded.
        let want = if all_ready {
            (5, "generation", "update", false, true)
        } else {
            (1, "none", "object", true, false)
        };
        let st = &s["settings"];
        assert_eq!(
            (
                st["workers"].as_u64().unwrap(),
                st["predicate"].as_str().unwrap(),
                st["status_write"].as_str().unwrap(),
                st["annotate"].as_bool().unwrap(),
                st["conflict_retry"].as_bool().unwrap()
            ),
            want,
            "{variant}: {st}"
        );
        assert_eq!(st["work_ms"], 10);
        // The typed record reads what the run wrote.
        let typed = ctrlbench_record::Summary::read(&run.join("summary.json")).unwrap();
        assert_eq!(typed.settings.unwrap().preset, variant);
        // The wait for a quiet cluster is recorded (other tests share this plane,
        // so whether it got quiet is not asserted; its bound is).
        let q = typed.quiet_wait.expect("quiet wait recorded");
        assert!(q.waited_s >= 1.0 && q.waited_s < 13.0, "{q:?}");
    }
    // Every namespace the run created is gone; the bystander and its widget are not.
    rt.block_on(async {
        let client = plane.client().await;
        let w: Api<widget_api::Widget> = Api::namespaced(client.clone(), "bystander");
        assert!(w.get_opt("widget-000001").await.unwrap().is_some());
        let nss: Api<Namespace> = Api::all(client);
        let left = nss
            .list(&ListParams::default().labels("ctrlbench.dev/run=e2e"))
            .await
            .unwrap();
        assert!(
            left.items.is_empty(),
            "namespaces left: {:?}",
            left.items
                .iter()
                .map(|n| n.metadata.name.clone())
                .collect::<Vec<_>>()
        );
    });
}

/// `ctrlbench cluster status` with the state and temporary directories in
/// `tmp`: the "next command" that sweeps what a killed run left.
fn next_command(tmp: &Path) {
    let out = ctrlbench()
        .args(["cluster", "status"])
        .env("XDG_STATE_HOME", tmp)
        .env("TMPDIR", tmp)
        .output()
        .unwrap();
    assert!(out.status.success());
}

/// Waits up to `within` for every (pid, start time) to be gone, then asserts it.
fn assert_gone(procs: &[(u32, u64)], within: Duration) {
    for (p, st) in procs {
        let t = Instant::now();
        while is_alive(*p, *st) && t.elapsed() < within {
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(!is_alive(*p, *st), "process {p} outlived ctrlbench");
    }
}

/// Pids whose parent is `pid`.
fn children(pid: u32) -> Vec<(u32, u64)> {
    let mut out = vec![];
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(p) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) {
            let rest = &stat[stat.rfind(')').unwrap() + 2..];
            let ppid: u32 = rest.split_whitespace().nth(1).unwrap().parse().unwrap();
            if ppid == pid {
                out.push((p, start_time(p).unwrap_or(0)));
            }
        }
    }
    out
}

#[test]
fn sigint_mid_run_cleans_up_and_marks_incomplete() {
    let tmp = tempfile::tempdir().unwrap();
    let exp = write_experiment(tmp.path(), 120, &[("loop", "bad-fix")]);
    let results = tmp.path().join("results");
    let mut child = ctrlbench()
        .args([
            "run",
            exp.to_str().unwrap(),
            "--no-progress",
            "--results",
            results.to_str().unwrap(),
        ])
        .env("XDG_STATE_HOME", tmp.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Wait until the run is sampling (a few rows in the controller CSV).
    let t0 = Instant::now();
    let csv = loop {
        if let Ok(entries) = std::fs::read_dir(&results)
            && let Some(d) = entries.flatten().next()
        {
            let f = d.path().join("N20/loop/rep1/metrics-loop.csv");
            if std::fs::read_to_string(&f)
                .map(|t| t.lines().count())
                .unwrap_or(0)
                >= 4
            {
                break f;
            }
        }
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "the run never started sampling"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    let spawned = children(pid);
    assert!(
        spawned.len() >= 3,
        "expected etcd, kube-apiserver and the controller as children: {spawned:?}"
    );
    // The plane's directory, from etcd's --data-dir (DIR/etcd).
    let plane_dir = spawned
        .iter()
        .find_map(|(p, _)| {
            let cmd = std::fs::read(format!("/proc/{p}/cmdline")).ok()?;
            let cmd = String::from_utf8_lossy(&cmd).to_string();
            let d = cmd
                .split('\0')
                .find_map(|a| a.strip_prefix("--data-dir="))?;
            Some(Path::new(d).parent()?.to_path_buf())
        })
        .expect("an etcd child with --data-dir");
    assert!(plane_dir.is_dir());
    ctrlbench_plane::process::signal(pid, ctrlbench_plane::process::Signal::INT);
    let stderr = BufReader::new(child.stderr.take().unwrap())
        .lines()
        .map_while(Result::ok)
        .collect::<Vec<_>>();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{}", stderr.join("\n"));
    assert_gone(&spawned, Duration::from_secs(10));
    let dir = csv.ancestors().nth(4).unwrap().to_path_buf();
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["complete"], false);
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("N20/loop/rep1/summary.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(summary["stop_reason"], "interrupted");
    assert!(stderr.iter().any(|l| l.contains("interrupted")));
    assert!(
        !plane_dir.exists(),
        "the plane's directory {} was not removed",
        plane_dir.display()
    );
}

#[test]
fn dry_run_prints_plan_and_estimate() {
    let tmp = tempfile::tempdir().unwrap();
    let exp = write_experiment(tmp.path(), 10, &[("good", "good"), ("bad", "bad")]);
    let out = ctrlbench()
        .args(["run", "--dry-run", exp.to_str().unwrap(), "--scales", "5,7"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(text.contains("runs (4)"), "{text}");
    assert!(text.contains("N=7"), "{text}");
    assert!(text.contains("estimated duration"), "{text}");
    let bad = ctrlbench()
        .args([
            "run",
            "--dry-run",
            exp.to_str().unwrap(),
            "--variants",
            "nope",
        ])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("nope"));
}

/// A kubeconfig whose first cluster (and current context) is a decoy: with
/// `--context` naming the real plane, the run converges and neither the
/// harness nor the controller's identity ever connects to the decoy.
#[test]
fn the_selected_context_decides_where_tokens_go() {
    use std::net::TcpListener;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    let plane = shared_plane();
    let tmp = tempfile::tempdir().unwrap();
    let decoy = TcpListener::bind("127.0.0.1:0").unwrap();
    let decoy_port = decoy.local_addr().unwrap().port();
    let hits = Arc::new(AtomicUsize::new(0));
    let h = hits.clone();
    std::thread::spawn(move || {
        for c in decoy.incoming() {
            h.fetch_add(1, Ordering::SeqCst);
            drop(c);
        }
    });
    let mut kc = plane.kubeconfig.clone();
    let real_ctx = kc.current_context.clone().unwrap();
    let mut bad_cluster = kc.clusters[0].clone();
    bad_cluster.name = "decoy".into();
    bad_cluster.cluster.as_mut().unwrap().server = Some(format!("https://127.0.0.1:{decoy_port}"));
    kc.clusters.insert(0, bad_cluster);
    let mut bad_ctx = kc.contexts[0].clone();
    bad_ctx.name = "decoy".into();
    bad_ctx.context.as_mut().unwrap().cluster = "decoy".into();
    kc.contexts.insert(0, bad_ctx);
    kc.current_context = Some("decoy".into());
    let kc_path = tmp.path().join("multi.kubeconfig");
    std::fs::write(&kc_path, serde_saphyr::to_string(&kc).unwrap()).unwrap();

    // Its own experiment name: the other tests on this plane count the
    // namespaces labelled with theirs.
    let exp = write_experiment(tmp.path(), 20, &[("good", "good")]);
    let text = std::fs::read_to_string(&exp).unwrap();
    std::fs::write(&exp, text.replacen("name = \"e2e\"", "name = \"decoy\"", 1)).unwrap();
    let results = tmp.path().join("results");
    let out = ctrlbench()
        .args(["run", exp.to_str().unwrap(), "--no-progress", "--results"])
        .arg(&results)
        .arg("--kubeconfig")
        .arg(&kc_path)
        .args(["--context", &real_ctx])
        .output()
        .unwrap();
    let dir = succeeded(&out, &results);
    let s = ctrlbench_record::Summary::read(&dir.join("N20/good/rep1/summary.json")).unwrap();
    assert_eq!(s.ready, 20, "the run against context {real_ctx} converges");
    assert_eq!(hits.load(Ordering::SeqCst), 0, "the decoy got a connection");
}

/// Starts `ctrlbench run` on its own local plane with TMPDIR and the state
/// directory inside `tmp`; returns the child once one of its children's
/// command lines contains `needle` (etcd: "--data-dir=").
// The caller waits for the child it is handed.
#[allow(clippy::zombie_processes)]
fn run_until_child(tmp: &Path, window: u32, needle: &str) -> (std::process::Child, PathBuf) {
    let exp = write_experiment(tmp, window, &[("g", "good")]);
    // Three replicas: every one of them must die with the harness.
    let mut text = std::fs::read_to_string(&exp).unwrap();
    text.push_str(&format!("replicas = {REPLICAS}\n"));
    std::fs::write(&exp, text).unwrap();
    let child = ctrlbench()
        .args(["run", exp.to_str().unwrap(), "--no-progress", "--results"])
        .arg(tmp.join("results"))
        .env("XDG_STATE_HOME", tmp)
        .env("TMPDIR", tmp)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    loop {
        let found = children(child.id()).iter().find_map(|(p, _)| {
            let cmd = String::from_utf8_lossy(&std::fs::read(format!("/proc/{p}/cmdline")).ok()?)
                .to_string();
            let d = cmd
                .split('\0')
                .find_map(|a| a.strip_prefix("--data-dir="))?;
            cmd.contains(needle)
                .then(|| Path::new(d).parent().map(Path::to_path_buf))
                .flatten()
        });
        if let Some(dir) = found {
            return (child, dir);
        }
        if t0.elapsed() > Duration::from_secs(60) {
            let mut child = child;
            let _ = child.kill();
            let _ = child.wait();
            panic!("no {needle} child");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Ctrl-C while the plane starts: exit 130 within 5 s, nothing left running,
/// the plane's directory removed.
#[test]
fn sigint_during_plane_start_exits_within_5_s() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut child, plane_dir) = run_until_child(tmp.path(), 30, "--data-dir=");
    let spawned = children(child.id());
    let t = Instant::now();
    ctrlbench_plane::process::signal(child.id(), ctrlbench_plane::process::Signal::INT);
    let status = child.wait().unwrap();
    let took = t.elapsed();
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(130), "{err}");
    assert!(took < Duration::from_secs(5), "exit took {took:?}: {err}");
    assert_gone(&spawned, Duration::from_secs(5));
    assert!(!plane_dir.exists(), "{} left", plane_dir.display());
}

/// The controller replicas `run_until_child`'s experiment runs.
const REPLICAS: usize = 3;

/// SIGKILL of `ctrlbench run` while the plane starts and while it loads:
/// etcd, kube-apiserver and every controller replica die with it
/// (parent-death signal), and the next command removes the plane directory
/// it left.
#[test]
fn sigkill_leaves_nothing_after_the_next_command() {
    for phase in ["plane start", "load"] {
        let tmp = tempfile::tempdir().unwrap();
        let (mut child, plane_dir) = run_until_child(tmp.path(), 60, "--data-dir=");
        if phase == "load" {
            let t0 = Instant::now();
            while children(child.id())
                .iter()
                .filter(|(p, _)| {
                    std::fs::read(format!("/proc/{p}/cmdline")).is_ok_and(|c| {
                        let c = String::from_utf8_lossy(&c);
                        c.contains("widget-controller") && !c.contains("--print-settings")
                    })
                })
                .count()
                < REPLICAS
            {
                assert!(
                    t0.elapsed() < Duration::from_secs(60),
                    "not every replica started"
                );
                std::thread::sleep(Duration::from_millis(50));
            }
            std::thread::sleep(Duration::from_millis(1500));
        }
        let spawned = children(child.id());
        child.kill().unwrap();
        child.wait().unwrap();
        assert_gone(&spawned, Duration::from_secs(10));
        next_command(tmp.path());
        assert!(
            !plane_dir.exists(),
            "{phase}: {} left after `cluster status`",
            plane_dir.display()
        );
    }
}

/// SIGKILL as the run writes its report: nothing is left running, the next
/// command removes the plane directory, and report.md is whole or absent
/// (written atomically), never torn.
#[test]
fn sigkill_during_the_report_leaves_nothing_torn() {
    let tmp = tempfile::tempdir().unwrap();
    let exp = write_experiment(tmp.path(), 3, &[("g", "good")]);
    let results = tmp.path().join("results");
    let mut child = ctrlbench()
        .args(["run", exp.to_str().unwrap(), "--no-progress", "--results"])
        .arg(&results)
        .env("XDG_STATE_HOME", tmp.path())
        .env("TMPDIR", tmp.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut spawned = Vec::new();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    // Children are gone by the report; remember them while the run goes.
    while let Some(Ok(line)) = lines.next() {
        spawned.extend(children(child.id()));
        if line.starts_with("results: ") {
            break;
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_gone(&spawned, Duration::from_secs(10));
    next_command(tmp.path());
    let left: Vec<PathBuf> = std::fs::read_dir(tmp.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("ctrlbench-plane-")
        })
        .collect();
    assert!(left.is_empty(), "plane directories left: {left:?}");
    let dir = only_results_dir(&results);
    if let Ok(md) = std::fs::read_to_string(dir.join("report.md")) {
        assert!(
            md.contains("## How the numbers are computed"),
            "torn report.md"
        );
    }
}

/// Column `col` of the last good row minus the first good row (scrape_ok=1).
fn csv_delta(path: &Path, col: &str) -> f64 {
    let (header, rows) = csv_rows(path);
    let h: Vec<&str> = header.split(',').collect();
    let (ok, c) = (
        h.iter().position(|x| *x == "scrape_ok").unwrap(),
        h.iter()
            .position(|x| *x == col)
            .unwrap_or_else(|| panic!("{}: no column {col}", path.display())),
    );
    let good: Vec<f64> = rows
        .iter()
        .filter(|r| r[ok] == "1")
        .map(|r| r[c].parse().unwrap())
        .collect();
    assert!(good.len() >= 2, "{}: too few good rows", path.display());
    good[good.len() - 1] - good[0]
}

/// The queue decides coverage: rust bad-fix on kube-runtime's scheduler
/// starves some keys, on the FIFO queue (and in Go) it writes every object.
/// And in the isolated schedule each controller's own count of its writes
/// agrees with the apiserver's count of widget updates within 2 %. Runs on
/// its own local plane: the shared plane's apiserver also counts the other
/// tests' writes. With the audit log on, the apiserver's per-caller record
/// of each variant's updates agrees too, and names the variant's own
/// ServiceAccount.
#[test]
fn queue_order_decides_coverage_and_own_writes_match_the_server() {
    let tmp = tempfile::tempdir().unwrap();
    let exp = tmp.path().join("queue-order.toml");
    std::fs::write(
        &exp,
        "name = \"queue-order\"\nscales = [50]\nwindow_s = 12\n[cluster]\naudit_log = true\n\
         [[variant]]\nname = \"kube\"\nimpl = \"rust\"\npreset = \"bad-fix\"\n\
         [[variant]]\nname = \"fifo\"\nimpl = \"rust\"\npreset = \"bad-fix\"\nqueue = \"fifo\"\n\
         [[variant]]\nname = \"go\"\nimpl = \"go@v0.22\"\npreset = \"bad-fix\"\n",
    )
    .unwrap();
    let results = tmp.path().join("results");
    let out = ctrlbench()
        .args([
            "run",
            exp.to_str().unwrap(),
            "--no-progress",
            "--results",
            results.to_str().unwrap(),
        ])
        .env("XDG_STATE_HOME", tmp.path())
        .output()
        .unwrap();
    let dir = succeeded(&out, &results);
    let mut coverage = std::collections::BTreeMap::new();
    for variant in ["kube", "fifo", "go"] {
        let run = dir.join("N50").join(variant).join("rep1");
        let (_, objects) = csv_rows(&run.join("objects.csv"));
        assert_eq!(objects.len(), 50);
        coverage.insert(variant, objects.iter().filter(|r| !r[3].is_empty()).count());
        let own = csv_delta(
            &run.join(format!("metrics-{variant}.csv")),
            "rest_writes_total",
        );
        let server = csv_delta(&run.join("apiserver.csv"), "widget_update_writes_total");
        assert!(own > 100.0, "{variant}: only {own} writes");
        assert!(
            (own - server).abs() <= 0.02 * server,
            "{variant}: own client counted {own} writes, the apiserver {server} updates"
        );
        let s = ctrlbench_record::Summary::read(&run.join("summary.json")).unwrap();
        let audit = ctrlbench_record::audit::read(&run.join("audit.csv"))
            .unwrap()
            .expect("audit.csv");
        // Over the same span as the client's counter: up to its last scrape
        // (the controller writes on until it is stopped).
        let (mh, mrows) = csv_rows(&run.join(format!("metrics-{variant}.csv")));
        let ok = mh.split(',').position(|c| c == "scrape_ok").unwrap();
        let last_scrape: k8s_openapi::jiff::Timestamp = mrows
            .iter()
            .rev()
            .find(|r| r[ok] == "1")
            .map(|r| r[0].parse().unwrap())
            .unwrap();
        let updates: Vec<_> = audit.iter().filter(|r| r.is_update()).collect();
        let audited = updates
            .iter()
            .filter(|r| {
                r.received_at
                    .parse::<k8s_openapi::jiff::Timestamp>()
                    .unwrap()
                    <= last_scrape
            })
            .count() as f64;
        assert!(
            (own - audited).abs() <= 0.02 * audited,
            "{variant}: own client counted {own} writes, the audit log {audited} updates"
        );
        let sa = format!("system:serviceaccount:{}:", s.namespace);
        assert!(
            updates.iter().all(|r| r.user.starts_with(&sa)),
            "{variant}: an update not by the variant's own ServiceAccount"
        );
        let q = s.settings.and_then(|s| s.queue);
        assert_eq!(
            q.map(|q| q.as_str()),
            Some(if variant == "kube" { "kube" } else { "fifo" })
        );
    }
    assert_eq!((coverage["fifo"], coverage["go"]), (50, 50), "{coverage:?}");
    assert!(coverage["kube"] < 50, "{coverage:?}");
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(
        md.contains(&format!(
            "N=50 kube: the controller wrote to {} of 50 objects. Its queue is kube-runtime's scheduler",
            coverage["kube"]
        )),
        "{md}"
    );
    assert!(md.contains("| 50 | fifo | 50/50 | 50/50 |"), "{md}");
}

/// A loader that failed for some objects measured another workload: the run
/// is flagged, its errors recorded in summary.json and named in the report.
/// A ValidatingAdmissionPolicy on the shared plane denies the creates of
/// widgets whose name ends in 7, only in this test's namespaces.
#[test]
fn a_loader_failure_is_recorded_and_flagged() {
    let plane = shared_plane();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let client = plane.client().await;
        let policy: kube::api::DynamicObject = serde_json::from_value(serde_json::json!({
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": "deny-sevens"},
            "spec": {
                "failurePolicy": "Fail",
                "matchConstraints": {"resourceRules": [{
                    "apiGroups": ["benchmark.example.com"], "apiVersions": ["*"],
                    "operations": ["CREATE"], "resources": ["widgets"]}]},
                "validations": [{
                    "expression": "!(object.metadata.namespace.startsWith('cb-loaderfail-') && object.metadata.name.endsWith('7'))",
                    "message": "denied by the test's policy"}]
            }
        }))
        .unwrap();
        let binding: kube::api::DynamicObject = serde_json::from_value(serde_json::json!({
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": "deny-sevens"},
            "spec": {"policyName": "deny-sevens", "validationActions": ["Deny"]}
        }))
        .unwrap();
        for (obj, plural) in [
            (policy, "validatingadmissionpolicies"),
            (binding, "validatingadmissionpolicybindings"),
        ] {
            let ar = kube::discovery::ApiResource {
                group: "admissionregistration.k8s.io".into(),
                version: "v1".into(),
                api_version: "admissionregistration.k8s.io/v1".into(),
                kind: obj.types.as_ref().unwrap().kind.clone(),
                plural: plural.into(),
            };
            let api: Api<kube::api::DynamicObject> = Api::all_with(client.clone(), &ar);
            api.create(&Default::default(), &obj).await.unwrap();
        }
        // The policy takes effect once the apiserver has compiled it: probe
        // with dry-run creates in a namespace of the same prefix.
        let nss: Api<Namespace> = Api::all(client.clone());
        nss.create(
            &Default::default(),
            &serde_json::from_value(serde_json::json!({"metadata": {"name": "cb-loaderfail-probe"}}))
                .unwrap(),
        )
        .await
        .unwrap();
        let w: Api<widget_api::Widget> = Api::namespaced(client, "cb-loaderfail-probe");
        let dry = kube::api::PostParams {
            dry_run: true,
            ..Default::default()
        };
        let t = Instant::now();
        while w.create(&dry, &widget_api::Widget::numbered(7)).await.is_ok() {
            assert!(t.elapsed() < Duration::from_secs(30), "the policy never took effect");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    });
    let tmp = tempfile::tempdir().unwrap();
    let exp = tmp.path().join("loader-fail.toml");
    std::fs::write(
        &exp,
        "name = \"loader-fail\"\nscales = [20]\nwindow_s = 8\n\
         [[variant]]\nname = \"loaderfail\"\nimpl = \"rust\"\npreset = \"good\"\n",
    )
    .unwrap();
    let results = tmp.path().join("results");
    let dir = run_on(&exp, &results, &plane.kubeconfig_path);
    let run = dir.join("N20/loaderfail/rep1");
    let s = ctrlbench_record::Summary::read(&run.join("summary.json")).unwrap();
    // widget-000007 and widget-000017.
    assert_eq!((s.load.created, s.load.errors), (18, 2), "{:?}", s.load);
    assert!(
        s.load
            .first_error
            .as_deref()
            .is_some_and(|e| e.contains("denied by the test's policy")),
        "{:?}",
        s.load.first_error
    );
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(md.contains("## Warnings"), "{md}");
    assert!(md.contains("N20/loaderfail/rep1: loader errors: 2"), "{md}");
    assert!(
        md.contains("| 20 | loaderfail ⚠ flagged runs only |"),
        "{md}"
    );
}

/// The `antipatterns` experiment, CI-sized (five of its variants, N=30, its
/// idle and delete phases): the report sets each anti-pattern beside its good
/// counterpart of the same language, with the preset's description.
#[test]
fn antipatterns_report_each_against_its_counterpart() {
    let plane = shared_plane();
    let tmp = tempfile::tempdir().unwrap();
    let results = tmp.path().join("results");
    let out = ctrlbench()
        .args([
            "run",
            "antipatterns",
            "--scales",
            "30",
            "--window",
            "20",
            "--variants",
            "rust-good,go-good,rust-list-in-reconcile,go-list-in-reconcile,rust-finalizer",
            "--background-objects",
            "200",
            "--no-progress",
            "--results",
        ])
        .arg(&results)
        .arg("--kubeconfig")
        .arg(&plane.kubeconfig_path)
        .output()
        .unwrap();
    let dir = succeeded(&out, &results);
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    let section = md
        .split("## Presets against their counterparts, by question")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .unwrap_or_else(|| panic!("no counterparts section:\n{md}"));
    for (variant, against) in [
        ("rust-list-in-reconcile", "rust-good"),
        ("go-list-in-reconcile", "go-good"),
    ] {
        assert!(
            section.contains(&format!("| 30 | {variant} | {against} | Ready/s |")),
            "{section}"
        );
    }
    assert!(
        section.contains("list-in-reconcile — The good controller, but every reconcile also lists"),
        "{section}"
    );
    // The finalizer's question is deletion: measured by the delete phase.
    assert!(
        section.contains("| 30 | rust-finalizer | rust-good | delete phase length |"),
        "{section}"
    );
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("N30/go-list-in-reconcile/rep1/summary.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(summary["preset_info"]["counterpart"], "good");
    assert_eq!(summary["preset_info"]["question"], "throughput");
    assert_eq!(summary["background_objects"], 200);
    assert!(
        md.contains("200 background widgets in a namespace of their own"),
        "{md}"
    );
}

/// Phases after the create phase on the shared plane: an update round that
/// `good` answers for every widget and `bad` for none (the report says so),
/// an idle phase, and a delete phase that waits for the `finalizer`
/// controller to release each widget.
#[test]
fn update_idle_and_delete_phases_are_timed_per_object() {
    let plane = shared_plane();
    let tmp = tempfile::tempdir().unwrap();
    let exp = tmp.path().join("phases.toml");
    let mut text = String::from(
        "name = \"phases\"\nscales = [20]\nwindow_s = 15\nstop_when_converged = true\n",
    );
    for (name, preset) in [("good", "good"), ("bad", "bad"), ("fin", "finalizer")] {
        text.push_str(&format!(
            "[[variant]]\nname = \"{name}\"\nimpl = \"rust\"\npreset = \"{preset}\"\n"
        ));
    }
    text.push_str(
        "[[phase]]\nkind = \"update\"\ntimeout_s = 6\n\
         [[phase]]\nkind = \"idle\"\nduration_s = 2\n\
         [[phase]]\nkind = \"delete\"\ntimeout_s = 20\n",
    );
    std::fs::write(&exp, text).unwrap();
    let results = tmp.path().join("results");
    let dir = run_on(&exp, &results, &plane.kubeconfig_path);
    let rows =
        |v: &str| -> Vec<Vec<String>> { csv_rows(&dir.join(format!("N20/{v}/rep1/phases.csv"))).1 };
    // Columns: phase,kind,round,name,started_at,done_at.
    let done = |rows: &[Vec<String>], kind: &str| {
        rows.iter()
            .filter(|r| r[1] == kind && !r[4].is_empty() && !r[5].is_empty())
            .count()
    };
    let good = rows("good");
    assert_eq!(done(&good, "update"), 20, "{good:?}");
    assert_eq!(done(&good, "delete"), 20, "{good:?}");
    let bad = rows("bad");
    assert_eq!(done(&bad, "update"), 0, "{bad:?}");
    let fin = rows("fin");
    assert_eq!(done(&fin, "delete"), 20, "{fin:?}");
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("N20/bad/rep1/summary.json")).unwrap(),
    )
    .unwrap();
    let kinds: Vec<&str> = summary["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["update", "idle", "delete"]);
    assert_eq!(summary["phases"][0]["timed_out"], true);
    // Every widget is gone after the delete phase.
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let client = plane.client().await;
        let ns = summary["namespace"].as_str().unwrap();
        let w: Api<widget_api::Widget> = Api::namespaced(client, ns);
        assert!(
            w.list(&ListParams::default())
                .await
                .map(|l| l.items.is_empty())
                .unwrap_or(true)
        );
    });
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(md.contains("## Phases after the create phase"), "{md}");
    assert!(
        md.contains("N=20 bad rep1: update phase 1 did not complete — 0 of 20 objects ready again after its patch (the phase timed out)"),
        "{md}"
    );
    assert!(md.contains("| 20 | good | 1 update | 20/20 |"), "{md}");
}

/// start = "after-load": every object exists before the controller starts —
/// nothing is written by the controller before its start — and summary.json
/// records the start-up times the report shows; before-load keeps the old
/// order (the controller starts before the load).
#[test]
fn after_load_starts_the_controller_once_every_object_exists() {
    let plane = shared_plane();
    let tmp = tempfile::tempdir().unwrap();
    let exp = tmp.path().join("start.toml");
    std::fs::write(
        &exp,
        "name = \"start\"\nscales = [30]\nwindow_s = 30\nstop_when_converged = true\nquiet_s = 1\n\
         [[variant]]\nname = \"before\"\nimpl = \"rust\"\npreset = \"good-single\"\nwork_ms = 0\n\
         [[variant]]\nname = \"after\"\nimpl = \"rust\"\npreset = \"good-single\"\nwork_ms = 0\nstart = \"after-load\"\n",
    )
    .unwrap();
    let dir = run_on(&exp, &tmp.path().join("results"), &plane.kubeconfig_path);
    for (variant, after) in [("before", false), ("after", true)] {
        let run = dir.join("N30").join(variant).join("rep1");
        let s = ctrlbench_record::Summary::read(&run.join("summary.json")).unwrap();
        assert_eq!(s.ready, 30, "{variant}");
        let st = s.start.expect("start timing recorded");
        assert_eq!(
            st.mode.as_str(),
            if after { "after-load" } else { "before-load" }
        );
        let first = st.first_write_s.expect("a first write");
        let all = st.all_ready_s.expect("Ready == N");
        assert!(0.0 < first && first <= all, "{variant}: {first} {all}");
        // The harness's CPU while its loader ran (30 creates, their
        // connections' TLS handshakes: milliseconds), before-load and
        // after-load alike.
        let cpu = s.harness_cpu.expect("harness CPU recorded").load_phase_s;
        assert!(cpu > 0.001, "{variant}: load phase {cpu} s");
        if after {
            // The loader had finished: the controller started after it.
            assert!(
                st.controller_started_s >= s.load.seconds,
                "{} < {}",
                st.controller_started_s,
                s.load.seconds
            );
            // Nothing was written before the controller's start.
            let (_, objects) = csv_rows(&run.join("objects.csv"));
            let last_create = objects.iter().map(|r| r[1].clone()).max().unwrap();
            let first_write = objects.iter().map(|r| r[3].clone()).min().unwrap();
            assert!(first_write > last_create, "{first_write} ≤ {last_create}");
        } else {
            assert!(st.controller_started_s < 0.0, "{}", st.controller_started_s);
        }
    }
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(md.contains("## Controller start"), "{md}");
    assert!(md.contains("| 30 | after | after-load |"), "{md}");
}

/// `profile = true`: each controller's CPU profile over the run is kept as
/// folded stacks in the run directory and drawn as a flame graph in
/// report.html, for Rust (pprof-rs) and Go (net/http/pprof) alike.
#[test]
fn profiled_controllers_get_a_flame_graph_each() {
    let plane = shared_plane();
    let tmp = tempfile::tempdir().unwrap();
    let exp = tmp.path().join("prof.toml");
    let mut text =
        "name = \"prof\"\nscales = [300]\nwindow_s = 60\nstop_when_converged = true\n".to_string();
    for (name, imp) in [("rust", "rust"), ("go", "go@v0.22")] {
        text += &format!(
            "[[variant]]\nname = \"{name}\"\nimpl = \"{imp}\"\npreset = \"good\"\nprofile = true\n"
        );
    }
    std::fs::write(&exp, text).unwrap();
    let dir = run_on(&exp, &tmp.path().join("results"), &plane.kubeconfig_path);
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    let section = report
        .split("## Where the controller's CPU goes (profiles)")
        .nth(1)
        .unwrap_or_else(|| panic!("no profiles section: {report}"));
    for name in ["rust", "go"] {
        let folded = dir.join(format!("N300/{name}/rep1/profile-0.folded"));
        let text = std::fs::read_to_string(&folded).unwrap();
        // Every line is `stack count`, and the counts add up to what the
        // report says was sampled.
        let samples: u64 = text
            .lines()
            .map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap())
            .sum();
        assert!(samples > 0, "{name}: an empty profile");
        let row = section
            .lines()
            .find(|l| l.starts_with(&format!("| 300 | {name} |")))
            .unwrap_or_else(|| panic!("no row for {name}: {section}"));
        assert!(row.contains(&format!("| 1/1 | {samples} |")), "{row}");
        // The runtime's own frames are in its stacks.
        let marker = if name == "rust" { "tokio" } else { "runtime." };
        assert!(text.contains(marker), "{name}: no {marker} frame");
    }
    // The settings table says the runs were profiled (a setting, visible).
    assert!(report.contains("| rust | rust (profiled) |"), "{report}");
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert_eq!(
        html.matches("<iframe").count(),
        2,
        "one flame graph per variant"
    );
    assert!(html.contains("srcdoc=\"&lt;?xml") || html.contains("srcdoc=\"&lt;svg"));
}
