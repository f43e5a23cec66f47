//! Everything about a run that can be checked before anything is built or
//! started, checked first: the results directory, the cluster a kubeconfig
//! names (read, parsed, its context there, its apiserver answering), or for
//! a local plane each Kubernetes version (at hand, committed, or served by
//! the Go module proxy) and its feature gates (against the table read from
//! the built kube-apiserver), the programs of command variants, and a
//! cgroup for a CPU quota. A typo
//! then costs a second instead of a build. `--dry-run` runs the same checks
//! but writes nothing and asks no network: no cgroup is made (write access
//! is asked instead), no list of served versions fetched or kept, no gate
//! table kept, and Go's absence is said with the builds that need it.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use ctrlbench_plane::{binaries, known};

use super::{RunOptions, command_program, target};
use crate::experiment::{Experiment, Impl};

/// What the checks could not settle yet (said once, before the builds).
pub struct Notes(pub Vec<String>);

/// Runs every check; the first failure is the error.
pub async fn check(exp: &Experiment, opts: &RunOptions) -> Result<Notes> {
    results_writable(&opts.results_root)?;
    let mut notes = Vec::new();
    let (kubeconfig, context) = target::named(exp, opts);
    // The file's own [cluster] was checked when it was read; the command
    // line can still aim it at an existing cluster, whose footprint no
    // audit log of ours records.
    if (kubeconfig.is_some() || context.is_some())
        && let Some(b) = exp.budgets.iter().find(|b| {
            crate::experiment::spec::budget::KEYS
                .iter()
                .any(|k| k.footprint && k.name == b.key)
        })
    {
        bail!(
            "{}: [budget] {} limits {}, from the API footprint, which needs the local plane's audit log: drop --kubeconfig/--context or that budget",
            exp.file.display(),
            b.key,
            b.figure
        );
    }
    if kubeconfig.is_some() || context.is_some() {
        target::existing(kubeconfig.as_deref(), context.as_deref()).await?;
    } else {
        let exp = exp.clone();
        let dry_run = opts.dry_run;
        notes = tokio::task::spawn_blocking(move || planes(&exp, dry_run)).await??;
    }
    programs(exp, opts.dry_run)?;
    cpu_limits(exp, opts.dry_run)?;
    // Without nodes no pod runs, and such a rule would hold for nothing:
    // say so before the window is sat out.
    let local = kubeconfig.is_none() && context.is_none();
    if local && exp.cluster.nodes == 0 && exp.workload.ready_needs_pods() {
        notes.push(format!(
            "{}: the readiness rule ({}) waits for pods, but the local plane has no nodes to run them: set [cluster] nodes",
            exp.file.display(),
            exp.workload.ready
        ));
    }
    if local && exp.cluster.nodes == 0 {
        notes.extend(owned_workloads(exp));
    }
    Ok(Notes(notes))
}

/// Workload kinds an operator may create (its RBAC grants create on them):
/// without the plane's controllers and nodes they never get a status, so
/// the reconciles a real cluster's status updates cause are missing.
fn owned_workloads(exp: &Experiment) -> Vec<String> {
    const WORKLOADS: [&str; 5] = [
        "deployments",
        "statefulsets",
        "daemonsets",
        "replicasets",
        "jobs",
    ];
    exp.variants
        .iter()
        .filter_map(|v| {
            let kinds: Vec<&str> = WORKLOADS
                .iter()
                .copied()
                .filter(|k| {
                    v.rbac().iter().any(|r| {
                        r.resources.iter().any(|x| x == k)
                            && r.verbs.iter().any(|x| x == "create" || x == "*")
                    })
                })
                .collect();
            (!kinds.is_empty()).then(|| {
                format!(
                    "{}: variant {} may create {}, which get no status without [cluster] nodes: the reconciles their status updates cause on a real cluster are missing from this run",
                    exp.file.display(),
                    v.name,
                    kinds.join(", ")
                )
            })
        })
        .collect()
}

/// A variant with `cpu_limit` needs a cgroup this process can make: one is
/// made and removed now, so a machine without one fails before any build
/// (a dry run asks for write access where it would go instead).
fn cpu_limits(exp: &Experiment, dry_run: bool) -> Result<()> {
    if let Some(v) = exp.variants.iter().find(|v| v.cpu_limit().is_some()) {
        let who = || format!("{}: variant {} cpu_limit", exp.file.display(), v.name);
        if dry_run {
            return ctrlbench_plane::quota::check_writable().with_context(who);
        }
        ctrlbench_plane::quota::sweep();
        ctrlbench_plane::quota::Quota::create(1000).with_context(who)?;
    }
    Ok(())
}

/// The results root, or the nearest directory above it that exists, must
/// take new entries.
fn results_writable(root: &Path) -> Result<()> {
    let mut dir = root;
    let existing = loop {
        if dir.exists() {
            break dir;
        }
        match dir.parent() {
            Some(p) if !p.as_os_str().is_empty() => dir = p,
            _ => break Path::new("."),
        }
    };
    if !existing.is_dir() {
        bail!(
            "the results directory {} cannot be made: {} is not a directory; pass --results DIR",
            root.display(),
            existing.display()
        );
    }
    let access = rustix::fs::Access::WRITE_OK | rustix::fs::Access::EXEC_OK;
    if rustix::fs::access(existing, access).is_err() {
        bail!(
            "the results directory {} cannot be written ({} is not writable): pass --results DIR",
            root.display(),
            existing.display()
        );
    }
    Ok(())
}

/// Each local plane the runs need: its version can be had and its gates
/// exist in it.
fn planes(exp: &Experiment, dry_run: bool) -> Result<Vec<String>> {
    let mut planes: Vec<(Experiment, String)> = vec![(exp.clone(), "[cluster]".into())];
    for (i, v) in exp.variants.iter().enumerate() {
        if let Some(p) = exp.variant_plane(i) {
            planes.push((exp.on_plane(&p), format!("variant {}", v.name)));
        }
    }
    let mut notes = Vec::new();
    for (e, whose) in &planes {
        let version = binaries::normalize_version(
            e.cluster
                .k8s_version
                .as_deref()
                .unwrap_or(binaries::DEFAULT_K8S_VERSION),
        )?;
        let whose_version = || format!("{}: {whose} k8s_version", exp.file.display());
        if dry_run {
            notes.extend(known::check_version_offline(&version).with_context(whose_version)?);
        } else {
            known::check_version(&version).with_context(whose_version)?;
        }
        let gates = &e.cluster.feature_gates;
        if gates.is_empty() {
            continue;
        }
        let table = if dry_run {
            known::feature_gates_unkept(&version)?
        } else {
            known::feature_gates(&version)?
        };
        match table {
            Some(table) => {
                let unknown = known::unknown_gates(gates, &table);
                if let Some(first) = unknown.first() {
                    bail!(
                        "{}: {whose} feature_gates: kube-apiserver {version} has no feature gate {first:?}",
                        exp.file.display()
                    );
                }
            }
            None => notes.push(format!(
                "feature gates of Kubernetes {version} are checked when its kube-apiserver starts (it is not built yet)"
            )),
        }
    }
    notes.dedup();
    Ok(notes)
}

/// Every command variant's program and every `binary` exists and may be run.
fn programs(exp: &Experiment, dry_run: bool) -> Result<()> {
    super::build::check(exp, dry_run)?;
    for v in &exp.variants {
        // A program that `build` makes need not exist yet.
        if v.implementation == Impl::Command && v.keys.build.is_some() {
            continue;
        }
        let program: PathBuf = if v.implementation == Impl::Command {
            let first = v.command().first().cloned().unwrap_or_default();
            if let Some(name) = first.strip_prefix('@') {
                crate::controllers::third_party_known(name)?;
                continue;
            }
            command_program(&exp.file, &first)
                .with_context(|| format!("{}: variant {}", exp.file.display(), v.name))?
        } else if let Some(bin) = v.keys.binary.as_deref().filter(|_| v.is_own()) {
            let p = crate::experiment::workload::relative_to(&exp.file, bin);
            if !p.is_file() {
                bail!(
                    "{}: variant {}: binary {} (from {bin:?}) does not exist",
                    exp.file.display(),
                    v.name,
                    p.display()
                );
            }
            p
        } else {
            continue;
        };
        let mode = std::fs::metadata(&program)
            .with_context(|| format!("cannot read {}", program.display()))?
            .permissions()
            .mode();
        if mode & 0o111 == 0 {
            bail!(
                "{}: variant {}: {} is not executable: chmod +x it",
                exp.file.display(),
                v.name,
                program.display()
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_results_root_under_a_file_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("f");
        std::fs::write(&file, "x").unwrap();
        let e = results_writable(&file.join("results")).unwrap_err();
        assert!(format!("{e}").contains("is not a directory"), "{e}");
        results_writable(&d.path().join("a/b/c")).unwrap();
    }
}
