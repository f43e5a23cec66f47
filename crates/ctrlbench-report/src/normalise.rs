//! Figures made comparable across machines, for `compare A B` and its
//! regression gate: every figure of every variant divided by a reference
//! measured in the same directory — a reference variant (per repeat where
//! its repeats line up, else by its median), or the probe that preceded
//! each repeat (manifest.json, throughput-like figures only, since the probe
//! measures write throughput and nothing else). A machine that slowed by
//! 15 % slows the reference with everything else, and the ratio of the
//! normalised figures stays where it was.

use ctrlbench_record::manifest::ProbeRow;

use crate::figures::Group;
use crate::goals::probe_at;
use crate::load::Results;
use crate::metrics::Metric;
use crate::quantile::median;

/// What figures are divided by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reference {
    /// This variant of the same directory, at the same scale.
    Variant(String),
    /// The probe's status patches/s at one writer, of each run's repeat.
    Probe,
}

impl Reference {
    /// "--reference probe" or a variant's name.
    pub fn parse(s: &str) -> Reference {
        if s == "probe" {
            Reference::Probe
        } else {
            Reference::Variant(s.to_string())
        }
    }

    /// What the output says it used.
    pub fn describe(&self) -> String {
        match self {
            Reference::Variant(v) => format!(
                "every figure divided by {v}'s in the same directory and scale (per repeat where \
                 its repeats line up, else by its median)"
            ),
            Reference::Probe => "throughput figures (Ready/s, writes/s) divided by each \
                 repeat's probe (status patches/s at one writer, manifest.json); the other \
                 figures are not compared"
                .into(),
        }
    }
}

/// The figures the probe normalises: rates, which a faster apiserver raises.
pub fn throughput_like(m: Metric) -> bool {
    matches!(
        m,
        Metric::ReadyPerS | Metric::WritesPerS | Metric::FirstWritesPerS
    )
}

/// The values of `m` over `g`'s runs (those the medians use), divided by the
/// reference; None when this figure cannot be normalised by it (the
/// reference is missing at this scale, is zero, or `m` is not
/// throughput-like for the probe).
pub fn values(
    r: &Results,
    groups: &[Group],
    g: &Group,
    m: Metric,
    by: &Reference,
) -> Option<Vec<f64>> {
    match by {
        Reference::Variant(v) => {
            let reference = groups
                .iter()
                .find(|h| h.scale == g.scale && &h.variant == v)?;
            let fallback = median(&reference.values(m)).filter(|x| *x != 0.0)?;
            let used = reference.used();
            Some(
                g.used()
                    .iter()
                    .filter_map(|f| {
                        let x = f.get(m)?;
                        let same = used
                            .iter()
                            .find(|h| h.repeat == f.repeat)
                            .and_then(|h| h.get(m))
                            .filter(|d| *d != 0.0);
                        Some(x / same.unwrap_or(fallback))
                    })
                    .collect(),
            )
        }
        Reference::Probe => {
            if !throughput_like(m) {
                return None;
            }
            let probe: &[ProbeRow] = r.manifest.probe.as_deref().unwrap_or_default();
            let v: Vec<f64> = g
                .used()
                .iter()
                .filter_map(|f| {
                    let p = probe_at(probe, 1, f.scale, f.repeat)?.status_patch_per_s;
                    (p > 0.0).then(|| Some(f.get(m)? / p)).flatten()
                })
                .collect();
            (!v.is_empty()).then_some(v)
        }
    }
}

/// Why `by` cannot normalise directory `r` at all, if it cannot.
pub fn unusable(r: &Results, groups: &[Group], by: &Reference) -> Option<String> {
    match by {
        Reference::Variant(v) if !groups.iter().any(|g| &g.variant == v) => Some(format!(
            "{}: no variant {v} to normalise by (variants: {})",
            r.dir.path.display(),
            groups
                .iter()
                .map(|g| g.variant.as_str())
                .fold(Vec::new(), |mut v, x| {
                    if !v.contains(&x) {
                        v.push(x);
                    }
                    v
                })
                .join(", ")
        )),
        Reference::Probe if r.manifest.probe.as_ref().is_none_or(|p| p.is_empty()) => {
            Some(format!(
                "{}: manifest.json has no probe rows (run with probe = true)",
                r.dir.path.display()
            ))
        }
        _ => None,
    }
}
