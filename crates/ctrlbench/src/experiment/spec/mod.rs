//! Experiment files (TOML): parsing and validation. The file is read into
//! its serde types (`schema`), each section is checked on its own — top
//! level (`top`), `[cluster]` (`cluster`), `[[fault]]` (`faults`), each
//! `[[variant]]` against the key table (`variant`, `keys`), `[workload]`
//! and `[[phase]]` (their own modules) — under the rules of `policy`, and
//! what passes becomes the plain `Experiment` of `validated`. Unknown keys
//! are rejected, and every error names the file, the line and the key
//! (`errors`).

pub mod budget;
pub mod cluster;
pub mod errors;
pub mod faults;
pub mod goals;
pub mod keys;
pub mod policy;
pub mod schema;
pub mod top;
pub mod validated;
pub mod values;
pub mod variant;

#[cfg(test)]
mod tests;

use std::path::Path;

pub use errors::SpecError;
pub use faults::{Fault, FaultTarget};
pub use schema::{
    ConflictReread, DEFAULT_PROBE_OBJECTS, FaultAction, FreshPlane, LogLevel, Predicate, Queue,
    RbacRule, Schedule, Spec, StartMode, StatusWrite,
};
pub use validated::{Cluster, Compare, Experiment, PlaneOf, Repeats, Variant};

use crate::experiment::{appliers, decoys, phase, workload};
use errors::Source;

/// What etcd must hold, estimated: every object of the largest scale (all
/// variants' at once under the concurrent schedule) and the background
/// objects, each in three revisions (create, status write, one more) until
/// the apiserver compacts, plus room for the rest.
pub fn etcd_estimate(objects: u64, object_bytes: u64) -> u64 {
    const REVISIONS: u64 = 3;
    const REST: u64 = 512 << 20;
    objects
        .saturating_mul(object_bytes.max(1024))
        .saturating_mul(REVISIONS)
        + REST
}

/// etcd's largest recommended quota (its docs: 8 GiB).
pub const ETCD_MAX_QUOTA: u64 = 8 << 30;
/// etcd's default quota.
pub const ETCD_DEFAULT_QUOTA: u64 = 2 << 30;

/// Refuses what cannot fit in etcd ([`etcd_estimate`] over its 8 GiB), and
/// gives sized objects etcd's largest quota (unless `[cluster] etcd_args`
/// sets one): replicas without leader election, conflicts and runs within
/// one compaction interval (5 minutes) each add a revision of every
/// object, which no estimate bounds; the quota is a limit, not space taken.
fn etcd_room(
    src: &Source,
    spec: &Spec,
    w: &workload::Workload,
    decoys: u64,
    cluster: &mut Cluster,
) -> Result<(), SpecError> {
    let biggest = spec.scales.get_ref().iter().copied().max().unwrap_or(0);
    let together = match spec.schedule {
        Schedule::Concurrent => spec.variants.get_ref().len() as u64,
        Schedule::Isolated => 1,
    };
    // A decoy is three objects: one of the kind, a Secret and a ConfigMap.
    let objects = biggest * together + *spec.background_objects.get_ref() + 3 * decoys;
    let bytes = w.object_bytes();
    let need = etcd_estimate(objects, bytes);
    if need > ETCD_MAX_QUOTA {
        let (key, span) = match &spec.object_bytes {
            Some(b) => ("object_bytes", b.span()),
            None => ("scales", spec.scales.span()),
        };
        return Err(src.at(
            key,
            span,
            format!(
                "{objects} objects of {bytes} bytes need about {:.1} GiB in etcd (3 revisions each until compaction), more than etcd's 8 GiB limit: fewer or smaller objects",
                need as f64 / (1u64 << 30) as f64
            ),
        ));
    }
    let sized = spec.object_bytes.is_some() || w.is_padded();
    if (sized || need > ETCD_DEFAULT_QUOTA)
        && !cluster
            .etcd_args
            .iter()
            .any(|a| a.starts_with("--quota-backend-bytes"))
    {
        cluster
            .etcd_args
            .push(format!("--quota-backend-bytes={ETCD_MAX_QUOTA}"));
    }
    Ok(())
}

/// `[[compare]]`: both sides are variants of the file, and not the same one.
fn compare(src: &Source, spec: &Spec, variants: &[Variant]) -> Result<Vec<Compare>, SpecError> {
    let mut out = Vec::new();
    for c in &spec.compare {
        for (key, v) in [("a", &c.a), ("b", &c.b)] {
            if !variants.iter().any(|x| &x.name == v.get_ref()) {
                return Err(src.at(
                    key,
                    v.span(),
                    format!(
                        "no variant {:?} in this file (it has {})",
                        v.get_ref(),
                        variants
                            .iter()
                            .map(|x| x.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
            }
        }
        if c.a.get_ref() == c.b.get_ref() {
            return Err(src.at("b", c.b.span(), "compares a variant with itself"));
        }
        if ctrlbench_report::metrics::Metric::named(c.figure.get_ref()).is_none() {
            let names: Vec<&str> = ctrlbench_report::metrics::Metric::ALL
                .iter()
                .map(|m| m.label())
                .collect();
            return Err(src.at(
                "figure",
                c.figure.span(),
                format!(
                    "unknown figure {:?}: use one of {}",
                    c.figure.get_ref(),
                    names.join(", ")
                ),
            ));
        }
        out.push(Compare {
            a: c.a.get_ref().clone(),
            b: c.b.get_ref().clone(),
            figure: c.figure.get_ref().clone(),
        });
    }
    Ok(out)
}

/// The sides of every compared pair (`[[compare]]`, rust-X / go-X) run
/// with the same CPU limit: a difference there is not the controllers'.
fn pairs_alike(
    src: &Source,
    spec: &Spec,
    variants: &[Variant],
    compare: &[Compare],
) -> Result<(), SpecError> {
    let by = |n: &str| variants.iter().position(|v| v.name == n);
    let mut pairs: Vec<(usize, usize)> = compare
        .iter()
        .filter_map(|c| Some((by(&c.a)?, by(&c.b)?)))
        .collect();
    for (i, v) in variants.iter().enumerate() {
        if let Some(x) = v.name.strip_prefix("rust-")
            && let Some(j) = by(&format!("go-{x}"))
        {
            pairs.push((i, j));
        }
    }
    for (i, j) in pairs {
        let (a, b) = (&variants[i], &variants[j]);
        if a.keys.controller_cpus != b.keys.controller_cpus {
            let span = spec.variants.get_ref()[j]
                .controller_cpus
                .as_ref()
                .or(spec.variants.get_ref()[i].controller_cpus.as_ref())
                .map_or(spec.variants.span(), |s| s.span());
            return Err(src.at(
                "controller_cpus",
                span,
                format!(
                    "{:?} and {:?} are compared, so they need the same controller_cpus ({:?} vs {:?})",
                    a.name, b.name, a.keys.controller_cpus, b.keys.controller_cpus
                ),
            ));
        }
        if a.cpu_limit() != b.cpu_limit() {
            let span = spec.variants.get_ref()[j]
                .cpu_limit
                .as_ref()
                .or(spec.variants.get_ref()[i].cpu_limit.as_ref())
                .map_or(spec.variants.span(), |s| s.span());
            return Err(src.at(
                "cpu_limit",
                span,
                format!(
                    "{:?} and {:?} are compared, so they need the same cpu_limit ({:?} vs {:?})",
                    a.name, b.name, a.keys.cpu_limit, b.keys.cpu_limit
                ),
            ));
        }
    }
    Ok(())
}

/// Parses an experiment file; `[workload]` files are read from disk,
/// relative to `file`.
pub fn parse(file: &Path, text: &str) -> Result<Experiment, SpecError> {
    parse_with(file, text, &|p: &Path| std::fs::read_to_string(p))
}

/// The file's workload (its `[workload]`, or the built-in Widgets, sized by
/// `object_bytes`), with its appliers' managedFields, and its decoys.
fn workload_of(
    src: &Source,
    file: &Path,
    spec: &Spec,
    read: &dyn Fn(&Path) -> std::io::Result<String>,
) -> Result<(workload::Workload, u64), SpecError> {
    let (decoys, template) = match &spec.workload {
        Some(w) => (
            decoys::count(src, w)?,
            decoys::template(src, w)?.map(|t| (w, t)),
        ),
        None => (0, None),
    };
    let workload = match (template, &spec.object_bytes) {
        (None, None) => workload::Workload::widgets(),
        (None, Some(b)) => {
            if *b.get_ref() > workload::MAX_OBJECT_BYTES {
                return Err(src.at(
                    "object_bytes",
                    b.span(),
                    format!(
                        "at most {} bytes (1 MiB) per object",
                        workload::MAX_OBJECT_BYTES
                    ),
                ));
            }
            workload::Workload::widgets_of(*b.get_ref())
        }
        (Some(_), Some(b)) => {
            return Err(src.at(
                "object_bytes",
                b.span(),
                "sizes the built-in Widgets; a [workload] template sizes its objects with {{pad N}}",
            ));
        }
        (Some((w, t)), None) => workload::check(src, file, w, t, read)?,
    };
    let field_managers = match &spec.workload {
        Some(w) => appliers::count(src, w.field_managers.as_ref())?,
        None => 0,
    };
    Ok((
        workload::Workload {
            field_managers,
            ..workload
        },
        decoys,
    ))
}

/// `fresh_plane` other than "experiment" needs the local plane and no
/// objects made once per plane.
fn fresh_plane_alone(src: &Source, spec: &Spec, local: bool, decoys: u64) -> Result<(), SpecError> {
    if let Some(f) = spec
        .fresh_plane
        .as_ref()
        .filter(|f| *f.get_ref() != FreshPlane::Experiment)
    {
        let why = if !local {
            Some("needs the local plane (an existing cluster is not ctrlbench's to restart)")
        } else if *spec.background_objects.get_ref() > 0 || decoys > 0 {
            Some(
                "cannot be combined with background_objects or [workload] decoys, which are made once per plane",
            )
        } else {
            None
        };
        if let Some(m) = why {
            return Err(src.at("fresh_plane", f.span(), m));
        }
    }
    Ok(())
}

/// `parse`, reading the workload's files with `read` (built-in experiments
/// read theirs from the binary).
pub fn parse_with(
    file: &Path,
    text: &str,
    read: &dyn Fn(&Path) -> std::io::Result<String>,
) -> Result<Experiment, SpecError> {
    let src = Source {
        file: file.display().to_string(),
        text,
    };
    let spec: Spec = toml::from_str(text).map_err(|e| src.from_toml(&e))?;
    top::check(&src, &spec)?;
    let cluster = cluster::check(&src, &spec.cluster)?;
    let local = cluster.kubeconfig.is_none() && cluster.context.is_none();
    let plane = faults::Plane {
        local,
        etcd_members: cluster.etcd_members,
        apiservers: cluster.apiservers,
    };
    let window_s = *spec.window_s.get_ref();
    let faults = faults::check(&src, &spec.faults, &plane, window_s)?;
    let (workload, decoys) = workload_of(&src, file, &spec, read)?;
    let mut cluster = cluster;
    if local {
        etcd_room(&src, &spec, &workload, decoys, &mut cluster)?;
    }
    let mut variants: Vec<Variant> = Vec::new();
    for v in spec.variants.get_ref() {
        let around = variant::Around {
            schedule: spec.schedule,
            local,
            cluster_version: cluster.k8s_version.is_some(),
            per_plane: spec.probe || *spec.background_objects.get_ref() > 0 || decoys > 0,
            faults: !faults.is_empty(),
            window_s,
            earlier: &variants,
        };
        let checked = variant::check(&src, v, &around)?;
        variants.push(checked);
    }
    variant::check_fleet(&src, &spec.faults, &faults, &variants)?;
    let phases = phase::check(&src, file, &spec.phases, window_s, workload.is_builtin())?;
    let repeats = top::repeats(&src, &spec)?;
    let margin = top::fraction(&src, "margin", &spec.margin, 1.0, top::DEFAULT_MARGIN)?;
    let growth_margin = top::fraction(
        &src,
        "growth_margin",
        &spec.growth_margin,
        ctrlbench_report::growth::MAX_DELTA,
        ctrlbench_report::growth::DEFAULT_DELTA,
    )?;
    let busy_threshold = top::fraction(
        &src,
        "busy_threshold",
        &spec.busy_threshold,
        64.0,
        crate::doctor::BUSY_THRESHOLD,
    )?;
    let compare = compare(&src, &spec, &variants)?;
    let goals = goals::check(&src, &spec, &variants)?;
    let no_audit = if !local {
        Some("this file aims at an existing cluster: [cluster] kubeconfig or context")
    } else if !cluster.audit_log {
        Some("[cluster] audit_log is off")
    } else {
        None
    };
    let budgets = budget::check(&src, spec.budget.as_ref(), no_audit)?;
    fresh_plane_alone(&src, &spec, local, decoys)?;
    pairs_alike(&src, &spec, &variants, &compare)?;
    Ok(Experiment {
        file: file.to_path_buf(),
        text: text.to_string(),
        name: spec.name.get_ref().clone(),
        description: spec.description,
        cluster,
        variants,
        scales: spec.scales.get_ref().clone(),
        window_s,
        stop_when_converged: spec.stop_when_converged,
        quiet_s: *spec.quiet_s.get_ref(),
        repeats,
        margin,
        growth_margin,
        busy_threshold,
        compare,
        goals,
        budgets,
        warmup: spec.warmup,
        fresh_plane: spec
            .fresh_plane
            .as_ref()
            .map_or(FreshPlane::Experiment, |f| *f.get_ref()),
        schedule: spec.schedule,
        concurrency: *spec.concurrency.get_ref(),
        scrape_interval_s: *spec.scrape_interval_s.get_ref(),
        probe: spec.probe,
        probe_objects: *spec.probe_objects.get_ref(),
        background_objects: *spec.background_objects.get_ref(),
        decoys,
        source: spec
            .workload
            .as_ref()
            .and_then(|w| w.source.as_ref())
            .map(|s| workload::relative_to(file, s.get_ref())),
        phases,
        object_bytes: (spec.object_bytes.is_some() || workload.is_padded())
            .then(|| workload.object_bytes()),
        workload,
        faults,
        grow: None,
    })
}
