//! Building etcd and the Kubernetes binaries with Go, the fallback when no
//! release download is had (`fetch`): each from a wrapper module (the
//! committed ones of `tools/k8s/`, embedded in `binaries`, or one generated
//! against the module proxy for another version), `go build -v` feeding a
//! progress line, the binary renamed into the version's cache directory.
//! KWOK's build (`kwok_build`) shares `build`, `build_dir` and `go_command`.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::releases::{RELEASES, etcd_version};

/// Builds the etcd release paired with Kubernetes `version` into `out`.
pub(crate) fn build_etcd(go: &Path, work: &Path, version: &str, out: &Path) -> Result<()> {
    let release = etcd_version(version);
    let dir = work.join("etcd");
    let (go_mod, go_sum) = RELEASES
        .iter()
        .find(|r| r.etcd == release)
        .map(|r| (r.etcd_mod, r.etcd_sum))
        .expect("etcd_version names a committed release");
    write_module(&dir, go_mod, go_sum)?;
    let ldflags = format!("-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=v{release}");
    build(
        go,
        &dir,
        "go.etcd.io/etcd/server/v3",
        &ldflags,
        out,
        &format!("etcd v{release}"),
    )
}

/// Builds `cmd` (kube-apiserver, kube-controller-manager or kube-scheduler) of Kubernetes
/// `version` into `out`, in a module under `work`: the committed one for a
/// release in [`RELEASES`], otherwise one generated against the proxy.
pub(crate) fn build_k8s(
    go: &Path,
    work: &Path,
    version: &str,
    cmd: &str,
    out: &Path,
) -> Result<()> {
    let dir = work.join(cmd);
    if let Some(r) = RELEASES.iter().find(|r| r.k8s == version) {
        write_module(&dir, r.apiserver_mod, r.apiserver_sum)?;
    } else {
        generate_apiserver_module(go, &dir, version)?;
    }
    build(
        go,
        &dir,
        &format!("k8s.io/kubernetes/cmd/{cmd}"),
        &version_ldflags(version)?,
        out,
        &format!("{cmd} v{version}"),
    )
}

/// A temporary build directory inside the version's cache directory (the
/// same file system, so a finished binary is renamed into place).
pub(crate) fn build_dir(cache: &Path) -> Result<tempfile::TempDir> {
    std::fs::create_dir_all(cache).with_context(|| format!("cannot create {}", cache.display()))?;
    tempfile::Builder::new()
        .prefix(".build-")
        .tempdir_in(cache)
        .context("cannot create a build directory in the cache")
}

fn write_module(dir: &Path, go_mod: &str, go_sum: &str) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("go.mod"), go_mod)?;
    std::fs::write(dir.join("go.sum"), go_sum)?;
    Ok(())
}

/// The `-X` flags that make `/version` report the real release.
fn version_ldflags(version: &str) -> Result<String> {
    let mut parts = version.split('.');
    let (major, minor) = (parts.next().unwrap_or("1"), parts.next().unwrap_or("0"));
    let mut flags = vec!["-s".to_string(), "-w".to_string()];
    for pkg in [
        "k8s.io/component-base/version",
        "k8s.io/client-go/pkg/version",
    ] {
        for (k, v) in [
            ("gitVersion", format!("v{version}")),
            ("gitMajor", major.to_string()),
            ("gitMinor", minor.to_string()),
            ("gitTreeState", "clean".to_string()),
            ("buildDate", "1970-01-01T00:00:00Z".to_string()),
        ] {
            flags.push(format!("-X {pkg}.{k}={v}"));
        }
    }
    Ok(flags.join(" "))
}

/// For a version other than the committed one: require k8s.io/kubernetes at
/// that version and replace every staging module it pins at v0.0.0 with the
/// matching published v0.MINOR.PATCH, then let `go mod tidy` fill go.sum.
fn generate_apiserver_module(go: &Path, dir: &Path, version: &str) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    let out = go_command(go)
        .args([
            "mod",
            "download",
            "-json",
            &format!("k8s.io/kubernetes@v{version}"),
        ])
        .current_dir(dir)
        .output()
        .context("cannot run go mod download")?;
    let info: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    if let Some(err) = info.get("Error").and_then(|e| e.as_str()) {
        bail!("Kubernetes v{version} is not available from the Go module proxy: {err}");
    }
    let gomod_path = info["GoMod"]
        .as_str()
        .context("go mod download gave no go.mod path")?;
    let upstream = std::fs::read_to_string(gomod_path)?;
    let staging: Vec<&str> = upstream
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let l = l.strip_prefix("require ").unwrap_or(l);
            let mut f = l.split_whitespace();
            match (f.next(), f.next()) {
                (Some(m), Some("v0.0.0")) if m.starts_with("k8s.io/") => Some(m),
                _ => None,
            }
        })
        .collect();
    let staging_version = format!("v0{}", &version[version.find('.').unwrap_or(0)..]);
    let mut gomod = format!(
        "module ctrlbench.dev/tools/k8s/kube-apiserver\n\ngo 1.24\n\ntool (\n\tk8s.io/kubernetes/cmd/kube-apiserver\n\tk8s.io/kubernetes/cmd/kube-controller-manager\n\tk8s.io/kubernetes/cmd/kube-scheduler\n)\n\nrequire k8s.io/kubernetes v{version}\n\nreplace (\n"
    );
    for m in &staging {
        gomod.push_str(&format!("\t{m} => {m} {staging_version}\n"));
    }
    gomod.push_str(")\n");
    std::fs::write(dir.join("go.mod"), gomod)?;
    eprintln!(
        "resolving modules for Kubernetes v{version} ({} staging modules)…",
        staging.len()
    );
    let status = go_command(go)
        .args(["mod", "tidy"])
        .current_dir(dir)
        .status()
        .context("cannot run go mod tidy")?;
    if !status.success() {
        bail!(
            "go mod tidy failed for Kubernetes v{version}: a staging module at {staging_version} is probably not served; pick another --k8s-version"
        );
    }
    Ok(())
}

/// Runs `go build -v` with a progress line fed by the packages it compiles.
pub(crate) fn build(
    go: &Path,
    dir: &Path,
    pkg: &str,
    ldflags: &str,
    out: &Path,
    label: &str,
) -> Result<()> {
    let total = go_command(go)
        .args(["list", "-deps", pkg])
        .current_dir(dir)
        .stderr(Stdio::inherit())
        .output()
        .map(|o| o.stdout.iter().filter(|b| **b == b'\n').count() as u64)
        .unwrap_or(0);
    let tmp = out.with_extension("partial");
    let bar = crate::progress::Progress::bar(total.max(1), &format!("building {label}"));
    let started = Instant::now();
    let mut child = go_command(go)
        .args(["build", "-v", "-trimpath", "-ldflags", ldflags, "-o"])
        .arg(&tmp)
        .arg(pkg)
        .current_dir(dir)
        .env("CGO_ENABLED", "0")
        .env("GOFLAGS", "-mod=mod")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot run go build")?;
    let mut tail = Vec::new();
    for line in BufReader::new(child.stderr.take().expect("piped")).lines() {
        let line = line?;
        bar.inc(1);
        bar.set_message(line.clone());
        tail.push(line);
        if tail.len() > 20 {
            tail.remove(0);
        }
    }
    let status = child.wait()?;
    bar.finish_and_clear();
    if !status.success() {
        let _ = std::fs::remove_file(&tmp);
        bail!("building {label} failed:\n{}", tail.join("\n"));
    }
    std::fs::rename(&tmp, out)?;
    crate::origin::write_built(out, &format!("{pkg} ({label})"))?;
    eprintln!(
        "built {label} in {:.0?} → {}",
        round(started.elapsed()),
        out.display()
    );
    Ok(())
}

fn round(d: Duration) -> Duration {
    Duration::from_secs(d.as_secs())
}

/// A `go` command that dies with ctrlbench (see [`crate::process::own`]).
pub fn go_command(go: &Path) -> Command {
    let mut cmd = Command::new(go);
    crate::process::own(&mut cmd, crate::process::Lifetime::Attached);
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ldflags_carry_the_version() {
        let f = version_ldflags("1.34.12").unwrap();
        assert!(f.contains("-X k8s.io/component-base/version.gitVersion=v1.34.12"));
        assert!(f.contains("-X k8s.io/component-base/version.gitMinor=34"));
    }
}
