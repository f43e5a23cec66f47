//! The readiness rule `init --from` writes for a kind: a condition type
//! the kind's own controller code sets, else what its status schema
//! promises (a required field, observedGeneration), else a TODO that `run`
//! refuses with one line naming the choices.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::from_code::Lang;
use super::project_file::Kind;

/// A TOML basic string (JSON's escapes are TOML's).
fn q(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// The served version's schema (the kind's version, else the storage one).
pub(super) fn version_schema<'a>(crd: &'a Value, version: &str) -> Option<&'a Value> {
    let versions = crd.pointer("/spec/versions")?.as_array()?;
    let v = versions
        .iter()
        .find(|v| v.get("name").and_then(Value::as_str) == Some(version))
        .or_else(|| {
            versions
                .iter()
                .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        })?;
    v.pointer("/schema/openAPIV3Schema")
}

/// The readiness rule `init --from` found, and where from.
pub struct Ready {
    /// The `ready = …` value.
    pub rule: String,
    /// Where it came from, for the comment above it.
    pub note: String,
    /// Nothing to go on: the rule is a TODO that `run` refuses.
    pub todo: bool,
}

impl Ready {
    /// The comment and the `ready` line.
    pub fn toml(&self) -> String {
        format!("# {}\nready = {}\n", self.note, self.rule)
    }

    /// The line `init` prints when the rule is still to be chosen.
    pub fn warning(&self) -> Option<String> {
        self.todo.then(|| self.note.clone())
    }
}

/// The readiness rule of `k`: a condition type its own controller code
/// (`own`, with constants looked up in `all`) sets; else the status
/// schema's required field or observedGeneration; else a TODO.
pub(super) fn readiness(
    dir: &Path,
    own: &[&(PathBuf, String)],
    all: &[(PathBuf, String)],
    lang: Lang,
    crd: &Value,
    k: &Kind,
) -> Ready {
    let status = version_schema(crd, &k.version).and_then(|s| s.pointer("/properties/status"));
    let fields = status
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object);
    let has = |f: &str| fields.is_some_and(|m| m.contains_key(f));
    let set = super::from_code::condition_types(own, all, lang);
    if has("conditions") && !set.is_empty() {
        let pick = ["Ready", "Available"]
            .iter()
            .find_map(|t| set.iter().find(|(x, _)| x == t))
            .or(match set.as_slice() {
                [one] => Some(one),
                _ => None,
            });
        if let Some((t, file)) = pick {
            return Ready {
                rule: format!("{{ condition = {} }}", q(t)),
                note: format!(
                    "The condition type {} that {}'s controller sets ({}).",
                    q(t),
                    k.kind,
                    super::from_code::shown(dir, file)
                ),
                todo: false,
            };
        }
    }
    let required: Vec<&str> = status
        .and_then(|s| s.get("required"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if let Some(f) = required.first() {
        return Ready {
            rule: format!(
                "{{ jsonpath = {}, exists = true }}",
                q(&format!("{{.status.{f}}}"))
            ),
            note: format!(
                "The status schema requires status.{f}: ready once the controller has written it."
            ),
            todo: false,
        };
    }
    if has("observedGeneration") {
        return Ready {
            rule: "{ observed_generation = true }".into(),
            note: "The status has observedGeneration: ready once it reaches metadata.generation."
                .into(),
            todo: false,
        };
    }
    let seen = if set.is_empty() {
        format!("{}'s controller sets no condition", k.kind)
    } else {
        format!(
            "{}'s controller sets the conditions {}",
            k.kind,
            set.iter().map(|(t, _)| q(t)).collect::<Vec<_>>().join(", ")
        )
    };
    Ready {
        rule: format!("{{ todo = {} }}", q(TODO_CHOICES)),
        note: format!(
            "TODO: {seen}, and its status schema has no required field and no observedGeneration: replace the todo with the rule that says an object is ready."
        ),
        todo: true,
    }
}

/// What a TODO readiness rule asks for; `run` and `--dry-run` print it.
pub const TODO_CHOICES: &str = "choose { condition = \"…\" }, { jsonpath = \"{.status.…}\", equals = \"…\" }, { jsonpath = \"{.status.…}\", exists = true } or { observed_generation = true }";
