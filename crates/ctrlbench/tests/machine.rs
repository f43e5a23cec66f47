//! The machine check end to end, on a machine with nothing else running
//! (scripts/test-lanes.py runs this binary alone, after the others): a CPU
//! burner outside ctrlbench's process tree beside one run flags that run
//! "machine busy" and the report keeps it out; the run before it, with
//! nothing beside it, is not flagged; `ctrlbench doctor` prints its lines.

use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use ctrlbench_record::Summary;

mod common;
use common::{assert_success, ctrlbench, only_results_dir, read_manifest};

/// Names the burner's processes, so that exactly they are stopped.
fn burner_name() -> String {
    format!("ctrlbench-test-burner-{}", std::process::id())
}

/// A process that spins on one core for `secs`, outside ctrlbench's process
/// tree (its parent exits at once, so it belongs to init).
fn burner(secs: u32) -> Child {
    Command::new("sh")
        .arg("-c")
        .arg(format!(
            "(timeout {secs} sh -c 'while :; do :; done' {} >/dev/null 2>&1 &)",
            burner_name()
        ))
        .spawn()
        .unwrap()
}

fn busy_of(s: &Summary) -> bool {
    s.machine
        .as_ref()
        .expect("summary.json records the machine")
        .busy
}

#[test]
fn a_cpu_burner_beside_a_run_flags_it_machine_busy() {
    let tmp = tempfile::tempdir().unwrap();
    let exp = tmp.path().join("busy.toml");
    std::fs::write(
        &exp,
        "name = \"busy\"\nscales = [30]\nwindow_s = 20\nstop_when_converged = true\nquiet_s = 1\nrepeats = 2\n\n[[variant]]\nname = \"a\"\npreset = \"good\"\nwork_ms = 0\n",
    )
    .unwrap();
    // The burner runs beside run k.
    let run = |results: &Path, k: u32| {
        // Its own local plane: on a plane ctrlbench started, everything
        // but the burner is in its process tree.
        let child = ctrlbench()
            .env("CTRLBENCH_BUSY_THRESHOLD", "0.3")
            .args(["run", exp.to_str().unwrap(), "--no-progress", "--results"])
            .arg(results)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // The burner starts once run k-1's summary exists, so run k has it beside it.
        let t0 = Instant::now();
        loop {
            let done = std::fs::read_dir(results)
                .ok()
                .and_then(|mut d| d.next())
                .and_then(|e| e.ok())
                .map(|e| e.path().join(format!("N30/a/rep{}/summary.json", k - 1)))
                .is_some_and(|p| p.exists());
            if done {
                break;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(240),
                "run {} never finished",
                k - 1
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        let mut b = burner(30);
        b.wait().unwrap();
        let out = child.wait_with_output().unwrap();
        assert_success(&out);
        let _ = Command::new("pkill").args(["-f", &burner_name()]).status();
        only_results_dir(results)
    };
    // Run 1 has nothing beside it and must not be flagged; run 2 has the
    // burner. (A whole second experiment without the burner cost 14 s of
    // CI's serial phase and showed what run 1 shows.)
    let busy = run(&tmp.path().join("busy"), 2);
    let b = read_manifest(&busy);
    let flags: Vec<(u32, bool)> = b.runs.iter().map(|s| (s.repeat, busy_of(s))).collect();
    assert_eq!(
        flags,
        [(1, false), (2, true)],
        "{:?}",
        b.runs.iter().map(|s| &s.machine).collect::<Vec<_>>()
    );
    let report = std::fs::read_to_string(busy.join("report.md")).unwrap();
    assert!(report.contains("machine busy"), "{report}");
}

#[test]
fn doctor_prints_one_line_per_finding() {
    let out = Command::new(env!("CARGO_BIN_EXE_ctrlbench"))
        .args(["doctor", "--seconds", "0.5"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    for what in [
        "cores:",
        "other processes:",
        "free memory:",
        "swap in use:",
        "free disk",
    ] {
        assert!(
            text.lines()
                .any(|l| l[4..].starts_with(what) || l.contains(what)),
            "{what}: {text}"
        );
    }
    // Exit 0 only when nothing is marked ✗, and 1 with one error line otherwise.
    let bad = text.lines().any(|l| l.starts_with('✗'));
    assert_eq!(out.status.success(), !bad, "{text}");
    if bad {
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}
