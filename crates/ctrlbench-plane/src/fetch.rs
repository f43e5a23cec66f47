//! Release binaries, downloaded, verified and cached: the first way a plane's
//! binaries are had when the cache lacks them, before the Go build
//! (`go_build`), which takes 10–20 minutes cold where a download takes the
//! time of its bytes.
//!
//! kube-apiserver, kube-controller-manager and kube-scheduler come from
//! Kubernetes' release layout, `<base>/release/v<ver>/bin/linux/<arch>/<name>`
//! with `<name>.sha256` beside it; etcd from its release archive,
//! `<base>/v<ver>/etcd-v<ver>-linux-<arch>.tar.gz` with `SHA256SUMS` in the
//! same directory. A mirror (`CTRLBENCH_MIRROR`, or an experiment's
//! `[cluster] mirror`) serves both under one root: `<mirror>/release/…` and
//! `<mirror>/etcd/v<ver>/…`. Every file is written to a temporary file in the
//! version's cache directory, its SHA-256 compared with the published one,
//! and only then made executable and renamed into place, so the cache holds
//! verified binaries only, by version, exactly where a build would put them.
//! A mismatch is an error, never a reason to build instead. A host that does
//! not answer (a connect error, 10 s without a byte, an HTTP error such as
//! 404 for a version it lacks) makes the caller build the binary instead,
//! with one line that says why: [`Fetched::Build`]. `CTRLBENCH_OFFLINE=1` (or
//! `offline = true`) skips downloading without opening a connection.

use std::io::{Seek, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, anyhow};
use sha2::{Digest, Sha256};

use crate::progress::Progress;
use crate::releases::etcd_version;

/// Kubernetes' release download host.
pub const K8S_BASE: &str = "https://dl.k8s.io";
/// etcd's release downloads (one directory per tag).
pub const ETCD_BASE: &str = "https://github.com/etcd-io/etcd/releases/download";
/// How long a connect, or a read between two chunks, may take.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// The environment variables: a mirror's root URL, and downloads off.
pub const MIRROR_VAR: &str = "CTRLBENCH_MIRROR";
pub const OFFLINE_VAR: &str = "CTRLBENCH_OFFLINE";

/// The most a checksum file may hold.
const MAX_SUMS: usize = 1 << 20;

/// Where release binaries come from: the official hosts, a mirror with
/// their layout, or nowhere ([`Downloads::offline`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Downloads {
    /// A mirror's root (http or https), serving `release/…` and `etcd/…`.
    pub mirror: Option<String>,
    /// No download at all: every missing binary is built.
    pub offline: bool,
}

impl Downloads {
    /// `CTRLBENCH_MIRROR` and `CTRLBENCH_OFFLINE`.
    pub fn from_env() -> Result<Downloads> {
        Downloads::from_vars(|k| std::env::var(k).ok())
    }

    /// [`Downloads::from_env`] from any source of variables. An empty
    /// variable is unset; the mirror must be an http(s) URL and offline
    /// 1/0 (or true/false, yes/no).
    pub fn from_vars(get: impl Fn(&str) -> Option<String>) -> Result<Downloads> {
        let mirror = get(MIRROR_VAR).filter(|m| !m.trim().is_empty());
        if let Some(m) = &mirror {
            check_mirror(m).map_err(|e| anyhow!("{MIRROR_VAR}: {e}"))?;
        }
        let offline = match get(OFFLINE_VAR).unwrap_or_default().trim() {
            "" | "0" | "false" | "no" => false,
            "1" | "true" | "yes" => true,
            v => anyhow::bail!("{OFFLINE_VAR}={v:?}: expected 1 (no downloads) or 0"),
        };
        Ok(Downloads { mirror, offline })
    }

    /// These settings (an experiment file's) under the environment's: its
    /// mirror, when set, wins (the site knows its mirror); offline when
    /// either says so.
    pub fn with_env(&self) -> Result<Downloads> {
        let env = Downloads::from_env()?;
        Ok(Downloads {
            mirror: env.mirror.or_else(|| self.mirror.clone()),
            offline: env.offline || self.offline,
        })
    }

    fn root(&self) -> Option<&str> {
        self.mirror
            .as_deref()
            .map(|m| m.trim().trim_end_matches('/'))
    }

    /// The URL of Kubernetes binary `name` of `version` (no `v`).
    pub fn k8s_url(&self, version: &str, arch: &str, name: &str) -> String {
        let base = self.root().unwrap_or(K8S_BASE);
        format!("{base}/release/v{version}/bin/linux/{arch}/{name}")
    }

    /// The URLs of etcd `version`'s archive and of its `SHA256SUMS`.
    pub fn etcd_urls(&self, version: &str, arch: &str) -> (String, String) {
        let dir = match self.root() {
            Some(m) => format!("{m}/etcd/v{version}"),
            None => format!("{ETCD_BASE}/v{version}"),
        };
        (
            format!("{dir}/{}", etcd_archive(version, arch)),
            format!("{dir}/SHA256SUMS"),
        )
    }
}

/// `etcd-v<version>-linux-<arch>.tar.gz`.
fn etcd_archive(version: &str, arch: &str) -> String {
    format!("etcd-v{version}-linux-{arch}.tar.gz")
}

/// Refuses a mirror that is not an http(s) URL with a host (one line).
pub fn check_mirror(m: &str) -> std::result::Result<(), String> {
    match reqwest::Url::parse(m.trim()) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => Ok(()),
        _ => Err(format!(
            "{m:?} is not an http:// or https:// URL (a mirror's root, serving release/… and etcd/…)"
        )),
    }
}

/// The release's name for this machine's architecture, if it has one.
pub fn arch() -> Option<&'static str> {
    match std::env::consts::ARCH {
        "x86_64" => Some("amd64"),
        "aarch64" => Some("arm64"),
        "s390x" => Some("s390x"),
        _ => None,
    }
}

/// What became of one binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fetched {
    /// Downloaded, verified and cached here.
    Cached(PathBuf),
    /// Not downloaded, for this reason (one line): build it.
    Build(String),
}

/// Why a download stopped: a reason to build instead, or an error.
enum Miss {
    Build(String),
    Fail(anyhow::Error),
}

impl From<std::io::Error> for Miss {
    fn from(e: std::io::Error) -> Miss {
        Miss::Fail(e.into())
    }
}

impl From<anyhow::Error> for Miss {
    fn from(e: anyhow::Error) -> Miss {
        Miss::Fail(e)
    }
}

type Step<T> = std::result::Result<T, Miss>;

/// Each of `names` (`etcd` or a Kubernetes binary of `version`) that the
/// version's cache directory `dir` lacks, downloaded where it can be. Returns what became of each,
/// in order, after printing one line per binary to be built instead (and
/// per one downloaded). An error is a download that failed its checksum,
/// or a cache that cannot be written.
pub fn fetch_missing(
    dir: &Path,
    d: &Downloads,
    version: &str,
    names: &[&str],
) -> Result<Vec<(String, Fetched)>> {
    let names: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| !dir.join(n).is_file())
        .collect();
    if names.is_empty() {
        return Ok(vec![]);
    }
    let out = fetch_all(dir, d, version, &names)?;
    for (name, f) in &out {
        let v = if name == "etcd" {
            etcd_version(version)
        } else {
            version
        };
        match f {
            Fetched::Cached(p) => {
                eprintln!("downloaded and verified {name} v{v} → {}", p.display())
            }
            Fetched::Build(why) => {
                eprintln!("{name} v{v}: not downloaded ({why}); building it with Go")
            }
        }
    }
    Ok(out)
}

/// [`fetch_missing`] without the lines: every name, into `dir`.
pub fn fetch_all(
    dir: &Path,
    d: &Downloads,
    version: &str,
    names: &[&str],
) -> Result<Vec<(String, Fetched)>> {
    let skip = |why: String| -> Vec<(String, Fetched)> {
        names
            .iter()
            .map(|n| (n.to_string(), Fetched::Build(why.clone())))
            .collect()
    };
    if d.offline {
        return Ok(skip(format!(
            "downloads are off: {OFFLINE_VAR}=1 or offline = true"
        )));
    }
    let Some(arch) = arch() else {
        return Ok(skip(format!(
            "no release is published for {}",
            std::env::consts::ARCH
        )));
    };
    if let Some(m) = &d.mirror {
        check_mirror(m).map_err(|e| anyhow!("mirror: {e}"))?;
    }
    let client = match client(d) {
        Ok(c) => c,
        Err(e) => return Ok(skip(format!("{e:#}"))),
    };
    let existed = dir.is_dir();
    let result = on_own_runtime(async {
        let mut out = Vec::new();
        for &name in names {
            let step = if name == "etcd" {
                fetch_etcd(&client, d, dir, etcd_version(version), arch).await
            } else {
                fetch_k8s(&client, d, dir, version, arch, name).await
            };
            out.push((
                name.to_string(),
                match step {
                    Ok(p) => Fetched::Cached(p),
                    Err(Miss::Build(why)) => Fetched::Build(why),
                    Err(Miss::Fail(e)) => return Err(e),
                },
            ));
        }
        Ok(out)
    });
    if !existed {
        // Left empty by a failure: nothing was cached, so nothing stays.
        let _ = std::fs::remove_dir(dir);
    }
    result
}

/// One HTTP client for a set of downloads: 10 s to connect and between
/// reads (a whole download may take longer); a loopback mirror is reached
/// directly, never through a proxy the environment names.
fn client(d: &Downloads) -> Result<reqwest::Client> {
    let mut b = reqwest::Client::builder()
        .connect_timeout(TIMEOUT)
        .read_timeout(TIMEOUT)
        .user_agent(concat!("ctrlbench/", env!("CARGO_PKG_VERSION")));
    let loopback = d
        .root()
        .and_then(|m| reqwest::Url::parse(m).ok())
        .is_some_and(|u| match u.host_str() {
            Some("localhost") => true,
            Some(h) => h
                .trim_matches(['[', ']'])
                .parse::<std::net::IpAddr>()
                .is_ok_and(|a| a.is_loopback()),
            None => false,
        });
    if loopback {
        b = b.no_proxy();
    }
    b.build().context("cannot make an HTTP client")
}

/// Runs `f` to completion on a runtime of its own, on a thread of its own
/// (the callers are blocking code, some of them inside another runtime).
fn on_own_runtime<T: Send>(f: impl Future<Output = T> + Send) -> T {
    std::thread::scope(|s| {
        s.spawn(|| {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a tokio runtime")
                .block_on(f)
        })
        .join()
        .expect("the download thread panicked")
    })
}

/// Kubernetes binary `name`, checked against `<name>.sha256`.
async fn fetch_k8s(
    client: &reqwest::Client,
    d: &Downloads,
    dir: &Path,
    version: &str,
    arch: &str,
    name: &str,
) -> Step<PathBuf> {
    let url = d.k8s_url(version, arch, name);
    let sum_url = format!("{url}.sha256");
    let want = published(&text(client, &sum_url).await?, None)
        .ok_or_else(|| anyhow!("{sum_url} holds no SHA-256: {name} was not cached"))?;
    let mut tmp = temp_in(dir)?;
    let got = download(
        client,
        &url,
        tmp.as_file_mut(),
        &format!("{name} v{version}"),
    )
    .await?;
    verify(&url, &got, &want, &sum_url)?;
    let bin = install(tmp, &dir.join(name))?;
    crate::origin::write(&bin, "downloaded", &url, &got)?;
    Ok(bin)
}

/// etcd from its archive, the archive checked against `SHA256SUMS` before
/// `etcd-v<ver>-linux-<arch>/etcd` is taken out of it.
async fn fetch_etcd(
    client: &reqwest::Client,
    d: &Downloads,
    dir: &Path,
    version: &str,
    arch: &str,
) -> Step<PathBuf> {
    let (url, sums_url) = d.etcd_urls(version, arch);
    let archive = etcd_archive(version, arch);
    let want = published(&text(client, &sums_url).await?, Some(&archive))
        .ok_or_else(|| anyhow!("{sums_url} gives no SHA-256 for {archive}: etcd was not cached"))?;
    let mut tgz = temp_in(dir)?;
    let got = download(client, &url, tgz.as_file_mut(), &format!("etcd v{version}")).await?;
    verify(&url, &got, &want, &sums_url)?;
    tgz.as_file_mut().rewind()?;
    let inner = format!("etcd-v{version}-linux-{arch}/etcd");
    let mut bin = temp_in(dir)?;
    if !untar_one(tgz.as_file_mut(), &inner, bin.as_file_mut())
        .with_context(|| format!("cannot read {url}"))?
    {
        return Err(Miss::Fail(anyhow!("{url} holds no {inner}")));
    }
    let bin = install(bin, &dir.join("etcd"))?;
    // The archive was verified; the hash kept is the binary's own.
    let sha = crate::origin::sha256_of(&bin)?;
    crate::origin::write(&bin, "downloaded", &url, &sha)?;
    Ok(bin)
}

/// Copies the archive entry named `path` into `out`; false if none is.
fn untar_one(tgz: &mut std::fs::File, path: &str, out: &mut std::fs::File) -> Result<bool> {
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(tgz));
    for entry in archive.entries()? {
        let mut entry = entry?;
        if entry.header().entry_type().is_file() && entry.path()?.as_ref() == Path::new(path) {
            std::io::copy(&mut entry, out)?;
            out.flush()?;
            return Ok(true);
        }
    }
    Ok(false)
}

/// A mismatch, as one line naming the file and both sums.
fn verify(url: &str, got: &str, want: &str, sum_url: &str) -> Step<()> {
    if got.eq_ignore_ascii_case(want) {
        return Ok(());
    }
    Err(Miss::Fail(anyhow!(
        "{url}: SHA-256 {got} does not match {want} published in {sum_url}; nothing was cached"
    )))
}

/// The SHA-256 a checksum file publishes: a `.sha256` file's first word
/// (`name` None), or the hash on the line of `SHA256SUMS` naming `name`.
pub fn published(text: &str, name: Option<&str>) -> Option<String> {
    let is_sum = |w: &str| w.len() == 64 && w.bytes().all(|b| b.is_ascii_hexdigit());
    let found = match name {
        None => text.split_whitespace().next(),
        Some(name) => text.lines().find_map(|l| {
            let mut w = l.split_whitespace();
            let (sum, file) = (w.next()?, w.next()?);
            (file.trim_start_matches('*') == name).then_some(sum)
        }),
    }?;
    is_sum(found).then(|| found.to_ascii_lowercase())
}

/// A temporary file in `dir` (created if missing): the same file system as
/// the cached binary, so that it is renamed into place.
fn temp_in(dir: &Path) -> Result<tempfile::NamedTempFile> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    tempfile::Builder::new()
        .prefix(".fetch-")
        .tempfile_in(dir)
        .with_context(|| format!("cannot write in {}", dir.display()))
}

/// A verified binary, made executable and renamed to `to`.
fn install(tmp: tempfile::NamedTempFile, to: &Path) -> Result<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    tmp.as_file().sync_all()?;
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755))?;
    tmp.persist(to)
        .with_context(|| format!("cannot write {}", to.display()))?;
    Ok(to.to_path_buf())
}

/// The response to GET `url`, or why to build instead.
async fn get(client: &reqwest::Client, url: &str) -> Step<reqwest::Response> {
    let resp = client
        .get(url)
        .send()
        .await
        .map_err(|e| Miss::Build(unreachable(url, &e)))?;
    let status = resp.status();
    if status == reqwest::StatusCode::NOT_FOUND {
        return Err(Miss::Build(format!("{url} is not there (HTTP 404)")));
    }
    if !status.is_success() {
        return Err(Miss::Build(format!("{url} answered HTTP {status}")));
    }
    Ok(resp)
}

/// A small text file (a checksum file).
async fn text(client: &reqwest::Client, url: &str) -> Step<String> {
    let mut resp = get(client, url).await?;
    let mut body = Vec::new();
    while let Some(chunk) = resp
        .chunk()
        .await
        .map_err(|e| Miss::Build(unreachable(url, &e)))?
    {
        body.extend_from_slice(&chunk);
        if body.len() > MAX_SUMS {
            return Err(Miss::Fail(anyhow!(
                "{url} is not a checksum file (over 1 MiB)"
            )));
        }
    }
    Ok(String::from_utf8_lossy(&body).into_owned())
}

/// Downloads `url` into `to` with a progress bar; returns its SHA-256.
async fn download(
    client: &reqwest::Client,
    url: &str,
    to: &mut std::fs::File,
    label: &str,
) -> Step<String> {
    let mut resp = get(client, url).await?;
    let total = resp.content_length().unwrap_or(0);
    let bar = Progress::new(
        &[format!("downloading {label}")],
        total.max(1),
        "bytes",
        Duration::from_secs(15),
        true,
    );
    let mut hash = Sha256::new();
    let done = loop {
        match resp.chunk().await {
            Ok(Some(chunk)) => {
                hash.update(&chunk);
                if let Err(e) = to.write_all(&chunk) {
                    break Err(Miss::from(e));
                }
                bar.inc(chunk.len() as u64);
            }
            Ok(None) => break Ok(()),
            Err(e) => break Err(Miss::Build(unreachable(url, &e))),
        }
    };
    bar.finish_and_clear();
    done?;
    to.flush()?;
    Ok(hash.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// Why `url` could not be had, in a few words.
fn unreachable(url: &str, e: &reqwest::Error) -> String {
    let what = if e.is_timeout() {
        format!("no answer within {} s", TIMEOUT.as_secs())
    } else if e.is_connect() {
        "cannot connect".to_string()
    } else {
        "the transfer failed".to_string()
    };
    let mut cause = String::new();
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        cause = s.to_string();
        src = s.source();
    }
    if cause.is_empty() {
        format!("{url}: {what}")
    } else {
        format!("{url}: {what}: {}", cause.lines().next().unwrap_or(""))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SUM: &str = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

    #[test]
    fn the_layouts_are_the_releases_and_the_mirrors() {
        let d = Downloads::default();
        assert_eq!(
            d.k8s_url("1.37.2", "amd64", "kube-apiserver"),
            "https://dl.k8s.io/release/v1.37.2/bin/linux/amd64/kube-apiserver"
        );
        assert_eq!(
            d.etcd_urls("3.7.0", "arm64"),
            (
                format!("{ETCD_BASE}/v3.7.0/etcd-v3.7.0-linux-arm64.tar.gz"),
                format!("{ETCD_BASE}/v3.7.0/SHA256SUMS")
            )
        );
        let m = Downloads {
            mirror: Some("http://mirror.internal:8080/k8s/".into()),
            offline: false,
        };
        assert_eq!(
            m.k8s_url("1.34.12", "amd64", "kube-scheduler"),
            "http://mirror.internal:8080/k8s/release/v1.34.12/bin/linux/amd64/kube-scheduler"
        );
        assert_eq!(
            m.etcd_urls("3.6.16", "amd64").0,
            "http://mirror.internal:8080/k8s/etcd/v3.6.16/etcd-v3.6.16-linux-amd64.tar.gz"
        );
    }

    #[test]
    fn published_sums_are_read_as_the_releases_write_them() {
        assert_eq!(published(&format!("{SUM}\n"), None).as_deref(), Some(SUM));
        let upper = SUM.to_ascii_uppercase();
        assert_eq!(published(&upper, None).as_deref(), Some(SUM));
        let sums = format!("{}  etcd-a.tar.gz\n{SUM} *etcd-b.tar.gz\n", "0".repeat(64));
        assert_eq!(
            published(&sums, Some("etcd-b.tar.gz")).as_deref(),
            Some(SUM)
        );
        assert_eq!(published(&sums, Some("etcd-c.tar.gz")), None);
        assert_eq!(published("not a sum\n", None), None);
        assert_eq!(published(&SUM[..63], None), None);
        assert_eq!(published("", None), None);
    }

    #[test]
    fn settings_come_from_the_variables() {
        let vars = |m: &'static str, o: &'static str| {
            move |k: &str| match k {
                MIRROR_VAR => Some(m.to_string()),
                OFFLINE_VAR => Some(o.to_string()),
                _ => None,
            }
        };
        assert_eq!(
            Downloads::from_vars(vars("", "")).unwrap(),
            Downloads::default()
        );
        let d = Downloads::from_vars(vars("https://m.internal", "0")).unwrap();
        assert_eq!(d.mirror.as_deref(), Some("https://m.internal"));
        assert!(!d.offline);
        assert!(Downloads::from_vars(vars("", "true")).unwrap().offline);
        assert!(Downloads::from_vars(vars("", "2")).is_err());
        assert!(Downloads::from_vars(vars("s3://bucket", "")).is_err());
    }
}
