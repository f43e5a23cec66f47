//! `run --baseline REF`: every command variant with a `build` gets a twin,
//! `<name>-baseline`, whose build and program come from REF's tree instead
//! of the working tree, and one `[[compare]]` question per gate figure
//! (B = the working tree, A = the baseline). The twins are ordinary
//! variants from here on, so they run interleaved and paired with the rest
//! and are answered by the same verdict rules.
//!
//! REF's tree is exported with `git archive` into the cache, keyed by the
//! repository and the commit, rather than checked out as a `git worktree`:
//! the user's repository is only read (no worktree metadata to prune after
//! an interrupted run), and a second run with the same commit finds the
//! tree, and its build, as the first left them.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};

use crate::experiment::spec::Compare;
use crate::experiment::workload::relative_to;
use crate::experiment::{Experiment, Impl};

/// The file in an exported tree that names its commit (hidden, so the
/// build's tree hash does not see it).
pub const COMMIT_FILE: &str = ".ctrlbench-commit";

/// What a twin was made from.
#[derive(Debug, Clone, PartialEq)]
pub struct Twin {
    pub variant: String,
    pub twin: String,
    pub commit: String,
    /// The repository's top directory.
    pub repo: PathBuf,
    pub tree: PathBuf,
    /// Whether the tree is there: false only in a dry run, which names the
    /// tree an export would make and makes none.
    pub exported: bool,
}

/// The twin's name for variant `name`.
pub fn twin_name(name: &str) -> String {
    format!("{name}-baseline")
}

/// Adds a baseline twin of every command variant with a `build`, and its
/// questions. Fails, with one line, when no variant has a build, a build
/// directory is not in a git repository, or REF is not a commit there.
/// With `dry_run`, REF's tree is not exported: the twin points where it
/// would be.
pub fn add_twins(exp: &mut Experiment, reference: &str, dry_run: bool) -> Result<Vec<Twin>> {
    let flag = format!("--baseline {reference}");
    let built: Vec<usize> = exp
        .variants
        .iter()
        .enumerate()
        .filter(|(_, v)| v.implementation == Impl::Command && v.keys.build.is_some())
        .map(|(i, _)| i)
        .collect();
    if built.is_empty() {
        bail!(
            "{flag}: {} has no command variant with a `build` step, so nothing can be built from {reference}",
            exp.file.display()
        );
    }
    let mut twins = Vec::new();
    let mut added = Vec::new();
    for i in built {
        let v = &exp.variants[i];
        let name = twin_name(&v.name);
        if exp.variants.iter().any(|o| o.name == name) {
            bail!(
                "{flag}: {} already has a variant named {name:?}, the name of {:?}'s twin",
                exp.file.display(),
                v.name
            );
        }
        let dir = lenient_canonical(&relative_to(
            &exp.file,
            v.keys.build_dir.as_deref().unwrap_or("."),
        ));
        let top = git(&dir, &["rev-parse", "--show-toplevel"]).map_err(|_| {
            anyhow::anyhow!(
                "{flag}: variant {}'s build_dir {} is not in a git repository",
                v.name,
                dir.display()
            )
        })?;
        let top = lenient_canonical(Path::new(&top));
        let commit = git(
            &top,
            &["rev-parse", "--verify", "--quiet", &format!("{reference}^{{commit}}")],
        )
        .map_err(|_| {
            anyhow::anyhow!(
                "{flag}: no commit {reference:?} in {} (give a branch, tag or hash of that repository)",
                top.display()
            )
        })?;
        let first = v.command().first().cloned().unwrap_or_default();
        let program = lenient_canonical(&relative_to(&exp.file, &first));
        let Ok(inside) = program.strip_prefix(&top) else {
            bail!(
                "{flag}: variant {}'s program {} is not inside {}, so a twin built from {reference} would run the same program",
                v.name,
                program.display(),
                top.display()
            );
        };
        let tree = tree_path(&ctrlbench_plane::binaries::cache_root()?, &top, &commit);
        let exported = if dry_run {
            tree.join(COMMIT_FILE).is_file()
        } else {
            export(&top, &commit, reference, &tree)?;
            true
        };
        let mut t = v.clone();
        t.name = name.clone();
        let twin_dir = match dir.strip_prefix(&top) {
            Ok(rel) if !rel.as_os_str().is_empty() => tree.join(rel),
            _ => tree.clone(),
        };
        t.keys.build_dir = Some(twin_dir.display().to_string());
        let mut command = v.command().to_vec();
        command[0] = tree.join(inside).display().to_string();
        t.keys.command = Some(command);
        for &(m, _) in ctrlbench_report::gate::GATE {
            exp.compare.push(Compare {
                a: name.clone(),
                b: v.name.clone(),
                figure: m.label().to_string(),
            });
        }
        twins.push(Twin {
            variant: v.name.clone(),
            twin: name,
            commit,
            repo: top,
            tree,
            exported,
        });
        added.push((i, t));
    }
    // Each twin right after its variant, so a plan reads them side by side.
    for (i, t) in added.into_iter().rev() {
        exp.variants.insert(i + 1, t);
    }
    Ok(twins)
}

/// Where `commit` of repository `top` is exported in the cache at `root`:
/// `baselines/<repository's hash>-<commit>`.
fn tree_path(root: &Path, top: &Path, commit: &str) -> PathBuf {
    let repo = format!("{:x}", Sha256::digest(top.display().to_string().as_bytes()));
    root.join("baselines")
        .join(format!("{}-{commit}", &repo[..12]))
}

/// Whether `dir` lies in a baseline tree not exported yet (which only a
/// dry run leaves so).
pub fn unexported(dir: &Path) -> bool {
    ctrlbench_plane::binaries::cache_root()
        .is_ok_and(|root| dir.starts_with(root.join("baselines")))
        && exported_commit(dir).is_none()
}

/// REF's tree of repository `top`, exported once per commit into `tree`.
fn export(top: &Path, commit: &str, reference: &str, tree: &Path) -> Result<()> {
    if tree.join(COMMIT_FILE).is_file() {
        return Ok(());
    }
    let partial = tree.with_extension(format!("partial-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&partial);
    std::fs::create_dir_all(&partial)
        .with_context(|| format!("cannot create {}", partial.display()))?;
    let unpacked = unpack(top, commit, &partial).and_then(|()| {
        std::fs::write(
            partial.join(COMMIT_FILE),
            format!("{commit}\n{reference}\n"),
        )?;
        let _ = std::fs::remove_dir_all(tree);
        std::fs::rename(&partial, tree)?;
        Ok(())
    });
    if let Err(e) = unpacked {
        let _ = std::fs::remove_dir_all(&partial);
        return Err(e.context(format!(
            "cannot export {commit} of {} into {}",
            top.display(),
            tree.display()
        )));
    }
    Ok(())
}

/// `git archive COMMIT | tar -x -C into`.
fn unpack(top: &Path, commit: &str, into: &Path) -> Result<()> {
    let mut archive = Command::new("git")
        .arg("-C")
        .arg(top)
        .args(["archive", "--format=tar", commit])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot start git")?;
    let stdout = archive.stdout.take().context("git archive: no output")?;
    let tar = Command::new("tar")
        .arg("-x")
        .arg("-C")
        .arg(into)
        .stdin(stdout)
        .stderr(Stdio::piped())
        .output()
        .context("cannot start tar")?;
    let git = archive.wait_with_output()?;
    if !git.status.success() {
        bail!(
            "git archive: {}",
            String::from_utf8_lossy(&git.stderr).trim()
        );
    }
    if !tar.status.success() {
        bail!("tar: {}", String::from_utf8_lossy(&tar.stderr).trim());
    }
    Ok(())
}

/// A git command's trimmed output in `dir`; an error when it fails or
/// prints nothing.
pub(crate) fn git(dir: &Path, args: &[&str]) -> Result<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .context("cannot start git")?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() || text.is_empty() {
        bail!(
            "git {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(text)
}

/// The commit an exported baseline tree holds, when `dir` is inside one.
pub fn exported_commit(dir: &Path) -> Option<String> {
    dir.ancestors()
        .find_map(|d| std::fs::read_to_string(d.join(COMMIT_FILE)).ok())
        .and_then(|t| t.lines().next().map(str::to_string))
}

/// `p` with its longest existing ancestor canonicalised (a program may not
/// be built yet, so `canonicalize` on it fails).
fn lenient_canonical(p: &Path) -> PathBuf {
    let mut abs = PathBuf::new();
    for c in std::path::absolute(p)
        .unwrap_or_else(|_| p.to_path_buf())
        .components()
    {
        match c {
            std::path::Component::ParentDir => {
                abs.pop();
            }
            std::path::Component::CurDir => {}
            c => abs.push(c),
        }
    }
    let mut rest = Vec::new();
    let mut at = abs.as_path();
    loop {
        if let Ok(c) = std::fs::canonicalize(at) {
            let mut out = c;
            for r in rest.iter().rev() {
                out.push(r);
            }
            return out;
        }
        match (at.parent(), at.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                at = parent;
            }
            _ => return abs,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_not_yet_built_is_placed_under_its_real_parent() {
        let d = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(d.path()).unwrap();
        std::fs::create_dir(real.join("op")).unwrap();
        let p = d.path().join("op/./bin/../bin/manager");
        // Computed by hand: the existing part resolved, the rest kept.
        let got = lenient_canonical(&p);
        assert!(got.starts_with(real.join("op")), "{}", got.display());
        assert!(got.ends_with("manager"));
        assert_eq!(twin_name("op"), "op-baseline");
    }
}
