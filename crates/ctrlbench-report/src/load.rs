//! Reading a results directory back through the record types: the manifest,
//! the likely lines of the operator's source, and per run its summary, its
//! per-scrape series, its objects and pods.

use std::path::Path;

use anyhow::{Result, bail};
use ctrlbench_record::audit::{self, AuditRecord};
use ctrlbench_record::faults::{self, FaultRecord};
use ctrlbench_record::footprint::{self, FootprintRow};
use ctrlbench_record::likely::{self, LikelyRow};
use ctrlbench_record::phases::{self, PhaseRecord};
use ctrlbench_record::pods::{self, PodRecord};
use ctrlbench_record::series::Series;
use ctrlbench_record::time::parse_time;
use ctrlbench_record::{Manifest, ResultsDir, RunDir, Summary, objects};

/// A whole results directory.
pub struct Results {
    pub dir: ResultsDir,
    pub manifest: Manifest,
    pub runs: Vec<Run>,
    /// likely.csv: lines of the operator's source per rule (empty: the
    /// experiment named no source).
    pub likely: Vec<LikelyRow>,
}

/// One run directory.
pub struct Run {
    pub scale: u64,
    pub variant: String,
    pub repeat: u32,
    pub dir: RunDir,
    pub summary: Option<Summary>,
    /// Why summary.json could not be read (torn, not JSON), if it exists.
    pub summary_error: Option<String>,
    pub metrics: Option<Series>,
    /// apiserver.csv, or all apiservers' files merged (counters summed:
    /// [`Series::merge`]); the same for etcd.
    pub apiserver: Option<Series>,
    pub etcd: Option<Series>,
    pub objects: Vec<Object>,
    /// objects.csv has first_write_at (else coverage is unknown).
    pub records_first_writes: bool,
    /// audit.csv: the apiserver's record of each widget write in the run's
    /// namespace (None: no audit log for this run).
    pub audit: Option<Vec<AuditRecord>>,
    /// footprint.csv: every request of the run's controller, counted
    /// (None: no audit log for this run).
    pub footprint: Option<Vec<FootprintRow>>,
    /// phases.csv (empty: no phases after the create phase).
    pub phases: Vec<PhaseRecord>,
    /// With phases, `metrics` and `apiserver` end where the first phase
    /// starts (every other figure is the create phase's); these are whole.
    pub metrics_all: Option<Series>,
    pub apiserver_all: Option<Series>,
    /// faults.csv (empty: no faults in this run).
    pub faults: Vec<FaultRecord>,
    /// plane.csv: the plane's processes beyond etcd and the apiservers.
    pub plane: Option<Series>,
    /// pods.csv (empty: no pod in the run's namespace).
    pub pods: Vec<PodRecord>,
    /// Each object's name and creation (epoch seconds), kept only for a
    /// run with pods: the owners of its pods are looked up here.
    pub created_by_name: Vec<(String, f64)>,
}

/// One line of objects.csv, as seconds since the Unix epoch.
#[derive(Debug, Clone, Copy)]
pub struct Object {
    pub created: Option<f64>,
    pub ready: Option<f64>,
    /// First write by anyone but the loader (the controller).
    pub first_write: Option<f64>,
}

impl Results {
    pub fn load(dir: &Path) -> Result<Results> {
        let rd = ResultsDir::at(dir);
        if !rd.manifest().is_file() {
            bail!(
                "not a ctrlbench results directory: {} has no manifest.json",
                dir.display()
            );
        }
        let manifest = Manifest::read(&rd.manifest())?;
        let mut runs = rd
            .runs()?
            .into_iter()
            .map(Run::load)
            .collect::<Result<Vec<_>>>()?;
        // The experiment's own variant order (first appearance in the manifest).
        let order: Vec<&str> = manifest.runs.iter().fold(Vec::new(), |mut v, r| {
            if !v.contains(&r.variant.as_str()) {
                v.push(r.variant.as_str());
            }
            v
        });
        let rank = |v: &str| order.iter().position(|x| *x == v).unwrap_or(usize::MAX);
        runs.sort_by(|a, b| {
            (a.scale, rank(&a.variant), &a.variant, a.repeat).cmp(&(
                b.scale,
                rank(&b.variant),
                &b.variant,
                b.repeat,
            ))
        });
        Ok(Results {
            likely: likely::read(&rd.likely())?.unwrap_or_default(),
            dir: rd,
            manifest,
            runs,
        })
    }

    pub fn experiment(&self) -> &str {
        if self.manifest.experiment.is_empty() {
            "?"
        } else {
            &self.manifest.experiment
        }
    }

    /// manifest.complete (a manifest without the field counts as incomplete).
    pub fn complete(&self) -> bool {
        self.manifest.complete
    }

    pub fn errors(&self) -> Vec<String> {
        self.manifest.errors.clone()
    }
}

impl Run {
    fn load(dir: RunDir) -> Result<Run> {
        // A torn or unreadable summary flags this run; it does not fail the report.
        let (summary, summary_error) = if dir.summary().is_file() {
            match Summary::read(&dir.summary()) {
                Ok(s) => (Some(s), None),
                Err(e) => (None, Some(format!("{e:#}"))),
            }
        } else {
            (None, None)
        };
        let records = objects::read(&dir.objects())?;
        let pods = pods::read(&dir.pods())?;
        let created_by_name = match pods.is_empty() {
            true => Vec::new(),
            false => records
                .iter()
                .filter_map(|o| Some((o.name.clone(), o.created()?)))
                .collect(),
        };
        let objects = records
            .iter()
            .map(|o| Object {
                created: o.created(),
                ready: o.ready(),
                first_write: o.first_write(),
            })
            .collect();
        let records_first_writes = objects::records_first_writes(&dir.objects());
        let audit = audit::read(&dir.audit())?;
        let footprint = footprint::read(&dir.footprint())?;
        let (mut metrics, mut apiserver, mut etcd) = (
            Series::read(&dir.metrics())?,
            Series::read_merged(&dir.apiserver_files())?,
            Series::read_merged(&dir.etcd_files())?,
        );
        let first_phase = summary
            .as_ref()
            .and_then(|s: &Summary| s.phases.first())
            .and_then(|p| parse_time(&p.started_at));
        let (mut metrics_all, mut apiserver_all) = (None, None);
        if let Some(cut) = first_phase {
            metrics_all = Series::read(&dir.metrics())?;
            apiserver_all = Series::read_merged(&dir.apiserver_files())?;
            for s in [&mut metrics, &mut apiserver, &mut etcd]
                .into_iter()
                .flatten()
            {
                s.truncate_after(cut);
            }
        }
        let faults = faults::read(&dir.faults())?;
        Ok(Run {
            scale: dir.scale,
            variant: dir.variant.clone(),
            repeat: dir.repeat,
            metrics,
            apiserver,
            etcd,
            phases: phases::read(&dir.phases())?,
            metrics_all,
            apiserver_all,
            summary,
            summary_error,
            objects,
            records_first_writes,
            audit,
            footprint,
            faults,
            plane: Series::read(&dir.plane())?,
            pods,
            created_by_name,
            dir,
        })
    }

    /// The load start: objects.csv's last `created_at` minus summary.load.seconds
    /// (the loader's clock starts with it); else the baseline scrape.
    pub fn origin(&self) -> f64 {
        let last_create = self
            .objects
            .iter()
            .filter_map(|o| o.created)
            .reduce(f64::max);
        match (last_create, self.summary.as_ref().map(|s| s.load.seconds)) {
            (Some(c), Some(s)) => c - s,
            _ => self
                .metrics
                .as_ref()
                .and_then(|m| m.first_good())
                .map(|r| r.t)
                .or_else(|| {
                    self.objects
                        .iter()
                        .filter_map(|o| o.created)
                        .reduce(f64::min)
                })
                .unwrap_or(0.0),
        }
    }

    /// Objects the loader created (summary.load.created, else objects.csv).
    pub fn created(&self) -> f64 {
        self.summary
            .as_ref()
            .map(|s| s.load.created as f64)
            .unwrap_or_else(|| self.objects.iter().filter(|o| o.created.is_some()).count() as f64)
    }
}
