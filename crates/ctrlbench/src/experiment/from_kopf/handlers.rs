//! kopf's handlers as an operator's Python files declare them, read as
//! text, never run: each file is cut into logical lines with its comments
//! dropped and its docstrings emptied, so that only code counts; a
//! function's decorators give the handler's cause and the resource it
//! serves, matched as kopf's own `Selector` does (positional forms,
//! keywords, module-level string constants); its body gives the status
//! fields it writes through `patch` and whether it returns a value, which
//! kopf stores in the status. What a Python expression computes is not
//! guessed: a selector that is not a literal or a constant is unreadable.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::python::{Line, assignment, is_identifier, logical_lines, split_top, string_literal};

/// The Python files under `dir` that import kopf, tests and installed
/// packages (a virtualenv's site-packages) left out.
pub(super) fn kopf_files(dir: &Path) -> Vec<PyFile> {
    let is_test = |n: &str| n.starts_with("test_") || n.ends_with("_test.py") || n == "conftest.py";
    super::super::scan::files(dir, &|n| n.ends_with(".py") && !is_test(n))
        .files
        .into_iter()
        .filter(|(p, _)| {
            !p.strip_prefix(dir).unwrap_or(p).components().any(|c| {
                matches!(
                    c.as_os_str().to_str(),
                    Some("site-packages" | "dist-packages" | "tests" | "test")
                )
            })
        })
        .map(|(path, text)| PyFile::parse(path, &text))
        .filter(PyFile::imports_kopf)
        .collect()
}

/// A Python file as logical lines of code.
pub(super) struct PyFile {
    pub(super) path: PathBuf,
    lines: Vec<Line>,
}

/// A function with kopf decorators.
#[derive(Debug)]
pub(super) struct Function {
    pub(super) file: PathBuf,
    /// Of its `def`.
    pub(super) line: usize,
    pub(super) name: String,
    pub(super) decorators: Vec<Decorator>,
    /// Its `patch.status[...] = …` assignments, in order.
    pub(super) writes: Vec<StatusWrite>,
    /// It returns something other than None (kopf stores it in the status).
    pub(super) returns: bool,
}

#[derive(Debug)]
pub(super) struct Decorator {
    /// `create`, `update`, `resume`, `daemon`, …
    pub(super) cause: String,
    pub(super) selector: Selector,
    /// `id=`: the handler's id instead of the function's name.
    pub(super) id: Option<String>,
    /// `field=`: kopf appends the field to the id.
    pub(super) field: bool,
}

/// A resource as a kopf decorator names it (kopf's `Selector`).
#[derive(Debug, Default)]
pub(super) struct Selector {
    group: Option<String>,
    version: Option<String>,
    /// (keyword, value): `kind`, `plural`, `singular`, `shortcut`, or ""
    /// for a positional name, which may be any of them.
    names: Vec<(String, String)>,
    /// Some argument is an expression only Python can evaluate.
    pub(super) unreadable: bool,
}

#[derive(Debug)]
pub(super) struct StatusWrite {
    /// The keys under status.
    pub(super) path: Vec<String>,
    pub(super) value: Literal,
}

/// A value as the code spells it.
#[derive(Debug, PartialEq)]
pub(super) enum Literal {
    Text(String),
    Bool(bool),
    Int(i64),
    Other,
}

impl Literal {
    fn of(expr: &str) -> Literal {
        let e = expr.trim();
        if let Some(s) = string_literal(e) {
            return Literal::Text(s);
        }
        match e {
            "True" => Literal::Bool(true),
            "False" => Literal::Bool(false),
            _ => e.parse().map(Literal::Int).unwrap_or(Literal::Other),
        }
    }
}

/// The names a CRD answers to.
pub(super) struct Names {
    group: String,
    versions: Vec<String>,
    kind: String,
    pub(super) plural: String,
    singular: String,
    short: Vec<String>,
}

impl Names {
    pub(super) fn of(crd: &Value) -> Names {
        let s = |p: &str| {
            crd.pointer(p)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let list = |p: &str| -> Vec<String> {
            crd.pointer(p)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        };
        let plural = s("/spec/names/plural");
        // The apiserver's default: the kind in lowercase.
        let singular = match s("/spec/names/singular") {
            given if given.is_empty() => s("/spec/names/kind").to_lowercase(),
            given => given,
        };
        Names {
            group: s("/spec/group"),
            versions: crd
                .pointer("/spec/versions")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|v| v.get("name").and_then(Value::as_str).map(str::to_string))
                .collect(),
            kind: s("/spec/names/kind"),
            plural,
            singular,
            short: list("/spec/names/shortNames"),
        }
    }
}

impl Selector {
    /// kopf's reading of the positional arguments (`Selector.__post_init__`):
    /// ('plural'), ('plural.group'), ('plural.v1.group'), ('group/v1',
    /// 'plural'), ('group', 'plural'), ('group', 'v1', 'plural').
    fn of(positional: &[Option<String>], keywords: &HashMap<String, Option<String>>) -> Selector {
        let mut s = Selector::default();
        if positional.iter().any(Option::is_none) {
            s.unreadable = true;
            return s;
        }
        let p: Vec<&str> = positional.iter().flatten().map(String::as_str).collect();
        let mut any = |name: &str| s.names.push((String::new(), name.to_string()));
        match p.as_slice() {
            [] => {}
            [one] => {
                let parts: Vec<&str> = one.split('.').collect();
                if parts.len() >= 2 && is_version(parts[1]) {
                    any(parts[0]);
                    s.version = Some(parts[1].to_string());
                    if parts.len() >= 3 {
                        s.group = Some(parts[2..].join("."));
                    }
                } else if let Some((name, group)) = one.split_once('.') {
                    any(name);
                    s.group = Some(group.to_string());
                } else {
                    any(one);
                }
            }
            [gv, name] => {
                any(name);
                if let Some((g, v)) = gv.rsplit_once('/') {
                    s.group = Some(g.to_string());
                    s.version = Some(v.to_string());
                } else if *gv == "v1" {
                    s.group = Some(String::new());
                    s.version = Some("v1".into());
                } else {
                    s.group = Some(gv.to_string());
                }
            }
            [g, v, name, ..] => {
                any(name);
                s.group = Some(g.to_string());
                s.version = Some(v.to_string());
            }
        }
        for key in ["group", "version", "kind", "plural", "singular", "shortcut"] {
            match keywords.get(key) {
                None => {}
                Some(None) => s.unreadable = true,
                Some(Some(v)) => match key {
                    "group" => s.group = Some(v.clone()),
                    "version" => s.version = Some(v.clone()),
                    _ => s.names.push((key.to_string(), v.clone())),
                },
            }
        }
        s
    }

    /// kopf's `Selector.check` against the CRD's names.
    pub(super) fn matches(&self, n: &Names) -> bool {
        if self.unreadable || self.names.is_empty() {
            return false;
        }
        self.group.as_ref().is_none_or(|g| *g == n.group)
            && self.version.as_ref().is_none_or(|v| n.versions.contains(v))
            && self.names.iter().all(|(key, v)| match key.as_str() {
                "kind" => *v == n.kind,
                "plural" => *v == n.plural,
                "singular" => *v == n.singular,
                "shortcut" => n.short.contains(v),
                _ => *v == n.kind || *v == n.plural || *v == n.singular || n.short.contains(v),
            })
    }
}

/// "v1", "v1beta2", "v2alpha1": kopf's test for a version in "plural.v1.group".
fn is_version(s: &str) -> bool {
    let Some(rest) = s.strip_prefix('v') else {
        return false;
    };
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    if digits == 0 {
        return false;
    }
    let tail = &rest[digits..];
    tail.is_empty()
        || ["alpha", "beta"].iter().any(|w| {
            tail.strip_prefix(w)
                .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        })
}

impl Function {
    /// Whether any of its decorators names the kind.
    pub(super) fn serves(&self, n: &Names) -> bool {
        self.decorators.iter().any(|d| d.selector.matches(n))
    }
}

impl PyFile {
    pub(super) fn parse(path: PathBuf, text: &str) -> PyFile {
        PyFile {
            path,
            lines: logical_lines(text),
        }
    }

    fn imports_kopf(&self) -> bool {
        self.lines.iter().any(|l| {
            let t = l.text.as_str();
            if let Some(rest) = t.strip_prefix("from ") {
                let module = rest.split_whitespace().next().unwrap_or_default();
                return module == "kopf" || module.starts_with("kopf.");
            }
            t.strip_prefix("import ").is_some_and(|rest| {
                rest.split(',').any(|m| {
                    let m = m.split_whitespace().next().unwrap_or_default();
                    m == "kopf" || m.starts_with("kopf.")
                })
            })
        })
    }

    /// Module-level `NAME = "literal"`: what decorators often name their
    /// group, version and plural with.
    fn constants(&self) -> HashMap<String, String> {
        self.lines
            .iter()
            .filter(|l| l.indent == 0)
            .filter_map(|l| {
                let (lhs, rhs) = assignment(&l.text)?;
                // `NAME: str = "…"` too.
                let name = lhs.split(':').next()?.trim();
                let value = string_literal(rhs)?;
                is_identifier(name).then(|| (name.to_string(), value))
            })
            .collect()
    }

    /// Every function decorated with kopf's resource decorators.
    pub(super) fn functions(&self) -> Vec<Function> {
        let constants = self.constants();
        let value = |e: &str| -> Option<String> {
            let e = e.trim();
            string_literal(e).or_else(|| constants.get(e).cloned())
        };
        let mut out = Vec::new();
        let mut i = 0;
        while i < self.lines.len() {
            let mut decorators = Vec::new();
            while let Some(d) = self.lines.get(i).and_then(|l| l.text.strip_prefix('@')) {
                decorators.extend(decorator(d, &value));
                i += 1;
            }
            let Some(def) = self.lines.get(i) else { break };
            i += 1;
            let Some(name) = def_name(&def.text) else {
                continue;
            };
            if decorators.is_empty() {
                continue;
            }
            let body_end = self.lines[i..]
                .iter()
                .position(|l| l.indent <= def.indent)
                .map_or(self.lines.len(), |n| i + n);
            let (writes, returns) = read_body(&self.lines[i..body_end]);
            out.push(Function {
                file: self.path.clone(),
                line: def.no,
                name,
                decorators,
                writes,
                returns,
            });
        }
        out
    }
}

/// A kopf decorator's cause and selector, from the text after '@'.
fn decorator(text: &str, value: &dyn Fn(&str) -> Option<String>) -> Option<Decorator> {
    let open = text.find('(')?;
    let callee = text[..open].trim();
    let callee = callee.strip_prefix("kopf.").unwrap_or(callee);
    let cause = match callee.strip_prefix("on.") {
        Some(c) => c,
        None if matches!(callee, "daemon" | "timer" | "index") => callee,
        None => return None,
    };
    let inner = text[open + 1..].trim_end().strip_suffix(')')?;
    let mut positional = Vec::new();
    let mut keywords = HashMap::new();
    for arg in split_top(inner, ',') {
        let arg = arg.trim();
        if arg.is_empty() {
            continue;
        }
        match assignment(arg) {
            Some((k, v)) if is_identifier(k.trim()) => {
                keywords.insert(k.trim().to_string(), value(v));
            }
            _ => positional.push(value(arg)),
        }
    }
    Some(Decorator {
        cause: cause.to_string(),
        id: keywords.get("id").cloned().flatten(),
        field: keywords.contains_key("field"),
        selector: Selector::of(&positional, &keywords),
    })
}

/// A handler body's status writes and whether it returns a value; nested
/// functions and classes are not the handler's own code.
fn read_body(body: &[Line]) -> (Vec<StatusWrite>, bool) {
    let mut writes = Vec::new();
    let mut returns = false;
    let mut nested: Option<usize> = None;
    for l in body {
        if let Some(n) = nested {
            if l.indent > n {
                continue;
            }
            nested = None;
        }
        let t = l.text.as_str();
        if def_name(t).is_some() || t.starts_with("class ") {
            nested = Some(l.indent);
            continue;
        }
        match t.strip_prefix("return ") {
            Some(v) if v.trim() != "None" => returns = true,
            Some(_) => {}
            None => writes.extend(status_write(t)),
        }
    }
    (writes, returns)
}

/// `patch.status['a']['b'] = v`, `patch['status']['a'] = v` or
/// `patch['status'] = {'a': v}` (its last key).
fn status_write(t: &str) -> Option<StatusWrite> {
    let rest = ["patch.status", "patch['status']", "patch[\"status\"]"]
        .iter()
        .find_map(|p| t.strip_prefix(p))?;
    let mut rest = rest.trim_start();
    let mut path = Vec::new();
    while let Some(r) = rest.strip_prefix('[') {
        let close = r.find(']')?;
        path.push(string_literal(r[..close].trim())?);
        rest = r[close + 1..].trim_start();
    }
    let value = rest
        .strip_prefix('=')
        .filter(|v| !v.starts_with('='))?
        .trim();
    if !path.is_empty() {
        return Some(StatusWrite {
            path,
            value: Literal::of(value),
        });
    }
    // A whole status: a dict literal's last key.
    let inner = value.strip_prefix('{')?.strip_suffix('}')?;
    let pair = split_top(inner, ',')
        .into_iter()
        .rfind(|p| !p.trim().is_empty())?;
    let (k, v) = split_top(&pair, ':')
        .split_first()
        .map(|(k, v)| (k.clone(), v.join(":")))?;
    Some(StatusWrite {
        path: vec![string_literal(k.trim())?],
        value: Literal::of(&v),
    })
}

/// `def name(` or `async def name(`: the name.
fn def_name(t: &str) -> Option<String> {
    let rest = t.strip_prefix("async ").unwrap_or(t).strip_prefix("def ")?;
    let name = rest.split('(').next()?.trim();
    is_identifier(name).then(|| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn py(text: &str) -> PyFile {
        PyFile::parse(PathBuf::from("/op/handlers.py"), text)
    }

    #[test]
    fn code_is_read_without_comments_or_docstrings() {
        let f = py("\"\"\"Docs.\n\n@kopf.on.create('docstring')\n\"\"\"\n\
            import kopf  # the framework\n\
            # @kopf.on.create('comment')\n\
            @kopf.on.create(\n    'kopf.dev',  # the group\n    'v1', 'kopfexamples',\n)\n\
            def create_fn(patch, **_):\n    x = 'a # not a comment' + \\\n        'b'\n");
        let texts: Vec<(usize, &str)> = f.lines.iter().map(|l| (l.no, l.text.as_str())).collect();
        assert_eq!(
            texts,
            [
                (1, "\"\""),
                (5, "import kopf"),
                (
                    7,
                    "@kopf.on.create(     'kopf.dev',       'v1', 'kopfexamples', )"
                ),
                (11, "def create_fn(patch, **_):"),
                (12, "x = 'a # not a comment' +          'b'"),
            ]
        );
        assert!(f.imports_kopf());
        let fns = f.functions();
        assert_eq!(fns.len(), 1, "{fns:?}");
        assert_eq!((fns[0].name.as_str(), fns[0].line), ("create_fn", 11));
        assert!(!py("import kopfx\nfrom kopfish import on\n").imports_kopf());
        assert!(py("import os, kopf as k\n").imports_kopf());
        assert!(py("from kopf.testing import KopfRunner\n").imports_kopf());
    }

    #[test]
    fn decorators_name_the_kind_as_kopf_reads_them() {
        let n = Names {
            group: "kopf.dev".into(),
            versions: vec!["v1".into()],
            kind: "KopfExample".into(),
            plural: "kopfexamples".into(),
            singular: "kopfexample".into(),
            short: vec!["kex".into()],
        };
        let serves = |decorator: &str| {
            let f = py(&format!(
                "import kopf\nG = 'kopf.dev'\nP: str = \"kopfexamples\"\n{decorator}\ndef h(**_):\n    pass\n"
            ));
            f.functions().iter().any(|f| f.serves(&n))
        };
        for yes in [
            "@kopf.on.create('kopf.dev', 'v1', 'kopfexamples')",
            "@kopf.on.update('kopfexamples')",
            "@kopf.on.resume('KopfExample')",
            "@kopf.on.delete('kex')",
            "@kopf.on.field('kopfexamples.kopf.dev', field='spec.x')",
            "@kopf.on.event('kopfexamples.v1.kopf.dev')",
            "@kopf.on.create('kopf.dev/v1', 'kopfexamples')",
            "@kopf.on.create('kopf.dev', 'kopfexample')",
            "@kopf.on.create(G, 'v1', P)",
            "@kopf.on.create(kind='KopfExample', group='kopf.dev')",
            "@kopf.daemon('kopfexamples', initial_delay=1)",
            "@kopf.timer('kopfexamples', interval=10, labels={'a': 'b'})",
            "@on.create('kopfexamples')",
        ] {
            assert!(serves(yes), "{yes}");
        }
        for no in [
            "@kopf.on.create('other.dev', 'v1', 'kopfexamples')",
            "@kopf.on.create('kopf.dev', 'v2', 'kopfexamples')",
            "@kopf.on.create('pods')",
            "@kopf.on.create('v1', 'kopfexamples')",
            "@kopf.on.create(plural='KopfExample')",
            "@kopf.on.create(settings.PLURAL)",
            "@kopf.on.create(kopf.EVERYTHING)",
            "@kopf.on.startup()",
            "@functools.lru_cache('kopfexamples')",
        ] {
            assert!(!serves(no), "{no}");
        }
    }

    #[test]
    fn literals_are_read_as_python_spells_them() {
        assert_eq!(Literal::of("'a\\'b'"), Literal::Text("a'b".into()));
        assert_eq!(Literal::of("r\"\\d\""), Literal::Text("\\d".into()));
        assert_eq!(Literal::of("True"), Literal::Bool(true));
        assert_eq!(Literal::of("-3"), Literal::Int(-3));
        assert_eq!(Literal::of("f'x{y}'"), Literal::Other);
        assert_eq!(Literal::of("'a' + 'b'"), Literal::Other);
    }
}
