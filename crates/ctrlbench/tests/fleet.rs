//! Controller fleets end to end through the CLI, on this binary's shared
//! plane: Rust and Go with two replicas and leader election converge; the
//! leader killed at 2 s is replaced in time (our own watch of the Lease, in
//! summary.json and the report's Faults table); nothing is lost against the fault-free run; each
//! replica's figures are kept, and no replica outlives the run.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ctrlbench_plane::process::is_alive;
use ctrlbench_plane::testing::shared_plane;
use ctrlbench_record::faults;
use widget_api::presets::leader_election::{LEASE_DURATION_S, RETRY_PERIOD_S};

mod common;
use common::{assert_success, ctrlbench, only_results_dir};

/// Runs the experiment `text` (on the plane of `kubeconfig`, else its own)
/// and returns its results directory.
fn run_file(tmp: &Path, name: &str, text: &str, kubeconfig: Option<&Path>) -> PathBuf {
    let exp = tmp.join(format!("{name}.toml"));
    std::fs::write(&exp, text).unwrap();
    let results = tmp.join("results");
    let mut cmd = ctrlbench();
    cmd.args(["run", exp.to_str().unwrap(), "--no-progress", "--results"])
        .arg(&results)
        .env("XDG_STATE_HOME", tmp);
    if let Some(kc) = kubeconfig {
        cmd.arg("--kubeconfig").arg(kc);
    }
    let out = cmd.output().unwrap();
    assert_success(&out);
    only_results_dir(&results)
}

/// Two replicas with election, 1 worker and 50 ms of work: about 17
/// reconciles a second, so 100 objects take about 6 s and the kill at 2 s
/// lands a third of the way.
fn variant(name: &str, imp: &str, faults: bool) -> String {
    format!(
        "[[variant]]\nname = \"{name}\"\nimpl = \"{imp}\"\npreset = \"good\"\nworkers = 1\nwork_ms = 50\n\
         replicas = 2\nleader_election = true\n{}",
        if faults { "" } else { "faults = false\n" }
    )
}

#[test]
fn a_killed_leader_is_replaced_and_nothing_is_lost() {
    let plane = shared_plane();
    let tmp = tempfile::tempdir().unwrap();
    let text = format!(
        "name = \"fleet\"\nscales = [100]\nwindow_s = 90\nstop_when_converged = true\n{}{}{}{}\
         [[fault]]\nat_s = 2\naction = \"kill\"\ntarget = \"controller:leader\"\n",
        variant("rust", "rust", true),
        variant("go", "go@v0.22", true),
        variant("rust-base", "rust", false),
        variant("go-base", "go@v0.22", false),
    );
    let dir = run_file(tmp.path(), "fleet", &text, Some(&plane.kubeconfig_path));
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    let faults_section = report
        .split("## Faults")
        .nth(1)
        .unwrap_or_else(|| panic!("{report}"));
    assert!(
        faults_section.contains("new leader after s"),
        "{faults_section}"
    );
    let (lease, retry) = (LEASE_DURATION_S as f64, RETRY_PERIOD_S as f64);
    // Rust (kube-lease-manager): the standby sleeps until the Lease's renew
    // time plus its duration, and the leader renewed at most one retry
    // period before the kill: lease + 2 × retry. Go (client-go): a
    // candidate polls every retry × (1 + up to 1.2, client-go's
    // JitterFactor) and counts the lease from when it last saw the record
    // change, not from the renew time, so up to two jittered polls are
    // added: lease + 2 × 2.2 × retry.
    for (name, bound) in [
        ("rust", lease + 2.0 * retry),
        ("go", lease + 2.0 * 2.2 * retry),
    ] {
        let run = dir.join(format!("N100/{name}/rep1"));
        let s = ctrlbench_record::Summary::read(&run.join("summary.json")).unwrap();
        assert_eq!(s.ready, 100, "{name}: {} not Ready", s.remaining);
        let f = faults::read(&run.join("faults.csv")).unwrap();
        assert_eq!(f.len(), 1, "{name}: {f:?}");
        assert!(f[0].resolved.starts_with("controller:"), "{name}: {f:?}");
        assert_eq!(f[0].outcome, "ok", "{name}: {f:?}");
        // The killed leader held the Lease first; another holder followed.
        assert!(
            s.leader_changes.len() >= 2,
            "{name}: {:?}",
            s.leader_changes
        );
        let fired = ctrlbench_record::time::parse_time(&f[0].at).unwrap();
        let next = s
            .leader_changes
            .iter()
            .find(|c| c.unix_s > fired)
            .unwrap_or_else(|| {
                panic!(
                    "{name}: no new leader after the kill: {:?}",
                    s.leader_changes
                )
            });
        let after = next.unix_s - fired;
        eprintln!("{name}: new leader {after:.1} s after the kill (bound {bound:.1} s)");
        assert!(
            after <= bound,
            "{name}: new leader after {after:.1} s > {bound} s"
        );
        // The report's row says the same, and nothing was lost.
        let row = faults_section
            .lines()
            .find(|l| l.starts_with(&format!("| N100/{name}/rep1 ")))
            .unwrap_or_else(|| panic!("no fault row for {name} in {faults_section}"));
        let cells: Vec<&str> = row.trim_matches('|').split('|').map(str::trim).collect();
        let shown: f64 = cells[5].parse().unwrap_or_else(|_| panic!("{row}"));
        assert!(
            (shown - after).abs() < 0.15,
            "{name}: report {shown}, summary {after:.2}: {row}"
        );
        assert_eq!(cells.last().copied(), Some("0"), "{name}: lost {row}");
        // Each replica's own figures, from replicas.csv's source.
        assert_eq!(s.replicas.len(), 2, "{name}: {:?}", s.replicas);
        assert!(
            s.replicas.iter().all(|r| r.peak_rss_bytes > 0.0),
            "{name}: {:?}",
            s.replicas
        );
        let rows = std::fs::read_to_string(run.join("replicas.csv")).unwrap();
        assert!(
            rows.lines()
                .skip(1)
                .any(|l| l.split(',').nth(4) == Some("1")),
            "{name}: no leader row"
        );
        assert!(run.join("controller-1.log").is_file());
        // The killed replica is gone, and so is the survivor.
        let t = Instant::now();
        while is_alive(f[0].pid, 0) && t.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(100));
        }
        assert!(!is_alive(f[0].pid, 0), "{name}: the killed leader lives");
    }
    // The baselines elected once and were never replaced.
    for name in ["rust-base", "go-base"] {
        let s =
            ctrlbench_record::Summary::read(&dir.join(format!("N100/{name}/rep1/summary.json")))
                .unwrap();
        assert_eq!(s.ready, 100, "{name}");
        assert_eq!(s.leader_changes.len(), 1, "{name}: {:?}", s.leader_changes);
    }
    leftover_check(&dir);
}

/// No controller process of the run is left (its logs name their pids'
/// binaries; the run's namespaces are gone with them).
fn leftover_check(dir: &Path) {
    let manifest = std::fs::read_to_string(dir.join("manifest.json")).unwrap();
    assert!(manifest.contains("\"fleet\""), "{manifest}");
    let out = std::process::Command::new("pgrep")
        .args(["-f", "widget-controller.*--leader-elect"])
        .output()
        .unwrap();
    let pids = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(pids.is_empty(), "replicas outlived the run: {pids}");
}

#[test]
fn half_megabyte_objects_load_and_converge() {
    let plane = shared_plane();
    let tmp = tempfile::tempdir().unwrap();
    let bytes = 512 * 1024;
    let text = format!(
        "name = \"big\"\nscales = [50]\nwindow_s = 60\nstop_when_converged = true\nobject_bytes = {bytes}\n\
         [[variant]]\nname = \"rust\"\nimpl = \"rust\"\npreset = \"good\"\n\
         [[variant]]\nname = \"go\"\nimpl = \"go@v0.22\"\npreset = \"good\"\n"
    );
    let dir = run_file(tmp.path(), "big", &text, Some(&plane.kubeconfig_path));
    for name in ["rust", "go"] {
        let s = ctrlbench_record::Summary::read(&dir.join(format!("N50/{name}/rep1/summary.json")))
            .unwrap();
        assert_eq!(s.ready, 50, "{name}: {} not Ready", s.remaining);
        assert_eq!(s.load.errors, 0, "{name}: {:?}", s.load.first_error);
        // The size as created: the padding aims at the whole object's JSON.
        let got = s
            .object_bytes
            .unwrap_or_else(|| panic!("{name}: no object_bytes"));
        assert!(
            got.abs_diff(bytes) <= 16,
            "{name}: {got} bytes, asked {bytes}"
        );
    }
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(
        report.contains("524288 bytes") || report.contains("512.0 KiB"),
        "the report states the size"
    );
}

/// Four replicas asking for streaming lists at once, on a plane with the
/// apiserver's WatchList gate on (the default) and on one with it off and
/// the apiserver restarted under the replicas.
#[test]
fn a_storm_of_four_streaming_replicas_is_measured() {
    let tmp = tempfile::tempdir().unwrap();
    // Its own planes: the apiserver's peak memory is a local plane's figure,
    // and the gate is per plane.
    let text = "name = \"storm\"\nscales = [200]\nobject_bytes = 51200\nwindow_s = 90\nstop_when_converged = true\n\
         [[fault]]\nat_s = 8\naction = \"restart\"\ntarget = \"apiserver:0\"\nduration_s = 1\n\
         [[variant]]\nname = \"s\"\nimpl = \"rust\"\npreset = \"good\"\nstart = \"after-load\"\nreplicas = 4\nwatch_list = true\nfaults = false\n\
         [[variant]]\nname = \"off\"\nimpl = \"go@v0.22\"\npreset = \"good\"\nstart = \"after-load\"\nreplicas = 4\nwatch_list = true\n\
         feature_gates = [\"WatchList=false\"]\n";
    let dir = run_file(tmp.path(), "storm", text, None);
    // Gate off: the replicas ask for streaming lists, the apiserver serves
    // none, they list instead; the apiserver restarted at 8 s refills its
    // watch cache of the 200 objects.
    let off = dir.join("N200/off/rep1");
    let so = ctrlbench_record::Summary::read(&off.join("summary.json")).unwrap();
    assert_eq!(so.ready, 200);
    assert_eq!(so.feature_gates, ["WatchList=false"]);
    assert!(
        so.replicas.iter().all(|r| r.initial_list_s.is_some()),
        "{:?}",
        so.replicas
    );
    let faults = std::fs::read_to_string(off.join("faults.csv")).unwrap();
    assert!(faults.contains("apiserver:0"), "{faults}");
    // The peak covers the apiserver's processes before and after the restart.
    assert_eq!(so.apiserver_peak_rss_bytes.len(), 1, "{so:?}");
    assert!(so.apiserver_peak_rss_bytes[0] > 10e6 + 200.0 * 51200.0);
    let api = ctrlbench_record::series::Series::read(&off.join("apiserver.csv"))
        .unwrap()
        .unwrap();
    assert_eq!(api.delta("widget_watch_lists_total").unwrap_or(0.0), 0.0);
    let last = api.last_good().unwrap();
    assert!(api.get(last, "widget_watch_cache_inits").unwrap_or(0.0) >= 1.0);
    assert!(
        api.get(last, "widget_watch_cache_init_s_sum")
            .unwrap_or(0.0)
            > 0.0
    );
    let run = dir.join("N200/s/rep1");
    let s = ctrlbench_record::Summary::read(&run.join("summary.json")).unwrap();
    assert_eq!(s.ready, 200);
    assert!(s.feature_gates.is_empty(), "{:?}", s.feature_gates);
    assert_eq!(s.replicas.len(), 4, "{:?}", s.replicas);
    for r in &s.replicas {
        let t = r
            .initial_list_s
            .unwrap_or_else(|| panic!("replica {} never listed", r.replica));
        assert!(t > 0.0 && t < 90.0, "{r:?}");
    }
    // The apiserver's peak is at least what it holds of 200 × 50 KiB once.
    assert_eq!(s.apiserver_peak_rss_bytes.len(), 1);
    assert!(
        s.apiserver_peak_rss_bytes[0] > 10e6 + 200.0 * 51200.0,
        "{:?}",
        s.apiserver_peak_rss_bytes
    );
    // Four streaming lists of widgets, one per replica (our own watch and
    // the loader do not stream).
    let api = ctrlbench_record::series::Series::read(&run.join("apiserver.csv"))
        .unwrap()
        .unwrap();
    assert_eq!(api.delta("widget_watch_lists_total"), Some(4.0));
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    let storm = report
        .split("## Restart storm")
        .nth(1)
        .unwrap_or_else(|| panic!("{report}"));
    assert!(
        storm.contains("| N200/s/rep1 | 4 | on | 50.0 KiB | 4/4 |"),
        "{storm}"
    );
    let off_row = storm
        .lines()
        .find(|l| l.starts_with("| N200/off/rep1 |"))
        .unwrap_or_else(|| panic!("{storm}"));
    assert!(off_row.ends_with(" s | WatchList=false |"), "{off_row}");
    // No restart under "s": its plane filled the cache before the run.
    assert!(storm.contains("| before the run | defaults |"), "{storm}");
    assert!(report.contains("apiserver feature gates"), "{report}");
}

/// The `no-leader-election` anti-pattern: two replicas without election
/// both reconcile every object, where the elected pair reconciles each
/// once. The counts are the controllers' own, summed over the replicas.
#[test]
fn two_replicas_without_election_reconcile_each_object_twice() {
    let plane = shared_plane();
    let tmp = tempfile::tempdir().unwrap();
    let mut text =
        "name = \"dup\"\nscales = [100]\nwindow_s = 60\nstop_when_converged = true\n".to_string();
    for (imp, short) in [("rust", "rust"), ("go@v0.22", "go")] {
        for preset in ["leader-election", "no-leader-election"] {
            text += &format!(
                "[[variant]]\nname = \"{short}-{preset}\"\nimpl = \"{imp}\"\npreset = \"{preset}\"\n"
            );
        }
    }
    let dir = run_file(tmp.path(), "dup", &text, Some(&plane.kubeconfig_path));
    for short in ["rust", "go"] {
        let per_object = |preset: &str| {
            let run = dir.join(format!("N100/{short}-{preset}/rep1"));
            let s = ctrlbench_record::Summary::read(&run.join("summary.json")).unwrap();
            assert_eq!(s.ready, 100, "{short}-{preset}: {} not Ready", s.remaining);
            assert_eq!(
                s.replicas.len(),
                2,
                "{short}-{preset}: the preset's replicas"
            );
            let r = &s.reconciles;
            let all = r.success.unwrap() + r.error.unwrap_or(0.0) + r.requeue.unwrap_or(0.0);
            all / 100.0
        };
        let (elected, unelected) = (
            per_object("leader-election"),
            per_object("no-leader-election"),
        );
        eprintln!(
            "{short}: reconciles per object {elected:.2} elected, {unelected:.2} without election"
        );
        assert!(
            elected <= 1.02,
            "{short}: elected pair {elected:.2} per object"
        );
        assert!(
            unelected > 1.5,
            "{short}: unelected pair {unelected:.2} per object"
        );
    }
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(
        report.contains("Duplicate work") && report.contains("reconciles per object"),
        "{report}"
    );
}
