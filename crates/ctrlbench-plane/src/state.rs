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
    pub etcd_url: String,
    pub etcd_metrics_url: String,
    pub etcd_fsync: bool,
    pub feature_gates: Vec<String>,
    pub etcd: ProcessRecord,
    pub apiserver: ProcessRecord,
    /// The process that started the plane and reaps its processes
    /// (`cluster up --foreground`, detached by a plain `cluster up`).
    pub supervisor: ProcessRecord,
    /// The boot the plane was started in: after a reboot its pids mean nothing.
    #[serde(default)]
    pub boot_id: String,
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
            etcd_url: plane.etcd.config.client_url(),
            etcd_metrics_url: plane.etcd.config.metrics_url(),
            etcd_fsync,
            feature_gates: feature_gates.to_vec(),
            etcd: rec(&plane.etcd.process),
            apiserver: rec(&plane.apiserver.process),
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

    fn processes(&self) -> [Process; 3] {
        [
            Process::recorded(
                "supervisor",
                self.supervisor.pid,
                self.supervisor.start_time,
                self.supervisor.log.clone(),
            ),
            Process::recorded(
                "kube-apiserver",
                self.apiserver.pid,
                self.apiserver.start_time,
                self.apiserver.log.clone(),
            ),
            Process::recorded(
                "etcd",
                self.etcd.pid,
                self.etcd.start_time,
                self.etcd.log.clone(),
            ),
        ]
    }

    /// (apiserver running, etcd running).
    pub fn running(&self) -> (bool, bool) {
        if !self.boot_id.is_empty() && self.boot_id != crate::plane::boot_id() {
            return (false, false);
        }
        let [_, mut a, mut e] = self.processes();
        (a.is_running(), e.is_running())
    }

    /// Asks the supervisor to stop the plane, stops whatever still runs
    /// (apiserver first), then removes the directory.
    pub fn stop_and_remove(&self, timeout: Duration) -> Result<()> {
        let [mut sup, mut a, mut e] = self.processes();
        // It stops two processes, each with `timeout`, before it exits.
        sup.stop(timeout * 2 + Duration::from_secs(5));
        a.stop(timeout);
        e.stop(timeout);
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
        writeln!(
            f,
            "  pid={} kube-apiserver (log {})",
            self.apiserver.pid,
            self.apiserver.log.display()
        )?;
        writeln!(
            f,
            "  pid={} etcd {} (metrics {})",
            self.etcd.pid, self.etcd_url, self.etcd_metrics_url
        )?;
        writeln!(f, "  kubeconfig {}", self.kubeconfig.display())
    }
}
