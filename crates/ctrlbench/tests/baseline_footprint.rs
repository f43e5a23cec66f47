//! The footprint's A/B on an operator's repository: `run --baseline` decides
//! a change in what the operator asks of the API server from one repeat.
//! Its verdict rests on counts from the plane's audit log, which load on
//! the machine does not move, so this binary runs in a test lane
//! (scripts/test-lanes.py), unlike baseline.rs's verdict on time.

mod common;

use common::project::{commit_as_main, copy_fixture, git, init_in};
use common::{assert_success, ctrlbench, only_results_dir, question, read_verdicts};

/// The footprint's A/B: a branch that adds one uncached GET per reconcile
/// (the manager's API reader, as operators do to read their own writes).
/// From ONE repeat, requests per object is decided higher against `main`,
/// `--fail-on-regression 5%` exits 1, and the diagnosis names the uncached
/// read on the branch's variant only. On a plane of its own, whose audit
/// log names every request (an existing cluster has only the client's
/// counter, and no diagnosis).
#[test]
fn a_branch_with_an_uncached_get_is_decided_to_ask_more_from_one_repeat() {
    let tmp = tempfile::tempdir().unwrap();
    let project = copy_fixture(tmp.path());
    commit_as_main(&project);
    assert_success(&init_in(tmp.path(), &["--from", "memcached-operator"]));
    git(&project, &["checkout", "-q", "-b", "reader"]);
    let edit = |path: &str, from: &str, to: &str| {
        let file = project.join(path);
        let text = std::fs::read_to_string(&file).unwrap();
        let changed = text.replacen(from, to, 1);
        assert_ne!(changed, text, "{path} has no {from:?}");
        std::fs::write(&file, changed).unwrap();
    };
    edit(
        "internal/controller/memcached_controller.go",
        "\tRecorder events.EventRecorder\n}",
        "\tRecorder events.EventRecorder\n\tAPIReader client.Reader\n}",
    );
    edit(
        "internal/controller/memcached_controller.go",
        "\terr := r.Get(ctx, req.NamespacedName, memcached)\n",
        "\terr := r.APIReader.Get(ctx, req.NamespacedName, memcached)\n",
    );
    edit(
        "cmd/main.go",
        "\t\tClient:   mgr.GetClient(),\n",
        "\t\tClient:   mgr.GetClient(),\n\t\tAPIReader: mgr.GetAPIReader(),\n",
    );
    git(
        &project,
        &["commit", "-q", "-am", "read the object past the cache"],
    );
    let out = ctrlbench()
        .current_dir(tmp.path())
        .args(["run", "memcached-operator.toml", "--no-progress"])
        .args(["--baseline", "main", "--fail-on-regression", "5%"])
        .args(["--repeats", "1", "--results", "reader"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    assert_eq!(
        out.status.code(),
        Some(1),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("REGRESSION N=50 requests per object"),
        "{stdout}"
    );
    let dir = only_results_dir(&tmp.path().join("reader"));
    let v = read_verdicts(&dir);
    let q = question(&v, "requests per object", "memcached-operator-baseline");
    assert_eq!(q["verdict"], "higher", "{q}");
    let uncached: Vec<&str> = v["diagnosis"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "uncached-reads")
        .map(|f| f["variant"].as_str().unwrap())
        .collect();
    assert_eq!(uncached, ["memcached-operator"], "{}", v["diagnosis"]);
}
