//! `ctrlbench init --from` on an operator's repository, as a new user runs
//! it: the kubebuilder v4 scaffold in tests/fixtures/memcached-operator
//! gives a file that plans with no edit, and then, on the real local
//! plane, builds the operator (its own `build` step) and brings 50 of its
//! objects to Available. The kube-rs project in tests/fixtures/echo-operator
//! does the same, to all Ready. The kopf operator in
//! tests/fixtures/kopf-operator gives a file that plans from any directory,
//! and, run by the kopf it pins, brings its 50 objects to Ready too.
//! Bad inputs get one error line each and leave nothing behind.

mod common;

use std::path::Path;

use common::project::{
    commit_as_main, copy_fixture, init_in, kopf_fixture, kube_rs_fixture, one_error,
};
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
        e.contains("2 namespaced kinds (Apple, Pear): choose one with --kind"),
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
    let t0 = std::time::Instant::now();
    let text = init_kube_rs(tmp.path());
    // The fixture's Helm chart (templates with `{{- include … | nindent 4 }}`)
    // is skipped, not read forever.
    assert!(
        t0.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        t0.elapsed()
    );
    let fixture = kube_rs_fixture().canonicalize().unwrap();
    for want in [
        "ready = { condition = \"Ready\" }",
        "build = [\"cargo\", \"build\", \"--profile\", \"dev\", \"-p\", \"echo-operator\", \"--bin\", \"echo-operator\"]",
        "{ api_groups = [\"demo.example.com\"], resources = [\"echoes/status\"], verbs = [\"get\", \"patch\", \"update\"] }",
        "cluster_rbac = [\n  { api_groups = [\"demo.example.com\"], resources = [\"echoes\"], verbs = [\"list\", \"watch\"] },\n]",
    ] {
        assert!(text.contains(want), "{want} not in:\n{text}");
    }
    // Every path is relative to the file and leads to the fixture's own
    // files; the program to where cargo builds (scripts/test.sh moves the
    // target directory into the cache).
    let value = |key: &str| -> String {
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("{key} = ")))
            .unwrap_or_else(|| panic!("no {key} in:\n{text}"));
        line.split('"').nth(1).unwrap().to_string()
    };
    for key in ["source", "crd", "object", "build_dir", "command"] {
        assert!(!value(key).starts_with('/'), "{key} is absolute:\n{text}");
    }
    let resolved = |key: &str| tmp.path().join(value(key)).canonicalize().unwrap();
    // The source the findings' likely lines come from.
    assert_eq!(resolved("source"), fixture);
    assert_eq!(resolved("crd"), fixture.join("yaml/echo-crd.yaml"));
    assert_eq!(resolved("object"), fixture.join("yaml/echo-example.yaml"));
    assert_eq!(resolved("build_dir"), fixture);
    let target = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(t) => std::path::PathBuf::from(t),
        None => fixture.join("../../../../../target"),
    }
    .canonicalize()
    .unwrap();
    assert_eq!(
        tmp.path().join(value("command")),
        tmp.path()
            .join(value("command"))
            .parent()
            .unwrap()
            .join("echo-operator")
    );
    assert_eq!(
        tmp.path()
            .join(value("command"))
            .parent()
            .unwrap()
            .canonicalize()
            .unwrap(),
        target.join("debug")
    );
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

/// SIGTERM ends `init` at once, even while it waits on a read (here a
/// role.yaml that is a named pipe no one writes).
#[test]
fn init_ends_on_sigterm_even_mid_read() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = copy_fixture(tmp.path());
    let role = dir.join("config/rbac/role.yaml");
    std::fs::remove_file(&role).unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &role,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let mut child = ctrlbench()
        .current_dir(tmp.path())
        .args(["init", "--from", "memcached-operator"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(
        child.try_wait().unwrap().is_none(),
        "init waits on the pipe"
    );
    let t0 = std::time::Instant::now();
    rustix::process::kill_process(
        rustix::process::Pid::from_child(&child),
        rustix::process::Signal::TERM,
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        t0.elapsed() < std::time::Duration::from_secs(1),
        "{:?}",
        t0.elapsed()
    );
    assert_eq!(out.status.code(), Some(130), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("interrupted"));
    assert!(!tmp.path().join("memcached-operator.toml").exists());
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
    // [workload] source: the likely lines of its source, for the findings.
    let likely = std::fs::read_to_string(dir.join("likely.csv")).unwrap();
    assert!(
        likely.contains(
            "cluster-wide-cache,src/main.rs,57,let echoes: Api<Echo> = Api::all(client.clone());"
        ),
        "{likely}"
    );
}

#[test]
fn a_kopf_operator_gives_a_file_that_plans_unedited_from_anywhere() {
    let tmp = tempfile::tempdir().unwrap();
    let fixture = kopf_fixture();
    let started = std::time::Instant::now();
    let out = init_in(tmp.path(), &["--from", fixture.to_str().unwrap()]);
    let took = started.elapsed();
    assert_success(&out);
    assert!(took.as_secs_f64() < 5.0, "init --from took {took:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("kopf serves no Prometheus metrics"),
        "{stderr}"
    );
    let file = tmp.path().join("kopf-operator.toml");
    let text = std::fs::read_to_string(&file).unwrap();
    for want in [
        "/kopf-operator/crd.yaml\"",
        "/kopf-operator/greeting.yaml\"",
        // greet, the create handler, sets the phase.
        "ready = { jsonpath = \"{.status.phase}\", equals = \"Ready\" }",
        "command = [\"python3\", \"-m\", \"kopf\", \"run\", \"{dir}/",
        "/kopf-operator/handlers.py\", \"--standalone\", \"--namespace={namespace}\"]",
        "pip install -r ",
        "{ api_groups = [\"kopf.example.com\"], resources = [\"greetings/status\"], verbs = [\"patch\"] }",
        "{ api_groups = [\"\"], resources = [\"events\"], verbs = [\"create\"] }",
    ] {
        assert!(text.contains(want), "{want} not in:\n{text}");
    }
    assert!(!text.contains("metrics ="), "{text}");
    // Every path is relative to the file, the handler file's too.
    assert!(!text.contains("\"/"), "an absolute path in:\n{text}");
    let handlers = text
        .split("\"{dir}/")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap();
    assert!(tmp.path().join(handlers).is_file(), "{handlers}");
    // It plans with no edit, run from another directory.
    let elsewhere = tempfile::tempdir().unwrap();
    let out = ctrlbench()
        .current_dir(elsewhere.path())
        .arg("run")
        .arg(&file)
        .arg("--dry-run")
        .output()
        .unwrap();
    assert_success(&out);
}

#[test]
fn other_operators_and_directories_get_one_line_saying_what_to_do() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let dir = |name: &str, files: &[(&str, &str)]| {
        std::fs::create_dir(d.join(name)).unwrap();
        for (path, text) in files {
            std::fs::write(d.join(name).join(path), text).unwrap();
        }
    };
    let project = |layout: &str| {
        format!(
            "domain: example.com\nlayout:\n- {layout}\nprojectName: nginx-operator\nresources:\n\
             - api: {{crdVersion: v1, namespaced: true}}\n  domain: example.com\n  group: demo\n  kind: Nginx\n  version: v1alpha1\nversion: \"3\"\n"
        )
    };
    dir(
        "helm",
        &[("PROJECT", &project("helm.sdk.operatorframework.io/v1"))],
    );
    let e = one_error(&init_in(d, &["--from", "helm"]));
    assert!(
        e.contains("Helm-based operators are not supported by init --from yet"),
        "{e}"
    );
    dir(
        "ansible",
        &[("PROJECT", &project("ansible.sdk.operatorframework.io/v1"))],
    );
    let e = one_error(&init_in(d, &["--from", "ansible"]));
    assert!(
        e.contains("Ansible-based operators are not supported"),
        "{e}"
    );
    // A kopf operator without its CRD.
    dir(
        "no-crd",
        &[(
            "main.py",
            "import kopf\n\n@kopf.on.create('things')\ndef create(**_):\n    pass\n",
        )],
    );
    let e = one_error(&init_in(d, &["--from", "no-crd"]));
    assert!(
        e.contains("no CustomResourceDefinition in the directory's YAML files: add the CRD the kopf handlers serve"),
        "{e}"
    );
    // None of the known kinds: a file to fill in by hand.
    dir("other", &[("main.py", "import os\n"), ("README.md", "x\n")]);
    let e = one_error(&init_in(d, &["--from", "other"]));
    assert!(
        e.contains("no PROJECT file, Cargo.toml or Python file importing kopf")
            && e.contains("`ctrlbench init NAME` writes a file to fill in"),
        "{e}"
    );
    let written: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "toml"))
        .collect();
    assert!(written.is_empty(), "{written:?}");
}

/// `init --from` on the two-kind fixture (tests/fixtures/fleet-operator),
/// timed: the file it wrote for `--kind`.
fn init_fleet(cwd: &Path, kind: &str) -> String {
    common::project::copy_named_fixture(cwd, "fleet-operator");
    let t0 = std::time::Instant::now();
    let out = init_in(cwd, &["--from", "fleet-operator", "--kind", kind]);
    assert!(
        t0.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        t0.elapsed()
    );
    assert_success(&out);
    std::fs::read_to_string(cwd.join("fleet-operator.toml")).unwrap()
}

/// One manager, two kinds: the file for Ship takes its readiness from
/// Ship's own controller and names Crew's CRD in extra_crds, since the
/// manager waits for Crew's cache too; it plans with no edit.
#[test]
fn a_two_kind_manager_gets_the_other_kinds_crd_and_plans_unedited() {
    let tmp = tempfile::tempdir().unwrap();
    let text = init_fleet(tmp.path(), "Ship");
    for want in [
        "crd = \"fleet-operator/config/crd/bases/fleet.example.com_ships.yaml\"",
        "extra_crds = [\n  \"fleet-operator/config/crd/bases/fleet.example.com_crews.yaml\",\n]",
        "object = \"fleet-operator/config/samples/fleet_v1_ship.yaml\"",
        "ready = { condition = \"Ready\" }",
        "internal/controller/ship_controller.go",
    ] {
        assert!(text.contains(want), "{want} not in:\n{text}");
    }
    let out = ctrlbench()
        .current_dir(tmp.path())
        .args(["run", "fleet-operator.toml", "--dry-run"])
        .output()
        .unwrap();
    assert_success(&out);
    assert!(!tmp.path().join("fleet-operator/bin/manager").exists());
}

/// Crew's controller is the scaffold's empty reconcile: no condition to
/// read, so the rule is a TODO, and `run --dry-run` refuses it in one line.
#[test]
fn a_kind_whose_controller_sets_no_condition_gets_a_todo_that_run_refuses() {
    let tmp = tempfile::tempdir().unwrap();
    let text = init_fleet(tmp.path(), "Crew");
    assert!(text.contains("ready = { todo = \""), "{text}");
    assert!(
        text.contains("Crew's controller sets no condition"),
        "{text}"
    );
    assert!(
        text.contains(
            "extra_crds = [\n  \"fleet-operator/config/crd/bases/fleet.example.com_ships.yaml\",\n]"
        ),
        "{text}"
    );
    let out = ctrlbench()
        .current_dir(tmp.path())
        .args(["run", "fleet-operator.toml", "--dry-run"])
        .output()
        .unwrap();
    let e = one_error(&out);
    assert!(e.contains("the readiness rule is still a TODO"), "{e}");
}

/// The slow lane: the two-kind manager built by its `build` step and run
/// on the local plane, N=50 Ships to all Ready with the file as init wrote
/// it. The manager starts only once Crew is served too: ctrlbench installs
/// the CRD that extra_crds names.
#[test]
fn the_two_kind_operator_runs_to_all_ready_with_no_edit() {
    let plane = shared_plane();
    let tmp = tempfile::tempdir().unwrap();
    init_fleet(tmp.path(), "Ship");
    let results = tmp.path().join("results");
    let out = ctrlbench()
        .current_dir(tmp.path())
        // The file repeats until decided; asking nothing, that is 3.
        .args([
            "run",
            "fleet-operator.toml",
            "--no-progress",
            "--repeats",
            "1",
        ])
        .arg("--results")
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
    assert!(m.builds[0].ran);
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(report.contains("apiserver Ship update p99"), "{report}");
}

/// The virtualenv with the kopf the fixture pins, made (or found in the
/// cache) by scripts/kopf-venv.sh. A machine where pip cannot install kopf
/// fails here with the script's own words: skipping would let the test
/// pass having run nothing.
fn kopf_venv() -> std::path::PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/kopf-venv.sh");
    let out = std::process::Command::new("bash")
        .arg(&script)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{} failed ({}):\n{}",
        script.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let venv = std::path::PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
    assert!(venv.join("bin/python").exists(), "{}", venv.display());
    venv
}

/// The slow lane: the kopf fixture run by kopf itself, from the project's
/// own .venv (here a link to the cached one), on the local plane: N=50 to
/// all Ready with the file as init wrote it, and kopf never short of a
/// permission the file's rbac should have granted (it logs that and goes
/// on, so the Ready count alone would not show it).
#[test]
fn the_kopf_operator_runs_to_all_ready_with_no_edit() {
    let venv = kopf_venv();
    let plane = shared_plane();
    let tmp = tempfile::tempdir().unwrap();
    let op = common::project::copy_named_fixture(tmp.path(), "kopf-operator");
    std::os::unix::fs::symlink(&venv, op.join(".venv")).unwrap();
    assert_success(&init_in(tmp.path(), &["--from", "kopf-operator"]));
    let text = std::fs::read_to_string(tmp.path().join("kopf-operator.toml")).unwrap();
    assert!(
        text.contains(
            "command = [\"kopf-operator/.venv/bin/python\", \"-m\", \"kopf\", \"run\", \"{dir}/kopf-operator/handlers.py\""
        ),
        "{text}"
    );
    let results = tmp.path().join("results");
    let out = ctrlbench()
        .current_dir(tmp.path())
        // The file repeats until decided; asking nothing, that is 3.
        .args([
            "run",
            "kopf-operator.toml",
            "--no-progress",
            "--repeats",
            "1",
        ])
        .arg("--results")
        .arg(&results)
        .arg("--kubeconfig")
        .arg(&plane.kubeconfig_path)
        .output()
        .unwrap();
    assert_success(&out);
    let dir = only_results_dir(&results);
    let m = read_manifest(&dir);
    assert_eq!(m.runs[0].ready, 50, "{:?}", m.runs[0]);
    let log = dir.join("N50/kopf-operator/rep1/controller.log");
    let log = std::fs::read_to_string(&log).unwrap_or_else(|e| panic!("{}: {e}", log.display()));
    for refused in ["Not enough permissions", "Forbidden"] {
        assert!(
            !log.contains(refused),
            "{refused} in controller.log:\n{log}"
        );
    }
}
