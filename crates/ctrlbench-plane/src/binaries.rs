//! Finding, downloading or building etcd, kube-apiserver and, on demand,
//! kube-controller-manager (`--controller-manager`), kube-scheduler and KWOK
//! (`--nodes`).
//!
//! Lookup follows envtest: `TEST_ASSET_ETCD` / `TEST_ASSET_KUBE_APISERVER`,
//! then `$KUBEBUILDER_ASSETS`, then ctrlbench's cache
//! (`${XDG_CACHE_HOME:-~/.cache}/ctrlbench/k8s/<version>/`). Otherwise the
//! release binaries are downloaded and verified into that cache (`fetch`),
//! and what could not be downloaded is built with Go from the module proxy
//! through the wrapper modules in `tools/k8s/` (`go_build`; the modules
//! are embedded in `releases`, so an installed binary can build them too).
//! [`missing`] tells what would be built, building and writing nothing (the
//! dry run's estimate), from a [`Lookup`]: the environment and a cache root.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::fetch::{self, Downloads};
pub use crate::go_build::go_command;
pub(crate) use crate::go_build::{build, build_dir};
use crate::go_build::{build_etcd, build_k8s};
use crate::kwok::Kwok;
use crate::origin::{self, Origin};
pub use crate::releases::{DEFAULT_K8S_VERSION, committed, etcd_version};

/// Where a binary came from, for messages and the run manifest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Env,
    KubebuilderAssets,
    Cache,
    /// Downloaded and verified into the cache just now.
    Downloaded,
    Built,
}

/// The two binaries a plane needs.
#[derive(Debug, Clone)]
pub struct Binaries {
    pub etcd: PathBuf,
    pub kube_apiserver: PathBuf,
    /// Only for a plane with a controller-manager ([`install_controller_manager`]).
    pub kube_controller_manager: Option<PathBuf>,
    /// Only for a plane with fake nodes ([`install_scheduler`], [`install_kwok`]).
    pub kube_scheduler: Option<PathBuf>,
    pub kwok: Option<Kwok>,
    pub source: Source,
}

impl Binaries {
    /// Each binary by name, those the plane runs only when it has them.
    pub fn named(&self) -> Vec<(String, PathBuf)> {
        let mut out = vec![
            ("etcd".to_string(), self.etcd.clone()),
            ("kube-apiserver".to_string(), self.kube_apiserver.clone()),
        ];
        let extra = [
            (
                "kube-controller-manager",
                self.kube_controller_manager.as_ref(),
            ),
            ("kube-scheduler", self.kube_scheduler.as_ref()),
            ("kwok", self.kwok.as_ref().map(|k| &k.bin)),
        ];
        for (name, p) in extra {
            if let Some(p) = p {
                out.push((name.to_string(), p.clone()));
            }
        }
        out
    }
}

/// Each binary's origin ([`crate::origin`]): one the cache holds from its
/// file beside it (hashed once if it has none), one the user named as
/// theirs.
pub fn origins(named: &[(String, PathBuf)]) -> Result<Vec<(String, PathBuf, Origin)>> {
    let root = cache_root()?;
    named
        .iter()
        .map(|(name, p)| {
            let o = if p.starts_with(&root) {
                origin::of_cached(p)?
            } else {
                origin::of_user(p, "environment")
            };
            Ok((name.clone(), p.clone(), o))
        })
        .collect()
}

/// Normalises "v1.34.12" and "1.34.12" to "1.34.12"; rejects anything else.
pub fn normalize_version(v: &str) -> Result<String> {
    let v = v.trim().trim_start_matches('v');
    let parts: Vec<&str> = v.split('.').collect();
    if parts.len() != 3
        || parts
            .iter()
            .any(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()))
    {
        bail!(
            "invalid Kubernetes version {v:?}: expected MAJOR.MINOR.PATCH such as {DEFAULT_K8S_VERSION}"
        );
    }
    Ok(v.to_string())
}

/// `${XDG_CACHE_HOME:-~/.cache}/ctrlbench/`: every binary, build and
/// baseline tree ctrlbench keeps.
pub fn cache_root() -> Result<PathBuf> {
    let base = dirs::cache_dir().context("no cache directory: set XDG_CACHE_HOME or HOME")?;
    Ok(base.join("ctrlbench"))
}

/// `${XDG_CACHE_HOME:-~/.cache}/ctrlbench/k8s/<version>/`.
pub fn cache_dir(version: &str) -> Result<PathBuf> {
    Ok(cache_root()?.join("k8s").join(version))
}

/// The variables envtest reads, naming binaries or their directory.
const VARS: [&str; 5] = [
    "KUBEBUILDER_ASSETS",
    "TEST_ASSET_ETCD",
    "TEST_ASSET_KUBE_APISERVER",
    "TEST_ASSET_KUBE_CONTROLLER_MANAGER",
    "TEST_ASSET_KUBE_SCHEDULER",
];

/// Where binaries are looked for: envtest's variables, read once, and the
/// cache root. Taken apart from the process's environment so that what a
/// run would build can be told for any cache (a test's temporary one too).
#[derive(Debug, Clone)]
pub struct Lookup {
    /// The set, non-empty ones of [`VARS`].
    vars: Vec<(&'static str, PathBuf)>,
    /// `…/ctrlbench`, as [`cache_root`].
    pub root: PathBuf,
}

impl Lookup {
    /// The environment's variables and the cache root.
    pub fn from_env() -> Result<Lookup> {
        let vars = VARS
            .iter()
            .filter_map(|&k| {
                std::env::var_os(k)
                    .filter(|v| !v.is_empty())
                    .map(|v| (k, PathBuf::from(v)))
            })
            .collect();
        Ok(Lookup {
            vars,
            root: cache_root()?,
        })
    }

    /// A lookup of these variables (names from envtest's, others ignored) in
    /// the cache at `root`.
    pub fn new(root: &Path, vars: &[(&str, &Path)]) -> Lookup {
        Lookup {
            vars: VARS
                .iter()
                .filter_map(|&k| {
                    vars.iter()
                        .find(|(n, _)| *n == k)
                        .map(|(_, v)| (k, v.to_path_buf()))
                })
                .collect(),
            root: root.to_path_buf(),
        }
    }

    fn var(&self, k: &str) -> Option<&Path> {
        self.vars
            .iter()
            .find(|(n, _)| *n == k)
            .map(|(_, v)| v.as_path())
    }

    /// `…/ctrlbench/k8s/<version>/`: etcd and the Kubernetes binaries of one version.
    pub fn k8s_dir(&self, version: &str) -> PathBuf {
        self.root.join("k8s").join(version)
    }

    /// `…/ctrlbench/kwok/<version>/`.
    pub fn kwok_dir(&self) -> PathBuf {
        self.root.join("kwok").join(crate::kwok::KWOK_VERSION)
    }
}

/// Resolves both binaries without building anything.
pub fn find(version: &str) -> Result<Option<Binaries>> {
    find_in(&Lookup::from_env()?, version)
}

/// [`find`] in `at`.
pub fn find_in(at: &Lookup, version: &str) -> Result<Option<Binaries>> {
    let assets = at.var("KUBEBUILDER_ASSETS");
    let cache = at.k8s_dir(version);
    let lookup = |var: &str, name: &str| -> Option<(PathBuf, Source)> {
        if let Some(p) = at.var(var) {
            return Some((p.to_path_buf(), Source::Env));
        }
        if let Some(dir) = assets {
            return Some((dir.join(name), Source::KubebuilderAssets));
        }
        let p = cache.join(name);
        p.is_file().then_some((p, Source::Cache))
    };
    let (Some((etcd, s1)), Some((api, s2))) = (
        lookup("TEST_ASSET_ETCD", "etcd"),
        lookup("TEST_ASSET_KUBE_APISERVER", "kube-apiserver"),
    ) else {
        return Ok(None);
    };
    for p in [&etcd, &api] {
        if !p.is_file() {
            bail!(
                "{} does not exist (from TEST_ASSET_* or KUBEBUILDER_ASSETS): point it at setup-envtest's binaries or unset it to let ctrlbench build them",
                p.display()
            );
        }
    }
    Ok(Some(Binaries {
        etcd,
        kube_apiserver: api,
        kube_controller_manager: None,
        kube_scheduler: None,
        kwok: None,
        source: if s1 == s2 { s1 } else { Source::Env },
    }))
}

/// Finds both binaries, downloading ([`crate::fetch`], with `d` under the
/// environment's settings) or else building whatever the cache lacks.
pub fn install(version: &str, d: &Downloads) -> Result<Binaries> {
    install_in(&Lookup::from_env()?, &d.with_env()?, version)
}

/// [`install`] into `at`'s cache with exactly these download settings.
/// etcd and kube-apiserver build side by side, so that one's module
/// download or link overlaps the other's compile (with two busy cores that
/// gains nothing measurable; with more cores or a slow proxy it does).
/// Both are awaited before either's error counts, so no build outlives
/// this.
pub fn install_in(at: &Lookup, d: &Downloads, version: &str) -> Result<Binaries> {
    let version = normalize_version(version)?;
    if let Some(b) = find_in(at, &version)? {
        return Ok(b);
    }
    let cache = at.k8s_dir(&version);
    let fetched = fetch::fetch_missing(&cache, d, &version, &["etcd", "kube-apiserver"])?;
    let etcd = cache.join("etcd");
    let api = cache.join("kube-apiserver");
    if !(etcd.is_file() && api.is_file()) {
        let go = which_go()?;
        let work = build_dir(&cache)?;
        let (built_etcd, built_api) = std::thread::scope(|s| {
            let etcd_build = (!etcd.is_file())
                .then(|| s.spawn(|| build_etcd(&go, work.path(), &version, &etcd)));
            let api_built = if api.is_file() {
                Ok(())
            } else {
                build_k8s(&go, work.path(), &version, "kube-apiserver", &api)
            };
            let etcd_built = etcd_build.map_or(Ok(()), |h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("the etcd build panicked")))
            });
            (etcd_built, api_built)
        });
        built_etcd?;
        built_api?;
    }
    let mut b = find_in(at, &version)?.context("binaries missing after build")?;
    if !fetched.is_empty()
        && fetched
            .iter()
            .all(|(_, f)| matches!(f, fetch::Fetched::Cached(_)))
    {
        b.source = Source::Downloaded;
    }
    Ok(b)
}

/// kube-controller-manager of `version`: `TEST_ASSET_KUBE_CONTROLLER_MANAGER`,
/// then `$KUBEBUILDER_ASSETS` (when it holds one: setup-envtest's do not),
/// then the cache, else downloaded or built from the same
/// `k8s.io/kubernetes` module as kube-apiserver and cached beside it.
pub fn install_controller_manager(version: &str, d: &Downloads) -> Result<PathBuf> {
    install_k8s_extra(
        version,
        d,
        "kube-controller-manager",
        "TEST_ASSET_KUBE_CONTROLLER_MANAGER",
    )
}

/// kube-scheduler of `version`, found, downloaded or built like
/// [`install_controller_manager`] (`TEST_ASSET_KUBE_SCHEDULER`).
pub fn install_scheduler(version: &str, d: &Downloads) -> Result<PathBuf> {
    install_k8s_extra(version, d, "kube-scheduler", "TEST_ASSET_KUBE_SCHEDULER")
}

/// A binary of `k8s.io/kubernetes` beyond the two every plane needs: `var`,
/// then `$KUBEBUILDER_ASSETS` when it holds one, then the cache, else
/// downloaded, else built.
fn install_k8s_extra(version: &str, d: &Downloads, name: &str, var: &str) -> Result<PathBuf> {
    let version = normalize_version(version)?;
    let at = Lookup::from_env()?;
    if let Some(p) = find_extra(&at, &version, name, var)? {
        return Ok(p);
    }
    let cache = at.k8s_dir(&version);
    let bin = cache.join(name);
    fetch::fetch_missing(&cache, &d.with_env()?, &version, &[name])?;
    if bin.is_file() {
        return Ok(bin);
    }
    let go = which_go()?;
    let work = build_dir(&cache)?;
    build_k8s(&go, work.path(), &version, name, &bin)?;
    Ok(bin)
}

/// [`install_k8s_extra`]'s lookup, building nothing: `var`, then
/// `$KUBEBUILDER_ASSETS` when it holds one, then the cache.
fn find_extra(at: &Lookup, version: &str, name: &str, var: &str) -> Result<Option<PathBuf>> {
    if let Some(p) = at.var(var) {
        if !p.is_file() {
            bail!(
                "{} does not exist ({var}): point it at a {name} or unset it",
                p.display()
            );
        }
        return Ok(Some(p.to_path_buf()));
    }
    if let Some(p) = at.var("KUBEBUILDER_ASSETS").map(|d| d.join(name))
        && p.is_file()
    {
        return Ok(Some(p));
    }
    let bin = at.k8s_dir(version).join(name);
    Ok(bin.is_file().then_some(bin))
}

/// The Kubernetes binaries of `version` that a plane would build first,
/// found as [`install`], [`install_controller_manager`] and
/// [`install_scheduler`] find them, with nothing built or written: etcd
/// and kube-apiserver, then kube-controller-manager and kube-scheduler
/// when asked for. `KUBEBUILDER_ASSETS` counts as holding the first two,
/// as it does for [`find`].
pub fn missing(
    at: &Lookup,
    version: &str,
    controller_manager: bool,
    scheduler: bool,
) -> Result<Vec<&'static str>> {
    let version = normalize_version(version)?;
    let mut out = Vec::new();
    if find_in(at, &version)?.is_none() {
        // As `install`: each one the cache lacks is built.
        let cache = at.k8s_dir(&version);
        out.extend(
            ["etcd", "kube-apiserver"]
                .into_iter()
                .filter(|n| !cache.join(n).is_file()),
        );
    }
    for (wanted, name, var) in [
        (
            controller_manager,
            "kube-controller-manager",
            "TEST_ASSET_KUBE_CONTROLLER_MANAGER",
        ),
        (scheduler, "kube-scheduler", "TEST_ASSET_KUBE_SCHEDULER"),
    ] {
        if wanted && find_extra(at, &version, name, var)?.is_none() {
            out.push(name);
        }
    }
    Ok(out)
}

/// `go` on PATH, if any.
pub fn which_go_opt() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join("go"))
        .find(|p| p.is_file())
}

pub(crate) fn which_go() -> Result<PathBuf> {
    which_go_opt()
        .context(
            "Go is not installed, and no etcd/kube-apiserver binaries were found: either install Go (≥ 1.26) so ctrlbench can build them, \
             or set KUBEBUILDER_ASSETS to a directory holding etcd and kube-apiserver from setup-envtest",
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_normalise() {
        assert_eq!(normalize_version("v1.34.12").unwrap(), "1.34.12");
        assert_eq!(normalize_version("1.33.0").unwrap(), "1.33.0");
        assert!(normalize_version("1.34").is_err());
        assert!(normalize_version("latest").is_err());
    }
}
