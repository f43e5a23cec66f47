//! A controller of several replicas, as the sampler sees it: each scrape of
//! every replica becomes the variant's one row of metrics-<variant>.csv
//! (the record crate's `controller::merge_of` says how each column adds up),
//! and one row per replica goes to replicas.csv (its scrape, whether it
//! leads, its RSS and CPU), so that per-replica figures stay separate from
//! the variant's sums. Counters are kept per replica: a replica that is
//! killed still counts what it did, one that restarts counts on from there.

use anyhow::Result;
use ctrlbench_record::RunDir;
use ctrlbench_record::columns::controller::{self, Merge, merge_of};
use ctrlbench_record::columns::num;
use ctrlbench_record::table::Table;

/// The columns of replicas.csv.
pub const HEADER: [&str; 8] = [
    "timestamp",
    "controller",
    "replica",
    "scrape_ok",
    "leader",
    "rss_bytes",
    "cpu_seconds",
    "initial_list_s",
];

/// Each replica's counters and figures.
pub struct Fleet {
    /// Per replica: the values of its last answered scrape.
    last: Vec<Option<Vec<Option<f64>>>>,
    /// Per replica and column: what a restart of it reset (added back).
    carry: Vec<Vec<f64>>,
    /// The replica that said it leads at the last scrape.
    pub leader: Option<usize>,
    /// Per replica: its peak RSS and its last CPU seconds (restarts added).
    pub peak_rss: Vec<f64>,
    pub cpu_s: Vec<f64>,
    /// Per replica: its start → the first complete list (0 until then).
    pub initial_list_s: Vec<f64>,
    table: Table,
}

fn column(name: &str) -> usize {
    controller::CATALOGUE
        .index(name)
        .unwrap_or_else(|| unreachable!("{name} is a controller column"))
}

impl Fleet {
    pub fn new(replicas: usize, dir: &RunDir) -> Result<Fleet> {
        Ok(Fleet {
            last: vec![None; replicas],
            carry: vec![Vec::new(); replicas],
            leader: None,
            peak_rss: vec![0.0; replicas],
            cpu_s: vec![0.0; replicas],
            initial_list_s: vec![0.0; replicas],
            table: Table::create(&dir.replicas(), HEADER.map(String::from).to_vec())?,
        })
    }

    /// The variant's values from one scrape of each replica (None: that
    /// replica did not answer); None when none answered.
    pub fn merge(
        &mut self,
        ts: &str,
        variant: &str,
        pages: &[Option<Vec<Option<f64>>>],
    ) -> Result<Option<Vec<Option<f64>>>> {
        let (rss, cpu, leaders) = (
            column("rss_bytes"),
            column("cpu_seconds"),
            column("leaders"),
        );
        let list = column("initial_list_s");
        self.leader = None;
        for (k, page) in pages.iter().enumerate() {
            if let (Some(now), Some(prev)) = (page, &self.last[k]) {
                // A counter that went down: the replica restarted.
                let carry = &mut self.carry[k];
                carry.resize(now.len(), 0.0);
                for (i, (n, p)) in now.iter().zip(prev).enumerate() {
                    if merge_of(i) == Merge::Counter
                        && let (Some(n), Some(p)) = (n, p)
                        && n < p
                    {
                        carry[i] += p;
                    }
                }
            }
            if let Some(v) = page {
                self.last[k] = Some(v.clone());
                let get = |i: usize| v.get(i).copied().flatten().unwrap_or(0.0);
                if get(leaders) > 0.0 {
                    self.leader = Some(k);
                }
                self.peak_rss[k] = self.peak_rss[k].max(get(rss));
                self.cpu_s[k] = get(cpu) + self.carry[k].get(cpu).copied().unwrap_or(0.0);
                if self.initial_list_s[k] == 0.0 {
                    self.initial_list_s[k] = get(list);
                }
            }
            let cells = match page {
                Some(v) => {
                    let get = |i: usize| num(v.get(i).copied().flatten().unwrap_or(0.0));
                    vec![
                        ts.to_string(),
                        variant.to_string(),
                        k.to_string(),
                        "1".into(),
                        get(leaders),
                        get(rss),
                        num(self.cpu_s[k]),
                        get(list),
                    ]
                }
                None => vec![
                    ts.to_string(),
                    variant.to_string(),
                    k.to_string(),
                    "0".into(),
                    String::new(),
                    String::new(),
                    String::new(),
                    String::new(),
                ],
            };
            self.table.row(cells)?;
        }
        if pages.iter().all(Option::is_none) {
            return Ok(None);
        }
        let width = pages.iter().flatten().map(Vec::len).max().unwrap_or(0);
        let merged = (0..width)
            .map(|i| {
                let answered = pages
                    .iter()
                    .flatten()
                    .filter_map(|v| v.get(i).copied().flatten());
                match merge_of(i) {
                    Merge::None => pages
                        .iter()
                        .flatten()
                        .find_map(|v| v.get(i).copied().flatten()),
                    Merge::Gauge => Some(answered.sum()),
                    Merge::Max => answered.reduce(f64::max),
                    Merge::Counter => Some(
                        self.last
                            .iter()
                            .zip(&self.carry)
                            .map(|(l, c)| {
                                l.as_ref()
                                    .and_then(|l| l.get(i).copied().flatten())
                                    .unwrap_or(0.0)
                                    + c.get(i).copied().unwrap_or(0.0)
                            })
                            .sum(),
                    ),
                }
            })
            .collect();
        Ok(Some(merged))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(pairs: &[(&str, f64)]) -> Option<Vec<Option<f64>>> {
        let width = controller::CATALOGUE.header().len();
        let mut v = vec![None; width];
        for (name, x) in pairs {
            v[column(name)] = Some(*x);
        }
        Some(v)
    }

    fn value(v: &Option<Vec<Option<f64>>>, name: &str) -> Option<f64> {
        v.as_ref().and_then(|v| v[column(name)])
    }

    #[test]
    fn counters_survive_a_killed_leader_and_gauges_count_who_answers() {
        let dir = tempfile::tempdir().unwrap();
        let rd = RunDir {
            path: dir.path().to_path_buf(),
            scale: 1,
            variant: "v".into(),
            repeat: 1,
        };
        let mut f = Fleet::new(2, &rd).unwrap();
        let ok = "reconcile_success_total";
        // Replica 0 leads and reconciles 40; replica 1 stands by.
        let m = f
            .merge(
                "t1",
                "v",
                &[
                    page(&[
                        (ok, 40.0),
                        ("leaders", 1.0),
                        ("rss_bytes", 30.0),
                        ("queue_depth", 5.0),
                    ]),
                    page(&[(ok, 0.0), ("leaders", 0.0), ("rss_bytes", 20.0)]),
                ],
            )
            .unwrap();
        assert_eq!(value(&m, ok), Some(40.0));
        assert_eq!(value(&m, "rss_bytes"), Some(50.0));
        assert_eq!(f.leader, Some(0));
        // Replica 0 is killed: its 40 still count; its depth does not.
        let m = f
            .merge(
                "t2",
                "v",
                &[
                    None,
                    page(&[(ok, 3.0), ("leaders", 1.0), ("rss_bytes", 21.0)]),
                ],
            )
            .unwrap();
        assert_eq!(value(&m, ok), Some(43.0));
        assert_eq!(value(&m, "queue_depth"), Some(0.0));
        assert_eq!(value(&m, "leaders"), Some(1.0));
        assert_eq!(f.leader, Some(1));
        // Replica 0 restarts from 0 and reconciles 2 more: 40 + 2 + 3.
        let m = f
            .merge(
                "t3",
                "v",
                &[page(&[(ok, 2.0)]), page(&[(ok, 3.0), ("leaders", 1.0)])],
            )
            .unwrap();
        assert_eq!(value(&m, ok), Some(45.0));
        assert_eq!(f.peak_rss, vec![30.0, 21.0]);
        assert!(f.merge("t4", "v", &[None, None]).unwrap().is_none());
        let csv = std::fs::read_to_string(rd.replicas()).unwrap();
        assert_eq!(csv.lines().count(), 1 + 8, "{csv}");
        assert!(
            csv.lines().nth(3).unwrap().starts_with("t2,v,0,0,"),
            "{csv}"
        );
    }
}
