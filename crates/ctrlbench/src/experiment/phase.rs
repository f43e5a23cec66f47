//! `[[phase]]` entries: what happens after the create phase, in order —
//! `update` (patch every object's spec `count` times and time each object
//! until it is ready again), `delete` (delete every object and time each
//! until it is gone, finalizers included) and `idle` (`duration_s` with no
//! changes: what a controller costs when nothing happens). Parsing and
//! validation; run/phase.rs executes them.

use std::path::Path;

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::spec::errors::{Checked, Source};

/// Upper bounds that keep a typo from running for a day.
const MAX_COUNT: u32 = 100;
const MAX_SECONDS: f64 = 3600.0;
const MAX_RATE: f64 = 100_000.0;

/// A `[[phase]]` table as written.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PhaseSpec {
    /// "update", "delete" or "idle".
    pub kind: Spanned<String>,
    /// update: rounds over every object (default 1).
    pub count: Option<Spanned<u32>>,
    /// update, delete: requests per second over all objects (default: as
    /// fast as the loader's concurrency allows).
    pub rate: Option<Spanned<f64>>,
    /// update: a merge-patch template (YAML or JSON file, relative to the
    /// experiment file) with {{name}}, {{index}}, {{round}}, {{namespace}};
    /// default for Widgets: spec.count = index + 1000000 × round.
    pub patch: Option<Spanned<String>>,
    /// idle: how long nothing changes.
    pub duration_s: Option<Spanned<f64>>,
    /// update, delete: how long the phase may take (default: the window).
    pub timeout_s: Option<Spanned<f64>>,
}

/// A validated phase.
#[derive(Debug, Clone, PartialEq)]
pub enum Phase {
    Update {
        count: u32,
        rate: Option<f64>,
        /// The template's text (None: the Widget default).
        patch: Option<String>,
        timeout_s: f64,
    },
    Delete {
        rate: Option<f64>,
        timeout_s: f64,
    },
    Idle {
        duration_s: f64,
    },
}

impl Phase {
    pub fn kind(&self) -> &'static str {
        match self {
            Phase::Update { .. } => "update",
            Phase::Delete { .. } => "delete",
            Phase::Idle { .. } => "idle",
        }
    }

    /// The longest the phase can take, for plan estimates.
    pub fn max_seconds(&self) -> f64 {
        match self {
            Phase::Update { timeout_s, .. } | Phase::Delete { timeout_s, .. } => *timeout_s,
            Phase::Idle { duration_s } => *duration_s,
        }
    }
}

/// Validates the `[[phase]]` entries of `file` (patch paths are relative to
/// it); `window_s` is the default timeout; only the built-in Widget workload
/// has a default patch.
pub fn check(
    src: &Source,
    file: &Path,
    specs: &[PhaseSpec],
    window_s: f64,
    builtin_workload: bool,
) -> Checked<Vec<Phase>> {
    let phases = entries(file, specs, window_s).map_err(|(key, span, m)| src.at(key, span, m))?;
    if let Some(i) = phases
        .iter()
        .position(|p| matches!(p, Phase::Delete { .. }))
        && let Some(after) = phases[i + 1..]
            .iter()
            .position(|p| !matches!(p, Phase::Idle { .. }))
    {
        return Err(src.at(
            "kind",
            specs[i + 1 + after].kind.span(),
            "nothing is left to change after a delete phase: only idle may follow it",
        ));
    }
    // Only Widgets have a built-in patch; another kind's spec is unknown to us.
    if !builtin_workload
        && let Some(i) = phases
            .iter()
            .position(|p| matches!(p, Phase::Update { patch: None, .. }))
    {
        return Err(src.at(
            "patch",
            specs[i].kind.span(),
            "an update phase on a [workload] needs patch = \"file.yaml\" (a merge-patch template of the object's spec)",
        ));
    }
    Ok(phases)
}

/// The key, its span and the message of a bad entry.
type Bad = (&'static str, std::ops::Range<usize>, String);

/// Each entry on its own.
fn entries(file: &Path, specs: &[PhaseSpec], window_s: f64) -> Result<Vec<Phase>, Bad> {
    let mut out = Vec::new();
    for p in specs {
        let kind = p.kind.get_ref().as_str();
        let allowed: &[&str] = match kind {
            "update" => &["count", "rate", "patch", "timeout_s"],
            "delete" => &["rate", "timeout_s"],
            "idle" => &["duration_s"],
            other => {
                return Err((
                    "kind",
                    p.kind.span(),
                    format!("unknown phase kind {other:?}: use update, delete or idle"),
                ));
            }
        };
        let given: [(&'static str, Option<std::ops::Range<usize>>); 5] = [
            ("count", p.count.as_ref().map(|v| v.span())),
            ("rate", p.rate.as_ref().map(|v| v.span())),
            ("patch", p.patch.as_ref().map(|v| v.span())),
            ("duration_s", p.duration_s.as_ref().map(|v| v.span())),
            ("timeout_s", p.timeout_s.as_ref().map(|v| v.span())),
        ];
        for (key, span) in given {
            if let Some(span) = span
                && !allowed.contains(&key)
            {
                return Err((key, span, format!("a {kind} phase has no {key}")));
            }
        }
        let seconds = |key: &'static str, v: &Option<Spanned<f64>>, default: Option<f64>| match v {
            Some(s) => {
                let x = *s.get_ref();
                if x > 0.0 && x <= MAX_SECONDS {
                    Ok(x)
                } else {
                    Err((
                        key,
                        s.span(),
                        format!("must be from more than 0 to {MAX_SECONDS} seconds, not {x}"),
                    ))
                }
            }
            None => default.ok_or((key, p.kind.span(), format!("a {kind} phase needs {key}"))),
        };
        let rate = match &p.rate {
            Some(r) if !(*r.get_ref() > 0.0 && *r.get_ref() <= MAX_RATE) => {
                return Err((
                    "rate",
                    r.span(),
                    format!("must be more than 0 and at most {MAX_RATE} per second"),
                ));
            }
            r => r.as_ref().map(|r| *r.get_ref()),
        };
        out.push(match kind {
            "update" => {
                let count = match &p.count {
                    Some(c) if !(1..=MAX_COUNT).contains(c.get_ref()) => {
                        return Err(("count", c.span(), format!("must be from 1 to {MAX_COUNT}")));
                    }
                    c => c.as_ref().map_or(1, |c| *c.get_ref()),
                };
                let patch = match &p.patch {
                    None => None,
                    Some(path) => {
                        let full = file.parent().unwrap_or(Path::new(".")).join(path.get_ref());
                        let text = std::fs::read_to_string(&full).map_err(|e| {
                            (
                                "patch",
                                path.span(),
                                format!("cannot read {}: {e}", full.display()),
                            )
                        })?;
                        // The template must be a mapping once its placeholders are filled.
                        render(&text, "x", 1, 1, "ns").map_err(|e| {
                            ("patch", path.span(), format!("{}: {e}", full.display()))
                        })?;
                        Some(text)
                    }
                };
                Phase::Update {
                    count,
                    rate,
                    patch,
                    timeout_s: seconds("timeout_s", &p.timeout_s, Some(window_s))?,
                }
            }
            "delete" => Phase::Delete {
                rate,
                timeout_s: seconds("timeout_s", &p.timeout_s, Some(window_s))?,
            },
            _ => Phase::Idle {
                duration_s: seconds("duration_s", &p.duration_s, None)?,
            },
        });
    }
    Ok(out)
}

/// A patch template with its placeholders filled, as a JSON merge patch.
pub fn render(
    template: &str,
    name: &str,
    index: u64,
    round: u32,
    namespace: &str,
) -> Result<serde_json::Value, String> {
    let text = template
        .replace("{{name}}", name)
        .replace("{{index}}", &index.to_string())
        .replace("{{round}}", &round.to_string())
        .replace("{{namespace}}", namespace);
    let v: serde_json::Value =
        super::yaml::one(&text).map_err(|e| format!("not YAML or JSON: {e}"))?;
    if !v.is_object() {
        return Err("a patch must be a mapping (a JSON merge patch)".into());
    }
    Ok(v)
}

/// The built-in Widget update: a new spec.count that no earlier round used,
/// so the controller must write a new processedCount.
pub fn widget_patch(index: u64, round: u32) -> serde_json::Value {
    serde_json::json!({"spec": {"count": index + 1_000_000 * u64::from(round)}})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_fill_placeholders_and_must_be_mappings() {
        let v = render(
            "spec:\n  count: {{index}}\n  message: \"{{name}} r{{round}} in {{namespace}}\"\n",
            "w-1",
            7,
            2,
            "ns",
        )
        .unwrap();
        assert_eq!(
            v,
            serde_json::json!({"spec": {"count": 7, "message": "w-1 r2 in ns"}})
        );
        assert!(render("- a\n- b\n", "x", 1, 1, "n").is_err());
        assert!(render("spec: [", "x", 1, 1, "n").is_err());
        assert_eq!(widget_patch(5, 2)["spec"]["count"], 2_000_005);
    }
}
