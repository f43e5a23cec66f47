//! One run's pod start figures, from pods.csv alone and, for the owners,
//! objects.csv: per pod the seconds from its first sighting to scheduled,
//! to Running and to Ready, and per owner that is an object of the run the
//! seconds from the object's creation to the last of its pods Ready. A
//! stage that never came counts as +∞ (censored, as time-to-Ready is), so a
//! quantile that reaches it reads "> window" rather than describing only
//! the pods that made it. The section (`sections::pod_start`) shows them.

use std::collections::BTreeMap;

use ctrlbench_record::pods::PodRecord;
use ctrlbench_record::time::parse_time;

use crate::load::Run;
use crate::quantile::percentile;

/// The stages of a pod's start, in order, as the report names them.
pub const STAGES: [&str; 3] = [
    "created → scheduled",
    "created → running",
    "created → ready",
];

/// The pod figures of one run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PodFigures {
    /// Per stage of [`STAGES`], every pod's seconds (+∞: never).
    pub stages: [Vec<f64>; 3],
    /// Per owner found among the run's objects: its creation → all its pods Ready.
    pub owners: Vec<f64>,
    /// The pods of those owners.
    pub owner_pods: usize,
}

/// A sample's (p50, p90, p99, max); None without samples.
pub fn quantiles(v: &[f64]) -> Option<[f64; 4]> {
    Some([
        percentile(v, 0.5)?,
        percentile(v, 0.9)?,
        percentile(v, 0.99)?,
        v.iter().copied().reduce(f64::max)?,
    ])
}

fn censored(p: &PodRecord, stage: Option<f64>) -> f64 {
    p.since_created(stage).unwrap_or(f64::INFINITY)
}

/// None for a run without pods.
pub fn of(run: &Run) -> Option<PodFigures> {
    // A pod whose first sighting is unknown has no start to count from.
    let pods: Vec<&PodRecord> = run.pods.iter().filter(|p| p.created_s.is_some()).collect();
    if pods.is_empty() {
        return None;
    }
    let mut f = PodFigures {
        stages: [
            pods.iter().map(|p| censored(p, p.scheduled_s)).collect(),
            pods.iter().map(|p| censored(p, p.running_s)).collect(),
            pods.iter().map(|p| censored(p, p.ready_s)).collect(),
        ],
        ..PodFigures::default()
    };
    let origin = run
        .summary
        .as_ref()
        .and_then(|s| s.load_started_at.as_deref())
        .and_then(parse_time);
    let Some(origin) = origin else {
        return Some(f);
    };
    let created: BTreeMap<&str, f64> = run
        .created_by_name
        .iter()
        .map(|(n, c)| (n.as_str(), c - origin))
        .collect();
    // Per owner: its pods' last Ready (+∞ when one never was).
    let mut owners: BTreeMap<&str, (f64, usize)> = BTreeMap::new();
    for p in &pods {
        if p.owner.is_empty() || !created.contains_key(p.owner.as_str()) {
            continue;
        }
        let e = owners.entry(p.owner.as_str()).or_insert((f64::MIN, 0));
        e.0 = e.0.max(p.ready_s.unwrap_or(f64::INFINITY));
        e.1 += 1;
    }
    for (owner, (ready, n)) in owners {
        f.owners.push(ready - created[owner]);
        f.owner_pods += n;
    }
    Some(f)
}
