//! A temporary plane's directory and who owns it: the owner file a plane
//! writes, the guard that removes a directory a plane did not take, and the
//! sweep that removes the directories of planes whose owner is gone.

use std::path::{Path, PathBuf};

use anyhow::Result;

/// Temporary plane directories: `$TMPDIR/ctrlbench-plane-*`.
pub(crate) const TEMP_PREFIX: &str = "ctrlbench-plane-";

/// The process that owns a temporary plane directory (`owner.json`).
#[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
pub(crate) struct Owner {
    pid: u32,
    start_time: u64,
    boot_id: String,
}

impl Owner {
    pub(crate) fn me() -> Owner {
        let pid = std::process::id();
        Owner {
            pid,
            start_time: crate::process::start_time(pid).unwrap_or(0),
            boot_id: boot_id(),
        }
    }

    pub(crate) fn write(&self, dir: &Path) -> Result<()> {
        crate::tinyca::write(
            &dir.join("owner.json"),
            &serde_json::to_string(self)?,
            0o600,
        )
    }

    /// Gone: another boot, or no process with that pid and start time.
    fn gone(&self) -> bool {
        self.boot_id != boot_id() || !crate::process::is_alive(self.pid, self.start_time)
    }
}

/// This boot's id (`/proc/sys/kernel/random/boot_id`).
pub fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// Removes temporary plane directories whose owner is gone (a `ctrlbench`
/// killed with SIGKILL cannot clean up; its etcd and kube-apiserver died with
/// it by the parent-death signal). Returns what was removed.
pub fn sweep_orphans() -> Vec<PathBuf> {
    orphans()
        .into_iter()
        .filter(|p| std::fs::remove_dir_all(p).is_ok())
        .collect()
}

/// The temporary plane directories whose owner is gone, removed by
/// nothing (what [`sweep_orphans`] would remove).
pub fn orphans() -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for e in entries.flatten() {
        let path = e.path();
        let ours = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with(TEMP_PREFIX));
        if !ours || !path.is_dir() {
            continue;
        }
        let owner: Option<Owner> = std::fs::read_to_string(path.join("owner.json"))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok());
        if owner.is_some_and(|o| o.gone()) {
            found.push(path);
        }
    }
    found
}

/// Removes a directory unless the plane took ownership of it.
pub(crate) struct DirGuard(pub(crate) Option<PathBuf>);

impl Drop for DirGuard {
    fn drop(&mut self) {
        if let Some(d) = self.0.take() {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

/// True if `path` is a plane directory this tool may remove (it holds our files).
pub fn looks_like_plane_dir(path: &Path) -> bool {
    path.join("pki").is_dir() || path.join("state.json").is_file()
}
