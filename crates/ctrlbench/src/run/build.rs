//! The `build` steps of command variants, run after the checks and before
//! anything starts: each distinct (build_dir, build) once, its output shown
//! as it comes, a failure one line with the build's last lines. A step is
//! skipped while its tree's files hash as at its last success (kept under
//! the cache, keyed by directory and command) and the program it built is
//! still the one that success left. What ran, from which tree and commit,
//! and the program's SHA-256 go into the manifest.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use ctrlbench_plane::process::{Lifetime, own};
use ctrlbench_record::manifest::Build;
use sha2::{Digest, Sha256};

use crate::experiment::workload::relative_to;
use crate::experiment::{Experiment, Impl};

/// Lines of a failed build's output in its error.
const TAIL: usize = 15;

/// One distinct build: where, what, and the variants it serves.
#[derive(Debug, PartialEq)]
pub struct Step {
    pub dir: PathBuf,
    pub command: Vec<String>,
    pub variants: Vec<String>,
    /// The first word of the variants' command (their program, once built).
    pub program: String,
}

/// The experiment's builds, each once, in the order of their first variant.
pub fn steps(exp: &Experiment) -> Vec<Step> {
    let mut out: Vec<Step> = Vec::new();
    for v in &exp.variants {
        let (Impl::Command, Some(cmd)) = (&v.implementation, v.keys.build.as_ref()) else {
            continue;
        };
        let dir = relative_to(&exp.file, v.keys.build_dir.as_deref().unwrap_or("."));
        let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
        let program = v.command().first().cloned().unwrap_or_default();
        match out.iter_mut().find(|s| s.dir == dir && &s.command == cmd) {
            Some(s) => s.variants.push(v.name.clone()),
            None => out.push(Step {
                dir,
                command: cmd.clone(),
                variants: vec![v.name.clone()],
                program,
            }),
        }
    }
    out
}

/// What can be checked before a build: its directory and its program. A
/// dry run's baseline trees are not exported, so their steps wait for the run.
pub fn check(exp: &Experiment, dry_run: bool) -> Result<()> {
    for s in steps(exp) {
        if dry_run && super::baseline::unexported(&s.dir) {
            continue;
        }
        let who = || format!("{}: variant {}", exp.file.display(), s.variants[0]);
        if !s.dir.is_dir() {
            bail!(
                "{}: build_dir {} is not a directory",
                who(),
                s.dir.display()
            );
        }
        let first = &s.command[0];
        // A dry run needs no Go: its list of builds says which need it.
        if dry_run && first == "go" {
            continue;
        }
        let found = if first.contains('/') {
            s.dir.join(first).is_file()
        } else {
            let path = std::env::var_os("PATH").unwrap_or_default();
            std::env::split_paths(&path).any(|d| d.join(first).is_file())
        };
        if !found {
            bail!(
                "{}: the build's program {first:?} is not found (in PATH, or relative to {})",
                who(),
                s.dir.display()
            );
        }
    }
    Ok(())
}

/// Runs every step (or finds it done); blocking.
pub fn run_all(exp: &Experiment) -> Result<Vec<Build>> {
    steps(exp).iter().map(|s| run(exp, s)).collect()
}

/// Whether `run` would run the step, told by reading the same stamp, tree
/// and program it reads (under the cache at `root`), with nothing built or
/// written: a tree not there yet (a baseline not exported) is a build to do.
pub fn due(exp: &Experiment, s: &Step, root: &Path) -> bool {
    let Ok(tree) = tree_hash(&s.dir) else {
        return true;
    };
    // `@name` is built by ctrlbench, on its own path; where it would be is enough.
    let program = match s.program.strip_prefix('@') {
        Some(name) => crate::controllers::third_party_path(root, name),
        None => super::command_program(&exp.file, &s.program),
    };
    !unchanged(&stamp_path(root, s), &tree, program.ok().as_deref())
}

/// The stamp says `tree` was built last, and `program` is what it left.
fn unchanged(stamp: &Path, tree: &str, program: Option<&Path>) -> bool {
    let (Ok(previous), Some(program)) = (std::fs::read_to_string(stamp), program) else {
        return false;
    };
    let mut it = previous.lines();
    it.next() == Some(tree)
        && it.next() == ctrlbench_plane::origin::sha256_of(program).ok().as_deref()
}

fn run(exp: &Experiment, s: &Step) -> Result<Build> {
    let shown = format!("{} (in {})", s.command.join(" "), s.dir.display());
    let tree = tree_hash(&s.dir)?;
    let stamp = stamp_path(&ctrlbench_plane::binaries::cache_root()?, s);
    let program = || super::command_program(&exp.file, &s.program);
    let started = Instant::now();
    let mut ran = false;
    let done_before = unchanged(&stamp, &tree, program().ok().as_deref());
    if done_before {
        eprintln!("build {shown}: unchanged since its last success");
    } else {
        eprintln!("building {shown} …");
        ran = true;
        build(s).with_context(|| format!("build {shown} failed"))?;
    }
    let prog = program().with_context(|| format!("after build {shown}"))?;
    let sha = ctrlbench_plane::origin::sha256_of(&prog)?;
    if ran {
        if let Some(parent) = stamp.parent() {
            std::fs::create_dir_all(parent)?;
        }
        // The tree as hashed before the build: a build that writes into
        // its own tree (outside bin/ and target/) is then simply rerun.
        std::fs::write(&stamp, format!("{tree}\n{sha}\n"))?;
    }
    Ok(Build {
        variants: s.variants.clone(),
        dir: s.dir.display().to_string(),
        command: s.command.clone(),
        git_commit: git_commit(&s.dir),
        tree_hash: tree,
        ran,
        seconds: started.elapsed().as_secs_f64(),
        program: std::fs::canonicalize(&prog)
            .unwrap_or(prog)
            .display()
            .to_string(),
        program_sha256: sha,
    })
}

/// Runs the build with its output shown line by line; the error holds its
/// last lines.
fn build(s: &Step) -> Result<()> {
    let mut cmd = Command::new(&s.command[0]);
    own(&mut cmd, Lifetime::Attached);
    crate::controllers::without_package_env(&mut cmd);
    cmd.args(&s.command[1..])
        .current_dir(&s.dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .with_context(|| format!("cannot start {:?}", s.command[0]))?;
    let tail = std::sync::Arc::new(std::sync::Mutex::new(VecDeque::new()));
    let pump = |r: Box<dyn Read + Send>| {
        let tail = tail.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(r).lines().map_while(Result::ok) {
                eprintln!("  | {line}");
                let mut t = tail.lock().unwrap_or_else(|e| e.into_inner());
                if t.len() == TAIL {
                    t.pop_front();
                }
                t.push_back(line);
            }
        })
    };
    let out = child.stdout.take().map(|o| pump(Box::new(o)));
    let err = child.stderr.take().map(|e| pump(Box::new(e)));
    let status = child.wait()?;
    for t in [out, err].into_iter().flatten() {
        let _ = t.join();
    }
    if !status.success() {
        let t = tail.lock().unwrap_or_else(|e| e.into_inner());
        let last: Vec<&str> = t.iter().map(String::as_str).collect();
        bail!("{status}; its last lines: {}", last.join(" ⏎ "));
    }
    Ok(())
}

/// Where a step's last success is remembered, in the cache at `root`.
pub(crate) fn stamp_path(root: &Path, s: &Step) -> PathBuf {
    let mut h = Sha256::new();
    h.update(s.dir.display().to_string().as_bytes());
    for a in &s.command {
        h.update([0]);
        h.update(a.as_bytes());
    }
    let key = hex(&h.finalize());
    root.join("builds").join(&key[..32])
}

/// A digest of every file under `dir` but hidden ones, bin/ and target/
/// (names and contents, in sorted order).
pub fn tree_hash(dir: &Path) -> Result<String> {
    fn walk(root: &Path, d: &Path, h: &mut Sha256) -> Result<()> {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(d)
            .with_context(|| format!("cannot list {}", d.display()))?
            .flatten()
            .map(|e| e.path())
            .collect();
        entries.sort();
        for p in entries {
            let n = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            if n.starts_with('.') || (d == root && (n == "bin" || n == "target")) {
                continue;
            }
            let meta = std::fs::symlink_metadata(&p)?;
            if meta.is_dir() {
                walk(root, &p, h)?;
            } else if meta.is_file() {
                h.update(p.strip_prefix(root).unwrap_or(&p).display().to_string());
                h.update([0]);
                h.update(std::fs::read(&p)?);
                h.update([0]);
            }
        }
        Ok(())
    }
    let mut h = Sha256::new();
    walk(dir, dir, &mut h)?;
    Ok(hex(&h.finalize()))
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// HEAD of the tree's git work tree, "+dirty" when files differ from it;
/// for a baseline tree, the commit it was exported from.
fn git_commit(dir: &Path) -> Option<String> {
    if let Some(c) = super::baseline::exported_commit(dir) {
        return Some(c);
    }
    let git = |args: &[&str]| super::baseline::git(dir, args).ok();
    let head = git(&["rev-parse", "HEAD"])?;
    // Clean: git prints nothing, which `git` takes as no answer.
    let dirty = git(&["status", "--porcelain", "--", "."]).is_some();
    Some(if dirty { format!("{head}+dirty") } else { head })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tree_hash_follows_sources_and_not_outputs() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("main.go"), "package main\n").unwrap();
        std::fs::create_dir(d.path().join("bin")).unwrap();
        let a = tree_hash(d.path()).unwrap();
        std::fs::write(d.path().join("bin/manager"), "binary").unwrap();
        std::fs::create_dir(d.path().join(".git")).unwrap();
        std::fs::write(d.path().join(".git/HEAD"), "x").unwrap();
        assert_eq!(
            tree_hash(d.path()).unwrap(),
            a,
            "outputs and hidden files do not count"
        );
        std::fs::write(d.path().join("main.go"), "package main // changed\n").unwrap();
        assert_ne!(tree_hash(d.path()).unwrap(), a);
        // SHA-256 of "binary", computed elsewhere (sha256sum).
        assert_eq!(
            ctrlbench_plane::origin::sha256_of(&d.path().join("bin/manager")).unwrap(),
            "9a3a45d01531a20e89ac6ae10b0b0beb0492acd7216a368aa062d1a5fecaf9cd"
        );
    }
}
