//! Named planes that outlive `cluster up`: their directory and recorded
//! state (`state.json`), so `status`, `kubeconfig` and `down` work from
//! another shell. A plane whose processes are gone is stale and is cleaned up.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use super::plane::ControlPlane;
use super::process::{Process, STOP_TIMEOUT};

/// One recorded process.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProcessRecord {
    pub pid: u32,
    pub start_time: u64,
    pub log: PathBuf,
}

/// What `cluster up` records about a plane.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PlaneState {
    pub name: String,
    pub dir: PathBuf,
    pub url: String,
    pub version: String,
    pub kubeconfig: PathBuf,
    /// Member 0's client and metrics URLs.
    pub etcd_url: String,
    pub etcd_metrics_url: String,
    /// Every member's metrics URL and every apiserver's own URL, in order.
    #[serde(default)]
    pub etcd_metrics_urls: Vec<String>,
    #[serde(default)]
    pub apiserver_urls: Vec<String>,
    pub etcd_fsync: bool,
    pub feature_gates: Vec<String>,
    /// The etcd members, in order (one record in files of single-member planes).
    #[serde(deserialize_with = "one_or_many")]
    pub etcd: Vec<ProcessRecord>,
    /// The apiservers, in order; with more than one, `url` is the front's,
    /// which lives in the supervisor.
    #[serde(alias = "apiserver", deserialize_with = "one_or_many")]
    pub apiservers: Vec<ProcessRecord>,
    /// kube-controller-manager, when the plane runs one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller_manager: Option<ProcessRecord>,
    /// kube-scheduler and kwok, when the plane has fake nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<ProcessRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kwok: Option<ProcessRecord>,
    /// The process that started the plane and reaps its processes
    /// (`cluster up --foreground`, detached by a plain `cluster up`).
    pub supervisor: ProcessRecord,
    /// The boot the plane was started in: after a reboot its pids mean nothing.
    #[serde(default)]
    pub boot_id: String,
}

/// A list of records, or one (state files written before HA planes).
fn one_or_many<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<ProcessRecord>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(ProcessRecord),
        Many(Vec<ProcessRecord>),
    }
    Ok(match OneOrMany::deserialize(d)? {
        OneOrMany::One(r) => vec![r],
        OneOrMany::Many(v) => v,
    })
}

/// `${XDG_STATE_HOME:-~/.local/state}/ctrlbench/planes`.
pub fn planes_root() -> Result<PathBuf> {
    let base = dirs::state_dir()
        .or_else(dirs::data_local_dir)
        .context("no state directory: set XDG_STATE_HOME or HOME")?;
    Ok(base.join("ctrlbench").join("planes"))
}

/// Plane names become directory names: keep them plain.
pub fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
        && !name.starts_with('.');
    if !ok {
        bail!("invalid plane name {name:?}: use letters, digits, '-', '_' or '.' (at most 63)");
    }
    Ok(())
}

pub fn plane_dir(name: &str) -> Result<PathBuf> {
    check_name(name)?;
    Ok(planes_root()?.join(name))
}

impl PlaneState {
    pub fn of(
        name: &str,
        plane: &ControlPlane,
        etcd_fsync: bool,
        feature_gates: &[String],
    ) -> PlaneState {
        let me = std::process::id();
        let nodes = plane.nodes.lock().unwrap_or_else(|e| e.into_inner());
        let rec = |p: &Process| ProcessRecord {
            pid: p.pid,
            start_time: p.start_time,
            log: p.log.clone(),
        };
        PlaneState {
            name: name.to_string(),
            dir: plane.dir.clone(),
            url: plane.url(),
            version: plane.version.clone(),
            kubeconfig: plane.kubeconfig_path.clone(),
            etcd_url: plane.etcd_client_urls()[0].clone(),
            etcd_metrics_url: plane.etcd_metrics_urls()[0].clone(),
            etcd_metrics_urls: plane.etcd_metrics_urls(),
            apiserver_urls: plane.apiserver_urls(),
            etcd_fsync,
            feature_gates: feature_gates.to_vec(),
            etcd: plane.etcd().iter().map(|e| rec(&e.process)).collect(),
            apiservers: plane.apiservers().iter().map(|a| rec(&a.process)).collect(),
            controller_manager: plane
                .controller_manager
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .as_ref()
                .map(|c| rec(&c.process)),
            scheduler: nodes.as_ref().map(|n| rec(&n.scheduler)),
            kwok: nodes.as_ref().map(|n| rec(&n.kwok)),
            supervisor: ProcessRecord {
                pid: me,
                start_time: super::process::start_time(me).unwrap_or(0),
                log: plane.dir.join("supervisor.log"),
            },
            boot_id: crate::plane::boot_id(),
        }
    }

    pub fn save(&self) -> Result<()> {
        let json = serde_json::to_string_pretty(self)?;
        super::tinyca::write(&self.dir.join("state.json"), &json, 0o600)
    }

    /// Loads the state of plane `name`, if one was recorded.
    pub fn load(name: &str) -> Result<Option<PlaneState>> {
        let path = plane_dir(name)?.join("state.json");
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                Ok(Some(serde_json::from_str(&text).with_context(|| {
                    format!("corrupt plane state {}", path.display())
                })?))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
        }
    }

    /// Every recorded plane, by name.
    pub fn list() -> Result<Vec<PlaneState>> {
        let root = planes_root()?;
        let mut out = Vec::new();
        let Ok(entries) = std::fs::read_dir(&root) else {
            return Ok(out);
        };
        for e in entries.flatten() {
            if let Some(name) = e.file_name().to_str()
                && let Ok(Some(s)) = PlaneState::load(name)
            {
                out.push(s);
            }
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    /// The supervisor, then the apiservers, then the etcd members.
    fn processes(&self) -> (Process, Vec<Process>, Vec<Process>) {
        let p =
            |name, r: &ProcessRecord| Process::recorded(name, r.pid, r.start_time, r.log.clone());
        (
            p("supervisor", &self.supervisor),
            self.apiservers
                .iter()
                .map(|r| p("kube-apiserver", r))
                .collect(),
            self.etcd.iter().map(|r| p("etcd", r)).collect(),
        )
    }

    /// (an apiserver running, an etcd member running): an HA plane with a
    /// member killed is still a plane.
    pub fn running(&self) -> (bool, bool) {
        if !self.boot_id.is_empty() && self.boot_id != crate::plane::boot_id() {
            return (false, false);
        }
        let (_, mut a, mut e) = self.processes();
        (
            a.iter_mut().any(|p| p.is_running()),
            e.iter_mut().any(|p| p.is_running()),
        )
    }

    /// Asks the supervisor to stop the plane, stops whatever still runs
    /// (apiserver first), then removes the directory.
    pub fn stop_and_remove(&self, timeout: Duration) -> Result<()> {
        let (mut sup, mut a, mut e) = self.processes();
        // It stops each process, each with `timeout`, before it exits.
        sup.stop(timeout * (a.len() + e.len() + 1) as u32 + Duration::from_secs(5));
        // The plane's own clients go before the apiservers they talk to.
        let mut clients: Vec<Process> = [
            ("kwok", &self.kwok),
            ("kube-scheduler", &self.scheduler),
            ("kube-controller-manager", &self.controller_manager),
        ]
        .into_iter()
        .filter_map(|(name, r)| {
            r.as_ref()
                .map(|r| Process::recorded(name, r.pid, r.start_time, r.log.clone()))
        })
        .collect();
        for p in clients.iter_mut().chain(a.iter_mut()).chain(e.iter_mut()) {
            p.stop(timeout);
        }
        remove_plane_dir(&self.dir)
    }
}

/// Removes a plane directory, refusing anything that does not look like one.
pub fn remove_plane_dir(dir: &Path) -> Result<()> {
    if !dir.exists() {
        return Ok(());
    }
    if !super::plane::looks_like_plane_dir(dir) && std::fs::read_dir(dir)?.next().is_some() {
        bail!(
            "{} does not look like a ctrlbench plane directory; not removing it",
            dir.display()
        );
    }
    std::fs::remove_dir_all(dir).with_context(|| format!("cannot remove {}", dir.display()))
}

/// Holds a plane's name for the life of the process that starts and then
/// supervises it: an exclusive `flock` on `<planes>/.locks/<name>`, which the
/// kernel releases when the process exits, however it exits. The file is
/// opened close-on-exec, so etcd and kube-apiserver never inherit it.
pub struct NameLock {
    _file: std::fs::File,
}

/// Takes the name `name`, or says that another `cluster up` has it.
pub fn lock(name: &str) -> Result<NameLock> {
    use std::os::unix::fs::OpenOptionsExt;
    check_name(name)?;
    let dir = planes_root()?.join(".locks");
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let path = dir.join(name);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(&path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(NameLock { _file: file }),
        Err(rustix::io::Errno::WOULDBLOCK) => bail!(
            "a plane named '{name}' is already running or starting: use it, or stop it with 'ctrlbench cluster down --name {name}'"
        ),
        Err(e) => Err(e).with_context(|| format!("cannot lock {}", path.display())),
    }
}

/// Makes room for a new plane called `name`: errors if one runs, cleans up a
/// stale one. Returns a message when something stale was removed.
pub fn prepare(name: &str) -> Result<Option<String>> {
    let dir = plane_dir(name)?;
    match PlaneState::load(name)? {
        Some(s) => {
            let (a, e) = s.running();
            if a && e {
                bail!(
                    "a plane named '{name}' is already running at {}: use it, or stop it with 'ctrlbench cluster down --name {name}'",
                    s.url
                );
            }
            s.stop_and_remove(STOP_TIMEOUT)?;
            Ok(Some(format!(
                "removed stale plane '{name}' (its processes were gone)"
            )))
        }
        None if dir.exists() => {
            remove_plane_dir(&dir)?;
            Ok(Some(format!(
                "removed the leftovers of an unfinished plane '{name}'"
            )))
        }
        None => Ok(None),
    }
}

/// What `cluster status` prints for a running plane.
impl std::fmt::Display for PlaneState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "{}: running {} at {}, etcd fsync {}{}",
            self.name,
            self.version,
            self.url,
            crate::bench::on_off(self.etcd_fsync),
            if self.feature_gates.is_empty() {
                String::new()
            } else {
                format!(", feature gates {}", self.feature_gates.join(","))
            }
        )?;
        let api_urls = self
            .apiserver_urls
            .iter()
            .map(Some)
            .chain(std::iter::repeat(None));
        for (k, (r, url)) in self.apiservers.iter().zip(api_urls).enumerate() {
            writeln!(
                f,
                "  pid={} kube-apiserver {k}{} (log {})",
                r.pid,
                url.map(|u| format!(" {u}")).unwrap_or_default(),
                r.log.display()
            )?;
        }
        let metrics = self
            .etcd_metrics_urls
            .iter()
            .map(Some)
            .chain(std::iter::repeat(None));
        for (k, (r, m)) in self.etcd.iter().zip(metrics).enumerate() {
            writeln!(
                f,
                "  pid={} etcd {k} (metrics {})",
                r.pid,
                m.unwrap_or(&self.etcd_metrics_url)
            )?;
        }
        if let Some(r) = &self.controller_manager {
            writeln!(
                f,
                "  pid={} kube-controller-manager ({} controllers; log {})",
                r.pid,
                if self.kwok.is_some() {
                    "workload, namespace and garbage-collector"
                } else {
                    "namespace and garbage-collector"
                },
                r.log.display()
            )?;
        }
        for (name, r) in [("kube-scheduler", &self.scheduler), ("kwok", &self.kwok)] {
            if let Some(r) = r {
                writeln!(f, "  pid={} {name} (log {})", r.pid, r.log.display())?;
            }
        }
        if self.apiservers.len() > 1 {
            writeln!(
                f,
                "  front {} (round-robin over the apiservers, in supervisor pid={})",
                self.url, self.supervisor.pid
            )?;
        }
        writeln!(f, "  kubeconfig {}", self.kubeconfig.display())
    }
}
