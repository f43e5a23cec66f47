//! `ctrlbench init --from` on an operator's repository, as a new user runs
//! it: the kubebuilder v4 scaffold in tests/fixtures/memcached-operator
//! gives a file that plans with no edit, and then, on the real local
//! plane, builds the operator (its own `build` step) and brings 50 of its
//! objects to Available. The kube-rs project in tests/fixtures/echo-operator
//! does the same, to all Ready. Bad inputs get one error line each and
//! leave nothing behind.

mod common;

use std::path::Path;

use common::project::{commit_as_main, copy_fixture, init_in, kube_rs_fixture, one_error};
use common::{assert_success, ctrlbench, only_results_dir, read_manifest};
use ctrlbench_plane::testing::shared_plane;

#[test]
fn a_kubebuilder_project_gives_a_file_that_plans_unedited() {
    let tmp = tempfile::tempdir().unwrap();
    let project = copy_fixture(tmp.path());
    let out = init_in(tmp.path(), &["--from", "memcached-operator"]);
    assert_success(&out);
    let file = tmp.path().join("memcached-operator.toml");
    let text = std::fs::read_to_string(&file).unwrap();
    // What the scaffold says, each from its own file.
    for want in [
        "crd = \"memcached-operator/config/crd/bases/cache.example.com_memcacheds.yaml\"",
        "object = \"memcached-operator/config/samples/cache_v1alpha1_memcached.yaml\"",
        "ready = { condition = \"Available\" }",
        "build = [\"go\", \"build\", \"-o\", \"bin/manager\", \"./cmd\"]",
        "\"--metrics-bind-address=127.0.0.1:{port}\", \"--metrics-secure=false\"",
        "{ api_groups = [\"cache.example.com\"], resources = [\"memcacheds/status\"], verbs = [\"get\", \"patch\", \"update\"] }",
        "{ api_groups = [\"apps\"], resources = [\"deployments\"], verbs = [\"list\", \"watch\"] }",
        "lease = \"1a9f0645.example.com\"",
        // `run --baseline` must be able to decide a 10 % change.
        "repeats = \"auto\"",
    ] {
        assert!(text.contains(want), "{want} not in:\n{text}");
    }
    // The cluster-wide grant holds no writes and no subresources.
    let cluster = text.split("cluster_rbac = [").nth(1).unwrap();
    assert!(
        !cluster.contains("create") && !cluster.contains("/status"),
        "{cluster}"
    );
    // Never overwritten.
    let again = init_in(tmp.path(), &["--from", "memcached-operator"]);
    assert!(one_error(&again).contains("never overwrites"));
    // It plans with no edit, and the plan builds nothing.
    let out = ctrlbench()
        .current_dir(tmp.path())
        .args(["run", "memcached-operator.toml", "--dry-run"])
        .output()
        .unwrap();
    assert_success(&out);
    assert!(!project.join("bin/manager").exists());
}

#[test]
fn bad_projects_and_builds_get_one_line_and_leave_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // No PROJECT file.
    std::fs::create_dir(d.join("empty")).unwrap();
    let e = one_error(&init_in(d, &["--from", "empty"]));
    assert!(e.contains("no PROJECT file"), "{e}");
    // Two kinds and no --kind.
    std::fs::create_dir(d.join("two")).unwrap();
    std::fs::write(
        d.join("two/PROJECT"),
        "domain: example.com\nprojectName: two\nresources:\n\
         - api: {namespaced: true}\n  group: a\n  kind: Apple\n  version: v1\n\
         - api: {namespaced: true}\n  group: a\n  kind: Pear\n  version: v1\n",
    )
    .unwrap();
    let e = one_error(&init_in(d, &["--from", "two"]));
    assert!(
        e.contains("2 kinds (Apple, Pear): choose one with --kind"),
        "{e}"
    );
    let e = one_error(&init_in(d, &["--from", "two", "--kind", "Plum"]));
    assert!(e.contains("no kind \"Plum\""), "{e}");
    let project = copy_fixture(d);
    assert_success(&init_in(d, &["--from", "memcached-operator"]));
    let results = d.join("results");
    // A baseline ref that does not exist, and one outside any repository.
    let baseline = |r: &str| {
        ctrlbench()
            .current_dir(d)
            .args([
                "run",
                "memcached-operator.toml",
                "--no-progress",
                "--baseline",
                r,
            ])
            .arg("--results")
            .arg(&results)
            .output()
            .unwrap()
    };
    let e = one_error(&baseline("main"));
    assert!(e.contains("is not in a git repository"), "{e}");
    commit_as_main(&project);
    let e = one_error(&baseline("no-such-branch"));
    assert!(e.contains("no commit \"no-such-branch\""), "{e}");
    assert!(!results.exists(), "a bad ref leaves no results");
    assert!(!project.join("bin").exists());
    // A build that fails: its last lines, before any plane or results.
    let file = d.join("memcached-operator.toml");
    let text = std::fs::read_to_string(&file).unwrap().replace(
        "build = [\"go\", \"build\", \"-o\", \"bin/manager\", \"./cmd\"]",
        "build = [\"sh\", \"-c\", \"echo compiling; echo 'cmd/main.go:3: undefined: x' >&2; exit 2\"]",
    );
    std::fs::write(&file, text).unwrap();
    let out = ctrlbench()
        .current_dir(d)
        .args([
            "run",
            "memcached-operator.toml",
            "--no-progress",
            "--results",
        ])
        .arg(&results)
        .output()
        .unwrap();
    let e = one_error(&out);
    assert!(
        e.contains("failed") && e.contains("cmd/main.go:3: undefined: x"),
        "{e}"
    );
    assert!(!results.exists(), "a failed build leaves no results");
    assert!(!project.join("bin").exists());
}

/// The slow lane: the operator built by its `build` step and run on the
/// local plane, N=50 to all Available with the file as init wrote it; a
/// second run finds the build done.
#[test]
fn the_fixture_operator_runs_to_all_ready_with_no_edit() {
    let plane = shared_plane();
    let tmp = tempfile::tempdir().unwrap();
    copy_fixture(tmp.path());
    assert_success(&init_in(tmp.path(), &["--from", "memcached-operator"]));
    let results = tmp.path().join("results");
    let run = |results: &Path| {
        let out = ctrlbench()
            .current_dir(tmp.path())
            .args([
                "run",
                "memcached-operator.toml",
                "--no-progress",
                // The file repeats until decided; asking nothing, that is 3.
                "--repeats",
                "1",
                "--results",
            ])
            .arg(results)
            .arg("--kubeconfig")
            .arg(&plane.kubeconfig_path)
            .output()
            .unwrap();
        assert_success(&out);
        only_results_dir(results)
    };
    let dir = run(&results);
    let m = read_manifest(&dir);
    let s = &m.runs[0];
    assert_eq!(s.ready, 50, "{s:?}");
    assert_eq!(m.builds.len(), 1);
    assert!(m.builds[0].ran);
    assert_eq!(m.builds[0].program_sha256.len(), 64);
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(
        report.contains("apiserver Memcached update p99"),
        "the server-side figures name the workload's kind"
    );
    // Unchanged tree: the build is not run again.
    let dir = run(&tmp.path().join("results-2"));
    let m2 = read_manifest(&dir);
    assert!(!m2.builds[0].ran);
    assert_eq!(m2.builds[0].program_sha256, m.builds[0].program_sha256);
}

/// init --from on the kube-rs fixture, built with the dev profile so that
/// its build is the one the tests already made.
fn init_kube_rs(cwd: &Path) -> String {
    let fixture = kube_rs_fixture();
    let out = init_in(
        cwd,
        &[
            "--from",
            fixture.to_str().unwrap(),
            "--cargo-profile",
            "dev",
        ],
    );
    assert_success(&out);
    // What it could not know is said, not guessed.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no metrics URL"), "{stderr}");
    std::fs::read_to_string(cwd.join("echo-operator.toml")).unwrap()
}

#[test]
fn a_kube_rs_project_gives_a_file_that_plans_unedited() {
    let tmp = tempfile::tempdir().unwrap();
    let text = init_kube_rs(tmp.path());
    let fixture = kube_rs_fixture().canonicalize().unwrap();
    // Where cargo builds: the workspace's target/, unless the environment
    // moves it (scripts/test.sh keeps it in the cache).
    let target = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(t) => std::path::PathBuf::from(t),
        None => fixture.join("../../../../../target"),
    }
    .canonicalize()
    .unwrap();
    for want in [
        format!("crd = \"{}/yaml/echo-crd.yaml\"", fixture.display()),
        format!("object = \"{}/yaml/echo-example.yaml\"", fixture.display()),
        "ready = { condition = \"Ready\" }".into(),
        "build = [\"cargo\", \"build\", \"--profile\", \"dev\", \"-p\", \"echo-operator\", \"--bin\", \"echo-operator\"]".into(),
        format!("command = [\"{}/debug/echo-operator\"]", target.display()),
        "{ api_groups = [\"demo.example.com\"], resources = [\"echoes/status\"], verbs = [\"get\", \"patch\", \"update\"] }".into(),
        "cluster_rbac = [\n  { api_groups = [\"demo.example.com\"], resources = [\"echoes\"], verbs = [\"list\", \"watch\"] },\n]".into(),
    ] {
        assert!(text.contains(&want), "{want} not in:\n{text}");
    }
    let out = ctrlbench()
        .current_dir(tmp.path())
        .args(["run", "echo-operator.toml", "--dry-run"])
        .output()
        .unwrap();
    assert_success(&out);
    // Without --cargo-profile the build is a release one.
    let other = tempfile::tempdir().unwrap();
    let out = init_in(other.path(), &["--from", fixture.to_str().unwrap()]);
    assert_success(&out);
    let text = std::fs::read_to_string(other.path().join("echo-operator.toml")).unwrap();
    assert!(text.contains("\"--profile\", \"release\""), "{text}");
    assert!(text.contains("/release/echo-operator\"]"), "{text}");
}

#[test]
fn cargo_packages_that_are_not_kube_rs_projects_get_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let package = |name: &str, deps: &str| {
        std::fs::create_dir_all(d.join(name).join("src")).unwrap();
        std::fs::write(
            d.join(name).join("Cargo.toml"),
            format!(
                "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n{deps}"
            ),
        )
        .unwrap();
        std::fs::write(d.join(name).join("src/main.rs"), "fn main() {}\n").unwrap();
    };
    package("plain", "");
    let e = one_error(&init_in(d, &["--from", "plain"]));
    assert!(e.contains("does not depend on kube"), "{e}");
    package("no-crd", "kube = \"5\"\n");
    let e = one_error(&init_in(d, &["--from", "no-crd"]));
    assert!(e.contains("no CustomResourceDefinition"), "{e}");
    assert!(!d.join("plain.toml").exists() && !d.join("no-crd.toml").exists());
}

/// The slow lane: the kube-rs operator built by its `build` step and run on
/// the local plane, N=50 to all Ready with the file as init wrote it.
#[test]
fn the_kube_rs_operator_runs_to_all_ready_with_no_edit() {
    let plane = shared_plane();
    let tmp = tempfile::tempdir().unwrap();
    init_kube_rs(tmp.path());
    let results = tmp.path().join("results");
    let out = ctrlbench()
        .current_dir(tmp.path())
        .args(["run", "echo-operator.toml", "--no-progress"])
        // The file repeats until decided; asking nothing, that is 3.
        .args(["--repeats", "1", "--results"])
        .arg(&results)
        .arg("--kubeconfig")
        .arg(&plane.kubeconfig_path)
        .output()
        .unwrap();
    assert_success(&out);
    let dir = only_results_dir(&results);
    let m = read_manifest(&dir);
    assert_eq!(m.runs[0].ready, 50, "{:?}", m.runs[0]);
    assert_eq!(m.builds.len(), 1);
    assert_eq!(m.builds[0].program_sha256.len(), 64);
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(report.contains("apiserver Echo update p99"), "{report}");
}
