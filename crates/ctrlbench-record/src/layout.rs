//! The results directory as a type (docs/results.md):
//! `<root>/<UTC timestamp>-<experiment>/manifest.json`, then per run
//! `N<scale>/<variant>/rep<k>/` with `metrics-<variant>.csv`,
//! `apiserver.csv`, `etcd.csv` (a plane of several apiservers or etcd
//! members: `apiserver-<k>.csv`, `etcd-<k>.csv` per process instead),
//! `objects.csv`, `pods.csv` (when the namespace had pods), `controller.log`, `summary.json` and `faults.csv` when
//! faults ran. Every path a run writes or a report reads comes from here.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::columns::{apiserver, controller, etcd};

/// A whole results directory.
#[derive(Clone, Debug)]
pub struct ResultsDir {
    pub path: PathBuf,
}

/// One run's directory: `N<scale>/<variant>/rep<k>/`.
#[derive(Clone, Debug)]
pub struct RunDir {
    pub path: PathBuf,
    pub scale: u64,
    pub variant: String,
    pub repeat: u32,
}

impl ResultsDir {
    pub fn at(path: impl Into<PathBuf>) -> ResultsDir {
        ResultsDir { path: path.into() }
    }

    /// Creates a new `<root>/<UTC timestamp>-<name>/`; never reuses one: a
    /// second run started in the same second gets `…-<name>-2/`.
    pub fn create(root: &Path, name: &str) -> Result<ResultsDir> {
        std::fs::create_dir_all(root)
            .with_context(|| format!("cannot create {}", root.display()))?;
        let stem = format!("{}-{name}", crate::time::now_compact());
        for k in 1..1000 {
            let dir = match k {
                1 => root.join(&stem),
                _ => root.join(format!("{stem}-{k}")),
            };
            match std::fs::create_dir(&dir) {
                Ok(()) => return Ok(ResultsDir { path: dir }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(e).with_context(|| format!("cannot create {}", dir.display()));
                }
            }
        }
        anyhow::bail!(
            "cannot create a results directory for {name} in {}",
            root.display()
        )
    }

    pub fn manifest(&self) -> PathBuf {
        self.path.join(crate::manifest::FILE_NAME)
    }

    pub fn report_md(&self) -> PathBuf {
        self.path.join("report.md")
    }

    pub fn report_html(&self) -> PathBuf {
        self.path.join("report.html")
    }

    /// The likely lines of the operator's source, per rule (`likely.csv`).
    pub fn likely(&self) -> PathBuf {
        self.path.join(crate::likely::FILE_NAME)
    }

    /// The answers as JSON, beside the report (see ctrlbench-report's export).
    pub fn verdicts_json(&self) -> PathBuf {
        self.path.join("verdicts.json")
    }

    pub fn run(&self, scale: u64, variant: &str, repeat: u32) -> RunDir {
        RunDir {
            path: self
                .path
                .join(format!("N{scale}"))
                .join(variant)
                .join(format!("rep{repeat}")),
            scale,
            variant: variant.to_string(),
            repeat,
        }
    }

    /// Every run directory present, by scale, variant name and repeat.
    pub fn runs(&self) -> Result<Vec<RunDir>> {
        let mut out = Vec::new();
        for (scale, sdir) in numbered(&self.path, "N")? {
            let mut variants = subdirs(&sdir)?;
            variants.sort();
            for vdir in variants {
                let variant = vdir
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                for (repeat, rdir) in numbered(&vdir, "rep")? {
                    out.push(RunDir {
                        path: rdir,
                        scale,
                        variant: variant.clone(),
                        repeat: repeat as u32,
                    });
                }
            }
        }
        Ok(out)
    }
}

impl RunDir {
    pub fn create(&self) -> Result<()> {
        std::fs::create_dir_all(&self.path)
            .with_context(|| format!("cannot create {}", self.path.display()))
    }

    pub fn summary(&self) -> PathBuf {
        self.path.join(crate::summary::FILE_NAME)
    }

    pub fn metrics(&self) -> PathBuf {
        self.path.join(controller::file_name(&self.variant))
    }

    pub fn apiserver(&self) -> PathBuf {
        self.path.join(apiserver::FILE_NAME)
    }

    pub fn etcd(&self) -> PathBuf {
        self.path.join(etcd::FILE_NAME)
    }

    /// Apiserver `k`'s file when the plane has several.
    pub fn apiserver_member(&self, k: usize) -> PathBuf {
        self.path.join(apiserver::member_file_name(k))
    }

    /// etcd member `k`'s file when the plane has several.
    pub fn etcd_member(&self, k: usize) -> PathBuf {
        self.path.join(etcd::member_file_name(k))
    }

    /// apiserver.csv, or every apiserver's file of several (the report
    /// merges them: see [`crate::series::Series::merge`]).
    pub fn apiserver_files(&self) -> Vec<PathBuf> {
        Self::one_or_members(self.apiserver(), |k| self.apiserver_member(k))
    }

    /// etcd.csv, or every member's file of several.
    pub fn etcd_files(&self) -> Vec<PathBuf> {
        Self::one_or_members(self.etcd(), |k| self.etcd_member(k))
    }

    fn one_or_members(one: PathBuf, member: impl Fn(usize) -> PathBuf) -> Vec<PathBuf> {
        if one.is_file() {
            return vec![one];
        }
        (0..).map(member).take_while(|p| p.is_file()).collect()
    }

    pub fn faults(&self) -> PathBuf {
        self.path.join(crate::faults::FILE_NAME)
    }

    pub fn objects(&self) -> PathBuf {
        self.path.join(crate::objects::FILE_NAME)
    }

    /// The plane's own processes beyond etcd and the apiservers, per scrape.
    pub fn plane(&self) -> PathBuf {
        self.path.join(crate::plane::FILE_NAME)
    }

    /// Every pod seen in the run's namespace (only when there was one).
    pub fn pods(&self) -> PathBuf {
        self.path.join(crate::pods::FILE_NAME)
    }

    pub fn phases(&self) -> PathBuf {
        self.path.join(crate::phases::FILE_NAME)
    }

    pub fn audit(&self) -> PathBuf {
        self.path.join(crate::audit::FILE_NAME)
    }

    pub fn footprint(&self) -> PathBuf {
        self.path.join(crate::footprint::FILE_NAME)
    }

    pub fn controller_log(&self) -> PathBuf {
        self.path.join("controller.log")
    }

    /// Replica `k`'s log: replica 0 writes controller.log, the others
    /// controller-<k>.log.
    pub fn replica_log(&self, k: usize) -> PathBuf {
        match k {
            0 => self.controller_log(),
            _ => self.path.join(format!("controller-{k}.log")),
        }
    }

    /// Every replica's metrics, leader flag and process figures, one row
    /// per replica per scrape (runs with more than one replica).
    pub fn replicas(&self) -> PathBuf {
        self.path.join("replicas.csv")
    }

    /// Replica `k`'s CPU profile over the run, as folded stacks
    /// (`profile = true`; `crate::profile`).
    pub fn profile(&self, k: usize) -> PathBuf {
        self.path.join(format!("profile-{k}.folded"))
    }

    /// Who held the controller's Lease, one row per change (leader election).
    pub fn leases(&self) -> PathBuf {
        self.path.join("leases.csv")
    }

    /// `N20/rust-good/rep1`.
    pub fn label(&self) -> String {
        format!("N{}/{}/rep{}", self.scale, self.variant, self.repeat)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_results_directories_in_one_second_differ() {
        let root = tempfile::tempdir().unwrap();
        let a = ResultsDir::create(root.path(), "x").unwrap();
        let b = ResultsDir::create(root.path(), "x").unwrap();
        assert_ne!(a.path, b.path);
        assert!(a.path.is_dir() && b.path.is_dir());
    }
}
