//! `run --dry-run` as a new user meets it: an empty cache (HOME and
//! XDG_CACHE_HOME a fresh directory), KUBEBUILDER_ASSETS unset and no Go on
//! PATH. It must count every build the first run would do, exit 0, and
//! leave the cache, the temporary directory and the working directory as it
//! found them; with `--baseline` it names the tree it would export and
//! exports none. `--grow` prints the scales it picked, round-major, and
//! what the plan can decide; its bad flags are one line each. No plane is
//! started: these run beside anything.

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
        self.ctrlbench_with(args, &[])
    }

    /// [`User::ctrlbench`] with these variables set as well.
    fn ctrlbench_with(&self, args: &[&str], vars: &[(&str, &str)]) -> Output {
        let mut c = Command::new(&self.exe);
        for var in [
            "KUBEBUILDER_ASSETS",
            "TEST_ASSET_ETCD",
            "TEST_ASSET_KUBE_APISERVER",
            "TEST_ASSET_KUBE_CONTROLLER_MANAGER",
            "TEST_ASSET_KUBE_SCHEDULER",
            "CTRLBENCH_WIDGET_CONTROLLER",
            // The test command sets these; a new user has neither.
            "CTRLBENCH_OFFLINE",
            "CTRLBENCH_MIRROR",
        ] {
            c.env_remove(var);
        }
        c.envs(vars.iter().copied());
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

/// "4 min 5 s" → 245.
fn minutes_s(t: &str) -> u64 {
    let w: Vec<u64> = t
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    w[0] * 60 + w[1]
}

/// 245 → "4 min 5 s".
fn min_s(s: u64) -> String {
    format!("{} min {} s", s / 60, s % 60)
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
    // 1.6 + 5.3 + 1.5 + 0.6: neither KWOK nor the node binaries (no nodes).
    assert!(
        stdout.contains(", builds 9.0 min (first use only)"),
        "{stdout}"
    );
    // Where etcd and kube-apiserver download: 9.0 − 6.9 = 2.1 min of builds.
    let runs = stdout
        .lines()
        .find_map(|l| l.split_once(": runs ").map(|(_, r)| r.to_string()))
        .unwrap();
    let runs_s = minutes_s(runs.split(", builds").next().unwrap());
    assert!(
        stdout.contains(&format!(
            "where the plane's binaries download instead: at most {} and the download",
            min_s(runs_s + 126)
        )),
        "{stdout}"
    );
    // Offline, nothing downloads: no such line, and the note says so.
    let off = u.ctrlbench_with(
        &["run", "quick", "--dry-run"],
        &[("CTRLBENCH_OFFLINE", "1")],
    );
    let (off_out, off_err) = text(&off);
    assert_eq!(off.status.code(), Some(0), "{off_out}\n{off_err}");
    assert!(!off_out.contains("download instead"), "{off_out}");
    assert!(
        off_out.contains("note: etcd, kube-apiserver: built, not downloaded (offline)"),
        "{off_out}"
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

/// A file with scales of its own (which --grow replaces) and a growth
/// margin, in the user's working directory.
fn grow_file(u: &User, growth_margin: &str) -> String {
    std::fs::write(
        u.work.join("g.toml"),
        format!(
            "name = \"g\"\nscales = [50, 500]\n{growth_margin}window_s = 10\n[[variant]]\nname = \"a\"\npreset = \"good\"\n"
        ),
    )
    .unwrap();
    "g.toml".into()
}

/// `--grow --max-n 10000`: four scales from 100 (the file's 50 is below
/// it) to 10 000, two rounds each visiting every scale before the next,
/// the estimate and the smallest exponent difference it can decide; the
/// file's growth margin is the one printed; nothing is written.
#[test]
fn a_grown_plan_is_printed_round_by_round_and_nothing_is_written() {
    let u = User::new();
    let file = grow_file(&u, "growth_margin = 0.2\n");
    let out = u.ctrlbench(&["run", &file, "--grow", "--max-n", "10000", "--dry-run"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    for line in [
        "grow: 4 scales, N = 100, 460, 2200, 10 000 (geometric, 100×), 2 rounds, each round visiting every scale before the next starts",
        "grow: the largest N, 10 000, set by --max-n",
        "grow: the runs take about 3.0 min by the plan's estimate",
        "grow: the smallest exponent difference it can decide: 0.18 (",
        "the growth margin δ is 0.2",
    ] {
        assert!(stdout.contains(line), "{line} in:\n{stdout}");
    }
    // "  N=100    rep 1  a": the scale and the round of each run, in order.
    let runs: Vec<String> = stdout
        .lines()
        .filter(|l| l.trim_start().starts_with("N="))
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            format!("{}/{}", w[0], w[2])
        })
        .collect();
    assert_eq!(
        runs,
        [
            "N=100/1",
            "N=460/1",
            "N=2200/1",
            "N=10000/1",
            "N=100/2",
            "N=460/2",
            "N=2200/2",
            "N=10000/2"
        ],
        "{stdout}"
    );
    u.assert_nothing_written();
    let left: Vec<PathBuf> = walk(&u.work);
    assert_eq!(left, [u.work.join("g.toml")], "no results directory");
}

/// Every wrong use of --grow: one `error:` line saying what to do, exit 1,
/// nothing on stdout and nothing written. A `scales` list in the file is
/// not one of them (the test above).
#[test]
fn each_wrong_grow_is_one_line_and_a_non_zero_exit() {
    let u = User::new();
    let file = grow_file(&u, "");
    for (args, want) in [
        (
            &["--grow", "--scales", "100,1000"][..],
            "error: --grow picks the scales itself: drop --scales",
        ),
        (
            &["--max-n", "5000"],
            "error: --max-n 5000: it bounds the scales --grow picks; add --grow",
        ),
        (
            &["--budget-minutes", "3"],
            "error: --budget-minutes 3: it bounds the scales --grow picks; add --grow",
        ),
        (
            &["--grow", "--max-n", "999"],
            "error: --max-n 999: under 10× the smallest scale (100), so no 10× range to fit; give --max-n 1000 or more",
        ),
        (
            &["--grow", "--max-n", "1000001"],
            "error: --max-n 1000001: at most 1 000 000 objects per run",
        ),
        (
            &["--grow", "--budget-minutes", "0.2"],
            "error: --grow: the smallest plan, 4 scales over N = 100–1000 in 2 rounds, takes about 3 min by the plan's estimate, beyond the budget of 0.2 min; give --budget-minutes 3 or more",
        ),
        (
            &["--grow", "--max-n", "100000", "--budget-minutes", "3"],
            "error: --max-n 100000: the plan takes about",
        ),
        (
            &["--grow", "--until-decided"],
            "error: --grow runs a fixed number of rounds across the scales: drop --until-decided",
        ),
        (
            &["--grow", "--repeats", "1"],
            "error: --repeats 1: --grow needs at least 2 rounds",
        ),
    ] {
        let mut argv = vec!["run", file.as_str(), "--dry-run"];
        argv.extend(args);
        let out = u.ctrlbench(&argv);
        let (stdout, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stdout}\n{stderr}");
        assert!(stdout.is_empty(), "{args:?}: {stdout}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with(want), "{args:?}: {stderr}");
    }
    // The growth margin's bounds are the file's, with its line.
    let file = grow_file(&u, "growth_margin = 0.5\n");
    let out = u.ctrlbench(&["run", &file, "--grow", "--dry-run"]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "g.toml:3: key `growth_margin`: must be more than 0 and less than 0.5, not 0.5"
        ),
        "{stderr}"
    );
    u.assert_nothing_written();
}
