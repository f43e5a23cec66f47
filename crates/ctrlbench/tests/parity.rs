//! Flag parity between the Rust controller and the Go controller
//! (controller-runtime v0.22 build), black-box: both binaries resolve the
//! same command lines through the one preset table (deploy/presets.toml) and
//! must print the same `--print-settings` JSON, and reject the same invalid
//! combinations with exit code 2. No cluster is involved (no KUBECONFIG).
//!
//! The settings include the rate-limiter rule (client buckets, effective
//! limit) and the retry policy. The one difference by design is the queue:
//! Rust defaults to kube-runtime's scheduler, Go has only client-go's FIFO
//! queue; both print `queue: null` for "the runtime's own" unless --queue
//! is given (the harness always gives it), and --queue fifo is compared.
//! Likewise `priority_queue: null` in both unless the Go controller is
//! given --priority-queue (controller-runtime v0.20+ only; Rust has none).
//! With --leader-elect (or an electing preset) both print the same Lease and durations except the
//! renew deadline: client-go's 10 s in Go, none (null) in Rust, whose lease
//! crate keeps renewing until the Lease expires. --http2 is the Rust
//! controller's alone (client-go negotiates HTTP/2 by itself): only then
//! does it print `http_version`, checked below; --list-any-version likewise
//! (client-go's reflector always lists at resourceVersion 0): only then does
//! it print `list_semantic`; and the Rust controller's tunables
//! (--list-page-size, --watch-timeout-s, --watch-bookmarks), each printed
//! only when given.

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::OnceLock;

use ctrlbench::experiment::Impl;
use serde_json::Value;

/// Overrides applied to every preset.
const OVERRIDES: [&[&str]; 16] = [
    &[],
    &["--queue", "fifo"],
    &["--workers", "3"],
    &["--predicate", "none"],
    &["--predicate", "generation"],
    &["--status-write", "update"],
    &["--status-write", "apply"],
    &["--annotate"],
    &["--annotate=false"],
    &["--work-ms", "0"],
    &["--client-qps", "5"],
    &["--client-qps", "50", "--client-burst", "7"],
    &["--client-qps", "-1"],
    &["--metrics-bind-address", "127.0.0.1:9091"],
    &["--watch-list"],
    &["--strip-managed-fields"],
];

/// Further single command lines (on the default preset unless they name one).
const EXTRA: [&[&str]; 10] = [
    &["--leader-elect"],
    &["--leader-elect", "--preset", "bad-fix", "--workers", "4"],
    &["--client-qps", "0"],
    &["--client-qps", "0.5"],
    &["--client-qps", "2.5", "--client-burst", "1"],
    &["--status-write", "patch", "--preset", "bad-fix"],
    &["--status-write", "object", "--annotate=false"],
    &["--log-level", "error", "--log-format", "json"],
    &["--watch-list=false", "--workers", "1"],
    &["--metrics-bind-address", "0"],
];

/// Invalid combinations: exit 2 in both.
const INVALID: [&[&str]; 12] = [
    &["--queue", "lifo"],
    &["--client-burst", "5"],
    &["--client-qps", "-1", "--client-burst", "5"],
    &["--client-qps", "0", "--client-burst", "5"],
    &["--client-qps", "5", "--client-burst", "0"],
    &["--workers", "0"],
    &["--workers", "70000"],
    &["--work-ms", "-1"],
    &["--preset", "great"],
    &["--predicate", "always"],
    &["--status-write", "put"],
    &["--metrics-bind-address", "nowhere"],
];

/// Both binaries, built once per test binary (the tests run in parallel and
/// concurrent Go builds of the same cache entry would race).
fn binaries() -> (PathBuf, PathBuf) {
    static BINS: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    BINS.get_or_init(|| {
        let rust = ctrlbench::controllers::binary(&Impl::Rust).expect("the Rust widget-controller");
        let go = ctrlbench::controllers::binary(&Impl::Go("v0.22".into()))
            .expect("the Go widget-controller (controller-runtime v0.22)");
        (rust, go)
    })
    .clone()
}

/// Another Go build, built under one lock (concurrent builds of the same
/// cache entry would race).
fn go_bin(label: &str) -> PathBuf {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _held = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    ctrlbench::controllers::binary(&Impl::Go(label.into()))
        .unwrap_or_else(|e| panic!("the Go widget-controller (controller-runtime {label}): {e:#}"))
}

fn run(bin: &PathBuf, args: &[&str]) -> Output {
    Command::new(bin)
        .args(["--namespace", "x"])
        .args(args)
        .arg("--print-settings")
        .env_remove("KUBECONFIG")
        .env("HOME", "/nonexistent")
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", bin.display()))
}

/// JSON equality with numbers compared by value (Go writes 5, Rust may write 5.0).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fn settings(label: &str, bin: &PathBuf, args: &[&str]) -> Value {
    let out = run(bin, args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{label} {args:?}: {} {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{label} {args:?}: stderr {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout.lines().count(), 1, "{label} {args:?}: {stdout}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{label} {args:?}: {e}: {stdout}"))
}

#[test]
fn print_settings_is_identical_in_rust_and_go() {
    let (rust, go) = binaries();
    let mut lines: Vec<Vec<&str>> = Vec::new();
    for p in widget_api::presets::names() {
        for o in OVERRIDES {
            let mut a = vec!["--preset", p];
            a.extend_from_slice(o);
            lines.push(a);
        }
    }
    lines.extend(EXTRA.iter().map(|a| a.to_vec()));
    assert!(lines.len() >= 40);
    let mut differ = Vec::new();
    for args in &lines {
        let mut r = settings("rust", &rust, args);
        let mut g = settings("go", &go, args);
        // The one difference by design (see the file's paragraph).
        // Election: the flag, or a preset whose row elects (deploy/presets.toml).
        let preset = args
            .iter()
            .position(|a| *a == "--preset")
            .and_then(|i| args.get(i + 1))
            .and_then(|p| widget_api::presets::get(p));
        let le = args.contains(&"--leader-elect") || preset.is_some_and(|p| p.leader_elect);
        let deadline = |v: &mut Value| {
            v["leader_election"]
                .as_object_mut()
                .map(|o| o.remove("renew_deadline_s"))
        };
        let (rd, gd) = (deadline(&mut r), deadline(&mut g));
        if le
            && (rd != Some(Some(Value::Null))
                || gd.clone().flatten().and_then(|v| v.as_u64()) != Some(10))
        {
            differ.push(format!("{args:?}: renew deadline rust {rd:?}, go {gd:?}"));
        }
        if le != r["leader_election"].is_object() {
            differ.push(format!(
                "{args:?}: leader_election {}",
                r["leader_election"]
            ));
        }
        if !same(&r, &g) {
            differ.push(format!("{args:?}:\n  rust {r}\n  go   {g}"));
        }
    }
    assert!(
        differ.is_empty(),
        "--print-settings differs for {} of {} command lines:\n{}",
        differ.len(),
        lines.len(),
        differ.join("\n")
    );
    eprintln!("{} command lines: identical settings", lines.len());
}

#[test]
fn http2_is_the_rust_controllers_switch() {
    let (rust, go) = binaries();
    let s = settings("rust", &rust, &["--http2"]);
    assert_eq!(s["http_version"], "h2");
    let out = run(&go, &["--http2"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "Go has no --http2: client-go negotiates it"
    );
}

#[test]
fn list_any_version_is_the_rust_controllers_switch() {
    let (rust, go) = binaries();
    assert!(settings("rust", &rust, &[]).get("list_semantic").is_none());
    let s = settings("rust", &rust, &["--list-any-version"]);
    assert_eq!(s["list_semantic"], "any");
    let out = run(&go, &["--list-any-version"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "Go has no --list-any-version: its reflector lists so already"
    );
}

/// One of the Rust controller's tunables, as given and as printed.
struct Tunable {
    args: &'static [&'static str],
    key: &'static str,
    /// The printed value, as JSON text.
    printed: &'static str,
    refused: &'static [&'static str],
    why_not_go: &'static str,
}

const TUNABLES: [Tunable; 3] = [
    Tunable {
        args: &["--list-page-size", "5000"],
        key: "list_page_size",
        printed: "5000",
        refused: &["0", "-1", "4294967296"],
        why_not_go: "its reflector lists at resourceVersion 0, whole",
    },
    Tunable {
        args: &["--watch-timeout-s", "60"],
        key: "watch_timeout_s",
        printed: "60",
        refused: &["0", "-1", "4294967296"],
        why_not_go: "client-go picks each watch's timeout itself",
    },
    Tunable {
        args: &["--watch-bookmarks=false"],
        key: "watch_bookmarks",
        printed: "false",
        refused: &["maybe", "0"],
        why_not_go: "client-go's reflector always asks for bookmarks",
    },
];

#[test]
fn tunables_are_the_rust_controllers_alone_and_printed_only_when_set() {
    let (rust, go) = binaries();
    let default = settings("rust", &rust, &[]);
    for t in TUNABLES {
        assert!(default.get(t.key).is_none(), "{} printed unset", t.key);
        let s = settings("rust", &rust, t.args);
        let printed: Value = serde_json::from_str(t.printed).unwrap();
        assert_eq!(s[t.key], printed, "{:?}", t.args);
        let flag = t.args[0].split('=').next().unwrap();
        for bad in t.refused {
            let out = run(&rust, &[&format!("{flag}={bad}")]);
            assert_eq!(out.status.code(), Some(2), "{flag}={bad}");
        }
        let out = run(&go, t.args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "Go has no {flag}: {}",
            t.why_not_go
        );
    }
}

#[test]
fn invalid_combinations_exit_2_in_both() {
    let (rust, go) = binaries();
    let mut wrong = Vec::new();
    for args in INVALID {
        for (label, bin) in [("rust", &rust), ("go", &go)] {
            let out = run(bin, args);
            if out.status.code() != Some(2) || !out.stdout.is_empty() {
                wrong.push(format!(
                    "{label} {args:?}: {} stdout {:?}",
                    out.status,
                    String::from_utf8_lossy(&out.stdout)
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "want exit 2:\n{}", wrong.join("\n"));
}

/// The rules the table documents, seen through the Rust binary (the parity
/// test carries them over to Go).
#[test]
fn the_documented_rules_hold() {
    let (rust, _) = binaries();
    let s = settings("rust", &rust, &["--preset", "bad-fix", "--annotate=false"]);
    assert_eq!(
        s["conflict_retry"], false,
        "conflict_retry comes from the preset"
    );
    let s = settings(
        "rust",
        &rust,
        &["--preset", "good-patch", "--status-write", "update"],
    );
    assert_eq!(s["conflict_retry"], true);
    let s = settings("rust", &rust, &["--client-qps", "5"]);
    assert_eq!(
        (&s["client_rate_limit"], s["client_burst"].as_u64()),
        (&Value::from("token-bucket"), Some(10))
    );
    let s = settings("rust", &rust, &[]);
    assert_eq!(s["client_rate_limit"], "library-default");
    assert!(s["client_qps"].is_null() && s["client_burst"].is_null());
    assert_eq!(s["metrics_bind_address"], "127.0.0.1:0");
    let s = settings("rust", &rust, &["--client-qps", "-1"]);
    assert_eq!(s["client_rate_limit"], "unlimited");
    assert!(s["effective_client_qps"].is_null());
}

/// What differs by design, and what the library defaults are, per build.
#[test]
fn queue_defaults_and_effective_limits_per_build() {
    let (rust, go) = binaries();
    let go18 = go_bin("v0.18.4");
    let r = settings("rust", &rust, &[]);
    assert_eq!(
        (&r["queue"], &r["debounce_ms"]),
        (&Value::Null, &Value::from(0))
    );
    let g = settings("go", &go, &[]);
    assert_eq!(g["queue"], Value::Null);
    assert_eq!(
        settings("rust", &rust, &["--queue", "kube"])["queue"],
        "kube"
    );
    // Library defaults: kube-rs has no client-side limiter; controller-runtime
    // v0.22 turns client-go's off (QPS -1); v0.18.4's GetConfig sets 20/30.
    assert!(r["effective_client_qps"].is_null(), "{r}");
    assert!(g["effective_client_qps"].is_null(), "{g}");
    let g18 = settings("go@v0.18.4", &go18, &[]);
    assert_eq!(
        (
            g18["effective_client_qps"].as_f64(),
            g18["effective_client_burst"].as_u64()
        ),
        (Some(20.0), Some(30))
    );
    // With --client-qps only, every build takes client-go's burst rule (10).
    for (label, bin) in [("rust", &rust), ("go", &go), ("go@v0.18.4", &go18)] {
        let s = settings(label, bin, &["--client-qps", "5"]);
        assert_eq!(
            (
                s["effective_client_qps"].as_f64(),
                s["effective_client_burst"].as_u64()
            ),
            (Some(5.0), Some(10)),
            "{label}"
        );
        assert_eq!(
            (
                &s["retry_backoff_base_ms"],
                &s["retry_backoff_cap_s"],
                &s["retry_overall_qps"],
                &s["retry_overall_burst"]
            ),
            (
                &Value::from(5),
                &Value::from(1000),
                &Value::from(10),
                &Value::from(100)
            ),
            "{label}"
        );
        assert_eq!(
            s["client_buckets"],
            serde_json::json!(["informer", "client", "api-reader"]),
            "{label}"
        );
    }
    let r = settings("rust", &rust, &["--debounce-ms", "50", "--queue", "fifo"]);
    assert_eq!(
        (&r["debounce_ms"], &r["queue"]),
        (&Value::from(50), &Value::from("fifo"))
    );
    let out = run(&go, &["--queue", "kube"]);
    assert_eq!(out.status.code(), Some(2), "go --queue kube");
    assert!(String::from_utf8_lossy(&out.stderr).contains("--queue"));
}

/// controller-runtime's priority queue: null unless --priority-queue is given
/// (Rust and every Go build); v0.22 and v0.25 take the flag and print it, and
/// with it on the retry policy has no overall bucket; v0.18.4 and Rust refuse it.
#[test]
fn priority_queue_per_build() {
    let (rust, go) = binaries();
    let go18 = go_bin("v0.18.4");
    let go25 = go_bin("v0.25");
    for (label, bin) in [
        ("rust", &rust),
        ("go", &go),
        ("go@v0.18.4", &go18),
        ("go@v0.25", &go25),
    ] {
        let s = settings(label, bin, &[]);
        assert!(s["priority_queue"].is_null(), "{label}: {s}");
        assert_eq!(s["retry_overall_qps"], Value::from(10), "{label}");
    }
    for (label, bin) in [("go", &go), ("go@v0.25", &go25)] {
        let on = settings(label, bin, &["--priority-queue=true"]);
        assert_eq!(on["priority_queue"], Value::Bool(true), "{label}");
        assert!(
            on["retry_overall_qps"].is_null() && on["retry_overall_burst"].is_null(),
            "{label}: {on}"
        );
        let off = settings(label, bin, &["--priority-queue=false"]);
        assert_eq!(off["priority_queue"], Value::Bool(false), "{label}");
        assert_eq!(off["retry_overall_burst"], Value::from(100), "{label}");
    }
    for (label, bin) in [("rust", &rust), ("go@v0.18.4", &go18)] {
        let out = run(bin, &["--priority-queue"]);
        assert_eq!(out.status.code(), Some(2), "{label} --priority-queue");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("priority-queue"),
            "{label}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
