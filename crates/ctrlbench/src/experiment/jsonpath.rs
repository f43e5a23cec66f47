//! The kubectl-style JSONPath subset that readiness rules are written in
//! (`{.status.phase}`, `{.a.b[0].c}`, `{.metadata.labels['x.y/z']}`): the
//! parser, the evaluator on an object's JSON, and the scalar's text as
//! `kubectl -o jsonpath` prints it. Kept apart from the workload so that the
//! path language can be read and tested on its own; it is deliberately
//! small (no filters or wildcards), so one path names one value.

use std::fmt;

use serde_json::Value;

/// Text of a scalar as `kubectl … -o jsonpath` prints it; None for
/// objects and arrays (never equal to a scalar).
pub(crate) fn as_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Null => None,
        _ => None,
    }
}

/// The JSONPath subset readiness rules use: `{.a.b}`, `{.a.b[0].c}`,
/// `{.metadata.labels['app.kubernetes.io/name']}` (braces and the leading
/// dot optional). No filters, wildcards or recursive descent.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonPath {
    text: String,
    steps: Vec<Step>,
}

#[derive(Debug, Clone, PartialEq)]
enum Step {
    Field(String),
    Index(usize),
}

impl fmt::Display for JsonPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl JsonPath {
    pub fn parse(text: &str) -> Result<JsonPath, String> {
        let bad = |why: &str| {
            format!(
                "jsonpath {text:?}: {why} (supported: {{.a.b}}, {{.a.b[0].c}}, {{.a['x.y']}}; no filters or wildcards)"
            )
        };
        let t = text.trim();
        let t = match (t.strip_prefix('{'), t.ends_with('}')) {
            (Some(inner), true) => &inner[..inner.len() - 1],
            (None, false) => t,
            _ => return Err(bad("unbalanced braces")),
        };
        let mut steps = Vec::new();
        let b = t.as_bytes();
        let mut i = 0;
        if b.first() == Some(&b'$') {
            i = 1;
        }
        while i < b.len() {
            match b[i] {
                b'.' => {
                    let start = i + 1;
                    let mut j = start;
                    while j < b.len() && b[j] != b'.' && b[j] != b'[' {
                        j += 1;
                    }
                    let name = &t[start..j];
                    if name.is_empty() {
                        return Err(bad("empty field name"));
                    }
                    if name.contains(['*', '?', '@', '(', ')', ' ']) {
                        return Err(bad(&format!("unsupported field {name:?}")));
                    }
                    steps.push(Step::Field(name.to_string()));
                    i = j;
                }
                b'[' => {
                    let Some(end) = t[i..].find(']').map(|e| e + i) else {
                        return Err(bad("unclosed ["));
                    };
                    let inner = t[i + 1..end].trim();
                    if let Ok(n) = inner.parse::<usize>() {
                        steps.push(Step::Index(n));
                    } else if inner.len() >= 2
                        && ((inner.starts_with('\'') && inner.ends_with('\''))
                            || (inner.starts_with('"') && inner.ends_with('"')))
                    {
                        steps.push(Step::Field(inner[1..inner.len() - 1].to_string()));
                    } else {
                        return Err(bad(&format!("unsupported subscript [{inner}]")));
                    }
                    i = end + 1;
                }
                _ if i == 0 => {
                    // `status.phase` without the leading dot.
                    return JsonPath::parse(&format!(".{t}")).map(|p| JsonPath {
                        text: text.to_string(),
                        ..p
                    });
                }
                c => return Err(bad(&format!("unexpected {:?}", c as char))),
            }
        }
        if steps.is_empty() {
            return Err(bad("empty path"));
        }
        Ok(JsonPath {
            text: text.to_string(),
            steps,
        })
    }

    /// The top-level field the path starts with (None when it starts with
    /// an index): the one part of an object a watch must keep for it.
    pub fn first_field(&self) -> Option<&str> {
        match self.steps.first() {
            Some(Step::Field(f)) => Some(f.as_str()),
            _ => None,
        }
    }

    /// The value the path leads to in `v`.
    pub fn get<'a>(&self, v: &'a Value) -> Option<&'a Value> {
        let mut cur = v;
        for s in &self.steps {
            cur = match s {
                Step::Field(f) => cur.get(f.as_str())?,
                Step::Index(n) => cur.get(*n)?,
            };
        }
        Some(cur)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn path(p: &str) -> JsonPath {
        JsonPath::parse(p).unwrap()
    }

    #[test]
    fn jsonpath_subset() {
        let v = json!({"status": {"phase": "Ready", "n": 0, "items": [{"c": 1}, {"c": "x"}],
                       "labels": {"a.b/c": "y"}, "nothing": null}});
        assert_eq!(path("{.status.phase}").get(&v), Some(&json!("Ready")));
        assert_eq!(path(".status.phase").get(&v), Some(&json!("Ready")));
        assert_eq!(path("status.phase").get(&v), Some(&json!("Ready")));
        assert_eq!(path("{.status.items[1].c}").get(&v), Some(&json!("x")));
        assert_eq!(path("{$.status.items[0].c}").get(&v), Some(&json!(1)));
        assert_eq!(path("{.status.labels['a.b/c']}").get(&v), Some(&json!("y")));
        assert_eq!(path("{.status.items[5].c}").get(&v), None);
        assert_eq!(path("{.spec}").get(&v), None);
        for bad in [
            "{.status.phase",
            "{}",
            "{.a..b}",
            "{.a[?(@.x)]}",
            "{.a[*]}",
            "{..a}",
            "{.a[}",
        ] {
            assert!(JsonPath::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_first_field_is_what_a_watch_keeps() {
        assert_eq!(path("{.status.phase}").first_field(), Some("status"));
        assert_eq!(path("{['metadata'].name}").first_field(), Some("metadata"));
        assert_eq!(path("{[0].a}").first_field(), None);
    }
}
