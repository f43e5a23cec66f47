//! `ctrlbench run --baseline REF` on an operator's repository: the working
//! tree's build against a git ref's in one interleaved, paired run, gated by
//! `--fail-on-regression`. Its verdict is a measurement of time, so this
//! binary runs alone (scripts/test-lanes.py's SERIAL), not beside the lanes'
//! planes. The footprint's A/B, decided on counts, is baseline_footprint.rs.

mod common;

use common::project::{build_commits, commit_as_main, copy_fixture, git, init_in};
use common::{assert_success, ctrlbench, only_results_dir, question, read_manifest, read_verdicts};
use ctrlbench_plane::testing::shared_plane;

/// The slow lane: the working tree against a git ref in one interleaved,
/// paired run. With no change between the refs the gate passes; with a
/// 20 ms sleep per reconcile on a branch, Ready/s is decided lower against
/// `main`, verdicts.json says so and `--fail-on-regression 10%` exits 1.
#[test]
fn a_branch_with_a_sleep_is_decided_slower_than_main_and_gated() {
    let plane = shared_plane();
    let tmp = tempfile::tempdir().unwrap();
    let project = copy_fixture(tmp.path());
    let main = commit_as_main(&project);
    assert_success(&init_in(tmp.path(), &["--from", "memcached-operator"]));
    let ab = |results: &str, repeats: &str| {
        ctrlbench()
            .current_dir(tmp.path())
            .args(["run", "memcached-operator.toml", "--no-progress"])
            .args(["--baseline", "main", "--fail-on-regression", "10%"])
            .args(["--repeats", repeats, "--results", results])
            .arg("--kubeconfig")
            .arg(&plane.kubeconfig_path)
            .output()
            .unwrap()
    };
    // The same tree on both sides: the gate passes and the builds are
    // recorded. One pair: it shows what is recorded, and the gate must
    // not call an unchanged tree worse (a second pair cost 17 s of CI's
    // serial phase and still decides nothing at ±10 %).
    let out = ab("same", "1");
    assert_success(&out);
    println!("{}", String::from_utf8_lossy(&out.stdout));
    let dir = only_results_dir(&tmp.path().join("same"));
    let m = read_manifest(&dir);
    assert_eq!(
        build_commits(&m),
        [main.clone(), main.clone()],
        "{:?}",
        m.builds
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("no decided regression"));
    // The arguments are recorded unfilled, so that the twins are an A/A
    // pair that `ctrlbench calibrate` can read.
    let summary =
        std::fs::read_to_string(dir.join("N50/memcached-operator/rep1/summary.json")).unwrap();
    assert!(
        summary.contains("--metrics-bind-address=127.0.0.1:{port}"),
        "{summary}"
    );
    // A branch whose reconciles each sleep 20 ms.
    git(&project, &["checkout", "-q", "-b", "slow"]);
    let file = project.join("internal/controller/memcached_controller.go");
    let go = std::fs::read_to_string(&file).unwrap();
    let slow = go.replacen(
        "log := logf.FromContext(ctx)\n",
        "log := logf.FromContext(ctx)\n\ttime.Sleep(20 * time.Millisecond)\n",
        1,
    );
    assert_ne!(slow, go);
    std::fs::write(&file, slow).unwrap();
    git(
        &project,
        &["commit", "-q", "-am", "sleep 20 ms per reconcile"],
    );
    let out = ab("slow", "3");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("REGRESSION N=50 Ready/s"), "{stdout}");
    let dir = only_results_dir(&tmp.path().join("slow"));
    let v = read_verdicts(&dir);
    let q = question(&v, "Ready/s", "memcached-operator-baseline");
    assert_eq!(q["b"], "memcached-operator");
    assert_eq!(q["verdict"], "lower", "{q}");
    let m = read_manifest(&dir);
    let head = git(&project, &["rev-parse", "HEAD"]);
    assert_eq!(build_commits(&m), [head, main], "{:?}", m.builds);
}
