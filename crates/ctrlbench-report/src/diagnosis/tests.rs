//! The diagnosis's unit tests: groups of one hand-written footprint each,
//! and the rule that each must get (or none), with the words a finding
//! prints where they carry numbers (the decoys').

use super::*;
use crate::footprint::Footprint;
use ctrlbench_record::footprint::FootprintRow;

/// A group of one run of N = 100 with these footprint rows (create
/// phase), reconciles per object and Ready count.
fn group(rows: &[(&str, &str, u16, bool, bool, u64)], rec: f64, ready: u64) -> Group {
    let mut r = RunFigures::empty(100, "v", 1);
    r.footprint = Some(Footprint::of(
        &rows
            .iter()
            .map(|(verb, sub, code, workload, namespaced, n)| FootprintRow {
                phase: "create".into(),
                verb: verb.to_string(),
                group: "x".into(),
                resource: if *workload { "widgets" } else { "secrets" }.into(),
                subresource: sub.to_string(),
                code: *code,
                namespaced: *namespaced,
                workload: *workload,
                count: *n,
                ..Default::default()
            })
            .collect::<Vec<_>>(),
    ));
    r.set(Metric::ReconcilesPerObject, Some(rec));
    r.ready = ready;
    Group {
        scale: 100,
        variant: "v".into(),
        runs: vec![r],
    }
}

fn ids(g: Group) -> Vec<&'static str> {
    diagnose(&[g]).iter().map(|f| f.rule.id).collect()
}

fn ids_of(g: &Group) -> Vec<&'static str> {
    diagnose(std::slice::from_ref(g))
        .iter()
        .map(|f| f.rule.id)
        .collect()
}

const WATCH: (&str, &str, u16, bool, bool, u64) = ("watch", "", 200, true, true, 1);
const LIST: (&str, &str, u16, bool, bool, u64) = ("list", "", 200, true, true, 1);

#[test]
fn a_clean_controller_gets_nothing() {
    let g = group(
        &[LIST, WATCH, ("update", "status", 200, true, true, 100)],
        1.0,
        100,
    );
    assert!(ids(g).is_empty());
}

#[test]
fn each_signature_gets_its_rule_and_its_echoes_are_left_out() {
    // Hand-counted: 50 GETs over 100 reconciles is 0.5 per reconcile.
    let uncached = group(
        &[
            LIST,
            WATCH,
            ("get", "", 200, true, true, 50),
            ("update", "status", 200, true, true, 100),
        ],
        1.0,
        100,
    );
    assert_eq!(ids(uncached), ["uncached-reads"]);
    // 101 LISTs, one of them the watch's: 100 over 100 reconciles.
    let lists = group(
        &[
            ("list", "", 200, true, true, 101),
            WATCH,
            ("update", "status", 200, true, true, 100),
        ],
        1.0,
        100,
    );
    assert_eq!(ids(lists), ["list-per-reconcile"]);
    // A loop: 4000 object updates, 400 conflicts; the conflicts are its echo.
    let looping = group(
        &[
            LIST,
            WATCH,
            ("update", "", 200, true, true, 4000),
            ("update", "", 409, true, true, 400),
            ("update", "status", 200, true, true, 4000),
        ],
        40.0,
        60,
    );
    assert_eq!(ids(looping), ["self-triggered-loop"]);
    // The same writes with nothing Ready and no status write: dropped status.
    let dropped = group(
        &[LIST, WATCH, ("update", "", 200, true, true, 4000)],
        40.0,
        0,
    );
    assert_eq!(ids(dropped), ["status-dropped"]);
    let stamping = group(
        &[LIST, WATCH, ("update", "status", 200, true, true, 500)],
        5.0,
        100,
    );
    assert_eq!(ids(stamping), ["status-every-reconcile"]);
    // Cluster-wide: a namespaced kind listed everywhere; a CRD list is not.
    let mut wide = group(
        &[
            ("list", "", 200, false, false, 1),
            ("watch", "", 200, false, false, 1),
        ],
        1.0,
        100,
    );
    assert_eq!(ids_of(&wide), ["cluster-wide-cache"]);
    wide.runs[0]
        .footprint
        .as_mut()
        .unwrap()
        .rows
        .iter_mut()
        .for_each(|r| {
            r.group = "apiextensions.k8s.io".into();
            r.resource = "customresourcedefinitions".into();
        });
    assert!(ids(wide).is_empty());
    let spam = group(
        &[LIST, WATCH, ("create", "", 200, false, true, 300)],
        1.0,
        100,
    );
    // Secrets stand in for any child: 300 creates are no Events.
    assert!(ids(spam).is_empty());
    let blind = group(
        &[LIST, WATCH, ("create", "", 409, false, true, 20)],
        1.0,
        100,
    );
    assert_eq!(ids(blind), ["blind-creates"]);
    // 60 watches from now over 100 reconciles: one opened per reconcile
    // or so. The same 60 resuming a watch from the version last seen
    // (the apiserver closed it, the informer re-opened it) open nothing.
    let watching = group(&[LIST, ("watch", "", 200, true, true, 60)], 1.0, 100);
    assert_eq!(ids_of(&watching), ["watch-per-reconcile"]);
    let mut resuming = watching;
    for r in &mut resuming.runs[0].footprint.as_mut().unwrap().rows {
        r.from_version = r.verb == "watch";
    }
    assert!(ids(resuming).is_empty());
}

#[test]
fn decoys_a_wide_cache_listed_are_named_with_its_rss_per_decoy() {
    let wide = |variant: &str, preset: &str, rss: f64, workload_list: bool| {
        let mut g = group(
            &[
                ("list", "", 200, workload_list, !workload_list, 1),
                ("watch", "", 200, workload_list, !workload_list, 1),
                ("update", "status", 200, true, true, 100),
            ],
            1.0,
            100,
        );
        let r = &mut g.runs[0];
        r.decoys = 500;
        r.set(Metric::PeakRss, Some(rss));
        r.implementation = Some("rust".into());
        r.settings = Some(ctrlbench_record::summary::Settings {
            preset: preset.into(),
            ..Default::default()
        });
        r.preset_info = Some(ctrlbench_record::summary::PresetInfo {
            description: String::new(),
            question: "memory".into(),
            counterpart: "good".into(),
        });
        g.variant = variant.into();
        g
    };
    // 40 MiB against the counterpart's 30 MiB: 10 MiB over 500 decoys.
    let groups = [
        wide(
            "rust-cache-cluster-wide",
            "cache-cluster-wide",
            40.0 * 1048576.0,
            true,
        ),
        wide("rust-good", "good", 30.0 * 1048576.0, false),
    ];
    let found = diagnose(&groups);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].variant, "rust-cache-cluster-wide");
    assert!(
        found[0].evidence.ends_with(
            "; with 500 decoys in a namespace it was not asked to reconcile, its lists of x/widgets returned them: peak RSS 40.0 MiB, 10.0 MiB more than rust-good's (20.48 KiB per decoy)"
        ),
        "{}",
        found[0].evidence
    );
    // Without decoys the evidence says nothing of them.
    let mut plain = wide("rust-cache-cluster-wide", "cache-cluster-wide", 1.0, true);
    plain.runs[0].decoys = 0;
    let found = diagnose(std::slice::from_ref(&plain));
    assert!(
        found[0].evidence.ends_with("of x/widgets"),
        "{}",
        found[0].evidence
    );
}

#[test]
fn requeues_and_replicas_come_from_the_controller() {
    let mut g = group(
        &[LIST, WATCH, ("update", "status", 200, true, true, 100)],
        6.0,
        100,
    );
    g.runs[0].set(Metric::Requeues, Some(500.0));
    assert_eq!(ids(g), ["requeue-loop"]);
    let mut g = group(
        &[
            LIST,
            WATCH,
            ("update", "status", 200, true, true, 150),
            ("update", "status", 409, true, true, 30),
        ],
        2.0,
        100,
    );
    g.runs[0].replicas = 2;
    g.runs[0].settings = Some(Default::default());
    assert_eq!(ids(g), ["replicas-without-election"]);
}

/// Too few workers: keys wait ≥ 2 s and ≥ 10× a reconcile while the
/// controller and the apiserver idle. A 3 s wait against 10 ms reconciles
/// at 10 % and 20 % of a core fires; at 1.5 s, with the controller at 60 %
/// or the apiserver at 80 %, or with the limiter holding half of each
/// reconcile (client throttling's finding instead), it does not.
#[test]
fn too_few_workers_needs_a_long_wait_an_idle_controller_and_no_limiter() {
    let with = |wait: f64, cpu: f64, api: f64, throttle: Option<f64>| {
        let mut g = group(
            &[LIST, WATCH, ("update", "status", 200, true, true, 100)],
            1.0,
            100,
        );
        let r = &mut g.runs[0];
        r.set(Metric::QueueWait, Some(wait));
        r.set(Metric::MeanLatency, Some(0.010));
        r.set(Metric::Cpu, Some(cpu * 20.0));
        r.set(Metric::Convergence, Some(20.0));
        r.set(Metric::ApiserverCpu, Some(api * 20.0));
        r.attribution.throttle = throttle.map(|t| t * 0.010);
        r.attribution.mean = throttle.map(|_| 0.010);
        ids(g)
    };
    assert_eq!(with(3.0, 0.1, 0.2, None), ["too-few-workers"]);
    assert!(with(1.5, 0.1, 0.2, None).is_empty());
    assert!(with(3.0, 0.6, 0.2, None).is_empty());
    assert!(with(3.0, 0.1, 0.8, None).is_empty());
    assert_eq!(with(3.0, 0.1, 0.2, Some(0.5)), ["client-throttling"]);
}

/// No observedGeneration: from the share of objects first Ready without
/// one; half or more fires, less does not, none measured says nothing.
#[test]
fn no_observed_generation_from_the_watch_share() {
    let with = |share: Option<f64>| {
        let mut g = group(
            &[LIST, WATCH, ("update", "status", 200, true, true, 100)],
            1.0,
            100,
        );
        g.runs[0].set(Metric::GenerationMissingShare, share);
        ids(g)
    };
    assert_eq!(with(Some(1.0)), ["no-observed-generation"]);
    assert_eq!(with(Some(0.5)), ["no-observed-generation"]);
    assert!(with(Some(0.2)).is_empty());
    assert!(with(None).is_empty());
}

/// managedFields in the cache: a run of `n` objects, each `whole` bytes
/// of which `fields` are managedFields, whose controller's RSS grew by
/// `grown` bytes; a clean footprint otherwise.
fn cached(n: u64, whole: u64, fields: u64, grown: f64) -> Group {
    let mut g = group(
        &[LIST, WATCH, ("update", "status", 200, true, true, 100)],
        1.0,
        100,
    );
    g.scale = n;
    let r = &mut g.runs[0];
    r.scale = n;
    r.object_sample = Some(ctrlbench_record::summary::ObjectSample {
        objects: 20,
        bytes: whole,
        managed_fields_bytes: fields,
    });
    r.rss_growth = Some(grown);
    g
}

/// Fires when managedFields are ≥ 75 % of the object, ≥ 4 KiB of it and
/// ≥ 32 MiB over the run's objects, and the memory grew per object by at
/// least their size. By hand: 13 KiB of 14 KiB is 93 %; 4000 × 13 KiB =
/// 50.8 MiB; 80 MiB over 4000 objects is 20.48 KiB each (≥ 13), 20 MiB is
/// 5.12 KiB (< 13). At N = 2000 the managedFields are 25.4 MiB in all: not
/// judged. Objects of 16 KiB make 13 KiB an 81 % share (judged), of 18 KiB
/// 72 % (not). 3 KiB of 3.5 KiB at N = 20 000 (58.6 MiB in all, 8 KiB of
/// growth each) is under 4 KiB an object: not judged.
#[test]
fn managed_fields_in_cache_weighs_memory_growth_against_their_size() {
    const KIB: u64 = 1024;
    const MIB: f64 = 1048576.0;
    let keeper = cached(4000, 14 * KIB, 13 * KIB, 80.0 * MIB);
    let found = diagnose(std::slice::from_ref(&keeper));
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].rule.id, "managed-fields-in-cache");
    assert_eq!(found[0].rule.basis, Basis::Measured);
    assert_eq!(
        found[0].evidence,
        "each object carried 13.0 KiB of managedFields in 14.0 KiB as the apiserver sent it (93 %), and the controller's memory grew 20.5 KiB per object, at least what the managedFields alone weigh"
    );
    assert_eq!(
        found[0].cost,
        "51 MiB of managedFields as JSON over N = 4000 objects, against 80 MiB of memory growth in all (decoded, they weigh more than their JSON)"
    );
    assert!(ids(cached(4000, 14 * KIB, 13 * KIB, 20.0 * MIB)).is_empty());
    assert!(ids(cached(2000, 14 * KIB, 13 * KIB, 80.0 * MIB)).is_empty());
    assert_eq!(
        ids(cached(4000, 16 * KIB, 13 * KIB, 80.0 * MIB)),
        ["managed-fields-in-cache"]
    );
    assert!(ids(cached(4000, 18 * KIB, 13 * KIB, 160.0 * MIB)).is_empty());
    assert!(ids(cached(20000, 3584, 3 * KIB, 20000.0 * 8192.0)).is_empty());
    let mut together = cached(4000, 14 * KIB, 13 * KIB, 80.0 * MIB);
    together.runs[0].concurrent = true;
    assert!(ids(together).is_empty());
    let mut unsampled = keeper;
    unsampled.runs[0].object_sample = None;
    assert!(ids(unsampled).is_empty());
}

#[test]
fn the_docs_are_the_table() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/diagnosis.md");
    let docs = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        docs == markdown(),
        "docs/diagnosis.md is not the table: run `ctrlbench diagnose --rules > docs/diagnosis.md`"
    );
    for r in RULES {
        assert!(!r.id.is_empty() && r.source.len() > 10, "{}", r.id);
        for s in r.suppressed_by {
            assert!(RULES.iter().any(|x| x.id == *s), "{} names {s}", r.id);
        }
    }
}
