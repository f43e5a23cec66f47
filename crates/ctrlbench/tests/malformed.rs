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
    std::fs::write(&silent_kc, serde_yaml::to_string(&kc).unwrap()).unwrap();
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
    std::fs::write(&wrong_ca_kc, serde_yaml::to_string(&kc).unwrap()).unwrap();
    let garbage_kc = d.join("garbage.kubeconfig");
    std::fs::write(&garbage_kc, "{{{ this is : not: a kubeconfig").unwrap();
    let real_kc = plane.kubeconfig_path.display().to_string();
    let good = exp_with(d, "good", "", "");
    let not_results = d.join("not-results");
    std::fs::create_dir_all(&not_results).unwrap();

    let s = |x: &str| x.to_string();
    let cases: Vec<(&str, Vec<String>)> = vec![
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
            full.extend([
                s("--results"),
                results.display().to_string(),
                s("--no-progress"),
            ]);
        }
        let t = Instant::now();
        let out = cmd
            .args(&full)
            .env("XDG_STATE_HOME", d)
            .env("TMPDIR", d)
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
    println!("{table}");
}
