//! Bad input, as a careful user meets it: experiment files, kubeconfigs,
//! flags and results directories that are wrong in one way each. Every case
//! must end with one clear `error:` line on stderr, a non-zero exit, no
//! results directory and no process left running. Prints the table (case →
//! error line) for the record.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use ctrlbench_plane::testing::shared_plane;

const GOOD_VARIANT: &str = "[[variant]]\nname = \"a\"\nimpl = \"rust\"\npreset = \"good\"\n";

fn experiment(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(format!("{name}.toml"));
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

fn exp_with(dir: &Path, name: &str, top: &str, variant_extra: &str) -> String {
    experiment(
        dir,
        name,
        &format!("name = \"t\"\nscales = [5]\nwindow_s = 5\n{top}{GOOD_VARIANT}{variant_extra}"),
    )
}

/// Processes whose command line mentions `needle`.
fn processes_mentioning(needle: &str) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|s| s.parse::<u32>().is_ok())
        })
        .filter(|e| {
            std::fs::read(e.path().join("cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(needle))
        })
        .count()
}

#[test]
fn every_bad_input_gets_one_error_line_and_leaves_nothing() {
    let plane = shared_plane();
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let results = d.join("results");

    // A server that accepts connections and never answers.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_port = silent.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for c in silent.incoming() {
            held.push(c);
        }
    });
    let mut kc = plane.kubeconfig.clone();
    kc.clusters[0].cluster.as_mut().unwrap().server =
        Some(format!("https://127.0.0.1:{silent_port}"));
    let silent_kc = d.join("silent.kubeconfig");
    std::fs::write(&silent_kc, serde_saphyr::to_string(&kc).unwrap()).unwrap();
    // The real plane, but a CA that did not sign its certificate.
    let mut kc = plane.kubeconfig.clone();
    let other_ca = rcgen::generate_simple_self_signed(vec!["127.0.0.1".into()])
        .unwrap()
        .cert
        .pem();
    kc.clusters[0]
        .cluster
        .as_mut()
        .unwrap()
        .certificate_authority_data = Some(base64::Engine::encode(
        &base64::engine::general_purpose::STANDARD,
        other_ca,
    ));
    let wrong_ca_kc = d.join("wrong-ca.kubeconfig");
    std::fs::write(&wrong_ca_kc, serde_saphyr::to_string(&kc).unwrap()).unwrap();
    let garbage_kc = d.join("garbage.kubeconfig");
    std::fs::write(&garbage_kc, "{{{ this is : not: a kubeconfig").unwrap();
    let real_kc = plane.kubeconfig_path.display().to_string();
    let good = exp_with(d, "good", "", "");
    let not_results = d.join("not-results");
    std::fs::create_dir_all(&not_results).unwrap();

    let not_utf8 = d.join("latin1.toml");
    std::fs::write(&not_utf8, b"name = \"caf\xe9\"\nscales = [5]\n").unwrap();
    let not_executable = d.join("operator");
    std::fs::write(&not_executable, "#!/bin/sh\n").unwrap();
    let a_file = d.join("a-file");
    std::fs::write(&a_file, "x").unwrap();
    let command = |name: &str, program: &str| {
        experiment(
            d,
            name,
            &format!(
                "name = \"t\"\nscales = [5]\n[[variant]]\nname = \"mine\"\nimpl = \"command\"\ncommand = [{program:?}]\n"
            ),
        )
    };
    let spy = BuildSpy::new(d);
    let fresh = FreshHome::new(d);
    let cache_before = fresh.cache_files();

    let s = |x: &str| x.to_string();
    let cases: Vec<(&str, Vec<String>)> = vec![
        ("not UTF-8", vec![s("run"), not_utf8.display().to_string()]),
        (
            "work_ms beyond the window",
            vec![s("run"), exp_with(d, "work", "", "work_ms = 6000\n")],
        ),
        (
            "Kubernetes version not served",
            vec![
                s("run"),
                exp_with(d, "k99", "[cluster]\nk8s_version = \"1.99.0\"\n", ""),
            ],
        ),
        (
            "unknown feature gate",
            vec![
                s("run"),
                exp_with(
                    d,
                    "gate",
                    "[cluster]\nfeature_gates = [\"NoSuchGate=true\"]\n",
                    "",
                ),
            ],
        ),
        (
            "command program missing",
            vec![s("run"), command("cmd-missing", "./no-such-operator")],
        ),
        (
            "command program not executable",
            vec![s("run"), command("cmd-noexec", "./operator")],
        ),
        (
            "results under a file",
            vec![
                s("run"),
                good.clone(),
                s("--results"),
                a_file.join("results").display().to_string(),
            ],
        ),
        (
            "unknown context, dry run",
            vec![
                s("run"),
                good.clone(),
                s("--dry-run"),
                s("--kubeconfig"),
                real_kc.clone(),
                s("--context"),
                s("nope"),
            ],
        ),
        (
            "unknown key",
            vec![s("run"), exp_with(d, "k", "repeets = 2\n", "")],
        ),
        (
            "empty scales",
            vec![
                s("run"),
                experiment(
                    d,
                    "s0",
                    &format!("name = \"t\"\nscales = []\n{GOOD_VARIANT}"),
                ),
            ],
        ),
        (
            "scale 0",
            vec![
                s("run"),
                experiment(
                    d,
                    "s1",
                    &format!("name = \"t\"\nscales = [0]\n{GOOD_VARIANT}"),
                ),
            ],
        ),
        (
            "negative window",
            vec![
                s("run"),
                experiment(
                    d,
                    "w0",
                    &format!("name = \"t\"\nscales = [5]\nwindow_s = -1\n{GOOD_VARIANT}"),
                ),
            ],
        ),
        (
            "window 1e20",
            vec![
                s("run"),
                experiment(
                    d,
                    "w1",
                    &format!("name = \"t\"\nscales = [5]\nwindow_s = 1e20\n{GOOD_VARIANT}"),
                ),
            ],
        ),
        (
            "objects etcd cannot hold",
            vec![
                s("run"),
                experiment(
                    d,
                    "big",
                    &format!(
                        "name = \"t\"\nscales = [20000]\nobject_bytes = 1048576\n{GOOD_VARIANT}"
                    ),
                ),
            ],
        ),
        (
            "replicas 0",
            vec![s("run"), exp_with(d, "r0", "", "replicas = 0\n")],
        ),
        (
            "replicas 33",
            vec![s("run"), exp_with(d, "r33", "", "replicas = 33\n")],
        ),
        (
            "leader fault without election",
            vec![
                s("run"),
                exp_with(
                    d,
                    "le",
                    "",
                    "replicas = 2\n[[fault]]\nat_s = 1\naction = \"kill\"\ntarget = \"controller:leader\"\n",
                ),
            ],
        ),
        (
            "election off on an electing preset",
            vec![
                s("run"),
                experiment(
                    d,
                    "le-off",
                    "name = \"t\"\nscales = [5]\n[[variant]]\nname = \"v\"\npreset = \"leader-election\"\nleader_election = false\n",
                ),
            ],
        ),
        (
            "unknown allocator",
            vec![
                s("run"),
                exp_with(d, "alloc", "", "allocator = \"tcmalloc\"\n"),
            ],
        ),
        (
            "concurrency 5000",
            vec![s("run"), exp_with(d, "c", "concurrency = 5000\n", "")],
        ),
        (
            "decoys beyond the bound",
            vec![
                s("run"),
                exp_with(d, "decoys", "[workload]\ndecoys = 100001\n", ""),
            ],
        ),
        (
            "negative decoys",
            vec![
                s("run"),
                exp_with(d, "decoys-neg", "[workload]\ndecoys = -1\n", ""),
            ],
        ),
        (
            "unknown schedule",
            vec![
                s("run"),
                exp_with(d, "sch", "schedule = \"parallel\"\n", ""),
            ],
        ),
        (
            "unknown preset",
            vec![
                s("run"),
                experiment(
                    d,
                    "p",
                    "name = \"t\"\nscales = [5]\n[[variant]]\nname = \"a\"\npreset = \"great\"\n",
                ),
            ],
        ),
        (
            "unknown impl",
            vec![
                s("run"),
                experiment(
                    d,
                    "i",
                    "name = \"t\"\nscales = [5]\n[[variant]]\nname = \"a\"\nimpl = \"java\"\npreset = \"good\"\n",
                ),
            ],
        ),
        (
            "path-like name",
            vec![
                s("run"),
                experiment(
                    d,
                    "n",
                    &format!("name = \"../x\"\nscales = [5]\n{GOOD_VARIANT}"),
                ),
            ],
        ),
        (
            "env KUBECONFIG",
            vec![
                s("run"),
                exp_with(d, "e", "", "env = { KUBECONFIG = \"/tmp/x\" }\n"),
            ],
        ),
        (
            "protected apiserver flag",
            vec![
                s("run"),
                exp_with(
                    d,
                    "a",
                    "[cluster]\napiserver_args = [\"--anonymous-auth=true\"]\n",
                    "",
                ),
            ],
        ),
        (
            "burst without qps",
            vec![s("run"), exp_with(d, "b", "", "client_burst = 5\n")],
        ),
        (
            "duplicate variant",
            vec![s("run"), exp_with(d, "dup", "", GOOD_VARIANT)],
        ),
        (
            "goal without a pair",
            vec![
                s("run"),
                exp_with(
                    d,
                    "goal",
                    "",
                    "[[goal]]\nfigure = \"Ready/s\"\na = \"go\"\nb = \"rust\"\nat_least = 1.1\n",
                ),
            ],
        ),
        ("not TOML", vec![s("run"), experiment(d, "garbage", "{{{")]),
        (
            "no such experiment",
            vec![s("run"), s("no-such-experiment")],
        ),
        (
            "file names a cluster, unconfirmed",
            vec![
                s("run"),
                exp_with(
                    d,
                    "kc",
                    &format!("[cluster]\nkubeconfig = {real_kc:?}\n"),
                    "",
                ),
            ],
        ),
        (
            "kubeconfig not YAML",
            vec![
                s("run"),
                good.clone(),
                s("--kubeconfig"),
                garbage_kc.display().to_string(),
            ],
        ),
        (
            "server never answers",
            vec![
                s("run"),
                good.clone(),
                s("--kubeconfig"),
                silent_kc.display().to_string(),
            ],
        ),
        (
            "wrong CA",
            vec![
                s("run"),
                good.clone(),
                s("--kubeconfig"),
                wrong_ca_kc.display().to_string(),
            ],
        ),
        (
            "unknown context",
            vec![
                s("run"),
                good.clone(),
                s("--kubeconfig"),
                real_kc.clone(),
                s("--context"),
                s("nope"),
            ],
        ),
        (
            "--scales 0",
            vec![s("run"), good.clone(), s("--scales"), s("0")],
        ),
        (
            "--window -5",
            vec![s("run"), good.clone(), s("--window=-5")],
        ),
        (
            "--repeats 0",
            vec![s("run"), good.clone(), s("--repeats"), s("0")],
        ),
        (
            "--variants nosuch",
            vec![s("run"), good.clone(), s("--variants"), s("nosuch")],
        ),
        (
            "report of a non-results dir",
            vec![s("report"), not_results.display().to_string()],
        ),
        (
            "bad plane name",
            vec![s("cluster"), s("up"), s("--name"), s("../up")],
        ),
    ];
    assert!(cases.len() >= 20);
    let mut table = String::from("| input | error line |\n|---|---|\n");
    for (what, args) in &cases {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ctrlbench"));
        let mut full = args.clone();
        if full[0] == "run" {
            if !full.iter().any(|a| a == "--results") {
                full.extend([s("--results"), results.display().to_string()]);
            }
            full.push(s("--no-progress"));
        }
        let t = Instant::now();
        let out = cmd
            .args(&full)
            .env("XDG_STATE_HOME", d)
            .env("TMPDIR", d)
            .env("PATH", spy.path())
            .env("HOME", &fresh.home)
            .env("XDG_CACHE_HOME", &fresh.cache)
            .env_remove("KUBEBUILDER_ASSETS")
            .env_remove("TEST_ASSET_ETCD")
            .env_remove("TEST_ASSET_KUBE_APISERVER")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
        assert!(!out.status.success(), "{what}: exit 0");
        assert_eq!(lines.len(), 1, "{what}: want one line, got:\n{err}");
        assert!(lines[0].starts_with("error: "), "{what}: {err}");
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "{what}: took {:?}",
            t.elapsed()
        );
        assert!(
            !results.exists() || std::fs::read_dir(&results).unwrap().next().is_none(),
            "{what}: a results directory was created"
        );
        table.push_str(&format!(
            "| {what} | `{}` |\n",
            lines[0].replace(&d.display().to_string(), "$TMP")
        ));
    }
    // A [workload] key's error names its line and key like any other.
    for (file, k) in [("decoys", "100001"), ("decoys-neg", "-1")] {
        let want = format!(
            "$TMP/{file}.toml:5: key `decoys`: must be a whole number from 0 to 100000, not {k}"
        );
        assert!(table.contains(&want), "{want}\n{table}");
    }
    assert_eq!(
        processes_mentioning(&d.display().to_string()),
        0,
        "processes left"
    );
    let planes: Vec<PathBuf> = std::fs::read_dir(d)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("ctrlbench-plane-")
        })
        .collect();
    assert!(planes.is_empty(), "plane directories left: {planes:?}");
    assert_eq!(spy.builds(), "", "a build was started");
    let new: Vec<PathBuf> = fresh
        .cache_files()
        .into_iter()
        .filter(|f| !cache_before.contains(f) && !f.ends_with("k8s/served-versions.txt"))
        .collect();
    assert!(new.is_empty(), "new files in the cache: {new:?}");
    println!("{table}");
}

/// `go` and `cargo` first on PATH: a build (`go build`, `go mod`, any
/// cargo call) is written down and fails at once; `go list` queries go
/// through to the real Go.
struct BuildSpy {
    bin: PathBuf,
    log: PathBuf,
}

impl BuildSpy {
    fn new(dir: &Path) -> BuildSpy {
        use std::os::unix::fs::PermissionsExt;
        let bin = dir.join("spy-bin");
        std::fs::create_dir_all(&bin).unwrap();
        let log = dir.join("builds.log");
        std::fs::write(&log, "").unwrap();
        let real_go = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .map(|d| d.join("go"))
            .find(|p| p.is_file());
        let go_through = match real_go {
            Some(g) => format!("exec {} \"$@\"", g.display()),
            None => "exit 1".to_string(),
        };
        let scripts = [
            (
                "go",
                format!(
                    "#!/bin/sh\ncase \"$1\" in build|install|mod|run) echo \"go $*\" >> {log}; exit 1;; esac\n{go_through}\n",
                    log = log.display()
                ),
            ),
            (
                "cargo",
                format!(
                    "#!/bin/sh\necho \"cargo $*\" >> {}\nexit 1\n",
                    log.display()
                ),
            ),
        ];
        for (name, text) in scripts {
            let p = bin.join(name);
            std::fs::write(&p, text).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        BuildSpy { bin, log }
    }

    fn path(&self) -> std::ffi::OsString {
        let mut dirs = vec![self.bin.clone()];
        dirs.extend(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        ));
        std::env::join_paths(dirs).unwrap()
    }

    fn builds(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap()
    }
}

/// A HOME and a cache directory of their own, as on a fresh machine, except
/// that the plane's binaries of the default version are there (linked to
/// the shared plane's, with their gate table): what `cluster install` leaves.
struct FreshHome {
    home: PathBuf,
    cache: PathBuf,
}

impl FreshHome {
    fn new(dir: &Path) -> FreshHome {
        let version = ctrlbench_plane::DEFAULT_K8S_VERSION;
        let b = ctrlbench_plane::binaries::find(version)
            .unwrap()
            .expect("the shared plane's binaries");
        let home = dir.join("home");
        let cache = dir.join("cache");
        let k8s = cache.join("ctrlbench/k8s").join(version);
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&k8s).unwrap();
        std::os::unix::fs::symlink(&b.etcd, k8s.join("etcd")).unwrap();
        std::os::unix::fs::symlink(&b.kube_apiserver, k8s.join("kube-apiserver")).unwrap();
        let gates = ctrlbench_plane::known::feature_gates(version)
            .unwrap()
            .expect("a gate table");
        let table: Vec<&str> = gates.iter().map(String::as_str).collect();
        std::fs::write(k8s.join("feature-gates.txt"), table.join("\n")).unwrap();
        FreshHome { home, cache }
    }

    /// Every file under its ctrlbench cache (binaries, controllers, tables).
    fn cache_files(&self) -> std::collections::BTreeSet<PathBuf> {
        let mut out = std::collections::BTreeSet::new();
        let mut todo = vec![self.cache.join("ctrlbench")];
        while let Some(dir) = todo.pop() {
            for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let p = e.path();
                if p.is_dir() {
                    todo.push(p);
                } else {
                    out.insert(p);
                }
            }
        }
        out
    }
}
