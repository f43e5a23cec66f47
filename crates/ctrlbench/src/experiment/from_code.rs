//! What an operator's own source says about one of its kinds, for `init
//! --from`: which files are that kind's controller, and which condition
//! types that code sets. Comments are stripped first: kubebuilder's scaffold
//! puts `"Available"` in a comment of every `*_types.go`, and a condition
//! read from a comment (or from another kind's files) names a condition the
//! controller never sets, so the run would end with nothing Ready.

use std::path::{Path, PathBuf};

use regex::Regex;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Lang {
    Go,
    Rust,
}

/// `text` with `//` and `/* */` comments blanked, string literals kept
/// (Go's and Rust's "…", Go's `…`). Line breaks stay, so offsets keep
/// their lines.
pub fn strip_comments(text: &str, lang: Lang) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                if b[i] == b'\n' {
                    out.push('\n');
                }
                i += 1;
            }
            i += 2;
        } else if c == b'"' || (c == b'`' && lang == Lang::Go) {
            let start = i;
            i += 1;
            while i < b.len() && b[i] != c {
                if b[i] == b'\\' && c == b'"' {
                    i += 1;
                }
                i += 1;
            }
            i = (i + 1).min(b.len());
            out.push_str(&text[start..i]);
        } else if c == b'\'' && lang == Lang::Rust {
            // A char literal ('"') or a lifetime ('a): copy through the next
            // quote only when it closes a char literal.
            let end = text[i + 1..]
                .char_indices()
                .take(4)
                .find(|(_, ch)| *ch == '\'')
                .map(|(k, _)| i + 1 + k + 1);
            let end = end.unwrap_or(i + 1);
            out.push_str(&text[i..end]);
            i = end;
        } else {
            let ch = text[i..].chars().next().unwrap_or(' ');
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

/// The Go files that set up a controller `For` the kind: `For(&pkg.Kind{})`.
pub fn go_controller_files<'a>(
    sources: &'a [(PathBuf, String)],
    kind: &str,
) -> Vec<&'a (PathBuf, String)> {
    let re = Regex::new(&format!(
        r"\bFor\(\s*&\s*(?:\w+\.)?{}\s*[{{]\s*[}}]",
        regex::escape(kind)
    ))
    .expect("a valid pattern");
    sources.iter().filter(|(_, t)| re.is_match(t)).collect()
}

/// The Rust files that work on the kind: `Api<Kind>` or `Api::<Kind>`.
pub fn rust_kind_files<'a>(
    sources: &'a [(PathBuf, String)],
    kind: &str,
) -> Vec<&'a (PathBuf, String)> {
    let re = Regex::new(&format!(
        r"\bApi\s*(?:::)?\s*<\s*{}\s*>",
        regex::escape(kind)
    ))
    .expect("a valid pattern");
    sources.iter().filter(|(_, t)| re.is_match(t)).collect()
}

/// The condition types `files` set, each with the file that sets it, in
/// order of first appearance: the `Type` (Go) or `type_` (Rust) field of a
/// `Condition { … }` literal, a string or a constant defined in `all` (a
/// constant may live in the API package).
pub fn condition_types(
    files: &[&(PathBuf, String)],
    all: &[(PathBuf, String)],
    lang: Lang,
) -> Vec<(String, PathBuf)> {
    let field = match lang {
        Lang::Go => "Type",
        Lang::Rust => "type_",
    };
    let literal = Regex::new(r"\w*Condition\s*\x7b").expect("a valid pattern");
    let value = Regex::new(&format!(
        r#"\b{field}\s*:\s*(?:"([^"]+)"|([A-Za-z_][\w.:]*))"#
    ))
    .expect("a valid pattern");
    let mut out: Vec<(String, PathBuf)> = Vec::new();
    for (path, text) in files {
        let text = strip_comments(text, lang);
        for m in literal.find_iter(&text) {
            // The literal's own fields: up to its closing brace.
            let body = &text[m.end()..];
            let body = &body[..matching_brace(body).unwrap_or(body.len())];
            for c in value.captures_iter(body) {
                let t = match (c.get(1), c.get(2)) {
                    (Some(s), _) => Some(s.as_str().to_string()),
                    (None, Some(id)) => {
                        // READY.into(), READY.to_string(): the constant.
                        let id = id.as_str();
                        let id = [".into", ".to_string", ".to_owned"]
                            .iter()
                            .find_map(|m| id.strip_suffix(m))
                            .unwrap_or(id);
                        constant(id, all, lang)
                    }
                    _ => None,
                };
                if let Some(t) = t
                    && !out.iter().any(|(x, _)| *x == t)
                {
                    out.push((t, path.clone()));
                }
            }
        }
    }
    out
}

/// The offset of the brace that closes an opened one at the start of `s`.
fn matching_brace(s: &str) -> Option<usize> {
    let mut depth = 1;
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The string a constant (`name = "…"`, `const NAME: &str = "…"`) is
/// defined as in `all`; `pkg.Name` and `module::NAME` are looked up by
/// their last part. None if no file defines it, or two define it apart.
fn constant(id: &str, all: &[(PathBuf, String)], lang: Lang) -> Option<String> {
    let name = id.rsplit(['.', ':']).next()?;
    let re = Regex::new(&format!(
        r#"\b{}\s*(?::\s*&(?:'static\s+)?str\s*)?=\s*"([^"]*)""#,
        regex::escape(name)
    ))
    .ok()?;
    let mut found: Option<String> = None;
    for (_, text) in all {
        for c in re.captures_iter(&strip_comments(text, lang)) {
            let v = c[1].to_string();
            match &found {
                Some(f) if *f != v => return None,
                _ => found = Some(v),
            }
        }
    }
    found
}

/// `p` relative to `dir`, for notes.
pub fn shown(dir: &Path, p: &Path) -> String {
    p.strip_prefix(dir).unwrap_or(p).display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(p: &str, t: &str) -> (PathBuf, String) {
        (PathBuf::from(p), t.to_string())
    }

    #[test]
    fn comments_go_and_strings_stay() {
        let t = "a := \"// not a comment\" // gone\n/* \"Available\"\n */ b := `/* kept */`\n";
        assert_eq!(
            strip_comments(t, Lang::Go),
            "a := \"// not a comment\" \n\n b := `/* kept */`\n"
        );
        let r = "let c = '\"'; // \"Ready\"\nfn f<'a>(x: &'a str) {}\n";
        assert_eq!(
            strip_comments(r, Lang::Rust),
            "let c = '\"'; \nfn f<'a>(x: &'a str) {}\n"
        );
    }

    #[test]
    fn a_condition_comes_from_the_kinds_own_controller_and_its_constants() {
        let all = vec![
            src(
                "api/v1/admiral_types.go",
                "// - \"Available\": the resource is fully functional\ntype AdmiralStatus struct{}\n",
            ),
            src(
                "internal/controller/captain_controller.go",
                "func (r *CaptainReconciler) SetupWithManager(mgr ctrl.Manager) error {\n\treturn ctrl.NewControllerManagedBy(mgr).\n\t\tFor(&crewv1.Captain{}).\n\t\tComplete(r)\n}\n// meta.SetStatusCondition(x, metav1.Condition{Type: \"Ready\"})\n",
            ),
            src(
                "internal/controller/memcached_controller.go",
                "const typeAvailableMemcached = \"Available\"\nfunc (r *R) SetupWithManager(mgr ctrl.Manager) error {\n\treturn ctrl.NewControllerManagedBy(mgr).For(&cachev1alpha1.Memcached{}).Owns(&appsv1.Deployment{}).Complete(r)\n}\nfunc f() { meta.SetStatusCondition(&m.Status.Conditions, metav1.Condition{Type: typeAvailableMemcached,\n Status: metav1.ConditionTrue, Reason: \"Reconciling\"})\n s := corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP}\n}\n",
            ),
        ];
        let captain = go_controller_files(&all, "Captain");
        assert_eq!(captain.len(), 1);
        assert!(condition_types(&captain, &all, Lang::Go).is_empty());
        let memcached = go_controller_files(&all, "Memcached");
        assert_eq!(
            condition_types(&memcached, &all, Lang::Go),
            vec![(
                "Available".to_string(),
                PathBuf::from("internal/controller/memcached_controller.go")
            )]
        );
        assert!(go_controller_files(&all, "Admiral").is_empty());
    }

    #[test]
    fn rust_conditions_and_kind_files() {
        let all = vec![src(
            "src/controller.rs",
            "const READY: &str = \"Ready\";\nlet docs: Api<Document> = Api::all(c);\nlet e = Event { type_: EventType::Normal };\nlet c = Condition { type_: READY.into(), status: \"True\".into() };\n",
        )];
        let files = rust_kind_files(&all, "Document");
        assert_eq!(files.len(), 1);
        let types: Vec<String> = condition_types(&files, &all, Lang::Rust)
            .into_iter()
            .map(|t| t.0)
            .collect();
        assert_eq!(types, ["Ready"]);
    }
}
