//! `run --dry-run` as a new user meets it: an empty cache (HOME and
//! XDG_CACHE_HOME a fresh directory), KUBEBUILDER_ASSETS unset and no Go on
//! PATH. It must count every build the first run would do, exit 0, and
//! leave the cache, the temporary directory and the working directory as it
//! found them; with `--baseline` it names the tree it would export and
//! exports none. No plane is started: these run beside anything.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::project::{commit_as_main, copy_fixture, git};

/// A fresh user's directories, and ctrlbench alone in a directory of its
/// own, so that no widget-controller lies beside it and the Rust
/// controller's build is counted whatever this checkout has built.
struct User {
    _tmp: tempfile::TempDir,
    exe: PathBuf,
    /// PATH: git alone (no Go, no cargo).
    tools: PathBuf,
    home: PathBuf,
    tmpdir: PathBuf,
    work: PathBuf,
}

impl User {
    fn new() -> User {
        // Under the target directory: a hard link to the binary needs the same file system.
        let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let dir = |name: &str| {
            let d = tmp.path().join(name);
            std::fs::create_dir(&d).unwrap();
            d
        };
        let exe = dir("bin").join("ctrlbench");
        let built = Path::new(env!("CARGO_BIN_EXE_ctrlbench"));
        if std::fs::hard_link(built, &exe).is_err() {
            std::fs::copy(built, &exe).unwrap();
        }
        let tools = dir("tools");
        std::os::unix::fs::symlink(which("git"), tools.join("git")).unwrap();
        User {
            exe,
            tools,
            home: dir("home"),
            tmpdir: dir("tmp"),
            work: dir("work"),
            _tmp: tmp,
        }
    }

    /// ctrlbench in the working directory, with this user's environment.
    fn ctrlbench(&self, args: &[&str]) -> Output {
        let mut c = Command::new(&self.exe);
        for var in [
            "KUBEBUILDER_ASSETS",
            "TEST_ASSET_ETCD",
            "TEST_ASSET_KUBE_APISERVER",
            "TEST_ASSET_KUBE_CONTROLLER_MANAGER",
            "TEST_ASSET_KUBE_SCHEDULER",
            "CTRLBENCH_WIDGET_CONTROLLER",
        ] {
            c.env_remove(var);
        }
        c.env("HOME", &self.home)
            .env("XDG_CACHE_HOME", self.home.join(".cache"))
            .env("XDG_STATE_HOME", self.home.join(".local/state"))
            .env("TMPDIR", &self.tmpdir)
            .env("PATH", &self.tools)
            .current_dir(&self.work)
            .args(args)
            .output()
            .unwrap()
    }

    /// Asserts that HOME and TMPDIR hold nothing at all.
    #[track_caller]
    fn assert_nothing_written(&self) {
        for d in [&self.home, &self.tmpdir] {
            let left = walk(d);
            assert!(left.is_empty(), "the dry run wrote {left:?}");
        }
    }
}

/// `tool` on this process's PATH.
fn which(tool: &str) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{tool} is not on PATH"))
}

/// Every file and directory under `d`.
fn walk(d: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(d).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        }
        out.push(p);
    }
    out
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `quick` on an empty cache: etcd, kube-apiserver, the Go controller (one
/// build for its two variants) and the Rust controller are counted at
/// their measured minutes, Go's absence is a note, and nothing is written.
#[test]
fn quick_on_an_empty_cache_counts_its_builds_and_writes_nothing() {
    let u = User::new();
    let out = u.ctrlbench(&["run", "quick", "--dry-run"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let v = ctrlbench_plane::DEFAULT_K8S_VERSION;
    let etcd = ctrlbench_plane::binaries::etcd_version(v);
    for line in [
        format!("etcd {etcd} (for Kubernetes {v})"),
        format!("kube-apiserver {v}"),
        "the Go controller (controller-runtime v0.18.4)".to_string(),
        "the Rust controller (cargo build -p widget-controller)".to_string(),
    ] {
        let listed = stdout
            .lines()
            .filter(|l| l.contains(&line) && l.ends_with(" min"))
            .count();
        assert_eq!(listed, 1, "{line} once in:\n{stdout}");
    }
    // 1.6 + 5.3 + 0.5 + 0.5: neither KWOK nor the node binaries (no nodes).
    assert!(
        stdout.contains(", builds 7.9 min (first use only)"),
        "{stdout}"
    );
    assert!(!stdout.contains("KWOK") && !stdout.contains("kube-scheduler"));
    assert!(
        stdout.contains("note: Go is not installed: building etcd"),
        "{stdout}"
    );
    u.assert_nothing_written();
    assert!(walk(&u.work).is_empty(), "no results directory");
}

/// `--baseline HEAD --dry-run` on an operator's repository: the tree it
/// would export is named, both operator builds are counted, and no tree,
/// worktree, build or results directory is made.
#[test]
fn a_baseline_dry_run_exports_no_tree() {
    let u = User::new();
    let project = copy_fixture(&u.work);
    let head = commit_as_main(&project);
    let init = u.ctrlbench(&["init", "--from", "memcached-operator"]);
    assert!(init.status.success(), "{}", text(&init).1);
    let out = u.ctrlbench(&[
        "run",
        "memcached-operator.toml",
        "--baseline",
        "HEAD",
        "--dry-run",
    ]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stderr.contains(&format!(
            "baseline: memcached-operator-baseline would be memcached-operator built from HEAD ({})",
            &head[..12]
        )) && stderr.contains("(not in a dry run)"),
        "{stderr}"
    );
    for variant in ["memcached-operator", "memcached-operator-baseline"] {
        assert!(
            stdout.contains(&format!("`go build -o bin/manager ./cmd` for {variant} ")),
            "{variant}'s build in:\n{stdout}"
        );
    }
    assert!(
        stdout.contains("note: Go is not installed: building")
            && stdout.contains("for memcached-operator-baseline needs Go"),
        "{stdout}"
    );
    u.assert_nothing_written();
    let worktrees = git(&project, &["worktree", "list", "--porcelain"]);
    assert_eq!(
        worktrees
            .lines()
            .filter(|l| l.starts_with("worktree "))
            .count(),
        1,
        "{worktrees}"
    );
    assert!(!project.join("bin").exists(), "nothing was built");
    let mut left: Vec<String> = std::fs::read_dir(&u.work)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["memcached-operator", "memcached-operator.toml"]);
}
