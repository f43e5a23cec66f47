//! The spec's own tests: malformed files name file, line and key; values
//! out of bounds, unsafe settings and wrong combinations are refused.

use super::*;
use crate::controllers::Impl;
use ctrlbench_plane::options::ClientLimits;

const GOOD: &str = r#"name = "t"
scales = [20]
window_s = 10

[[variant]]
name = "a"
preset = "good"
"#;

fn err(text: &str) -> SpecError {
    parse(Path::new("exp.toml"), text).expect_err("should be rejected")
}

#[test]
fn a_valid_file_parses_with_defaults() {
    let e = parse(Path::new("exp.toml"), GOOD).unwrap();
    assert_eq!(e.scales, [20]);
    assert_eq!(e.repeats, Repeats::Fixed(1));
    assert_eq!(e.margin, 0.05);
    assert_eq!(e.schedule, Schedule::Isolated);
    assert_eq!(e.variants[0].implementation, Impl::Rust);
    assert!(e.is_local());
}

#[test]
fn malformed_files_name_file_line_and_key() {
    let cases: [(&str, usize, &str); 22] = [
        (
            "name = \"t\"\nscales = [20]\nrepeets = 2\n[[variant]]\nname = \"a\"\npreset = \"good\"\n",
            3,
            "repeets",
        ),
        (
            "name = \"t\"\nscales = []\n[[variant]]\nname = \"a\"\npreset = \"good\"\n",
            2,
            "scales",
        ),
        (
            "name = \"t\"\nscales = [0, 5]\n[[variant]]\nname = \"a\"\npreset = \"good\"\n",
            2,
            "scales",
        ),
        (
            "name = \"t\"\nscales = [5]\nwindow_s = -1\n[[variant]]\nname = \"a\"\npreset = \"good\"\n",
            3,
            "window_s",
        ),
        (
            "name = \"t\"\nscales = [5]\nrepeats = 0\n[[variant]]\nname = \"a\"\npreset = \"good\"\n",
            3,
            "repeats",
        ),
        (
            "name = \"t\"\nscales = [5]\nschedule = \"parallel\"\n[[variant]]\nname = \"a\"\npreset = \"good\"\n",
            3,
            "schedule",
        ),
        (
            "name = \"t\"\nscales = [5]\n[[variant]]\nname = \"a\"\npreset = \"great\"\n",
            5,
            "preset",
        ),
        (
            "name = \"t\"\nscales = [5]\n[[variant]]\nname = \"a\"\nimpl = \"java\"\npreset = \"good\"\n",
            5,
            "impl",
        ),
        (
            "name = \"t\"\nscales = [5]\n[[variant]]\nname = \"a\"\npreset = \"good\"\nworkers = 0\n",
            6,
            "workers",
        ),
        (
            "name = \"t\"\nscales = [5]\n[[variant]]\nname = \"a\"\npreset = \"good\"\nclient_burst = 5\n",
            6,
            "client_burst",
        ),
        (
            "name = \"t\"\nscales = [5]\n[[variant]]\nname = \"a\"\npreset = \"good\"\nclient_qps = -1\nclient_burst = 5\n",
            7,
            "client_burst",
        ),
        (
            "name = \"t\"\nscales = [5]\n[[variant]]\nname = \"a\"\npreset = \"good\"\n[[variant]]\nname = \"a\"\npreset = \"bad\"\n",
            7,
            "name",
        ),
        (
            "name = \"t\"\nscales = [5]\n[cluster]\nkubeconfig = \"k\"\netcd_fsync = false\n[[variant]]\nname = \"a\"\npreset = \"good\"\n",
            4,
            "cluster",
        ),
        (
            "name = \"t\"\nscales = [5]\n[[variant]]\nname = \"a\"\npreset = \"good\"\nwokers = 3\n",
            6,
            "wokers",
        ),
        (
            "name = \"t\"\nscales = \"many\"\n[[variant]]\nname = \"a\"\npreset = \"good\"\n",
            2,
            "scales",
        ),
        (
            "name = \"t\"\nscales = [5]\n[[variant]]\nname = \"a\"\nimpl = \"go@v0.22\"\npreset = \"good\"\nqueue = \"kube\"\n",
            7,
            "queue",
        ),
        (
            "name = \"t\"\nscales = [5]\n[[variant]]\nname = \"a\"\npreset = \"good\"\nqueue = \"lifo\"\n",
            6,
            "queue",
        ),
        (
            "name = \"t\"\nscales = [5]\n[[variant]]\nname = \"a\"\nimpl = \"go@v0.22\"\npreset = \"good\"\ndebounce_ms = 5\n",
            7,
            "debounce_ms",
        ),
        (
            "name = \"t\"\nscales = [5]\n[[variant]]\nname = \"a\"\nimpl = \"go@v0.18.4\"\npreset = \"good\"\npriority_queue = true\n",
            7,
            "priority_queue",
        ),
        (
            "name = \"t\"\nscales = [5]\n[[variant]]\nname = \"a\"\npreset = \"good\"\npriority_queue = false\n",
            6,
            "priority_queue",
        ),
        (
            "name = \"t\"\nscales = [5]\n[[variant]]\nname = \"a\"\npreset = \"good\"\nstart = \"later\"\n",
            6,
            "start",
        ),
        (
            "name = \"t\"\nscales = [5]\nschedule = \"concurrent\"\n[[variant]]\nname = \"a\"\npreset = \"good\"\n[[variant]]\nname = \"b\"\npreset = \"good\"\nstart = \"after-load\"\n",
            10,
            "start",
        ),
    ];
    for (text, line, key) in cases {
        let e = err(text);
        assert_eq!((e.line, e.key.as_str()), (line, key), "{text}\n→ {e}");
        let shown = e.to_string();
        assert!(
            shown.starts_with(&format!("exp.toml:{line}: key `{key}`")),
            "{shown}"
        );
    }
}

#[test]
fn a_file_cannot_weaken_the_plane_or_redirect_a_controller() {
    for (text, line, key, says) in [
        (
            "name = \"t\"\nscales = [5]\n[cluster]\napiserver_args = [\"--max-requests-inflight=800\", \"--anonymous-auth=true\"]\n[[variant]]\nname = \"a\"\npreset = \"good\"\n",
            4,
            "apiserver_args",
            "--anonymous-auth=true",
        ),
        (
            "name = \"t\"\nscales = [5]\n[cluster]\netcd_args = [\"--listen-client-urls=http://0.0.0.0:2379\"]\n[[variant]]\nname = \"a\"\npreset = \"good\"\n",
            4,
            "etcd_args",
            "--listen-client-urls",
        ),
        (
            "name = \"t\"\nscales = [5]\n[[variant]]\nname = \"a\"\npreset = \"good\"\nenv = { KUBECONFIG = \"/tmp/other\" }\n",
            6,
            "env",
            "KUBECONFIG",
        ),
        (
            "name = \"t\"\nscales = [5]\n[[variant]]\nname = \"a\"\npreset = \"good\"\nenv = { RUST_LOG = \"x\", LD_PRELOAD = \"/x.so\" }\n",
            6,
            "env",
            "LD_PRELOAD",
        ),
    ] {
        let e = parse(Path::new("f.toml"), text).unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (line, key), "{e}");
        assert!(e.message.contains(says), "{e}");
    }
    // Harmless ones pass.
    let ok = "name = \"t\"\nscales = [5]\n[cluster]\napiserver_args = [\"--max-requests-inflight=800\"]\n[[variant]]\nname = \"a\"\npreset = \"good\"\nenv = { RUST_LOG = \"info\" }\n";
    assert!(parse(Path::new("f.toml"), ok).is_ok());
}

#[test]
fn values_out_of_bounds_are_refused_at_parse_time() {
    for (extra, key) in [
        ("window_s = 1e20\n", "window_s"),
        ("quiet_s = 1e9\n", "quiet_s"),
        ("scrape_interval_s = 0.001\n", "scrape_interval_s"),
        ("concurrency = 5000\n", "concurrency"),
        ("probe_objects = 0\n", "probe_objects"),
        ("probe_objects = 200000\n", "probe_objects"),
    ] {
        let text = format!(
            "name = \"t\"\nscales = [5]\n{extra}[[variant]]\nname = \"a\"\npreset = \"good\"\n"
        );
        let e = parse(Path::new("f.toml"), &text).unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (3, key), "{e}");
    }
    let e = parse(
        Path::new("f.toml"),
        "name = \"t\"\nscales = [5, 2000000]\n[[variant]]\nname = \"a\"\npreset = \"good\"\n",
    )
    .unwrap_err();
    assert_eq!((e.line, e.key.as_str()), (2, "scales"), "{e}");
}

#[test]
fn path_like_names_are_refused() {
    for bad in [
        "../x",
        "a/b",
        "a b",
        "",
        ".",
        "..",
        "-a",
        "x".repeat(64).as_str(),
    ] {
        let text =
            format!("name = {bad:?}\nscales = [5]\n[[variant]]\nname = \"a\"\npreset = \"good\"\n");
        let e = parse(Path::new("f.toml"), &text).unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (1, "name"), "{bad:?}: {e}");
    }
    for good in ["quick", "seed-exp1", "a.b_c"] {
        assert!(policy::check_name(good).is_ok(), "{good}");
    }
}

#[test]
fn command_and_external_variants_are_checked_like_the_rest() {
    let base = "name = \"t\"\nscales = [5]\n[[variant]]\nname = \"a\"\n";
    for (extra, line, key, says) in [
        (
            "impl = \"command\"\n",
            4,
            "command",
            "missing field `command`",
        ),
        (
            "impl = \"command\"\ncommand = []\n",
            6,
            "command",
            "at least the program",
        ),
        (
            "impl = \"command\"\ncommand = [\"x\"]\npreset = \"good\"\n",
            7,
            "preset",
            "ctrlbench's own controllers",
        ),
        (
            "impl = \"command\"\ncommand = [\"x\"]\nmetrics = \"http://10.0.0.1:9/metrics\"\n",
            7,
            "metrics",
            "loopback",
        ),
        (
            "impl = \"command\"\ncommand = [\"x\"]\nmetrics = \"http://127.0.0.1:{port}/metrics\"\n",
            7,
            "metrics",
            "never passes {port}",
        ),
        (
            "impl = \"command\"\ncommand = [\"x\"]\ncluster_rbac = [{ api_groups = [\"\"], resources = [\"pods\"], verbs = [\"delete\"] }]\n",
            7,
            "cluster_rbac",
            "may only read",
        ),
        (
            "impl = \"command\"\ncommand = [\"x\"]\ncluster_rbac = [{ api_groups = [\"\"], resources = [\"secrets\"], verbs = [\"list\"] }]\n",
            7,
            "cluster_rbac",
            "secrets",
        ),
        (
            "impl = \"command\"\ncommand = [\"x\"]\nrbac = [{ api_groups = [\"*\"], resources = [\"*\"], verbs = [\"*\"] }]\n",
            7,
            "rbac",
            "cannot be granted",
        ),
        (
            "impl = \"command\"\ncommand = [\"x\"]\nenv = { KUBECONFIG = \"/x\" }\n",
            7,
            "env",
            "KUBECONFIG",
        ),
        (
            "impl = \"external\"\ncommand = [\"x\"]\n",
            6,
            "command",
            "starts nothing",
        ),
        (
            "impl = \"external\"\nnamespace = \"kube-system\"\n",
            6,
            "namespace",
            "not a namespace a run may use",
        ),
        (
            "impl = \"external\"\nstart = \"after-load\"\n",
            6,
            "start",
            "already running",
        ),
        ("impl = \"rust\"\n", 4, "preset", "missing field `preset`"),
        (
            "impl = \"rust\"\npreset = \"good\"\ncommand = [\"x\"]\n",
            7,
            "command",
            "only impl",
        ),
    ] {
        let e = err(&format!("{base}{extra}"));
        assert_eq!((e.line, e.key.as_str()), (line, key), "{extra}\n→ {e}");
        assert!(e.message.contains(says), "{extra}\n→ {e}");
    }
    let ok = format!(
        "{base}impl = \"command\"\ncommand = [\"./op\", \"--port={{port}}\"]\nmetrics = \"http://127.0.0.1:{{port}}/metrics\"\nrbac = [{{ api_groups = [\"\"], resources = [\"events\"], verbs = [\"create\"] }}]\ncluster_rbac = [{{ api_groups = [\"apps\"], resources = [\"deployments\"], verbs = [\"list\", \"watch\"] }}]\n"
    );
    let e = parse(Path::new("exp.toml"), &ok).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(e.variants[0].implementation, Impl::Command);
    assert!(e.variants[0].flags().is_empty());
    let ext = format!("{base}impl = \"external\"\nnamespace = \"my-ns\"\n");
    assert!(parse(Path::new("exp.toml"), &ext).is_ok());
}

#[test]
fn workload_errors_name_the_file_line_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let crd =
        serde_saphyr::to_string(&<widget_api::Widget as kube::CustomResourceExt>::crd()).unwrap();
    std::fs::write(dir.path().join("crd.yaml"), &crd).unwrap();
    std::fs::write(
        dir.path().join("w.yaml"),
        "apiVersion: benchmark.example.com/v1alpha1\nkind: Widget\nspec:\n  count: {{index}}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("other.yaml"),
        "apiVersion: v1\nkind: ConfigMap\n",
    )
    .unwrap();
    let file = dir.path().join("exp.toml");
    let text = |workload: &str| {
        format!(
            "name = \"t\"\nscales = [5]\n[workload]\n{workload}[[variant]]\nname = \"a\"\npreset = \"good\"\n"
        )
    };
    let ok = text(
        "crd = \"crd.yaml\"\nobject = \"w.yaml\"\nready = { jsonpath = \"{.status.phase}\", equals = \"Ready\" }\n",
    );
    let e = parse(&file, &ok).unwrap_or_else(|e| panic!("{e}"));
    // Without a crd the template's kind is one the cluster serves.
    let served = parse(
        &file,
        &text("object = \"other.yaml\"\nready = { jsonpath = \"{.data.a}\", exists = true }\n"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(served.workload.kind_name(), "v1 ConfigMap");
    assert!(!served.workload.has_crd() && !served.workload.is_builtin());
    assert_eq!(e.workload.crd_name(), "widgets.benchmark.example.com");
    assert!(!e.workload.is_builtin());
    for (workload, line, key, says) in [
        (
            "crd = \"nope.yaml\"\nobject = \"w.yaml\"\nready = { condition = \"Ready\" }\n",
            4,
            "crd",
            "cannot read",
        ),
        (
            "crd = \"other.yaml\"\nobject = \"w.yaml\"\nready = { condition = \"Ready\" }\n",
            4,
            "crd",
            "no CustomResourceDefinition",
        ),
        (
            "crd = \"crd.yaml\"\nobject = \"other.yaml\"\nready = { condition = \"Ready\" }\n",
            5,
            "object",
            "the CRD serves Widget",
        ),
        (
            "crd = \"crd.yaml\"\nobject = \"w.yaml\"\nready = { jsonpath = \"{.status.phase\" , equals = \"x\"}\n",
            6,
            "ready",
            "unbalanced",
        ),
        (
            "crd = \"crd.yaml\"\nobject = \"w.yaml\"\nready = { condition = \"Ready\", exists = true }\n",
            6,
            "ready",
            "not a readiness rule",
        ),
        (
            "crd = \"crd.yaml\"\nobject = \"w.yaml\"\nready = { jsonpath = \"{.status.n}\", equals_path = \"{.spec.n\" }\n",
            6,
            "ready",
            "equals_path",
        ),
        (
            "object = \"w.yaml\"\nready = { equals_path = \"{.spec.n}\", equals = 1 }\n",
            5,
            "ready",
            "compares with `jsonpath`",
        ),
        (
            "object = \"missing.yaml\"\nready = { condition = \"Ready\" }\n",
            4,
            "object",
            "cannot read",
        ),
        (
            "crd = \"crd.yaml\"\nobject = \"w.yaml\"\nready = { phase = \"Ready\" }\n",
            6,
            "phase",
            "unknown field",
        ),
    ] {
        let e = parse(&file, &text(workload)).unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (line, key), "{workload}\n→ {e}");
        assert!(e.message.contains(says), "{workload}\n→ {e}");
        assert!(
            e.to_string()
                .starts_with(&format!("{}:{line}:", file.display())),
            "{e}"
        );
    }
}

#[test]
fn topology_and_faults_are_validated_with_file_line_and_key() {
    let with = |extra: &str| format!("{GOOD}{extra}");
    // (extra text, line of the error, key, part of the message)
    let cases = [
        (
            "[cluster]\netcd_members = 9\n",
            9,
            "etcd_members",
            "from 1 to 7",
        ),
        (
            "[cluster]\napiservers = 0\n",
            9,
            "apiservers",
            "from 1 to 5",
        ),
        (
            "[cluster]\nnodes = 2\ncontroller_manager_qps = 0\n",
            10,
            "controller_manager_qps",
            "from 1 to 100000",
        ),
        (
            "[cluster]\nnodes = 2\nscheduler_burst = 100001\n",
            10,
            "scheduler_burst",
            "from 1 to 100000",
        ),
        (
            "[cluster]\nnodes = 2\ncontroller_manager_qps = 500\n",
            10,
            "controller_manager_qps",
            "controller_manager_burst (30) must be at least controller_manager_qps (500)",
        ),
        (
            "[cluster]\nnodes = 2\nscheduler_qps = 400\nscheduler_burst = 300\n",
            11,
            "scheduler_burst",
            "must be at least scheduler_qps (400)",
        ),
        (
            "[cluster]\ncontroller_manager = true\nscheduler_qps = 400\n",
            10,
            "scheduler_qps",
            "only with fake nodes",
        ),
        (
            "[cluster]\nscheduler_default_spread = false\n",
            9,
            "scheduler_default_spread",
            "only with fake nodes",
        ),
        (
            "[cluster]\ncontext = \"kind-x\"\nscheduler_default_spread = false\n",
            9,
            "cluster",
            "cannot take the local-plane setting `scheduler_default_spread`",
        ),
        (
            "[[fault]]\nat_s = 1\naction = \"kill\"\ntarget = \"etcd:2\"\n",
            11,
            "target",
            "1 etcd member",
        ),
        (
            "[[fault]]\nat_s = 1\naction = \"kill\"\ntarget = \"apiserver:1\"\n",
            11,
            "target",
            "1 apiserver",
        ),
        (
            "[[fault]]\nat_s = 1\naction = \"kill\"\ntarget = \"etcd:follower\"\n",
            11,
            "target",
            "at least 2",
        ),
        (
            "[[fault]]\nat_s = 12\naction = \"kill\"\ntarget = \"controller\"\n",
            9,
            "at_s",
            "after the window",
        ),
        (
            "[[fault]]\nat_s = 1\naction = \"stop\"\ntarget = \"controller\"\n",
            10,
            "duration_s",
            "duration_s > 0",
        ),
        (
            "[[fault]]\nat_s = 1\naction = \"explode\"\ntarget = \"controller\"\n",
            10,
            "action",
            "explode",
        ),
        (
            "[[fault]]\nat_s = 1\naction = \"kill\"\ntarget = \"scheduler\"\n",
            11,
            "target",
            "unknown fault target",
        ),
    ];
    for (extra, line, key, msg) in cases {
        let e = err(&with(extra));
        assert_eq!((e.line, e.key.as_str()), (line, key), "{extra}: {e}");
        assert!(e.message.contains(msg), "{extra}: {e}");
        assert!(e.to_string().starts_with("exp.toml:"), "{e}");
    }
    // The same targets are fine on a plane that has them.
    let ok = with(
        "[cluster]\netcd_members = 3\napiservers = 2\n\
         [[fault]]\nat_s = 1\naction = \"restart\"\ntarget = \"etcd:2\"\nduration_s = 1\n\
         [[fault]]\nat_s = 2\naction = \"stop\"\ntarget = \"etcd:follower\"\nduration_s = 1\n\
         [[fault]]\nat_s = 3\naction = \"kill\"\ntarget = \"apiserver:1\"\n",
    );
    let e = parse(Path::new("exp.toml"), &ok).unwrap();
    assert_eq!(e.faults.len(), 3);
    // An existing cluster has no plane processes to hit.
    let e = err(&with(
        "[cluster]\ncontext = \"x\"\n[[fault]]\nat_s = 1\naction = \"kill\"\ntarget = \"etcd:leader\"\n",
    ));
    assert_eq!(e.key, "target");
}

#[test]
fn a_fault_free_baseline_variant_is_validated() {
    let fault =
        "[[fault]]\nat_s = 1\naction = \"restart\"\ntarget = \"controller\"\nduration_s = 1\n";
    let base = "[[variant]]\nname = \"b\"\npreset = \"good\"\nfaults = false\n";
    let e = parse(Path::new("exp.toml"), &format!("{GOOD}{base}{fault}")).unwrap();
    assert_eq!(e.faults_for(0).len(), 1);
    assert!(e.faults_for(1).is_empty());
    // Nothing to opt out of.
    let e = err(&format!("{GOOD}{base}"));
    assert_eq!((e.line, e.key.as_str()), (11, "faults"), "{e}");
    assert!(e.message.contains("no [[fault]]"), "{e}");
    // A concurrent run shares its plane, and so its plane faults.
    let text = format!("{GOOD}{base}{fault}").replace(
        "window_s = 10\n",
        "window_s = 10\nschedule = \"concurrent\"\n",
    );
    let e = err(&text);
    assert_eq!(e.key, "faults", "{e}");
    assert!(e.message.contains("isolated"), "{e}");
}

#[test]
fn missing_variant_is_reported() {
    let e = err("name = \"t\"\nscales = [5]\n");
    assert_eq!(e.key, "variant");
}

#[test]
fn builtin_experiments_are_valid() {
    for b in crate::experiment::builtin::BUILTIN {
        crate::experiment::builtin::parse(b).unwrap_or_else(|e| panic!("{}: {e}", b.name));
    }
}

#[test]
fn every_variant_gets_its_queue_and_debounce_works_on_both() {
    let text = r#"name = "t"
scales = [5]
[[variant]]
name = "r"
preset = "good"
[[variant]]
name = "r-fifo"
preset = "good"
queue = "fifo"
debounce_ms = 50
[[variant]]
name = "g"
impl = "go@v0.22"
preset = "good"
"#;
    let e = parse(Path::new("exp.toml"), text).unwrap();
    let flags: Vec<Vec<String>> = e.variants.iter().map(|v| v.flags()).collect();
    assert!(flags[0].contains(&"--queue=kube".to_string()), "{flags:?}");
    assert!(flags[1].contains(&"--queue=fifo".to_string()), "{flags:?}");
    assert!(
        flags[1].contains(&"--debounce-ms=50".to_string()),
        "{flags:?}"
    );
    assert!(flags[2].contains(&"--queue=fifo".to_string()), "{flags:?}");
}

#[test]
fn go_builds_with_a_priority_queue_always_get_the_flag() {
    let text = r#"name = "t"
scales = [5]
[[variant]]
name = "rust"
preset = "good"
[[variant]]
name = "g18"
impl = "go@v0.18.4"
preset = "good"
[[variant]]
name = "g22"
impl = "go@v0.22"
preset = "good"
[[variant]]
name = "g25"
impl = "go@v0.25"
preset = "good"
[[variant]]
name = "g25-fifo"
impl = "go@v0.25"
preset = "good"
priority_queue = false
[[variant]]
name = "g22-prio"
impl = "go@v0.22"
preset = "good"
priority_queue = true
"#;
    let e = parse(Path::new("exp.toml"), text).unwrap();
    let pq: Vec<Option<String>> = e
        .variants
        .iter()
        .map(|v| {
            v.flags()
                .into_iter()
                .find(|f| f.starts_with("--priority-queue"))
        })
        .collect();
    let want = [
        None,
        None,
        Some("--priority-queue=false"),
        Some("--priority-queue=true"),
        Some("--priority-queue=false"),
        Some("--priority-queue=true"),
    ];
    assert_eq!(
        pq,
        want.map(|w| w.map(String::from)).to_vec(),
        "{:?}",
        e.variants.iter().map(|v| v.flags()).collect::<Vec<_>>()
    );
    let msg = err("name = \"t\"\nscales = [5]\n[[variant]]\nname = \"a\"\nimpl = \"go@v0.18.4\"\npreset = \"good\"\npriority_queue = true\n").to_string();
    assert!(msg.contains("go@v0.18.4 has no priority queue"), "{msg}");
}

#[test]
fn phases_are_validated_with_file_line_and_key() {
    let with = |phases: &str| format!("{GOOD}{phases}");
    for (phases, line, key) in [
        ("[[phase]]\nkind = \"upgrade\"\n", 9, "kind"),
        ("[[phase]]\nkind = \"idle\"\n", 9, "duration_s"),
        (
            "[[phase]]\nkind = \"idle\"\nduration_s = 5\ncount = 2\n",
            11,
            "count",
        ),
        ("[[phase]]\nkind = \"update\"\ncount = 0\n", 10, "count"),
        ("[[phase]]\nkind = \"delete\"\nrate = -1.0\n", 10, "rate"),
        (
            "[[phase]]\nkind = \"update\"\npatch = \"no-such-file.yaml\"\n",
            10,
            "patch",
        ),
        (
            "[[phase]]\nkind = \"delete\"\n[[phase]]\nkind = \"update\"\n",
            11,
            "kind",
        ),
    ] {
        let e = err(&with(phases));
        assert_eq!((e.line, e.key.as_str()), (line, key), "{phases}: {e}");
    }
    let e = parse(
        Path::new("exp.toml"),
        &with("[[phase]]\nkind = \"update\"\ncount = 2\n[[phase]]\nkind = \"idle\"\nduration_s = 5\n[[phase]]\nkind = \"delete\"\n"),
    )
    .unwrap();
    assert_eq!(
        e.phases.iter().map(|p| p.kind()).collect::<Vec<_>>(),
        ["update", "idle", "delete"]
    );
    // Timeouts default to the window.
    assert_eq!(e.phases[2].max_seconds(), 10.0);
}

#[test]
fn per_variant_versions_need_an_isolated_local_plane() {
    let v = |extra: &str, variant: &str| {
        format!(
            "name = \"t\"\nscales = [5]\n{extra}[[variant]]\nname = \"a\"\npreset = \"good\"\n{variant}"
        )
    };
    let e = parse(Path::new("exp.toml"), &v("", "k8s_version = \"v1.36.3\"\n")).unwrap();
    assert_eq!(e.variant_k8s_version(0).as_deref(), Some("1.36.3"));
    let on = e.on_plane(&e.variant_plane(0).unwrap());
    assert_eq!(on.cluster.k8s_version.as_deref(), Some("1.36.3"));
    for (extra, variant, line) in [
        ("", "k8s_version = \"1.36\"\n", 6),
        (
            "schedule = \"concurrent\"\n",
            "k8s_version = \"1.36.3\"\n",
            7,
        ),
        ("probe = true\n", "k8s_version = \"1.36.3\"\n", 7),
        (
            "[cluster]\nk8s_version = \"1.34.12\"\n",
            "k8s_version = \"1.36.3\"\n",
            8,
        ),
    ] {
        let e = err(&v(extra, variant));
        assert_eq!(
            (e.line, e.key.as_str()),
            (line, "k8s_version"),
            "{extra}{variant}: {e}"
        );
    }
}

#[test]
fn per_variant_feature_gates_replace_the_clusters_gate_of_that_name() {
    let text = "name = \"t\"\nscales = [5]\n[cluster]\nk8s_version = \"1.36.3\"\n\
                feature_gates = [\"WatchList=true\", \"InPlacePodVerticalScaling=true\"]\n\
                [[variant]]\nname = \"a\"\npreset = \"good\"\n\
                [[variant]]\nname = \"b\"\npreset = \"good\"\nfeature_gates = [\"WatchList=false\"]\n";
    let e = parse(Path::new("exp.toml"), text).unwrap();
    assert_eq!(e.variant_plane(0), None);
    let p = e.variant_plane(1).unwrap();
    assert_eq!(p.k8s_version, None);
    let on = e.on_plane(&p);
    assert_eq!(on.cluster.k8s_version.as_deref(), Some("1.36.3"));
    assert_eq!(
        on.cluster.feature_gates,
        ["InPlacePodVerticalScaling=true", "WatchList=false"]
    );
    assert_eq!(p.describe("1.36.3"), "Kubernetes 1.36.3, WatchList=false");
    let v = |extra: &str, gates: &str| {
        format!(
            "name = \"t\"\nscales = [5]\n{extra}[[variant]]\nname = \"a\"\npreset = \"good\"\nfeature_gates = {gates}\n"
        )
    };
    for (extra, gates, line) in [
        ("", "[\"WatchList\"]", 6),
        ("", "[\"WatchList=off\"]", 6),
        ("schedule = \"concurrent\"\n", "[\"WatchList=false\"]", 7),
        ("probe = true\n", "[\"WatchList=false\"]", 7),
        ("[cluster]\ncontext = \"x\"\n", "[\"WatchList=false\"]", 8),
    ] {
        let e = err(&v(extra, gates));
        assert_eq!(
            (e.line, e.key.as_str()),
            (line, "feature_gates"),
            "{extra}{gates}: {e}"
        );
    }
}

#[test]
fn start_is_before_load_unless_a_variant_says_after_load() {
    let text = "name = \"t\"\nscales = [5]\n[[variant]]\nname = \"a\"\npreset = \"good\"\n[[variant]]\nname = \"b\"\npreset = \"good\"\nstart = \"after-load\"\n";
    let e = parse(Path::new("exp.toml"), text).unwrap();
    assert_eq!(e.variants[0].start(), StartMode::BeforeLoad);
    assert_eq!(e.variants[1].start(), StartMode::AfterLoad);
    // Not a controller flag: the harness decides when to start it.
    assert!(!e.variants[1].flags().iter().any(|f| f.contains("load")));
    let perf = crate::experiment::builtin::get("perf").unwrap();
    let p = parse(Path::new("perf.toml"), perf.text).unwrap();
    assert!(p.variants.iter().any(|v| v.start() == StartMode::AfterLoad));
    assert!(
        p.variants
            .iter()
            .any(|v| v.start() == StartMode::BeforeLoad)
    );
}

#[test]
fn the_docs_list_every_variant_key_as_the_table_says() {
    let doc = include_str!("../../../../../docs/experiments.md");
    let table = keys::markdown();
    assert!(
        doc.contains(&table),
        "docs/experiments.md's \"Variant keys\" table is not the key table's: replace it with the output of `ctrlbench experiments --keys`:\n{table}"
    );
}

#[test]
fn repeats_until_decided_margin_and_compare_questions_are_checked() {
    let two = "[[variant]]\nname = \"a\"\npreset = \"good\"\n[[variant]]\nname = \"b\"\npreset = \"good\"\n";
    let with = |top: &str, tail: &str| format!("name = \"t\"\nscales = [5]\n{top}{two}{tail}");
    let e = parse(
        Path::new("exp.toml"),
        &with(
            "repeats = \"auto\"\nmax_repeats = 6\nmargin = 0.03\nbusy_threshold = 0.2\ngrowth_margin = 0.2\n",
            "[[compare]]\na = \"a\"\nb = \"b\"\nfigure = \"Ready/s\"\n",
        ),
    )
    .unwrap();
    assert_eq!(e.repeats, Repeats::Auto { min: 3, max: 6 });
    assert_eq!((e.margin, e.busy_threshold), (0.03, 0.2));
    assert_eq!(e.growth_margin, 0.2);
    assert_eq!(
        parse(Path::new("exp.toml"), &with("", ""))
            .unwrap()
            .growth_margin,
        ctrlbench_report::growth::DEFAULT_DELTA
    );
    assert_eq!(
        e.compare,
        [Compare {
            a: "a".into(),
            b: "b".into(),
            figure: "Ready/s".into()
        }]
    );
    assert_eq!(
        parse(Path::new("exp.toml"), &with("repeats = 4\n", ""))
            .unwrap()
            .repeats,
        Repeats::Fixed(4)
    );
    for (top, tail, line, key) in [
        ("repeats = \"often\"\n", "", 3, "repeats"),
        ("repeats = 3\nmax_repeats = 5\n", "", 4, "max_repeats"),
        (
            "repeats = \"auto\"\nmin_repeats = 5\nmax_repeats = 4\n",
            "",
            5,
            "max_repeats",
        ),
        ("margin = 1.5\n", "", 3, "margin"),
        ("margin = 0\n", "", 3, "margin"),
        ("growth_margin = 0.5\n", "", 3, "growth_margin"),
        ("growth_margin = 0\n", "", 3, "growth_margin"),
        ("growth_margin = -0.1\n", "", 3, "growth_margin"),
        ("busy_threshold = -1\n", "", 3, "busy_threshold"),
        ("", "[[compare]]\na = \"a\"\nb = \"c\"\n", 11, "b"),
        ("", "[[compare]]\na = \"a\"\nb = \"a\"\n", 11, "b"),
        (
            "",
            "[[compare]]\na = \"a\"\nb = \"b\"\nfigure = \"speed\"\n",
            12,
            "figure",
        ),
    ] {
        let e = err(&with(top, tail));
        assert_eq!((e.line, e.key.as_str()), (line, key), "{top}{tail}: {e}");
    }
}

#[test]
fn compared_variants_need_the_same_cpu_limit_and_cpu_sets_must_not_overlap() {
    let v = |name: &str, extra: &str| {
        format!(
            "[[variant]]\nname = \"{name}\"\nimpl = \"{}\"\npreset = \"good\"\n{extra}",
            if name.starts_with("go") {
                "go@v0.22"
            } else {
                "rust"
            }
        )
    };
    let text = |a: &str, b: &str| {
        format!(
            "name = \"t\"\nscales = [5]\n{}{}",
            v("rust-good", a),
            v("go-good", b)
        )
    };
    let e = parse(
        Path::new("exp.toml"),
        &text("controller_cpus = 1\n", "controller_cpus = 1\n"),
    )
    .unwrap();
    assert_eq!(e.variants[1].keys.controller_cpus, Some(1));
    let e = err(&text("controller_cpus = 1\n", ""));
    assert_eq!((e.line, e.key.as_str()), (7, "controller_cpus"), "{e}");
    let e = err(&text("controller_cpus = 0\n", "controller_cpus = 0\n"));
    assert_eq!(e.key, "controller_cpus", "{e}");
    // A CPU quota: Kubernetes' quantities, matched across a compared pair.
    let e = parse(
        Path::new("exp.toml"),
        &text("cpu_limit = \"500m\"\n", "cpu_limit = \"0.5\"\n"),
    )
    .unwrap();
    assert_eq!(e.variants[1].cpu_limit(), Some(500));
    let e = parse(
        Path::new("exp.toml"),
        &text("cpu_limit = \"1.5\"\n", "cpu_limit = \"1.5\"\n"),
    )
    .unwrap();
    assert_eq!(e.variants[0].cpu_limit(), Some(1500));
    let e = err(&text("cpu_limit = \"half\"\n", "cpu_limit = \"half\"\n"));
    assert_eq!((e.line, e.key.as_str()), (7, "cpu_limit"), "{e}");
    let e = err(&text("cpu_limit = \"500m\"\n", ""));
    assert_eq!((e.line, e.key.as_str()), (7, "cpu_limit"), "{e}");
    let e = err(&format!(
        "name = \"t\"\nscales = [5]\n[cluster]\ncpus = {{ plane = \"0-1\", controller = \"1\" }}\n{}",
        v("a", "")
    ));
    assert_eq!((e.line, e.key.as_str()), (4, "cpus"), "{e}");
    assert!(e.message.contains("share CPU 1"), "{e}");
}

#[test]
fn a_fresh_plane_needs_a_plane_of_our_own() {
    let base = "name = \"t\"\nscales = [5]\n";
    let v = "[[variant]]\nname = \"a\"\npreset = \"good\"\n";
    let e = parse(
        Path::new("exp.toml"),
        &format!("{base}fresh_plane = \"repeat\"\n{v}"),
    )
    .unwrap();
    assert_eq!(e.fresh_plane, FreshPlane::Repeat);
    let e = err(&format!(
        "{base}fresh_plane = \"repeat\"\nbackground_objects = 5\n{v}"
    ));
    assert_eq!((e.line, e.key.as_str()), (3, "fresh_plane"), "{e}");
    let e = err(&format!(
        "{base}fresh_plane = \"run\"\n[cluster]\ncontext = \"x\"\n{v}"
    ));
    assert_eq!((e.line, e.key.as_str()), (3, "fresh_plane"), "{e}");
    let e = err(&format!("{base}fresh_plane = \"hourly\"\n{v}"));
    assert_eq!(e.key, "fresh_plane", "{e}");
}

#[test]
fn goals_are_recorded_as_written_and_bad_ones_name_line_and_key() {
    let v = |name: &str| {
        let imp = if name.starts_with("go") {
            "go@v0.22"
        } else {
            "rust"
        };
        format!("[[variant]]\nname = \"{name}\"\nimpl = \"{imp}\"\npreset = \"good\"\n")
    };
    // Lines 1–2 the top, 3–14 the variants, the goal from line 15.
    let with = |goal: &str| {
        format!(
            "name = \"t\"\nscales = [5, 50]\n{}{}{}[[goal]]\n{goal}",
            v("rust-good"),
            v("go-good"),
            v("rust-other")
        )
    };
    let e = parse(
        Path::new("exp.toml"),
        &with("figure = \"peak RSS\"\na = \"go\"\nb = \"rust\"\nat_most = 0.5\nfrom_scale = 50\n"),
    )
    .unwrap();
    assert_eq!(
        e.goals,
        [ctrlbench_record::manifest::Goal {
            figure: "peak RSS".into(),
            a: "go".into(),
            b: "rust".into(),
            at_least: false,
            bound: 0.5,
            from_scale: Some(50),
        }]
    );
    let ok = "figure = \"Ready/s\"\na = \"go\"\nb = \"rust\"\n";
    for (goal, line, key) in [
        (
            "figure = \"speed\"\na = \"go\"\nb = \"rust\"\nat_least = 1.1\n",
            16,
            "figure",
        ),
        (
            "figure = \"Ready/s\"\na = \"go\"\nb = \"go\"\nat_least = 1.1\n",
            18,
            "b",
        ),
        (
            "figure = \"Ready/s\"\na = \"go\"\nb = \"java\"\nat_least = 1.1\n",
            18,
            "b",
        ),
        (ok, 16, "figure"),
        (&format!("{ok}at_least = 1.1\nat_most = 2\n"), 20, "at_most"),
        (&format!("{ok}at_least = 0\n"), 19, "at_least"),
        (&format!("{ok}at_most = -1\n"), 19, "at_most"),
        (
            &format!("{ok}at_least = 1.1\nfrom_scale = 500\n"),
            20,
            "from_scale",
        ),
        (&format!("{ok}at_least = 1.1\nabove = 2\n"), 20, "above"),
    ] {
        let e = err(&with(goal));
        assert_eq!((e.line, e.key.as_str()), (line, key), "{goal}: {e}");
    }
}

#[test]
fn fake_nodes_are_bounded_local_and_imply_the_controller_manager() {
    let with = |extra: &str| format!("{GOOD}{extra}");
    let e = parse(Path::new("exp.toml"), GOOD).unwrap();
    assert_eq!((e.cluster.nodes, e.cluster.node_pods), (0, 110));
    assert!(!e.cluster.controller_manager);
    let e = parse(
        Path::new("exp.toml"),
        &with("[cluster]\nnodes = 3\nnode_pods = 500\n"),
    )
    .unwrap();
    assert_eq!((e.cluster.nodes, e.cluster.node_pods), (3, 500));
    assert!(e.cluster.controller_manager);
    // (extra text, line of the error, key, part of the message)
    let cases = [
        ("[cluster]\nnodes = 1001\n", 9, "nodes", "from 0 to 1000"),
        (
            "[cluster]\nnode_pods = 0\n",
            9,
            "node_pods",
            "from 1 to 10000",
        ),
        (
            "[cluster]\nkubeconfig = \"k\"\nnodes = 2\n",
            9,
            "cluster",
            "local-plane setting `nodes`",
        ),
        (
            "[cluster]\ncontext = \"x\"\nnode_pods = 200\n",
            9,
            "cluster",
            "local-plane setting `node_pods`",
        ),
    ];
    for (extra, line, key, msg) in cases {
        let e = err(&with(extra));
        assert_eq!((e.line, e.key.as_str()), (line, key), "{extra}: {e}");
        assert!(e.message.contains(msg), "{extra}: {e}");
        assert_eq!(e.to_string().lines().count(), 1, "{e}");
    }
}

#[test]
fn a_mirror_is_an_http_url_of_the_local_plane() {
    let with = |extra: &str| format!("{GOOD}{extra}");
    let e = parse(Path::new("exp.toml"), GOOD).unwrap();
    assert_eq!(
        (e.cluster.mirror.as_deref(), e.cluster.offline),
        (None, false)
    );
    let e = parse(
        Path::new("exp.toml"),
        &with("[cluster]\nmirror = \"https://mirror.internal/k8s/\"\noffline = true\n"),
    )
    .unwrap();
    let d = e.cluster.downloads();
    assert_eq!(d.mirror.as_deref(), Some("https://mirror.internal/k8s/"));
    assert!(d.offline);
    // (extra text, line of the error, key, part of the message)
    let cases = [
        (
            "[cluster]\nmirror = \"ftp://mirror.internal/k8s\"\n",
            9,
            "mirror",
            "not an http:// or https:// URL",
        ),
        (
            "[cluster]\nmirror = \"/srv/mirror\"\n",
            9,
            "mirror",
            "not an http:// or https:// URL",
        ),
        (
            "[cluster]\nkubeconfig = \"k\"\nmirror = \"http://m\"\n",
            9,
            "cluster",
            "local-plane setting `mirror`",
        ),
        (
            "[cluster]\ncontext = \"x\"\noffline = true\n",
            9,
            "cluster",
            "local-plane setting `offline`",
        ),
    ];
    for (extra, line, key, msg) in cases {
        let e = err(&with(extra));
        assert_eq!((e.line, e.key.as_str()), (line, key), "{extra}: {e}");
        assert!(e.message.contains(msg), "{extra}: {e}");
        assert_eq!(e.to_string().lines().count(), 1, "{e}");
    }
}

#[test]
fn a_budget_is_recorded_in_the_key_tables_order() {
    let text = format!("{GOOD}\n[budget]\nready_p99_s = 2\nrequests_per_object = 4.5\n");
    let e = parse(Path::new("exp.toml"), &text).unwrap();
    let got: Vec<(&str, &str, f64)> = e
        .budgets
        .iter()
        .map(|b| (b.key.as_str(), b.figure.as_str(), b.limit))
        .collect();
    assert_eq!(
        got,
        [
            ("requests_per_object", "requests per object", 4.5),
            ("ready_p99_s", "time-to-Ready p99", 2.0),
        ]
    );
    assert!(
        parse(Path::new("exp.toml"), GOOD)
            .unwrap()
            .budgets
            .is_empty()
    );
}

#[test]
fn bad_budgets_name_file_line_and_key() {
    let cases = [
        (
            "[budget]\nrequests_per_object = 4\nreqs_per_object = 3\n",
            "exp.toml:11: key `reqs_per_object`: unknown field `reqs_per_object`, expected one of `requests_per_object`, `writes_per_object`, `conflicts_per_object`, `gets_per_object`, `lists_per_object`, `events_per_object`, `rss_per_object_kib`, `ready_p99_s`",
        ),
        (
            "[budget]\nwrites_per_object = -1\n",
            "exp.toml:10: key `writes_per_object`: must be a limit at or above 0, got -1",
        ),
        (
            "[budget]\nready_p99_s = \"fast\"\n",
            "exp.toml:10: key `ready_p99_s`: invalid type: string \"fast\", expected f64",
        ),
        (
            "[budget]\nrss_per_object_kib = 64\ngets_per_object = 1\n[cluster]\naudit_log = false\n",
            "exp.toml:11: key `gets_per_object`: GETs per object comes from the API footprint, which needs the local plane's audit log ([cluster] audit_log is off)",
        ),
        (
            "[budget]\nevents_per_object = 1\n[cluster]\nkubeconfig = \"~/.kube/config\"\n",
            "exp.toml:10: key `events_per_object`: Events per object comes from the API footprint, which needs the local plane's audit log (this file aims at an existing cluster: [cluster] kubeconfig or context)",
        ),
    ];
    for (tail, want) in cases {
        let text = format!("{GOOD}\n{tail}");
        let e = err(&text).to_string();
        assert_eq!(e.lines().next().unwrap(), want, "{text}");
    }
    // Not from the footprint: fine on an existing cluster.
    let text = format!(
        "{GOOD}\n[budget]\nrss_per_object_kib = 64\nready_p99_s = 3\n[cluster]\ncontext = \"kind\"\n"
    );
    assert_eq!(
        parse(Path::new("exp.toml"), &text).unwrap().budgets.len(),
        2
    );
}

#[test]
fn the_docs_list_every_budget_key_as_the_table_says() {
    let doc = include_str!("../../../../../docs/experiments.md");
    let table = budget::markdown();
    assert!(
        doc.contains(&table),
        "docs/experiments.md's `[budget]` table is not the key table's: replace it with:\n{table}"
    );
}

/// `init --from` lists every budget key, commented, and says where to
/// fill them from; filled in and uncommented, the block parses.
#[test]
fn init_from_writes_a_commented_budget_block_to_fill() {
    let top = crate::experiment::from_project::top_keys("op", "Widget");
    assert!(top.contains("`ctrlbench budget RESULTS`"), "{top}");
    assert!(top.contains("\n# [budget]\n"), "{top}");
    for k in budget::KEYS {
        assert!(top.contains(&format!("\n# {} =", k.name)), "{top}");
    }
    let filled: String = top
        .lines()
        .map(|l| match l.strip_prefix("# ") {
            Some(r) if r == "[budget]" => format!("{r}\n"),
            Some(r) if budget::KEYS.iter().any(|k| r.starts_with(k.name)) => {
                format!("{} = 1.5\n", r.split_once('=').unwrap().0.trim())
            }
            _ => format!("{l}\n"),
        })
        .collect();
    let text = format!("{filled}[[variant]]\nname = \"a\"\npreset = \"good\"\n");
    let e = parse(Path::new("exp.toml"), &text).unwrap();
    assert_eq!(e.budgets.len(), budget::KEYS.len());
}

/// The plane's client limits: a key not given keeps the component's own
/// default; neither given is None (the component's defaults, unchanged).
#[test]
fn plane_client_limits_fill_in_the_components_defaults() {
    let file = std::path::PathBuf::from("t.toml");
    let exp = parse(
        &file,
        &format!(
            "{GOOD}[cluster]\nnodes = 2\ncontroller_manager_qps = 30\nscheduler_burst = 400\n"
        ),
    )
    .unwrap();
    let c = &exp.cluster;
    assert_eq!(
        c.controller_manager_client,
        Some(ClientLimits { qps: 30, burst: 30 })
    );
    assert_eq!(
        c.scheduler_client,
        Some(ClientLimits {
            qps: 50,
            burst: 400
        })
    );
    assert_eq!(
        c.scheduler_client.unwrap().args(),
        ["--kube-api-qps=50", "--kube-api-burst=400"]
    );
    let plain = parse(&file, GOOD).unwrap();
    assert_eq!(plain.cluster.controller_manager_client, None);
    // The scheduler's default spreading stays upstream's unless turned off.
    assert!(!c.scheduler_without_default_spread);
    let off = parse(
        &file,
        &format!("{GOOD}[cluster]\nnodes = 2\nscheduler_default_spread = false\n"),
    )
    .unwrap();
    assert!(off.cluster.scheduler_without_default_spread);
}
