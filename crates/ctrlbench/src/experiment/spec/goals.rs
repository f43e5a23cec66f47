//! `[[goal]]`: the targets an experiment file sets on the ratio between
//! paired variants (`<b>-X` against `<a>-X` at each scale), checked here
//! and recorded in the manifest, whose goals alone make the report's goals
//! section and goal questions. Meant for the lab's files that study our own
//! controllers; a user's experiment declares none and its report judges no
//! target.

use ctrlbench_record::manifest::Goal;
use ctrlbench_report::metrics::Metric;

use super::errors::{Source, SpecError};
use super::schema::Spec;
use super::validated::Variant;

/// The pairs `<b>-X` / `<a>-X` among `variants`' names.
fn pairs<'v>(names: &[&'v str], a: &str, b: &str) -> Vec<(&'v str, &'v str)> {
    names
        .iter()
        .filter_map(|n| {
            let rest = n.strip_prefix(b)?.strip_prefix('-')?;
            let other = format!("{a}-{rest}");
            names.iter().find(|m| **m == other).map(|m| (*n, *m))
        })
        .collect()
}

/// Every `[[goal]]`: a known figure, two different prefixes that pair at
/// least one couple of variants, exactly one positive bound, and a
/// `from_scale` some scale reaches.
pub fn check(src: &Source, spec: &Spec, variants: &[Variant]) -> Result<Vec<Goal>, SpecError> {
    let names: Vec<&str> = variants.iter().map(|v| v.name.as_str()).collect();
    let mut out = Vec::new();
    for g in &spec.goals {
        let figure = g.figure.get_ref();
        if Metric::named(figure).is_none() {
            let all: Vec<&str> = Metric::ALL.iter().map(|m| m.label()).collect();
            return Err(src.at(
                "figure",
                g.figure.span(),
                format!("unknown figure {figure:?}: use one of {}", all.join(", ")),
            ));
        }
        let (a, b) = (g.a.get_ref(), g.b.get_ref());
        if a == b {
            return Err(src.at(
                "b",
                g.b.span(),
                "is the same prefix as a: a goal pairs two sides",
            ));
        }
        if pairs(&names, a, b).is_empty() {
            return Err(src.at(
                "b",
                g.b.span(),
                format!(
                    "no pair of variants {b}-X / {a}-X in this file (it has {})",
                    names.join(", ")
                ),
            ));
        }
        let (key, bound, at_least) = match (&g.at_least, &g.at_most) {
            (Some(v), None) => ("at_least", v, true),
            (None, Some(v)) => ("at_most", v, false),
            (Some(_), Some(v)) => {
                return Err(src.at("at_most", v.span(), "give at_least or at_most, not both"));
            }
            (None, None) => {
                return Err(src.at(
                    "figure",
                    g.figure.span(),
                    "a goal needs a bound: at_least = B/A's lowest or at_most = its highest",
                ));
            }
        };
        let value = *bound.get_ref();
        if !(value.is_finite() && value > 0.0) {
            return Err(src.at(
                key,
                bound.span(),
                format!("must be a ratio above 0, got {value}"),
            ));
        }
        let scales = spec.scales.get_ref();
        if let Some(n) = &g.from_scale
            && !scales.iter().any(|s| s >= n.get_ref())
        {
            return Err(src.at(
                "from_scale",
                n.span(),
                format!(
                    "is above every scale of this file ({scales:?}), so the goal would never be judged: lower it"
                ),
            ));
        }
        out.push(Goal {
            figure: figure.clone(),
            a: a.clone(),
            b: b.clone(),
            at_least,
            bound: value,
            from_scale: g.from_scale.as_ref().map(|n| *n.get_ref()),
        });
    }
    Ok(out)
}
