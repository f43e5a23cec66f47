//! Fault experiments end to end through the CLI: a controller restarted mid
//! load on this binary's shared plane, and plane faults (the etcd leader
//! restarted, an apiserver killed, a follower and the controller stopped) on
//! a run's own 3-member, 2-apiserver plane.
//! Each run converges with nothing lost, records its faults in faults.csv and
//! leaves no process behind.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ctrlbench_plane::process::is_alive;
use ctrlbench_plane::testing::shared_plane;
use ctrlbench_record::faults::{self, FaultRecord};

mod common;
use common::assert_success;
use common::ctrlbench;

/// Runs the experiment `text`; (its run directory N<n>/g/rep1, summary, faults).
fn run(
    tmp: &Path,
    text: &str,
    args: &[&str],
) -> (PathBuf, ctrlbench_record::Summary, Vec<FaultRecord>) {
    let exp = tmp.join("f.toml");
    std::fs::write(&exp, text).unwrap();
    let results = tmp.join("results");
    let out = ctrlbench()
        .args(["run", exp.to_str().unwrap(), "--no-progress", "--results"])
        .arg(&results)
        .args(args)
        .env("XDG_STATE_HOME", tmp)
        .output()
        .unwrap();
    assert_success(&out);
    let dir = std::fs::read_dir(&results)
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let run = dir.join("N200/g/rep1");
    let s = ctrlbench_record::Summary::read(&run.join("summary.json")).unwrap();
    let f = faults::read(&run.join("faults.csv")).unwrap();
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(report.contains("## Faults"), "{report}");
    (run, s, f)
}

/// The pid a restart outcome names ("ok, restarted as pid N").
fn restarted_pid(f: &FaultRecord) -> u32 {
    f.outcome
        .rsplit(' ')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no new pid in {:?}", f.outcome))
}

fn assert_gone(pids: &[u32]) {
    let t = Instant::now();
    while pids.iter().any(|p| is_alive(*p, 0)) && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(100));
    }
    let left: Vec<u32> = pids.iter().copied().filter(|p| is_alive(*p, 0)).collect();
    assert!(left.is_empty(), "processes outlived the run: {left:?}");
}

const GOOD: &str = "scales = [200]\nwindow_s = 60\nstop_when_converged = true\n\
    [[variant]]\nname = \"g\"\nimpl = \"rust\"\npreset = \"good\"\nwork_ms = 20\n";

#[test]
fn a_restarted_controller_converges_and_loses_nothing() {
    let plane = shared_plane();
    let tmp = tempfile::tempdir().unwrap();
    // "b" is the same controller without the fault: the baseline that lets
    // the report count objects lost.
    let text = format!(
        "name = \"fault-controller\"\n{GOOD}\
         [[variant]]\nname = \"b\"\nimpl = \"rust\"\npreset = \"good\"\nwork_ms = 20\nfaults = false\n\
         [[fault]]\nat_s = 1\naction = \"restart\"\ntarget = \"controller\"\nduration_s = 1\n"
    );
    let kc = plane.kubeconfig_path.to_str().unwrap();
    let (run_dir, s, f) = run(tmp.path(), &text, &["--kubeconfig", kc]);
    // The baseline ran without faults; the report counts g's lost against it.
    let base = run_dir.parent().unwrap().parent().unwrap().join("b/rep1");
    assert!(base.join("summary.json").is_file());
    assert!(
        faults::read(&base.join("faults.csv"))
            .unwrap_or_default()
            .is_empty()
    );
    let report =
        std::fs::read_to_string(run_dir.ancestors().nth(3).unwrap().join("report.md")).unwrap();
    let faults_section = report.split("## Faults").nth(1).unwrap();
    let row = faults_section
        .lines()
        .find(|l| l.starts_with('|') && l.contains("restart controller"))
        .unwrap_or_else(|| panic!("no fault row in {faults_section}"));
    let lost = row.trim_end_matches('|').rsplit('|').next().unwrap().trim();
    assert_eq!(lost, "0", "{row}");
    assert_eq!(s.ready, 200, "lost {} objects", s.remaining);
    assert!(s.converged);
    // The planned restart is not an early exit: the run is not flagged.
    assert!(!s.controller_exited_early);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(
        (f[0].action.as_str(), f[0].target.as_str()),
        ("restart", "controller")
    );
    assert!(f[0].outcome.starts_with("ok, restarted as pid"), "{f:?}");
    assert!(f[0].actual_s >= 1.0 && f[0].actual_s < 3.0, "{f:?}");
    // The old and the new controller are both gone.
    assert_gone(&[f[0].pid, restarted_pid(&f[0])]);
}

#[test]
fn plane_faults_on_an_ha_plane_lose_no_acknowledged_create() {
    let tmp = tempfile::tempdir().unwrap();
    // Every fault before the earliest possible end (convergence + quiet_s);
    // a follow-up still pending then (SIGCONT, restart) runs at the end.
    let text = format!(
        "name = \"fault-plane\"\n{GOOD}\
         [cluster]\netcd_fsync = false\netcd_members = 3\napiservers = 2\ncontroller_manager = true\n\
         [[fault]]\nat_s = 0.5\naction = \"restart\"\ntarget = \"etcd:leader\"\nduration_s = 1\n\
         [[fault]]\nat_s = 1\naction = \"kill\"\ntarget = \"apiserver:1\"\n\
         [[fault]]\nat_s = 1.5\naction = \"stop\"\ntarget = \"etcd:follower\"\nduration_s = 1\n\
         [[fault]]\nat_s = 2\naction = \"stop\"\ntarget = \"controller\"\nduration_s = 1\n"
    );
    let (run, s, f) = run(tmp.path(), &text, &[]);
    // Every create the loader saw succeed is Ready: nothing acknowledged was
    // lost (a create in flight on the killed apiserver's connection may fail).
    let objects = ctrlbench_record::objects::read(&run.join("objects.csv")).unwrap();
    let acked: Vec<_> = objects.iter().filter(|o| o.created_at.is_some()).collect();
    assert_eq!(acked.len() as u64, s.load.created);
    assert!(s.load.created + s.load.errors >= 200);
    let lost: Vec<_> = acked
        .iter()
        .filter(|o| o.ready_at.is_none())
        .map(|o| &o.name)
        .collect();
    assert!(lost.is_empty(), "acknowledged but never Ready: {lost:?}");
    // Creates lost to the faults cannot converge; the run ends once what
    // exists is Ready, not at the window's end.
    let want = if s.load.errors > 0 {
        "creates-failed"
    } else {
        "converged"
    };
    assert_eq!(s.stop_reason.as_str(), want, "{:?}", s.load);
    assert_eq!(f.len(), 4, "{f:?}");
    assert!(f[0].resolved.starts_with("etcd:"), "{f:?}");
    assert!(f[0].outcome.starts_with("ok, restarted as pid"), "{f:?}");
    assert_eq!(
        (f[1].resolved.as_str(), f[1].outcome.as_str()),
        ("apiserver:1", "ok")
    );
    assert!(f[2].resolved.starts_with("etcd:"), "{f:?}");
    assert_eq!(f[2].outcome, "ok, continued", "{f:?}");
    assert_eq!(
        (f[3].resolved.as_str(), f[3].outcome.as_str()),
        ("controller", "ok, continued")
    );
    // Per-process files with the leader flag.
    for k in 0..3 {
        let head = std::fs::read_to_string(run.join(format!("etcd-{k}.csv"))).unwrap();
        assert!(head.lines().next().unwrap().contains("is_leader"));
    }
    assert!(run.join("apiserver-1.csv").is_file());
    assert!(!run.join("apiserver.csv").exists());
    // kube-controller-manager ran beside the faults (through the front) and
    // deleted the run's namespace natively; the results say so.
    let results = run.ancestors().nth(3).unwrap();
    let m = ctrlbench_record::Manifest::read(&results.join("manifest.json")).unwrap();
    assert!(m.controller_manager);
    assert!(m.not_cleaned.is_empty(), "{:?}", m.not_cleaned);
    let report = std::fs::read_to_string(results.join("report.md")).unwrap();
    assert!(report.contains("with kube-controller-manager"), "{report}");
    assert_gone(&[f[0].pid, restarted_pid(&f[0]), f[1].pid]);
}
