//! The Rust controller's presets against the real local plane (one plane for
//! this binary), each case in its own namespace with its own ServiceAccount,
//! N = 20 widgets. The controller runs as the real binary, located (and built
//! when stale) by `ctrlbench::controllers::binary`: black-box tests of the
//! controller that live in the harness crate, so the controller crate does not
//! depend on the harness.

use ctrlbench_plane::process::{Signal, signal};
use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ctrlbench_plane::testing::shared_plane;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;
use widget_api::{LAST_SEEN_ANNOTATION, Widget};

const N: u64 = 20;

/// The Rust widget-controller binary (built by cargo if stale).
fn rust_bin() -> std::path::PathBuf {
    static BIN: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    BIN.get_or_init(|| {
        ctrlbench::controllers::binary(&ctrlbench::experiment::Impl::Rust)
            .expect("the Rust widget-controller binary")
    })
    .clone()
}

/// A controller process, stopped with SIGTERM when dropped.
struct Ctl {
    child: Child,
    addr: String,
    _dir: tempfile::TempDir,
}

impl Drop for Ctl {
    fn drop(&mut self) {
        signal(self.child.id(), Signal::TERM);
        let _ = self.child.wait();
    }
}

/// Namespace + N widgets, created as admin.
async fn setup(ns: &str, n: u64) -> kube::Client {
    let client = shared_plane().client().await;
    let nss: Api<Namespace> = Api::all(client.clone());
    nss.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": ns}})).unwrap(),
    )
    .await
    .unwrap();
    let api: Api<Widget> = Api::namespaced(client.clone(), ns);
    for i in 1..=n {
        api.create(&PostParams::default(), &Widget::numbered(i))
            .await
            .unwrap();
    }
    client
}

/// Starts the Rust controller as its own namespaced identity.
async fn start(client: &kube::Client, ns: &str, args: &[&str]) -> Ctl {
    let bin = tokio::task::spawn_blocking(rust_bin).await.unwrap();
    start_bin(&bin, client, ns, args).await
}

/// Samples keyed by `name{label=value,...}` (labels sorted).
async fn scrape(addr: &str) -> HashMap<String, f64> {
    let text = reqwest::get(format!("http://{addr}/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let lines = text.lines().map(|l| Ok(l.to_string()));
    let parsed = prometheus_parse::Scrape::parse(lines).expect("valid Prometheus text");
    let mut out = HashMap::new();
    for s in parsed.samples {
        let mut labels: Vec<String> = s.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
        labels.sort();
        let v = match s.value {
            prometheus_parse::Value::Counter(v)
            | prometheus_parse::Value::Gauge(v)
            | prometheus_parse::Value::Untyped(v) => v,
            prometheus_parse::Value::Histogram(h) => h.iter().map(|b| b.count).fold(0.0, f64::max),
            prometheus_parse::Value::Summary(_) => 0.0,
        };
        out.insert(format!("{}{{{}}}", s.metric, labels.join(",")), v);
    }
    out
}

/// Sum of every sample whose key starts with `prefix` and contains each of `with`.
fn sum(m: &HashMap<String, f64>, prefix: &str, with: &[&str]) -> f64 {
    m.iter()
        .filter(|(k, _)| k.starts_with(prefix) && with.iter().all(|w| k.contains(w)))
        .map(|(_, v)| v)
        .sum()
}

async fn widgets(client: &kube::Client, ns: &str) -> Vec<Widget> {
    let api: Api<Widget> = Api::namespaced(client.clone(), ns);
    api.list(&ListParams::default()).await.unwrap().items
}

async fn ready(client: &kube::Client, ns: &str) -> usize {
    widgets(client, ns)
        .await
        .iter()
        .filter(|w| w.is_ready())
        .count()
}

async fn wait_ready(client: &kube::Client, ns: &str, n: usize, within: Duration) -> Duration {
    let t0 = Instant::now();
    loop {
        let r = ready(client, ns).await;
        if r >= n {
            return t0.elapsed();
        }
        assert!(
            t0.elapsed() < within,
            "{ns}: {r}/{n} Ready after {within:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

const RECONCILES: &str = "controller_runtime_reconcile_total";

async fn converges_without_loop(preset: &str) {
    let ns = format!("conv-{preset}");
    let client = setup(&ns, N).await;
    let ctl = start(&client, &ns, &["--preset", preset]).await;
    wait_ready(&client, &ns, N as usize, Duration::from_secs(30)).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = scrape(&ctl.addr).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let after = scrape(&ctl.addr).await;
    let (b, a) = (sum(&before, RECONCILES, &[]), sum(&after, RECONCILES, &[]));
    assert!(b >= N as f64, "{preset}: only {b} reconciles");
    assert_eq!(
        b, a,
        "{preset}: reconciles kept coming after convergence (loop)"
    );
    assert_eq!(sum(&after, "workqueue_depth", &[]), 0.0);
    // Reads that bypass the cache show in the client's own counter: a GET
    // (or, for list-in-reconcile, a LIST — also method GET) per reconcile.
    let gets = sum(&after, "rest_client_requests_total", &["method=GET"]);
    match preset {
        "uncached-read" | "list-in-reconcile" | "metadata-only" => assert!(
            gets >= N as f64,
            "{preset}: {gets} GET requests, want >= {N} (one per reconcile)"
        ),
        _ => assert!(
            gets < N as f64,
            "{preset}: {gets} GET requests, want < {N} (reads come from the cache)"
        ),
    }
    if preset.ends_with("patch") {
        assert_eq!(
            sum(&after, "rest_client_requests_total", &["code=409"]),
            0.0,
            "{preset}: a patch conflicted"
        );
    }
}

#[tokio::test]
async fn good_presets_converge_and_stop() {
    futures::future::join_all(
        ["good", "good-single", "good-patch", "good-single-patch"]
            .into_iter()
            .map(converges_without_loop),
    )
    .await;
}

/// The anti-pattern presets that still converge (docs/architecture.md#controller-presets-and-flags); a widget in
/// another namespace stays untouched (the cluster-wide cache sees it).
#[tokio::test]
async fn antipattern_presets_that_converge_stop() {
    let client = shared_plane().client().await;
    let nss: Api<Namespace> = Api::all(client.clone());
    nss.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": "conv-foreign"}})).unwrap(),
    )
    .await
    .unwrap();
    let foreign: Api<Widget> = Api::namespaced(client.clone(), "conv-foreign");
    foreign
        .create(&PostParams::default(), &Widget::numbered(1))
        .await
        .unwrap();
    futures::future::join_all(
        [
            "uncached-read",
            "list-in-reconcile",
            "conditional-status",
            "finalizer",
            "cache-cluster-wide",
            "metadata-only",
        ]
        .into_iter()
        .map(converges_without_loop),
    )
    .await;
    let w = foreign.get("widget-000001").await.unwrap();
    assert!(
        w.status.is_none(),
        "the foreign widget was reconciled: {w:?}"
    );
    assert!(w.metadata.finalizers.is_none(), "{w:?}");
}

#[tokio::test]
async fn finalizer_preset_adds_its_finalizer_and_removes_it_on_delete() {
    let ns = "fin-finalizer";
    let client = setup(ns, N).await;
    let _ctl = start(&client, ns, &["--preset", "finalizer"]).await;
    wait_ready(&client, ns, N as usize, Duration::from_secs(30)).await;
    for w in widgets(&client, ns).await {
        assert_eq!(
            w.metadata.finalizers.as_deref(),
            Some(&[widget_api::presets::FINALIZER.to_string()][..]),
            "{:?}",
            w.metadata.name
        );
    }
    let api: Api<Widget> = Api::namespaced(client.clone(), ns);
    api.delete("widget-000001", &Default::default())
        .await
        .unwrap();
    let t0 = Instant::now();
    while api.get_opt("widget-000001").await.unwrap().is_some() {
        assert!(
            t0.elapsed() < Duration::from_secs(15),
            "the deleted widget is still there: the finalizer was not removed"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn requeue_after_reconciles_every_object_every_second() {
    let ns = "loop-requeue-after";
    let client = setup(ns, N).await;
    let ctl = start(&client, ns, &["--preset", "requeue-after"]).await;
    wait_ready(&client, ns, N as usize, Duration::from_secs(30)).await;
    let before = scrape(&ctl.addr).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let after = scrape(&ctl.addr).await;
    let (b, a) = (sum(&before, RECONCILES, &[]), sum(&after, RECONCILES, &[]));
    assert!(a - b >= 2.0 * N as f64, "reconciles {b} → {a} in 3 s");
    let requeued = sum(&after, RECONCILES, &["result=requeue_after"]);
    assert!(requeued >= N as f64);
    // client-go's delaying queue counts a retry on every AddAfter, a
    // requeue-after's included: one retry per requeue, as in Go.
    let retries = sum(&after, "workqueue_retries_total", &[]);
    assert!(
        (retries - requeued).abs() <= N as f64,
        "retries {retries}, requeue_after results {requeued}"
    );
}

#[tokio::test]
async fn unconditional_status_loops_on_its_own_timestamp() {
    let ns = "loop-unconditional-status";
    let client = setup(ns, N).await;
    // More than a second per reconcile: every rewrite lands in a new second.
    // One worker per widget, so that queue order plays no part.
    let ctl = start(
        &client,
        ns,
        &[
            "--preset",
            "unconditional-status",
            "--work-ms",
            "1100",
            "--workers",
            "20",
        ],
    )
    .await;
    wait_ready(&client, ns, N as usize, Duration::from_secs(30)).await;
    let api: Api<Widget> = Api::namespaced(client.clone(), ns);
    let stamp = || async {
        api.get("widget-000001")
            .await
            .unwrap()
            .status
            .and_then(|s| s.last_updated)
    };
    let (r1, l1) = (
        sum(&scrape(&ctl.addr).await, RECONCILES, &[]),
        stamp().await,
    );
    tokio::time::sleep(Duration::from_secs(10)).await;
    let (r2, l2) = (
        sum(&scrape(&ctl.addr).await, RECONCILES, &[]),
        stamp().await,
    );
    assert!(r2 > r1 + N as f64, "reconciles {r1} → {r2}: no loop");
    assert_ne!(l1, l2, "lastUpdated did not change");
}

async fn loops(preset: &str) {
    let ns = format!("loop-{preset}");
    let client = setup(&ns, N).await;
    let ctl = start(&client, &ns, &["--preset", preset]).await;
    wait_ready(&client, &ns, 1, Duration::from_secs(30)).await;
    let stamps = |ws: Vec<Widget>| -> HashMap<String, String> {
        ws.into_iter()
            .filter_map(|w| {
                let stamp = w
                    .metadata
                    .annotations
                    .as_ref()?
                    .get(LAST_SEEN_ANNOTATION)?
                    .clone();
                Some((w.metadata.name.clone()?, stamp))
            })
            .collect()
    };
    let first = stamps(widgets(&client, &ns).await);
    assert!(
        !first.is_empty(),
        "{preset}: a Ready object but no annotation"
    );
    let before = sum(&scrape(&ctl.addr).await, RECONCILES, &[]);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after = sum(&scrape(&ctl.addr).await, RECONCILES, &[]);
    assert!(
        after > before + 10.0,
        "{preset}: reconciles {before} → {after}: no loop"
    );
    // kube-runtime does not process looping keys in FIFO order, so not every
    // object need be re-stamped: the loop shows as stamps that keep changing.
    let later = stamps(widgets(&client, &ns).await);
    let changed = later
        .iter()
        .filter(|(k, v)| first.get(*k) != Some(*v))
        .count();
    assert!(changed > 0, "{preset}: no annotation changed in 2 s");
}

#[tokio::test]
async fn bad_fix_presets_become_ready_and_loop() {
    futures::future::join(loops("bad-fix"), loops("bad-fix-single")).await;
}

async fn never_ready(preset: &str) {
    let ns = format!("never-{preset}");
    let client = setup(&ns, N).await;
    let ctl = start(&client, &ns, &["--preset", preset]).await;
    tokio::time::sleep(Duration::from_secs(10)).await;
    let ws = widgets(&client, &ns).await;
    assert_eq!(
        ws.iter().filter(|w| w.is_ready()).count(),
        0,
        "{preset}: status was not dropped"
    );
    assert!(
        ws.iter().all(|w| w.status.is_none()),
        "{preset}: some stored status is not empty"
    );
    let stamped = ws
        .iter()
        .filter(|w| {
            w.metadata
                .annotations
                .as_ref()
                .is_some_and(|a| a.contains_key(LAST_SEEN_ANNOTATION))
        })
        .count();
    assert!(stamped > 0, "{preset}: no annotation written");
    assert!(sum(&scrape(&ctl.addr).await, RECONCILES, &["result=success"]) > N as f64);
}

#[tokio::test]
async fn bad_presets_never_become_ready() {
    futures::future::join(never_ready("bad"), never_ready("bad-concurrent")).await;
}

#[tokio::test]
async fn update_conflicts_are_retried_and_converge() {
    let ns = "conflicts";
    let client = setup(ns, N).await;
    // A second writer: bumps every object's resourceVersion (annotations do not
    // change generation, so the controller is not re-triggered by it).
    let api: Api<Widget> = Api::namespaced(client.clone(), ns);
    let writer = tokio::spawn(async move {
        for round in 0..400u32 {
            for i in 1..=N {
                let p = json!({"metadata": {"annotations": {"second-writer": round.to_string()}}});
                let _ = api
                    .patch(
                        &widget_api::object_name(i),
                        &PatchParams::default(),
                        &Patch::Merge(p),
                    )
                    .await;
            }
        }
    });
    let ctl = start(&client, ns, &["--preset", "good", "--work-ms", "200"]).await;
    wait_ready(&client, ns, N as usize, Duration::from_secs(60)).await;
    writer.abort();
    let m = scrape(&ctl.addr).await;
    assert!(
        sum(&m, "rest_client_requests_total", &["code=409"]) > 0.0,
        "the second writer forced no conflict"
    );
    // Retries happen inside RetryOnConflict: no reconcile had to fail for them.
    assert!(sum(&m, RECONCILES, &["result=success"]) >= N as f64);
}

#[tokio::test]
async fn client_rate_limit_bounds_writes() {
    let ns = "qps";
    let client = setup(ns, 40).await;
    let (qps, burst) = (5.0, 5.0);
    let ctl = start(
        &client,
        ns,
        &[
            "--preset",
            "good-single-patch",
            "--work-ms",
            "0",
            "--client-qps",
            "5",
            "--client-burst",
            "5",
        ],
    )
    .await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let t0 = Instant::now();
    let m0 = scrape(&ctl.addr).await;
    tokio::time::sleep(Duration::from_secs(4)).await;
    let m1 = scrape(&ctl.addr).await;
    let secs = t0.elapsed().as_secs_f64();
    let writes = |m: &HashMap<String, f64>| sum(m, "rest_client_requests_total", &["method=PATCH"]);
    let done = writes(&m1) - writes(&m0);
    assert!(done >= 1.0, "no status write in the window");
    assert!(
        done <= burst + qps * secs,
        "{done} writes in {secs:.1} s exceeds burst {burst} + {qps}/s"
    );
    let waited = sum(&m1, "rest_client_rate_limiter_duration_seconds_sum", &[]);
    assert!(
        waited > 0.5,
        "the token bucket made nobody wait ({waited} s)"
    );
    assert!(
        ready(&client, ns).await < 40,
        "40 writes cannot fit in ~5 s at 5 qps"
    );
}

#[tokio::test]
async fn metrics_page_parses_and_has_every_name() {
    let ns = "names";
    let client = setup(ns, 3).await;
    let ctl = start(&client, ns, &["--preset", "good"]).await;
    wait_ready(&client, ns, 3, Duration::from_secs(30)).await;
    let m = scrape(&ctl.addr).await;
    for name in [
        "workqueue_depth{",
        "workqueue_adds_total{",
        "workqueue_retries_total{",
        "workqueue_unfinished_work_seconds{",
        "controller_runtime_reconcile_total{",
        "controller_runtime_reconcile_errors_total{",
        "controller_runtime_reconcile_time_seconds{",
        "controller_runtime_active_workers{",
        "controller_runtime_max_concurrent_reconciles{",
        "rest_client_requests_total{",
        "rest_client_rate_limiter_duration_seconds{",
        "process_cpu_seconds_total{",
        "process_resident_memory_bytes{",
    ] {
        assert!(m.keys().any(|k| k.starts_with(name)), "{name} missing");
    }
    assert_eq!(
        m["controller_runtime_max_concurrent_reconciles{controller=widget}"],
        5.0
    );
    assert!(m.contains_key("workqueue_depth{name=widget}"));
    for result in ["success", "error", "requeue", "requeue_after"] {
        assert!(m.contains_key(&format!(
            "controller_runtime_reconcile_total{{controller=widget,result={result}}}"
        )));
    }
    assert!(
        sum(
            &m,
            "rest_client_requests_total",
            &["code=200", "method=PUT"]
        ) >= 3.0
    );
    assert!(m["process_resident_memory_bytes{}"] > 1e6);
}

#[test]
fn invalid_flags_exit_2_naming_the_flag() {
    for (args, flag) in [
        (&["--workers", "0"][..], "--workers"),
        (&["--preset", "great"][..], "--preset"),
        (
            &["--client-qps", "5", "--client-burst", "0"][..],
            "--client-burst",
        ),
        (
            &["--metrics-bind-address", "here"][..],
            "--metrics-bind-address",
        ),
    ] {
        let out = Command::new(rust_bin())
            .args(["--namespace", "x"])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(flag), "{args:?}: {err}");
    }
}

#[tokio::test]
async fn watch_list_refused_is_a_clear_error() {
    // A second plane, with the server side of WatchList off.
    let opts = ctrlbench_plane::PlaneOptions {
        etcd_fsync: false,
        feature_gates: vec!["WatchList=false".into()],
        ..Default::default()
    };
    let plane = ctrlbench_plane::ControlPlane::start(&opts).await.unwrap();
    let out = tokio::task::spawn_blocking({
        let kc = plane.kubeconfig_path.clone();
        move || {
            Command::new(rust_bin())
                .args([
                    "--namespace",
                    "default",
                    "--watch-list",
                    "--metrics-bind-address",
                    "127.0.0.1:0",
                ])
                .env("KUBECONFIG", kc)
                .stdout(Stdio::null())
                .output()
                .unwrap()
        }
    });
    let out = tokio::time::timeout(Duration::from_secs(30), out)
        .await
        .expect("hung instead of failing")
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("WatchList"), "{err}");
    tokio::task::spawn_blocking(move || plane.stop())
        .await
        .unwrap();
}

#[tokio::test]
async fn watch_list_works_on_the_default_plane() {
    let ns = "watchlist";
    let client = setup(ns, 5).await;
    let _ctl = start(&client, ns, &["--preset", "good-patch", "--watch-list"]).await;
    wait_ready(&client, ns, 5, Duration::from_secs(30)).await;
}

/// The metric names of docs/architecture.md#metric-names-and-buckets (histograms by their _bucket series), and our start-up gauge.
const DESIGN_NAMES: [&str; 15] = [
    "workqueue_depth",
    "workqueue_adds_total",
    "workqueue_retries_total",
    "workqueue_unfinished_work_seconds",
    "controller_runtime_reconcile_total",
    "controller_runtime_reconcile_errors_total",
    "controller_runtime_reconcile_time_seconds",
    "controller_runtime_active_workers",
    "controller_runtime_max_concurrent_reconciles",
    "rest_client_requests_total",
    "rest_client_rate_limiter_duration_seconds",
    "rest_client_request_duration_seconds",
    "process_cpu_seconds_total",
    "process_resident_memory_bytes",
    "ctrlbench_initial_list_seconds",
];

/// Starts a controller binary (Rust or Go: same flags) with a ServiceAccount
/// identity confined to `ns`, and waits for its metrics address.
async fn start_bin(bin: &std::path::Path, client: &kube::Client, ns: &str, args: &[&str]) -> Ctl {
    let plane = shared_plane();
    // A cache = "cluster" preset gets cluster-wide list/watch, as the harness gives it.
    let cluster_scope = args.windows(2).any(|a| {
        a[0] == "--preset" && widget_api::presets::get(a[1]).is_some_and(|p| p.cluster_scope())
    });
    let id = ctrlbench::run::identity::create(
        client,
        &plane.kubeconfig,
        ns,
        "widget-controller",
        &ctrlbench::run::identity::Grants::widgets(cluster_scope),
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kc = dir.path().join("kubeconfig");
    id.write(&kc).unwrap();
    let mut child = Command::new(bin)
        .args([
            "--namespace",
            ns,
            "--metrics-bind-address",
            "127.0.0.1:0",
            "--log-level",
            "info",
        ])
        .args(args)
        .env("KUBECONFIG", &kc)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let addr = tokio::task::spawn_blocking(move || {
        BufReader::new(stdout)
            .lines()
            .find_map(|l| l.ok()?.strip_prefix("metrics-address=").map(str::to_string))
            .expect("metrics-address line")
    })
    .await
    .unwrap();
    Ctl {
        child,
        addr,
        _dir: dir,
    }
}

#[tokio::test]
async fn rust_and_go_expose_the_same_design_names() {
    use ctrlbench::experiment::Impl;
    let mut bins = vec![(
        "rust".to_string(),
        tokio::task::spawn_blocking(rust_bin).await.unwrap(),
    )];
    for label in ["v0.18.4", "v0.22", "v0.25"] {
        let imp = Impl::Go(label.to_string());
        let bin = tokio::task::spawn_blocking(move || ctrlbench::controllers::binary(&imp))
            .await
            .unwrap()
            .unwrap();
        bins.push((format!("go-{label}"), bin));
    }
    let mut names_by_impl = Vec::new();
    for (label, bin) in &bins {
        let ns = format!("names-{}", label.replace('.', "-"));
        let client = setup(&ns, 3).await;
        let ctl = start_bin(
            bin,
            &client,
            &ns,
            &[
                "--preset",
                "good",
                "--client-qps",
                "50",
                "--client-burst",
                "50",
            ],
        )
        .await;
        wait_ready(&client, &ns, 3, Duration::from_secs(60)).await;
        let m = scrape(&ctl.addr).await;
        let present: Vec<&str> = DESIGN_NAMES
            .iter()
            .copied()
            .filter(|n| {
                m.keys().any(|k| {
                    k.starts_with(&format!("{n}{{")) || k.starts_with(&format!("{n}_bucket{{"))
                })
            })
            .collect();
        // The label values the sampler filters on are the same in both languages.
        assert!(
            m.keys()
                .any(|k| k.starts_with("workqueue_depth{") && k.contains("name=widget")),
            "{label}"
        );
        assert!(
            m.keys()
                .any(|k| k.starts_with("controller_runtime_reconcile_total{")
                    && k.contains("controller=widget")),
            "{label}"
        );
        assert!(sum(&m, RECONCILES, &["result=success"]) >= 3.0, "{label}");
        // The initial list ended before the objects were Ready, after the start.
        let list = sum(&m, "ctrlbench_initial_list_seconds", &[]);
        assert!(list > 0.0 && list < 60.0, "{label}: initial list {list}");
        // client-go's request latency timed each status update (PUT).
        assert!(
            sum(
                &m,
                "rest_client_request_duration_seconds_count",
                &["verb=PUT"]
            ) >= 3.0,
            "{label}: {:?}",
            m.keys()
                .filter(|k| k.starts_with("rest_client_request_duration"))
                .collect::<Vec<_>>()
        );
        names_by_impl.push((label.clone(), present));
    }
    for (label, present) in &names_by_impl {
        assert_eq!(
            present.len(),
            DESIGN_NAMES.len(),
            "{label} lacks {:?}",
            DESIGN_NAMES
                .iter()
                .filter(|n| !present.contains(n))
                .collect::<Vec<_>>()
        );
    }
}

/// `--strip-managed-fields` (both runtimes' documented cache pruning) leaves
/// reconciling as it was: Rust and Go bring every widget to Ready with it.
#[tokio::test]
async fn stripping_managed_fields_still_converges_in_both() {
    use ctrlbench::experiment::Impl;
    let go = tokio::task::spawn_blocking(|| {
        ctrlbench::controllers::binary(&Impl::Go("v0.22".to_string()))
    })
    .await
    .unwrap()
    .unwrap();
    let rust = tokio::task::spawn_blocking(rust_bin).await.unwrap();
    for (label, bin) in [("rust", rust), ("go", go)] {
        let ns = format!("strip-{label}");
        let client = setup(&ns, 5).await;
        let _ctl = start_bin(
            &bin,
            &client,
            &ns,
            &["--preset", "good", "--strip-managed-fields"],
        )
        .await;
        wait_ready(&client, &ns, 5, Duration::from_secs(60)).await;
    }
}
