//! Reading a per-scrape CSV back: rows by real timestamp, cells by column
//! name, histogram buckets by prefix, counters as their increase from the
//! first to the last good row the way Prometheus's `increase()` takes it: a
//! counter that drops (its process restarted) starts a new segment from 0, so
//! a restart never turns into a negative or lost delta. Rows of failed
//! scrapes are kept but never read as zeros.

use std::collections::HashMap;
use std::path::Path;

use anyhow::{Context, Result, bail};

use crate::time::parse_time;

/// A per-scrape CSV: one row per scrape, cells by column name.
pub struct Series {
    index: HashMap<String, usize>,
    /// (histogram prefix, upper bound, column) of every `<prefix>_le_<bound>` column.
    buckets: Vec<(String, f64, usize)>,
    pub rows: Vec<Row>,
}

pub struct Row {
    /// Seconds since the Unix epoch.
    pub t: f64,
    pub ok: bool,
    cells: Vec<Option<f64>>,
}

impl Series {
    /// None when the file does not exist.
    pub fn read(path: &Path) -> Result<Option<Series>> {
        if !path.is_file() {
            return Ok(None);
        }
        let mut r = csv::ReaderBuilder::new()
            .flexible(true)
            .from_path(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let header: Vec<String> = r.headers()?.iter().map(String::from).collect();
        let index: HashMap<String, usize> = header
            .iter()
            .enumerate()
            .map(|(i, h)| (h.clone(), i))
            .collect();
        let buckets = header
            .iter()
            .enumerate()
            .filter_map(|(i, h)| {
                let (prefix, le) = h.rsplit_once("_le_")?;
                let le = if le == "+Inf" {
                    f64::INFINITY
                } else {
                    le.parse().ok()?
                };
                Some((prefix.to_string(), le, i))
            })
            .collect();
        let ok_col = index.get("scrape_ok").copied();
        let mut rows = Vec::new();
        for rec in r.records() {
            let rec = rec.with_context(|| format!("malformed {}", path.display()))?;
            let Some(t) = rec.get(0).and_then(parse_time) else {
                bail!("{}: a row without a valid timestamp", path.display());
            };
            let cells: Vec<Option<f64>> = rec.iter().map(|c| c.trim().parse().ok()).collect();
            let ok = ok_col.and_then(|i| cells.get(i).copied().flatten()) == Some(1.0);
            rows.push(Row { t, ok, cells });
        }
        Ok(Some(Series {
            index,
            buckets,
            rows,
        }))
    }

    pub fn good(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(|r| r.ok)
    }

    /// The baseline: the first row with scrape_ok=1.
    pub fn first_good(&self) -> Option<&Row> {
        self.good().next()
    }

    pub fn last_good(&self) -> Option<&Row> {
        self.rows.iter().rev().find(|r| r.ok)
    }

    pub fn failed(&self) -> usize {
        self.rows.iter().filter(|r| !r.ok).count()
    }

    pub fn get(&self, row: &Row, col: &str) -> Option<f64> {
        row.cells.get(*self.index.get(col)?).copied().flatten()
    }

    /// The counter's increase from the baseline to the last good row, with
    /// resets handled as [`increase`] does.
    pub fn delta(&self, col: &str) -> Option<f64> {
        let i = *self.index.get(col)?;
        let values: Vec<f64> = self
            .good()
            .filter_map(|r| r.cells.get(i).copied().flatten())
            .collect();
        increase(&values)
    }

    /// Keeps only the rows taken at or before `t` (the create phase of a run
    /// that had phases after it).
    pub fn truncate_after(&mut self, t: f64) {
        self.rows.retain(|r| r.t <= t);
    }

    /// The increase of counter `col` over the smallest stretch of good rows
    /// that covers `t0..t1` (from the last good row at or before `t0` to the
    /// first at or after `t1`, else the last), and that stretch's seconds.
    pub fn delta_between(&self, col: &str, t0: f64, t1: f64) -> Option<(f64, f64)> {
        let a = self.good().filter(|r| r.t <= t0).last()?;
        let b = self
            .good()
            .find(|r| r.t >= t1)
            .or_else(|| self.last_good())?;
        (b.t > a.t).then_some((self.get(b, col)? - self.get(a, col)?, b.t - a.t))
    }

    pub fn max(&self, col: &str) -> Option<f64> {
        self.good()
            .filter_map(|r| self.get(r, col))
            .reduce(f64::max)
    }

    /// (upper bound, cumulative count) of histogram `prefix` in a good row;
    /// an empty cell there means the series did not exist yet: 0.
    pub fn buckets(&self, row: &Row, prefix: &str) -> Vec<(f64, f64)> {
        self.buckets
            .iter()
            .filter(|(p, _, _)| p == prefix)
            .map(|(_, le, i)| (*le, row.cells.get(*i).copied().flatten().unwrap_or(0.0)))
            .collect()
    }

    /// Each bucket's increase from the baseline to the last good row
    /// (resets as [`increase`]).
    pub fn bucket_delta(&self, prefix: &str) -> Vec<(f64, f64)> {
        if self.first_good().is_none() {
            return Vec::new();
        }
        self.buckets
            .iter()
            .filter(|(p, _, _)| p == prefix)
            .map(|(_, le, i)| {
                let values: Vec<f64> = self
                    .good()
                    .map(|r| r.cells.get(*i).copied().flatten().unwrap_or(0.0))
                    .collect();
                (*le, increase(&values).unwrap_or(0.0))
            })
            .collect()
    }
}

impl Series {
    /// Every file in `paths` read and merged (None when there is none).
    pub fn read_merged(paths: &[std::path::PathBuf]) -> Result<Option<Series>> {
        let mut members = Vec::new();
        for p in paths {
            members.extend(Series::read(p)?);
        }
        Ok(Series::merge(members))
    }

    /// Several processes of one kind (apiservers, etcd members), scraped at
    /// the same ticks, as one series: a counter column (`_total`, `_sum`,
    /// `_count`, `cpu_seconds`, histogram buckets) is the sum of each
    /// member's increase since its own first good row, resets handled as
    /// [`increase`] does, so deltas over the merged series are the sums of
    /// the members' deltas and a killed or restarted member neither loses
    /// nor double-counts; any other column (a gauge) is the sum of the
    /// members' last good values. A row is good when any member's is; its
    /// time is the latest member's. Rows pair up by position (the sampler
    /// writes one row per member per tick); extra rows of a longer file are
    /// dropped.
    pub fn merge(mut members: Vec<Series>) -> Option<Series> {
        if members.len() <= 1 {
            return members.pop();
        }
        let first = &members[0];
        let header: Vec<(String, usize)> = {
            let mut h: Vec<(String, usize)> =
                first.index.iter().map(|(k, v)| (k.clone(), *v)).collect();
            h.sort_by_key(|(_, i)| *i);
            h
        };
        let width = header.iter().map(|(_, i)| i + 1).max().unwrap_or(0);
        let bucket_cols: std::collections::HashSet<usize> =
            first.buckets.iter().map(|(_, _, i)| *i).collect();
        let counter = |name: &str, i: usize| {
            bucket_cols.contains(&i)
                || name.ends_with("_total")
                || name.ends_with("_sum")
                || name.ends_with("_count")
                || name == "cpu_seconds"
        };
        let len = members.iter().map(|m| m.rows.len()).min().unwrap_or(0);
        // Per member and column: (first good value, reset-adjusted last good value).
        let mut state: Vec<Vec<Option<(f64, f64, f64)>>> = vec![vec![None; width]; members.len()];
        let mut rows = Vec::with_capacity(len);
        for r in 0..len {
            let mut cells = vec![None; width];
            let mut ok = false;
            let mut t = f64::MIN;
            for (k, m) in members.iter().enumerate() {
                let row = &m.rows[r];
                t = t.max(row.t);
                ok |= row.ok;
                for (name, i) in &header {
                    let Some(&mi) = m.index.get(name) else {
                        continue;
                    };
                    if row.ok
                        && let Some(v) = row.cells.get(mi).copied().flatten()
                    {
                        // (first, adjusted, raw last)
                        state[k][*i] = Some(match state[k][*i] {
                            None => (v, v, v),
                            Some((f, adj, last)) if v < last => (f, adj + v, v),
                            Some((f, adj, last)) => (f, adj + v - last, v),
                        });
                    }
                    if let Some((f, adj, last)) = state[k][*i] {
                        let add = if counter(name, *i) { adj - f } else { last };
                        *cells.get_mut(*i).expect("width") = Some(cells[*i].unwrap_or(0.0) + add);
                    }
                }
            }
            if let Some(&i) = first.index.get("timestamp") {
                cells[i] = Some(t);
            }
            if let Some(&i) = first.index.get("scrape_ok") {
                cells[i] = Some(if ok { 1.0 } else { 0.0 });
            }
            rows.push(Row { t, ok, cells });
        }
        let Series { index, buckets, .. } = members.swap_remove(0);
        Some(Series {
            index,
            buckets,
            rows,
        })
    }
}

/// A counter's increase over its samples, as Prometheus's `increase()`
/// takes it: a sample lower than the one before is a reset (the process
/// restarted), and counts from 0. None without samples.
pub fn increase(values: &[f64]) -> Option<f64> {
    let (first, last) = (*values.first()?, *values.last()?);
    // Last minus first, plus what each reset lost (the value before the
    // drop): exactly last − first when nothing reset.
    let lost: f64 = values
        .windows(2)
        .filter(|w| w[1] < w[0])
        .map(|w| w[0])
        .sum();
    Some(last - first + lost)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_counter_reset_starts_a_new_segment() {
        assert_eq!(increase(&[]), None);
        assert_eq!(increase(&[5.0]), Some(0.0));
        assert_eq!(increase(&[5.0, 7.0, 10.0]), Some(5.0));
        // Restarted after 10: 10-5 before, then 0→3→4 after.
        assert_eq!(increase(&[5.0, 10.0, 3.0, 4.0]), Some(9.0));
    }
    fn series(dir: &Path, name: &str, text: &str) -> Series {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        Series::read(&p).unwrap().unwrap()
    }

    /// Two apiservers: the second killed after the first row and restarted
    /// (its counter resets); the merged deltas are the members' own sums,
    /// worked out by hand.
    #[test]
    fn members_merge_into_one_series_of_summed_increases() {
        let d = tempfile::tempdir().unwrap();
        let h = "timestamp,scrape_ok,requests_total,inflight_requests,lat_le_1,lat_le_+Inf\n";
        let a = series(
            d.path(),
            "a.csv",
            &format!(
                "{h}2026-01-01T00:00:00Z,1,100,2,1,1\n2026-01-01T00:00:01Z,1,110,3,2,3\n2026-01-01T00:00:02Z,1,130,1,4,6\n"
            ),
        );
        let b = series(
            d.path(),
            "b.csv",
            &format!(
                "{h}2026-01-01T00:00:00.2Z,1,50,5,0,0\n2026-01-01T00:00:01.2Z,0,,,,\n2026-01-01T00:00:02.2Z,1,7,4,1,2\n"
            ),
        );
        let m = Series::merge(vec![a, b]).unwrap();
        assert_eq!(m.rows.len(), 3);
        assert!(m.rows.iter().all(|r| r.ok));
        // a: 130-100 = 30; b: 50 → reset → 7, so 7 more.
        assert_eq!(m.delta("requests_total"), Some(37.0));
        // Buckets: a +3/+5, b +1/+2.
        assert_eq!(
            m.bucket_delta("lat"),
            vec![(1.0, 4.0), (f64::INFINITY, 7.0)]
        );
        // A gauge: the members' last good values summed (b's 5 carried while it was down).
        let g: Vec<f64> = m
            .good()
            .map(|r| m.get(r, "inflight_requests").unwrap())
            .collect();
        assert_eq!(g, vec![7.0, 8.0, 5.0]);
        // Each row at the later member's time.
        assert!((m.rows[0].t - m.rows[0].t.floor() - 0.2).abs() < 1e-6);
        // One file stays as it was.
        let one = series(
            d.path(),
            "c.csv",
            &format!("{h}2026-01-01T00:00:00Z,1,1,1,1,1\n"),
        );
        assert_eq!(Series::merge(vec![one]).unwrap().rows.len(), 1);
        assert!(Series::merge(Vec::new()).is_none());
    }

    use crate::columns::controller::CATALOGUE;
    use crate::prom::Page;
    use crate::table::Table;

    /// What the sampler writes, the report reads back by the same names.
    #[test]
    fn catalogue_rows_read_back() {
        let page = Page::parse(
            "controller_runtime_reconcile_total{controller=\"widget\",result=\"success\"} 7\n\
             controller_runtime_reconcile_total{controller=\"widget\",result=\"requeue\"} 1\n\
             controller_runtime_reconcile_total{controller=\"widget\",result=\"requeue_after\"} 2\n\
             workqueue_depth{name=\"widget\"} 3\n",
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.csv");
        let mut t = Table::for_source(&path, &CATALOGUE).unwrap();
        let v = CATALOGUE.values(&page);
        t.row(CATALOGUE.row("2026-11-30T01:00:00.000Z", "v", Some(&v)))
            .unwrap();
        t.row(CATALOGUE.row("2026-11-30T01:00:01.000Z", "v", None))
            .unwrap();
        let s = Series::read(&path).unwrap().unwrap();
        assert_eq!(s.rows.len(), 2);
        assert_eq!(s.failed(), 1);
        let r = s.first_good().unwrap();
        assert_eq!(s.get(r, "reconcile_success_total"), Some(7.0));
        assert_eq!(s.get(r, "reconcile_requeue_total"), Some(3.0));
        assert_eq!(s.get(r, "queue_depth"), Some(3.0));
        // No histogram on the page: empty bucket cells, read as 0 in a good row.
        assert!(s.buckets(r, "reconcile_latency").iter().all(|b| b.1 == 0.0));
        assert_eq!(s.get(&s.rows[1], "queue_depth"), None);
    }
}
