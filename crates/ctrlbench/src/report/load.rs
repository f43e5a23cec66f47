//! Reading a results directory back (DESIGN §8): manifest.json, and per run
//! `N<scale>/<variant>/rep<k>/` its summary.json, CSVs and objects.csv.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde_json::Value;

/// A whole results directory.
pub struct Results {
    pub dir: PathBuf,
    pub manifest: Value,
    pub runs: Vec<Run>,
}

/// One run directory.
pub struct Run {
    pub scale: u64,
    pub variant: String,
    pub repeat: u32,
    pub dir: PathBuf,
    pub summary: Option<Value>,
    pub metrics: Option<Series>,
    pub apiserver: Option<Series>,
    pub etcd: Option<Series>,
    pub objects: Vec<Object>,
}

/// One line of objects.csv, as seconds since the Unix epoch.
#[derive(Debug, Clone, Copy)]
pub struct Object {
    pub created: Option<f64>,
    pub ready: Option<f64>,
}

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

impl Results {
    pub fn load(dir: &Path) -> Result<Results> {
        let path = dir.join("manifest.json");
        if !path.is_file() {
            bail!(
                "not a ctrlbench results directory: {} has no manifest.json",
                dir.display()
            );
        }
        let manifest: Value = serde_json::from_str(
            &std::fs::read_to_string(&path)
                .with_context(|| format!("cannot read {}", path.display()))?,
        )
        .with_context(|| format!("{} is not valid JSON", path.display()))?;
        let mut runs = Vec::new();
        for (scale, sdir) in numbered(dir, "N")? {
            let mut variants: Vec<PathBuf> = subdirs(&sdir)?;
            variants.sort();
            for vdir in variants {
                let variant = vdir
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                for (repeat, rdir) in numbered(&vdir, "rep")? {
                    runs.push(Run::load(scale, &variant, repeat as u32, rdir)?);
                }
            }
        }
        // The experiment's own variant order (first appearance in the manifest).
        let order: Vec<String> = manifest["runs"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r["variant"].as_str().map(String::from))
            .fold(Vec::new(), |mut v, n| {
                if !v.contains(&n) {
                    v.push(n);
                }
                v
            });
        let rank = |v: &str| order.iter().position(|x| x == v).unwrap_or(usize::MAX);
        runs.sort_by(|a, b| {
            (a.scale, rank(&a.variant), &a.variant, a.repeat).cmp(&(
                b.scale,
                rank(&b.variant),
                &b.variant,
                b.repeat,
            ))
        });
        Ok(Results {
            dir: dir.to_path_buf(),
            manifest,
            runs,
        })
    }

    pub fn experiment(&self) -> &str {
        self.manifest["experiment"].as_str().unwrap_or("?")
    }

    /// manifest.complete (a manifest without the field counts as incomplete).
    pub fn complete(&self) -> bool {
        self.manifest["complete"].as_bool().unwrap_or(false)
    }

    pub fn errors(&self) -> Vec<String> {
        self.manifest["errors"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| e.as_str().map(String::from))
            .collect()
    }
}

/// Subdirectories named `<prefix><number>`, sorted by number.
fn numbered(dir: &Path, prefix: &str) -> Result<Vec<(u64, PathBuf)>> {
    let mut v: Vec<(u64, PathBuf)> = subdirs(dir)?
        .into_iter()
        .filter_map(|p| {
            let n = p
                .file_name()?
                .to_str()?
                .strip_prefix(prefix)?
                .parse()
                .ok()?;
            Some((n, p))
        })
        .collect();
    v.sort();
    Ok(v)
}

fn subdirs(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))? {
        let p = e?.path();
        if p.is_dir() {
            v.push(p);
        }
    }
    Ok(v)
}

impl Run {
    fn load(scale: u64, variant: &str, repeat: u32, dir: PathBuf) -> Result<Run> {
        let summary = match std::fs::read_to_string(dir.join("summary.json")) {
            Ok(s) => Some(serde_json::from_str(&s).with_context(|| {
                format!("{} is not valid JSON", dir.join("summary.json").display())
            })?),
            Err(_) => None,
        };
        let objects = read_objects(&dir.join("objects.csv"))?;
        Ok(Run {
            scale,
            variant: variant.to_string(),
            repeat,
            metrics: Series::read(&dir.join(format!("metrics-{variant}.csv")))?,
            apiserver: Series::read(&dir.join("apiserver.csv"))?,
            etcd: Series::read(&dir.join("etcd.csv"))?,
            summary,
            objects,
            dir,
        })
    }

    /// A summary.json field, e.g. `run.summary_f64(&["load", "seconds"])`.
    pub fn summary_f64(&self, path: &[&str]) -> Option<f64> {
        let mut v = self.summary.as_ref()?;
        for k in path {
            v = v.get(k)?;
        }
        v.as_f64()
    }
}

/// RFC 3339 → seconds since the Unix epoch.
pub fn parse_time(s: &str) -> Option<f64> {
    let ts: k8s_openapi::jiff::Timestamp = s.trim().parse().ok()?;
    Some(ts.as_millisecond() as f64 / 1000.0)
}

fn read_objects(path: &Path) -> Result<Vec<Object>> {
    if !path.is_file() {
        return Ok(Vec::new());
    }
    let mut r =
        csv::Reader::from_path(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut v = Vec::new();
    for rec in r.records() {
        let rec = rec.with_context(|| format!("malformed {}", path.display()))?;
        v.push(Object {
            created: rec.get(1).and_then(parse_time),
            ready: rec.get(2).and_then(parse_time),
        });
    }
    Ok(v)
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

    /// Last good row minus baseline.
    pub fn delta(&self, col: &str) -> Option<f64> {
        Some(self.get(self.last_good()?, col)? - self.get(self.first_good()?, col)?)
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

    /// Bucket counts of the last good row minus the baseline's.
    pub fn bucket_delta(&self, prefix: &str) -> Vec<(f64, f64)> {
        let (Some(a), Some(b)) = (self.first_good(), self.last_good()) else {
            return Vec::new();
        };
        self.buckets(b, prefix)
            .into_iter()
            .zip(self.buckets(a, prefix))
            .map(|((le, y), (_, x))| (le, y - x))
            .collect()
    }
}
