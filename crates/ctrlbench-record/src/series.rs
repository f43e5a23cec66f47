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
