//! The CI recipe of docs/ci.md, tested without a benchmark: the workflow
//! is read from the page itself (so a change there is a change here), its
//! settings that decide whether a job can fail are checked, and the gate
//! step's `run:` lines are run the way GitHub runs them (`bash --noprofile
//! --norc -eo pipefail`, this build's ctrlbench on PATH) over synthetic
//! results directories. Each directory holds a variant and its `-baseline`
//! twin over repeats with small fixed jitter, and the `[[compare]]`
//! questions `--baseline` asks; its figures are chosen so that the verdict
//! is plain by hand (a regression, a speed-up, a question too noisy to
//! decide), never by asking the gate.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

/// The workflow of docs/ci.md, parsed.
fn workflow() -> serde_json::Value {
    let page = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/ci.md");
    let text = std::fs::read_to_string(&page).unwrap();
    let start = text
        .find("```yaml\n")
        .expect("docs/ci.md has a ```yaml block")
        + 8;
    let end = start + text[start..].find("\n```").expect("the yaml block ends");
    serde_saphyr::from_str(&text[start..end]).expect("the workflow is YAML")
}

/// The workflow's one job's steps.
fn steps(w: &serde_json::Value) -> Vec<serde_json::Value> {
    let jobs = w["jobs"].as_object().expect("jobs");
    assert_eq!(jobs.len(), 1, "one job");
    let job = jobs.values().next().unwrap();
    job["steps"].as_array().expect("steps").clone()
}

/// The gate step's shell lines, as written in the docs.
fn gate_lines() -> String {
    let w = workflow();
    let gate: Vec<serde_json::Value> = steps(&w)
        .into_iter()
        .filter(|s| s["name"].as_str() == Some("gate"))
        .collect();
    assert_eq!(gate.len(), 1, "one step named gate");
    let run = gate[0]["run"].as_str().expect("the gate step runs lines");
    // Expressions would be GitHub's to expand: the lines must run as written.
    assert!(!run.contains("${{"), "{run}");
    run.to_string()
}

/// What makes the job fail when the gate does: GitHub's `shell: bash` is
/// `bash --noprofile --norc -eo pipefail {0}`, while its default without
/// `shell:` is `bash -e {0}`, under which `ctrlbench … | tee` exits with
/// tee's 0. And the rest the recipe promises: a pinned ctrlbench in the
/// cache key, a comment it is allowed to write, a run that can decide.
#[test]
fn the_workflow_fails_when_its_gate_does() {
    let w = workflow();
    assert_eq!(w["defaults"]["run"]["shell"].as_str(), Some("bash"));
    let steps = steps(&w);
    for s in &steps {
        assert!(
            s.get("shell").is_none(),
            "a step overrides the shell: {s:?}"
        );
    }
    assert_eq!(w["permissions"]["contents"].as_str(), Some("read"));
    assert_eq!(w["permissions"]["pull-requests"].as_str(), Some("write"));
    assert!(w["env"]["CTRLBENCH_REF"].as_str().is_some());
    let with = |uses: &str| -> Vec<serde_json::Value> {
        steps
            .iter()
            .filter(|s| s["uses"].as_str().is_some_and(|u| u.starts_with(uses)))
            .map(|s| s["with"].clone())
            .collect()
    };
    let cache = with("actions/cache@");
    assert_eq!(cache.len(), 1);
    let key = cache[0]["key"].as_str().unwrap();
    assert!(key.contains("${{ env.CTRLBENCH_REF }}"), "{key}");
    let ours: Vec<_> = with("actions/checkout@")
        .into_iter()
        .filter(|w| w["path"].as_str() == Some(".ctrlbench-src"))
        .collect();
    assert_eq!(ours.len(), 1);
    assert_eq!(ours[0]["ref"].as_str(), Some("${{ env.CTRLBENCH_REF }}"));
    let runs: Vec<&str> = steps.iter().filter_map(|s| s["run"].as_str()).collect();
    let ab: Vec<&&str> = runs
        .iter()
        .filter(|r| r.contains("ctrlbench run "))
        .collect();
    assert_eq!(ab.len(), 1, "{runs:?}");
    assert!(ab[0].contains("--until-decided") && ab[0].contains("--baseline"));
    assert!(ab[0].contains("--results results"), "{}", ab[0]);
    assert!(gate_lines().contains("| tee gate.txt"));
}

const N: u64 = 10;
const VARIANT: &str = "op";
const TWIN: &str = "op-baseline";
/// What `run --baseline` asks of `op / op-baseline` (the gate's figures),
/// and writes/s, which a user may ask too: it has no better side, so a
/// build that converges sooner and raises it is not a regression.
const FIGURES: [&str; 7] = [
    "T100",
    "Ready/s",
    "reconcile p99",
    "writes per object",
    "requests per object",
    "peak RSS",
    "writes/s",
];
/// Each repeat's fixed jitter (±1 % at most).
const JITTER: [f64; 10] = [
    0.008, -0.006, 0.003, -0.009, 0.005, -0.002, 0.007, -0.004, 0.001, -0.005,
];

/// One run's figures: the objects become Ready evenly over `span_s` after
/// the load, the controller writes `writes_per_object` × N over that span,
/// and its RSS is `rss_mib` throughout.
#[derive(Clone, Copy)]
struct Side {
    span_s: f64,
    writes_per_object: f64,
    rss_mib: f64,
}

impl Side {
    fn scaled(self, j: f64) -> Side {
        Side {
            span_s: self.span_s * (1.0 + j),
            writes_per_object: self.writes_per_object * (1.0 + j),
            rss_mib: self.rss_mib * (1.0 + j),
        }
    }
}

/// RFC 3339 of `ms` milliseconds after 2026-01-01T00:00:00Z (within that day).
fn at(ms: i64) -> String {
    let (h, m, s, f) = (ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60, ms % 1000);
    assert!(h < 24);
    format!("2026-01-01T{h:02}:{m:02}:{s:02}.{f:03}Z")
}

/// One run directory, N<N>/<variant>/rep<repeat>, started at `start` ms.
fn write_run(dir: &Path, variant: &str, repeat: u32, start: i64, side: Side) {
    let run = dir.join(format!("N{N}/{variant}/rep{repeat}"));
    std::fs::create_dir_all(&run).unwrap();
    let span = (side.span_s * 1000.0).round() as i64;
    // N creates 10 ms apart in a 100 ms load; the i-th Ready at i/N of the span after it.
    let ready = |i: i64| start + 100 + span * (i + 1) / N as i64;
    let mut objects = String::from("name,created_at,ready_at,first_write_at\n");
    for i in 0..N as i64 {
        let (c, r) = (at(start + 10 * i), at(ready(i)));
        objects.push_str(&format!("obj-{i:03},{c},{r},{r}\n"));
    }
    std::fs::write(run.join("objects.csv"), objects).unwrap();
    // Scrapes every 250 ms from 0.5 s before the load to 1 s after the last Ready.
    let mut metrics = String::from(
        "timestamp,scrape_ok,rest_writes_total,reconcile_success_total,rss_bytes,\
         reconcile_latency_sum,reconcile_latency_count,reconcile_latency_le_0.01,\
         reconcile_latency_le_0.1,reconcile_latency_le_+Inf\n",
    );
    let mut apiserver = String::from("timestamp,scrape_ok\n");
    let writes = side.writes_per_object * N as f64;
    let rss = side.rss_mib * 1024.0 * 1024.0;
    let mut t = start - 500;
    while t <= ready(N as i64 - 1) + 1000 {
        let done = ((t - start - 100) as f64 / span as f64).clamp(0.0, 1.0);
        let n = N as f64 * done;
        // Nine reconciles in 10 ms of ten, one in 100 ms: the same on every run.
        metrics.push_str(&format!(
            "{},1,{},{n},{rss},{},{n},{},{n},{n}\n",
            at(t),
            writes * done,
            0.015 * n,
            0.9 * n
        ));
        apiserver.push_str(&format!("{},1\n", at(t)));
        t += 250;
    }
    std::fs::write(run.join(format!("metrics-{variant}.csv")), metrics).unwrap();
    std::fs::write(run.join("apiserver.csv"), apiserver).unwrap();
    // The audit log's count of the controller's requests: one GET per
    // object and one watch on every run, so requests per object never moves.
    std::fs::write(
        run.join("footprint.csv"),
        format!(
            "phase,verb,group,resource,subresource,code,namespaced,selector,workload,count,latency_s_sum\n\
             create,get,example.com,widgets,,200,true,,true,{N},0.1\n\
             create,watch,example.com,widgets,,200,false,,true,1,0\n"
        ),
    )
    .unwrap();
    let converge = (ready(N as i64 - 1) - (start - 10)) as f64 / 1000.0;
    let summary = json!({
        "variant": variant, "impl": "command", "preset": "", "flags": [],
        "namespace": format!("ci-{variant}-{repeat}"), "scale": N, "repeat": repeat,
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

/// `<root>/20260101T000000Z-ci-recipe/`: per repeat (baseline, working
/// tree), the twin first as `run` orders them, and the questions.
fn write_results(root: &Path, repeats: &[(Side, Side)]) -> PathBuf {
    let dir = root.join("20260101T000000Z-ci-recipe");
    std::fs::create_dir_all(&dir).unwrap();
    let mut start = 60_000;
    for (k, (base, tree)) in repeats.iter().enumerate() {
        let repeat = k as u32 + 1;
        write_run(&dir, TWIN, repeat, start, *base);
        write_run(&dir, VARIANT, repeat, start + 30_000, *tree);
        start += 60_000;
    }
    let compare: Vec<Value> = FIGURES
        .iter()
        .map(|f| json!({"a": TWIN, "b": VARIANT, "figure": f}))
        .collect();
    let manifest = json!({
        "tool": "ctrlbench", "experiment": "ci-recipe", "complete": true,
        "started_at": at(0), "finished_at": at(start), "runs": [], "compare": compare,
    });
    std::fs::write(dir.join("manifest.json"), manifest.to_string()).unwrap();
    dir
}

/// Ten repeats of `base` and `tree`, each repeat's jitter on both (in
/// opposite orders, so the pairs do not move together).
fn ten(base: Side, tree: Side) -> Vec<(Side, Side)> {
    (0..10)
        .map(|k| (base.scaled(JITTER[9 - k]), tree.scaled(JITTER[k])))
        .collect()
}

/// The gate step's lines in a fresh directory holding `results/<dir>`,
/// with this build's ctrlbench first on PATH; its output and gate.txt.
fn run_gate_step(repeats: &[(Side, Side)]) -> (Output, String) {
    let tmp = tempfile::tempdir().unwrap();
    write_results(&tmp.path().join("results"), repeats);
    let script = tmp.path().join("gate-step.sh");
    std::fs::write(&script, gate_lines()).unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_ctrlbench")).parent().unwrap();
    let path = std::env::join_paths(std::iter::once(bin.to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let out = Command::new("bash")
        .args(["--noprofile", "--norc", "-eo", "pipefail"])
        .arg(&script)
        .current_dir(tmp.path())
        .env("PATH", path)
        .output()
        .unwrap();
    let tee = std::fs::read_to_string(tmp.path().join("gate.txt")).unwrap_or_default();
    // Shown with --nocapture: what the step printed.
    println!("{tee}");
    (out, tee)
}

fn shown(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Writes per object 3.0 against the base's 2.0 (±1 %) over ten paired
/// repeats, the same speed and memory: B/A is 1.5 within a few per cent,
/// wholly beyond +10 % on the worse side of a lower-is-better figure. The
/// step exits 1, as `run --fail-on-regression` does, and says why.
#[test]
fn the_gate_step_fails_on_a_decided_regression() {
    let base = Side {
        span_s: 2.0,
        writes_per_object: 2.0,
        rss_mib: 30.0,
    };
    let tree = Side {
        writes_per_object: 3.0,
        ..base
    };
    let (out, tee) = run_gate_step(&ten(base, tree));
    assert_eq!(out.status.code(), Some(1), "{}", shown(&out));
    let regressions: Vec<&str> = tee
        .lines()
        .filter(|l| l.starts_with("REGRESSION"))
        .collect();
    assert_eq!(regressions.len(), 1, "{tee}");
    assert!(
        regressions[0].starts_with(&format!(
            "REGRESSION N={N} writes per object: {VARIANT} / {TWIN}"
        )),
        "{tee}"
    );
    assert!(!tee.contains("UNDECIDED"), "{tee}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("1 question(s) decidedly worse by more than 10 %"),
        "{err}"
    );
}

/// The working tree converges in 1 s where the base takes 2 s, with the
/// same writes per object: T100 about 0.52×, Ready/s about 1.9× (both
/// better) and writes/s about 2× (no better side). Nothing is worse: the
/// step exits 0.
#[test]
fn the_gate_step_passes_a_decided_speed_up() {
    let base = Side {
        span_s: 2.0,
        writes_per_object: 2.0,
        rss_mib: 30.0,
    };
    let tree = Side {
        span_s: 1.0,
        ..base
    };
    let (out, tee) = run_gate_step(&ten(base, tree));
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    assert!(tee.contains("no decided regression"), "{tee}");
    assert!(!tee.contains("REGRESSION"), "{tee}");
    assert!(!tee.contains("writes/s"), "{tee}");
}

/// The same speed-up through `compare --pair`: writes/s is decided about
/// 2× higher (what the gate once called a regression) and the table names
/// no better side for it, while T100 is lower (better) and Ready/s higher
/// (better).
#[test]
fn compare_names_no_side_for_the_speed_ups_writes_per_s() {
    let base = Side {
        span_s: 2.0,
        writes_per_object: 2.0,
        rss_mib: 30.0,
    };
    let tree = Side {
        span_s: 1.0,
        ..base
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_results(tmp.path(), &ten(base, tree));
    let out = Command::new(env!("CARGO_BIN_EXE_ctrlbench"))
        .arg("compare")
        .arg(&dir)
        .args(["--pair", &format!("{TWIN}:{VARIANT}")])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let md = String::from_utf8_lossy(&out.stdout);
    let row = |figure: &str| -> String {
        md.lines()
            .find(|l| l.starts_with(&format!("| {N} | {TWIN} → {VARIANT} | {figure} |")))
            .unwrap_or_else(|| panic!("no {figure} row:\n{md}"))
            .to_string()
    };
    assert!(row("writes/s").ends_with("| B higher |"), "{md}");
    assert!(row("T100").ends_with("| B lower (better) |"), "{md}");
    assert!(row("Ready/s").ends_with("| B higher (better) |"), "{md}");
    assert!(
        !md.contains(&format!("{TWIN} → {VARIANT} writes/s:")),
        "{md}"
    );
}

/// Three repeats whose writes per object swing by ±30 % around 1.15× the
/// base: the interval spans both sides of +10 %, so the answer is
/// undecided, printed, and the step still exits 0.
#[test]
fn the_gate_step_passes_an_undecided_answer() {
    let base = Side {
        span_s: 2.0,
        writes_per_object: 2.0,
        rss_mib: 30.0,
    };
    let repeats: Vec<(Side, Side)> = [0.3, -0.3, 0.2]
        .iter()
        .map(|j| {
            let tree = Side {
                writes_per_object: 2.0 * 1.15 * (1.0 + j),
                ..base
            };
            (base, tree)
        })
        .collect();
    let (out, tee) = run_gate_step(&repeats);
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    assert!(
        tee.contains(&format!(
            "UNDECIDED N={N} writes per object: {VARIANT} / {TWIN}"
        )),
        "{tee}"
    );
    assert!(tee.contains("no decided regression"), "{tee}");
}

/// No results directory: the step fails (ls finds nothing), rather than
/// gating nothing and passing.
#[test]
fn the_gate_step_fails_without_results() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("results")).unwrap();
    let script = tmp.path().join("gate-step.sh");
    std::fs::write(&script, gate_lines()).unwrap();
    let out = Command::new("bash")
        .args(["--noprofile", "--norc", "-eo", "pipefail"])
        .arg(&script)
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0), "{}", shown(&out));
}
