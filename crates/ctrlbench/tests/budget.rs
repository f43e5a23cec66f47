//! Budgets: first without a plane, a synthetic results directory (two variants,
//! two repeats, footprint.csv from an audit log, a manifest with a
//! `[budget]`), and what `ctrlbench budget DIR`, the report and
//! `run --fail-on-budget`'s verdict make of it. The expected values are
//! worked out by hand from the rows written here. Then a real run on a
//! local plane of its own, for the exit codes.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

const N: u64 = 10;

/// RFC 3339 of `ms` milliseconds after 2026-01-01T00:00:00Z.
fn at(ms: i64) -> String {
    let (h, m, s, f) = (ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60, ms % 1000);
    format!("2026-01-01T{h:02}:{m:02}:{s:02}.{f:03}Z")
}

/// One run: N objects created 10 ms apart, Ready 100 ms apart from 200 ms
/// on (time-to-Ready 0.2 s … 1.01 s), `rss_mib` throughout, and `gets`
/// GETs, one watch and 2 status patches per object in footprint.csv.
fn write_run(dir: &Path, variant: &str, repeat: u32, start: i64, rss_mib: f64, gets: u64) {
    let run = dir.join(format!("N{N}/{variant}/rep{repeat}"));
    std::fs::create_dir_all(&run).unwrap();
    let ready = |i: i64| start + 100 + 100 * (i + 1);
    let mut objects = String::from("name,created_at,ready_at,first_write_at\n");
    for i in 0..N as i64 {
        let (c, r) = (at(start + 10 * i), at(ready(i)));
        objects.push_str(&format!("obj-{i:03},{c},{r},{r}\n"));
    }
    std::fs::write(run.join("objects.csv"), objects).unwrap();
    let mut metrics = String::from("timestamp,scrape_ok,reconcile_success_total,rss_bytes\n");
    let rss = rss_mib * 1024.0 * 1024.0;
    let mut t = start - 500;
    while t <= ready(N as i64 - 1) + 1000 {
        metrics.push_str(&format!("{},1,{N},{rss}\n", at(t)));
        t += 250;
    }
    std::fs::write(run.join(format!("metrics-{variant}.csv")), metrics).unwrap();
    let footprint = format!(
        "phase,verb,group,resource,subresource,code,namespaced,selector,workload,count,latency_s_sum\n\
         create,get,example.com,widgets,,200,true,,true,{gets},0.1\n\
         create,watch,example.com,widgets,,200,false,,true,1,0\n\
         create,patch,example.com,widgets,status,200,true,,true,{},0.2\n",
        2 * N
    );
    std::fs::write(run.join("footprint.csv"), footprint).unwrap();
    let converge = (ready(N as i64 - 1) - start) as f64 / 1000.0;
    let summary = json!({
        "variant": variant, "impl": "command", "preset": "", "flags": [],
        "namespace": format!("b-{variant}-{repeat}"), "scale": N, "repeat": repeat,
        "schedule": "isolated", "concurrent_with": [], "window_s": 60.0,
        "elapsed_s": converge + 1.0, "stop_reason": "converged", "incomplete": false,
        "load": {"created": N, "errors": 0, "seconds": 0.1, "rate_per_s": 100.0, "first_error": null},
        "ready": N, "remaining": 0, "converged": true, "convergence_s": converge,
        "throughput_ready_per_s": N as f64 / converge,
        "reconciles": {"total": N as f64, "success": N as f64, "error": 0.0},
        "scrapes": {"ok": 1, "failed": 0, "apiserver_failed": 0, "etcd_failed": 0},
        "controller_exit_code": 0,
    });
    std::fs::write(run.join("summary.json"), summary.to_string()).unwrap();
}

/// "lean": 10 GETs a run (3.1 requests per object), 10 MiB (1024 KiB per
/// object); "chatty": 40 then 42 GETs (6.1, 6.3: median 6.2), 20 MiB
/// (2048 KiB per object). Budget: 4 requests per object, 1500 KiB.
fn write_results(root: &Path) -> PathBuf {
    let dir = root.join("20260101T000000Z-budget");
    std::fs::create_dir_all(&dir).unwrap();
    write_run(&dir, "lean", 1, 60_000, 10.0, 10);
    write_run(&dir, "chatty", 1, 70_000, 20.0, 40);
    write_run(&dir, "lean", 2, 80_000, 10.0, 10);
    write_run(&dir, "chatty", 2, 90_000, 20.0, 42);
    let manifest = json!({
        "tool": "ctrlbench", "experiment": "budget", "complete": true,
        "started_at": at(0), "finished_at": at(100_000), "runs": [],
        "budgets": [
            {"key": "requests_per_object", "figure": "requests per object", "limit": 4.0},
            {"key": "rss_per_object_kib", "figure": "peak RSS per object (KiB)", "limit": 1500.0},
        ],
    });
    std::fs::write(dir.join("manifest.json"), manifest.to_string()).unwrap();
    dir
}

fn ctrlbench(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_ctrlbench"))
        .args(args)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{args:?}: {}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

#[test]
fn the_budget_command_measures_a_table_to_paste() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_results(tmp.path());
    let out = ctrlbench(&["budget", dir.to_str().unwrap(), "--headroom", "25%"]);
    println!("{out}");
    // By hand, the highest × 1.25, up to two significant digits:
    // requests 6.3 → 7.875 → 7.9; writes 2 → 2.5; GETs 4.2 → 5.25 → 5.3;
    // RSS 2048 KiB → 2560 → 2600; time-to-Ready p99 ≈ 1.01 s → 1.3;
    // no extra LIST, conflict or Event: 0.
    let values: Vec<&str> = out
        .lines()
        .filter(|l| !l.starts_with('#') && l.contains(" = "))
        .collect();
    assert_eq!(
        values,
        [
            "requests_per_object = 7.9",
            "writes_per_object = 2.5",
            "conflicts_per_object = 0",
            "gets_per_object = 5.3",
            "lists_per_object = 0",
            "events_per_object = 0",
            "rss_per_object_kib = 2600",
            "ready_p99_s = 1.3",
        ],
        "{out}"
    );
    assert!(out.contains("\n[budget]\n"), "{out}");
    assert!(
        out.contains("# requests per object: highest 6.3 (chatty, N=10, repeat 2)\n"),
        "{out}"
    );
    assert!(out.contains("# conflicts per object: highest 0 ("), "{out}");
    // What it prints parses as a [budget] table of an experiment file.
    let exp =
        format!("name = \"t\"\nscales = [10]\n[[variant]]\nname = \"a\"\npreset = \"good\"\n{out}");
    let parsed = ctrlbench::experiment::spec::parse(Path::new("pasted.toml"), &exp).unwrap();
    assert_eq!(parsed.budgets.len(), 8);
}

#[test]
fn the_report_and_fail_on_budget_judge_the_median_against_each_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_results(tmp.path());
    assert_eq!(
        ctrlbench::budget::exceeded(&dir).unwrap(),
        [
            "BUDGET EXCEEDED chatty requests_per_object = 6.2 > 4",
            "BUDGET EXCEEDED chatty rss_per_object_kib = 2048.0 KiB > 1500.0 KiB",
        ]
    );
    ctrlbench(&["report", dir.to_str().unwrap()]);
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    let rows: Vec<&str> = md.lines().filter(|l| l.contains("_per_object")).collect();
    assert_eq!(
        rows,
        [
            "| 10 | chatty | requests_per_object (requests per object) | 6.2 | 4 | EXCEEDED |",
            "| 10 | chatty | rss_per_object_kib (peak RSS per object (KiB)) | 2048.0 KiB | 1500.0 KiB | EXCEEDED |",
            "| 10 | lean | requests_per_object (requests per object) | 3.1 | 4 | within |",
            "| 10 | lean | rss_per_object_kib (peak RSS per object (KiB)) | 1024.0 KiB | 1500.0 KiB | within |",
        ],
        "{md}"
    );
    assert!(md.contains("## Budgets\n"), "{md}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("verdicts.json")).unwrap()).unwrap();
    let budgets = v["budgets"].as_array().unwrap();
    assert_eq!(budgets.len(), 4);
    let chatty = &budgets[0];
    // The median of 6.1 and 6.3, give or take the float's last bit.
    assert!(
        (chatty["measured"].as_f64().unwrap() - 6.2).abs() < 1e-9,
        "{chatty}"
    );
    let mut rest = chatty.clone();
    rest.as_object_mut().unwrap().remove("measured");
    assert_eq!(
        rest,
        json!({"scale": N, "variant": "chatty", "key": "requests_per_object",
               "figure": "requests per object", "limit": 4.0, "verdict": "EXCEEDED"})
    );
}

/// The same on a real local plane, end to end: `run --fail-on-budget`
/// exits 3 when a limit is exceeded, naming the figure, and 0 when every
/// limit is met; a footprint budget with --kubeconfig is refused before
/// anything starts. The limits sit far on either side of what the good
/// controller can do (a p99 time-to-Ready of 1 µs cannot be met; 1000
/// requests per object cannot be exceeded by a controller that sends a few).
#[test]
fn run_fail_on_budget_exits_3_when_exceeded_and_0_when_met() {
    let tmp = tempfile::tempdir().unwrap();
    let file = |budget: &str| {
        let f = tmp.path().join("budget.toml");
        std::fs::write(
            &f,
            format!(
                "name = \"budget\"\nscales = [10]\nwindow_s = 20\nstop_when_converged = true\nquiet_s = 1\nrepeats = 1\n\
                 [[variant]]\nname = \"rust-good\"\nimpl = \"rust\"\npreset = \"good\"\n\
                 [budget]\n{budget}"
            ),
        )
        .unwrap();
        f
    };
    let run = |f: &Path, extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_ctrlbench"))
            .arg("run")
            .arg(f)
            .args(["--no-progress", "--fail-on-budget", "--results"])
            .arg(tmp.path().join("results"))
            .args(extra)
            .output()
            .unwrap()
    };
    let over = file("requests_per_object = 1000\nready_p99_s = 0.000001\n");
    let out = run(&over, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("BUDGET EXCEEDED"))
        .collect();
    assert_eq!(lines.len(), 1, "{stdout}");
    assert!(
        lines[0].starts_with("BUDGET EXCEEDED rust-good ready_p99_s = "),
        "{stdout}"
    );
    let met = file("requests_per_object = 1000\nready_p99_s = 600\n");
    let out = run(&met, &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // No plane is reached: the refusal comes first.
    let cfg = tmp.path().join("kubeconfig");
    std::fs::write(&cfg, "apiVersion: v1\nkind: Config\n").unwrap();
    let out = run(&met, &["--dry-run", "--kubeconfig", cfg.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("[budget] requests_per_object")
            && stderr.contains("needs the local plane's audit log"),
        "{stderr}"
    );
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
}
