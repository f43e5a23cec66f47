//! When an object counts as ready: `ready = { … }` as written, the rule it
//! becomes, and how our watch judges an object by it, from a view of only
//! the fields the rule reads.

use std::fmt;

use kube::core::DynamicObject;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::jsonpath::{JsonPath, as_text};

/// `ready = { … }` as written: exactly one of the rule shapes.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ReadySpec {
    pub condition: Option<String>,
    pub jsonpath: Option<String>,
    pub equals: Option<toml::Value>,
    pub equals_path: Option<String>,
    pub exists: Option<bool>,
    pub observed_generation: Option<bool>,
    /// Written by `init --from` when nothing told it what ready means:
    /// refused, with what to choose.
    pub todo: Option<String>,
}

/// A readiness rule, evaluated on an object's JSON (apiVersion, kind,
/// metadata, spec, status …) by our own watch.
#[derive(Debug, Clone, PartialEq)]
pub enum ReadyRule {
    /// A `status.conditions[]` entry of this type with status "True".
    Condition(String),
    /// The value at the path, as text (strings as they are, numbers and
    /// booleans as JSON writes them), equals this — as `kubectl wait
    /// --for=jsonpath=…=value` compares.
    Equals(JsonPath, String),
    /// The values at both paths are present and equal as text: e.g.
    /// status.availableReplicas has reached spec.replicas.
    EqualsPath(JsonPath, JsonPath),
    /// The path leads to a value (null counts as absent).
    Exists(JsonPath),
    /// `status.observedGeneration` ≥ `metadata.generation`.
    ObservedGeneration,
}

impl ReadyRule {
    /// Whether `obj` (the whole object as JSON) satisfies the rule.
    pub fn holds(&self, obj: &Value) -> bool {
        match self {
            ReadyRule::Condition(t) => obj
                .pointer("/status/conditions")
                .and_then(Value::as_array)
                .is_some_and(|cs| {
                    cs.iter().any(|c| {
                        c.get("type").and_then(Value::as_str) == Some(t)
                            && c.get("status").and_then(Value::as_str) == Some("True")
                    })
                }),
            ReadyRule::Equals(p, want) => p.get(obj).and_then(as_text).as_deref() == Some(want),
            ReadyRule::EqualsPath(a, b) => {
                let text = |p: &JsonPath| p.get(obj).filter(|v| !v.is_null()).and_then(as_text);
                matches!((text(a), text(b)), (Some(x), Some(y)) if x == y)
            }
            ReadyRule::Exists(p) => p.get(obj).is_some_and(|v| !v.is_null()),
            ReadyRule::ObservedGeneration => {
                let gen_ = obj.pointer("/metadata/generation").and_then(Value::as_i64);
                let seen = obj
                    .pointer("/status/observedGeneration")
                    .and_then(Value::as_i64);
                matches!((gen_, seen), (Some(g), Some(s)) if s >= g)
            }
        }
    }

    /// Whether `obj`'s status says which generation it describes: its
    /// `status.observedGeneration`, or the readiness condition's own
    /// `observedGeneration`, equal to or past `metadata.generation`. None
    /// where the status has neither field to read (nothing to judge).
    pub fn observes_generation(&self, obj: &DynamicObject) -> Option<bool> {
        let generation = obj.metadata.generation?;
        let status = self.view(obj, &["status"]);
        let at = |v: Option<&Value>| v.and_then(Value::as_i64).map(|s| s >= generation);
        if let Some(seen) = at(status.pointer("/status/observedGeneration")) {
            return Some(seen);
        }
        let ReadyRule::Condition(t) = self else {
            return None;
        };
        let cond = status
            .pointer("/status/conditions")
            .and_then(Value::as_array)?
            .iter()
            .find(|c| c.get("type").and_then(Value::as_str) == Some(t))?;
        Some(at(cond.get("observedGeneration")).unwrap_or(false))
    }

    /// Whether the rule holds for `obj` as our watch decodes it: the same
    /// answer as [`ReadyRule::holds`] on the whole object's JSON, on
    /// [`ReadyRule::view`] (no whole-object serialization per event).
    pub fn holds_object(&self, obj: &DynamicObject) -> bool {
        self.holds(&self.view(obj, &[]))
    }

    /// `obj` as JSON with only the top-level fields this rule reads, plus
    /// `also` (see [`object_view`]; metadata whole only when a path of the
    /// rule reads it).
    pub fn view(&self, obj: &DynamicObject, also: &[&str]) -> Value {
        let mut fields: Vec<&str> = match self {
            ReadyRule::Condition(_) => vec!["status"],
            // A path that starts with an index reads nothing of an object.
            ReadyRule::Equals(p, _) | ReadyRule::Exists(p) => p.first_field().into_iter().collect(),
            ReadyRule::EqualsPath(a, b) => {
                a.first_field().into_iter().chain(b.first_field()).collect()
            }
            ReadyRule::ObservedGeneration => vec!["metadata", "status"],
        };
        let whole_metadata = fields.contains(&"metadata") && self != &ReadyRule::ObservedGeneration;
        fields.extend_from_slice(also);
        object_view(obj, &fields, whole_metadata)
    }

    /// From `ready = { … }`; the message says what is wrong.
    pub fn from_spec(s: &ReadySpec) -> Result<ReadyRule, String> {
        const SHAPES: &str = "use one of { condition = \"Ready\" }, { jsonpath = \"{.status.phase}\", equals = \"Ready\" }, { jsonpath = \"{.status.availableReplicas}\", equals_path = \"{.spec.replicas}\" }, { jsonpath = \"…\", exists = true }, { observed_generation = true }";
        if let Some(t) = &s.todo {
            return Err(format!("the readiness rule is still a TODO: {t}"));
        }
        if let Some(other) = &s.equals_path {
            return match (
                &s.condition,
                &s.jsonpath,
                &s.equals,
                s.exists,
                s.observed_generation,
            ) {
                (None, Some(p), None, None, None) => Ok(ReadyRule::EqualsPath(
                    JsonPath::parse(p)?,
                    JsonPath::parse(other).map_err(|m| format!("equals_path: {m}"))?,
                )),
                _ => Err(format!(
                    "`equals_path` compares with `jsonpath` and takes nothing else: {SHAPES}"
                )),
            };
        }
        let rule = match (
            &s.condition,
            &s.jsonpath,
            &s.equals,
            s.exists,
            s.observed_generation,
        ) {
            (Some(c), None, None, None, None) if !c.is_empty() => ReadyRule::Condition(c.clone()),
            (None, Some(p), Some(v), None, None) => {
                let text = match v {
                    toml::Value::String(s) => s.clone(),
                    toml::Value::Integer(i) => i.to_string(),
                    toml::Value::Float(f) => f.to_string(),
                    toml::Value::Boolean(b) => b.to_string(),
                    _ => return Err("`equals` must be a string, number or boolean".into()),
                };
                ReadyRule::Equals(JsonPath::parse(p)?, text)
            }
            (None, Some(p), None, Some(true), None) => ReadyRule::Exists(JsonPath::parse(p)?),
            (None, Some(_), None, Some(false), None) => {
                return Err("`exists = false` is not a readiness rule: use exists = true".into());
            }
            (None, None, None, None, Some(true)) => ReadyRule::ObservedGeneration,
            _ => return Err(format!("not a readiness rule: {SHAPES}")),
        };
        Ok(rule)
    }
}

/// `obj` as JSON with only the top-level `fields` (each once), where our
/// watches would otherwise serialize the whole object per event: status and
/// spec are small; metadata, with its managedFields, is not, so it is only
/// `{"generation": …}` unless `whole_metadata`.
pub fn object_view(obj: &DynamicObject, fields: &[&str], whole_metadata: bool) -> Value {
    let mut view = serde_json::Map::new();
    for &field in fields {
        if view.contains_key(field) {
            continue;
        }
        let v = match field {
            "metadata" if whole_metadata => {
                serde_json::to_value(&obj.metadata).unwrap_or(Value::Null)
            }
            "metadata" => serde_json::json!({ "generation": obj.metadata.generation }),
            "apiVersion" => obj
                .types
                .as_ref()
                .map_or(Value::Null, |t| Value::String(t.api_version.clone())),
            "kind" => obj
                .types
                .as_ref()
                .map_or(Value::Null, |t| Value::String(t.kind.clone())),
            other => obj.data.get(other).cloned().unwrap_or(Value::Null),
        };
        view.insert(field.to_string(), v);
    }
    Value::Object(view)
}

impl fmt::Display for ReadyRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadyRule::Condition(t) => write!(f, "condition {t}=True"),
            ReadyRule::Equals(p, v) => write!(f, "{p} = {v:?}"),
            ReadyRule::EqualsPath(a, b) => write!(f, "{a} = {b}"),
            ReadyRule::Exists(p) => write!(f, "{p} exists"),
            ReadyRule::ObservedGeneration => {
                write!(f, "status.observedGeneration ≥ metadata.generation")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(generation: i64, status: Value) -> DynamicObject {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "x.example.com/v1",
            "kind": "Thing",
            "metadata": {"name": "a", "generation": generation},
            "status": status,
        }))
        .unwrap()
    }

    /// Written from what each status says, not from the code: the
    /// readiness condition's own observedGeneration counts, as does
    /// status.observedGeneration; an older one does not; a status with
    /// neither field under a non-condition rule has nothing to judge.
    #[test]
    fn a_status_names_its_generation_or_not() {
        let ready = ReadyRule::Condition("Ready".into());
        let cond = |og: Option<i64>| {
            let mut c = serde_json::json!({"type": "Ready", "status": "True"});
            if let Some(g) = og {
                c["observedGeneration"] = g.into();
            }
            serde_json::json!({ "conditions": [c] })
        };
        assert_eq!(
            ready.observes_generation(&object(2, cond(Some(2)))),
            Some(true)
        );
        assert_eq!(
            ready.observes_generation(&object(2, cond(Some(1)))),
            Some(false)
        );
        assert_eq!(
            ready.observes_generation(&object(2, cond(None))),
            Some(false)
        );
        let top = serde_json::json!({"observedGeneration": 3, "conditions": []});
        assert_eq!(ready.observes_generation(&object(3, top)), Some(true));
        let exists = ReadyRule::Exists(JsonPath::parse("{.status.ready}").unwrap());
        let plain = serde_json::json!({"ready": true});
        assert_eq!(exists.observes_generation(&object(1, plain)), None);
        let stale = serde_json::json!({"ready": true, "observedGeneration": 1});
        assert_eq!(exists.observes_generation(&object(2, stale)), Some(false));
    }
}
