//! The column catalogue: for each scraped source (one file each, after
//! kube-burner's one-file-per-measurement), every CSV column's name sits next
//! to how its value is taken from a parsed /metrics page. The sampler writes
//! rows with [`Catalogue::row`]; the report and the runner find values by the
//! same names. A failed scrape is a row with `scrape_ok=0` and empty cells.

pub mod apiserver;
pub mod controller;
pub mod etcd;

use crate::prom::Page;

/// Label filter: every (label, value) must match.
pub type Labels = &'static [(&'static str, &'static str)];

/// How one column's value is taken.
#[derive(Clone, Copy, Debug)]
pub enum Value {
    /// When the scrape returned (RFC 3339).
    Timestamp,
    /// The variant's name (controller files only).
    Variant,
    /// 1 for a page, 0 for a failed scrape.
    ScrapeOk,
    /// Sum of a metric over the samples matching the labels.
    Sum(&'static str, Labels),
    /// Like `Sum`, but only samples whose label (second) is one of the values.
    SumWhere(&'static str, Labels, &'static str, &'static [&'static str]),
}

/// One CSV column.
#[derive(Clone, Copy, Debug)]
pub struct Column {
    pub name: &'static str,
    pub value: Value,
}

/// A histogram written as one cumulative-count column per bucket bound,
/// named `<prefix>le_<bound>`; a bucket missing from the page (a series not
/// yet registered) is an empty cell.
#[derive(Clone, Copy, Debug)]
pub struct Histogram {
    pub prefix: &'static str,
    pub metric: &'static str,
    pub labels: Labels,
    /// Only samples whose label is one of the values.
    pub only: Option<(&'static str, &'static [&'static str])>,
    pub bounds: &'static [f64],
}

impl Histogram {
    pub fn column(&self, le: f64) -> String {
        bucket_column(self.prefix, le)
    }
}

/// Column name of a bucket bound: `le_0.005`, `le_+Inf`.
pub fn bucket_column(prefix: &str, le: f64) -> String {
    if le.is_infinite() {
        format!("{prefix}le_+Inf")
    } else {
        format!("{prefix}le_{le}")
    }
}

/// One source's file: its columns in order, then its histograms' buckets.
pub struct Catalogue {
    pub columns: &'static [Column],
    pub histograms: &'static [Histogram],
    /// The page lines the columns read (the apiserver's page is ~1.6 MB; parsing
    /// only what is recorded keeps the sampler cheap).
    pub keep: fn(&str) -> bool,
}

impl Catalogue {
    /// The CSV header.
    pub fn header(&self) -> Vec<String> {
        let mut h: Vec<String> = self.columns.iter().map(|c| c.name.to_string()).collect();
        for hist in self.histograms {
            h.extend(hist.bounds.iter().map(|le| hist.column(*le)));
        }
        h
    }

    /// The position of a column in the header.
    pub fn index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }

    /// The numeric values of one scrape, aligned with the header (None for
    /// the timestamp and variant columns and for missing buckets).
    pub fn values(&self, page: &Page) -> Vec<Option<f64>> {
        let mut v: Vec<Option<f64>> = self
            .columns
            .iter()
            .map(|c| match c.value {
                Value::Timestamp | Value::Variant => None,
                Value::ScrapeOk => Some(1.0),
                Value::Sum(m, l) => Some(page.sum(m, l)),
                Value::SumWhere(m, l, k, vs) => Some(page.sum_where(m, l, k, vs)),
            })
            .collect();
        for h in self.histograms {
            let b = page.buckets(h.metric, h.labels, h.only);
            v.extend(h.bounds.iter().map(|le| {
                b.iter()
                    .find(|(k, _)| k.0 == *le || (k.0.is_infinite() && le.is_infinite()))
                    .map(|(_, v)| *v)
            }));
        }
        v
    }

    /// One row's cells: `values` from [`Catalogue::values`], or None for a
    /// failed scrape (then only the timestamp, the variant and scrape_ok=0).
    pub fn row(&self, ts: &str, variant: &str, values: Option<&[Option<f64>]>) -> Vec<String> {
        let width = self.columns.len()
            + self
                .histograms
                .iter()
                .map(|h| h.bounds.len())
                .sum::<usize>();
        (0..width)
            .map(|i| match self.columns.get(i).map(|c| c.value) {
                Some(Value::Timestamp) => ts.to_string(),
                Some(Value::Variant) => variant.to_string(),
                Some(Value::ScrapeOk) if values.is_none() => "0".to_string(),
                _ => values
                    .and_then(|v| v.get(i).copied().flatten())
                    .map(num)
                    .unwrap_or_default(),
            })
            .collect()
    }
}

/// A number as written in the CSVs: integers without a fraction.
pub fn num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// Request verbs that write (the apiserver's `verb` and client-go's `method` labels).
pub const WRITE_VERBS: &[&str] = &["POST", "PUT", "PATCH", "APPLY"];
/// Writes to existing objects: what controllers do (the loader only creates).
pub const UPDATE_VERBS: &[&str] = &["PUT", "PATCH", "APPLY"];
