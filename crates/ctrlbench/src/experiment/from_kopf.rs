//! `ctrlbench init --from DIR` for a kopf operator: Python files that
//! import kopf and register handlers with its decorators
//! (`@kopf.on.create('group', 'v1', 'plural')`), beside the CRD they serve
//! as YAML, which kopf does not generate, so the repository holds it. The
//! CRDs and the example object are found as for a kube-rs project; the
//! handler files are those decorated for the chosen kind; the readiness
//! rule is read off what a create handler of the kind writes (a
//! `patch.status[...]` assignment, or its return value, which kopf stores
//! under `status.<handler id>`). The command is `kopf run` in standalone
//! mode (no peering objects) on the run's namespace, and the rules are what
//! kopf itself does there: list, watch and patch the kind, post events, and
//! watch CRDs and namespaces cluster-wide. Python is read as text, never
//! run: comments and docstrings are blanked first, so only code counts.

mod handlers;
mod python;

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use serde_json::Value;

use super::from_cargo::{find_example, repo_crds};
use super::from_code::Lang;
use super::from_project::{
    Generated, Kind, Rule, choose, q, readiness, rules_toml, top_keys, version_schema,
    workload_toml,
};
use handlers::{Function, Literal, Names, kopf_files};

/// A kopf operator is a directory whose Python files import kopf.
pub fn recognised(dir: &Path) -> bool {
    !kopf_files(dir).is_empty()
}

/// The experiment file for `kind` (or the only kind the handlers serve) of
/// the kopf operator at `dir`, with paths as seen from `out_dir`.
pub fn generate(dir: &Path, kind: Option<&str>, out_dir: &Path) -> Result<Generated> {
    let mut warnings = Vec::new();
    let files = kopf_files(dir);
    let functions: Vec<Function> = files.iter().flat_map(|f| f.functions()).collect();
    let (yamls, notes) = super::scan::yaml(dir);
    warnings.extend(notes);
    let crds = repo_crds(&yamls);
    if crds.is_empty() {
        bail!(
            "{}: no CustomResourceDefinition in the directory's YAML files: add the CRD the kopf handlers serve (e.g. crd.yaml; kopf does not generate one) and run init again",
            dir.display()
        );
    }
    let served: Vec<&(PathBuf, Value, Kind)> = crds
        .iter()
        .filter(|(_, crd, _)| {
            let n = Names::of(crd);
            functions.iter().any(|f| f.serves(&n))
        })
        .collect();
    if served.is_empty() {
        let unread = functions
            .iter()
            .flat_map(|f| &f.decorators)
            .filter(|d| d.selector.unreadable)
            .count();
        bail!(
            "{}: no kopf handler is decorated for the CRDs here ({}){}: name the kind in the decorator, e.g. @kopf.on.create('{}', '{}', '<plural>')",
            dir.display(),
            crds.iter()
                .map(|c| c.2.kind.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            if unread > 0 {
                format!(
                    " ({unread} decorators name their resource with expressions read only at run time)"
                )
            } else {
                String::new()
            },
            crds[0].2.group,
            crds[0].2.version,
        );
    }
    let kinds: Vec<Kind> = served.iter().map(|c| c.2.clone()).collect();
    let chosen = choose(&kinds, kind, "the CRDs the kopf handlers serve")
        .map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))?;
    if !chosen.namespaced {
        bail!(
            "{}: {} is cluster-scoped: ctrlbench creates each run's objects in a namespace of its own, so the kind must be namespaced",
            dir.display(),
            chosen.kind
        );
    }
    let (crd_path, crd, _) = *served
        .iter()
        .find(|c| c.2 == chosen)
        .expect("the chosen kind is one of the CRDs");
    let names = Names::of(crd);
    let example = find_example(&yamls, &chosen).ok_or_else(|| {
        anyhow::anyhow!(
            "{}: no example object of {}/{} {} in the directory's YAML files: add one (e.g. {}-example.yaml) and run init again",
            dir.display(),
            chosen.group,
            chosen.version,
            chosen.kind,
            chosen.kind.to_lowercase()
        )
    })?;
    let mine: Vec<&Function> = functions.iter().filter(|f| f.serves(&names)).collect();
    let mut handler_files: Vec<&Path> = Vec::new();
    for f in &mine {
        if !handler_files.contains(&f.file.as_path()) {
            handler_files.push(&f.file);
        }
    }
    let (ready, ready_note) = match handler_readiness(dir, &mine, crd, &chosen, &mut warnings) {
        Some(r) => r,
        None => schema_readiness(dir, crd, &chosen, &mut warnings),
    };

    let name = experiment_name(dir);
    let shown = relative(out_dir, dir);
    let rel = |p: &Path| format!("{shown}/{}", p.strip_prefix(dir).unwrap_or(p).display());
    let python = if dir.join(".venv/bin/python").is_file() {
        format!("{shown}/.venv/bin/python")
    } else {
        "python3".to_string()
    };
    let mut command = vec![python.clone(), "-m".into(), "kopf".into(), "run".into()];
    command.extend(handler_files.iter().map(|f| format!("{{dir}}/{}", rel(f))));
    command.extend(["--standalone".into(), "--namespace={namespace}".into()]);
    let command: Vec<String> = command.iter().map(|s| q(s)).collect();
    let shown_files: Vec<String> = handler_files.iter().map(|f| rel(f)).collect();

    let mut t = String::new();
    t.push_str(&format!(
        "# An experiment for {name}'s {kind} ({group}/{version}), written by\n\
         # `ctrlbench init --from {shown}` from its kopf operator: the handlers in\n\
         # {files}, the CRD in {crd} and the example object in {example}.\n\
         # Next: ctrlbench run {name}.toml --dry-run, then ctrlbench run {name}.toml\n\
         # Paths are relative to this file. Unknown keys are errors (file:line: key).\n",
        kind = chosen.kind,
        group = chosen.group,
        version = chosen.version,
        files = shown_files.join(", "),
        crd = rel(crd_path),
        example = rel(&example),
    ));
    t.push_str(&top_keys(&name, &chosen.kind));
    t.push_str(&workload_toml(
        &shown,
        &rel(crd_path),
        &[],
        &rel(&example),
        &format!("# {ready_note}\n{ready}\n"),
    ));
    let requirements = dir.join("requirements.txt");
    t.push_str(&variant_toml(
        &name,
        &python,
        &command,
        handler_files.len() > 1,
        requirements.is_file().then(|| rel(&requirements)),
    ));
    warnings.push(format!(
        "{name}: kopf serves no Prometheus metrics: the controller is not scraped, so the report has no reconcile or queue figures for it (its CPU and memory are read from /proc)"
    ));
    let status = status_subresource(crd, &chosen.version);
    t.push_str(&rbac_toml(&chosen.group, &names.plural, status));
    warnings.push(format!(
        "rbac covers {}{} and events only: add the kinds the handlers create or read",
        names.plural,
        if status {
            format!(", {}/status", names.plural)
        } else {
            String::new()
        }
    ));
    Ok(Generated {
        name,
        text: t,
        warnings,
    })
}

/// No status write to read: the status schema's rule, else the TODO, as
/// for Go and kube-rs.
fn schema_readiness(
    dir: &Path,
    crd: &Value,
    k: &Kind,
    warnings: &mut Vec<String>,
) -> (String, String) {
    let r = readiness(dir, &[], &[], Lang::Go, crd, k);
    if let Some(w) = r.warning() {
        warnings.push(w);
    }
    (format!("ready = {}", r.rule), r.note)
}

/// The `[[variant]]` head of a kopf operator: its name and the `kopf run`
/// command, with what the reader must know to run it.
fn variant_toml(
    name: &str,
    python: &str,
    command: &[String],
    several_files: bool,
    requirements: Option<String>,
) -> String {
    let mut t = String::from("[[variant]]\n");
    t.push_str(&format!("name = {}\n", q(name)));
    t.push_str("impl = \"command\"\n");
    t.push_str("framework = \"kopf\"\n");
    t.push_str(
        "# kopf run on the run's namespace only, standalone: no peering objects to\n\
         # find or create. {dir} is this file's directory, so the handler files are\n\
         # found from wherever ctrlbench runs. kopf logs in with KUBECONFIG, which\n\
         # ctrlbench sets to the run's ServiceAccount token.\n",
    );
    if several_files {
        t.push_str("# Every file with handlers for the kind, loaded in this order.\n");
    }
    match requirements {
        Some(r) => t.push_str(&format!(
            "# Needs kopf importable by {python}: {python} -m pip install -r {r}\n"
        )),
        None => t.push_str(&format!("# Needs kopf importable by {python}.\n")),
    }
    t.push_str(&format!("command = [{}]\n", command.join(", ")));
    t.push_str(
        "# kopf serves no Prometheus metrics, so there is no metrics key: the\n\
         # controller is not scraped, and its reconcile and queue figures read\n\
         # \"—\"; its CPU and memory come from /proc, and the watch-, apiserver-\n\
         # and etcd-side figures remain.\n",
    );
    t
}

/// What kopf itself does with the kind in the run's namespace, and the
/// watches it keeps cluster-wide (kopf's own code: clients/patching.py,
/// clients/events.py, reactor/observation.py).
fn rbac_toml(group: &str, plural: &str, status_subresource: bool) -> String {
    let rule = |g: &str, resource: &str, verbs: &[&str]| -> Rule {
        (
            vec![g.to_string()],
            vec![resource.to_string()],
            verbs.iter().map(|v| v.to_string()).collect(),
        )
    };
    let mut rules = vec![rule(group, plural, &["list", "watch", "patch"])];
    if status_subresource {
        rules.push(rule(group, &format!("{plural}/status"), &["patch"]));
    }
    rules.push(rule("", "events", &["create"]));
    let mut t = String::from(if status_subresource {
        "# kopf lists and watches the kind, patches it (its annotations and\n\
         # finalizers) and its status subresource, and posts an event for each\n\
         # handler's outcome. Add the kinds the handlers create or read.\n"
    } else {
        "# kopf lists and watches the kind, patches it (its annotations,\n\
         # finalizers and status: the CRD has no status subresource), and posts\n\
         # an event for each handler's outcome. Add the kinds the handlers create\n\
         # or read.\n"
    });
    t.push_str(&rules_toml("rbac", &rules));
    t.push_str(
        "# kopf's own watches: CRDs (a change of the kind's definition) and\n\
         # namespaces (those --namespace matches); without them it warns and keeps\n\
         # what it saw at startup. A ClusterRole; the report states cluster-wide reads.\n",
    );
    t.push_str(&rules_toml(
        "cluster_rbac",
        &[
            rule(
                "apiextensions.k8s.io",
                "customresourcedefinitions",
                &["list", "watch"],
            ),
            rule("", "namespaces", &["list", "watch"]),
        ],
    ));
    t
}

/// Whether the kind's version has a status subresource (kopf then patches
/// the status there).
fn status_subresource(crd: &Value, version: &str) -> bool {
    crd.pointer("/spec/versions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|v| v.get("name").and_then(Value::as_str) == Some(version))
        .and_then(|v| v.pointer("/subresources/status"))
        .is_some()
}

/// The rule read off the create handlers of the kind, the last first (kopf
/// runs them in order, so its write comes last): its last status write of
/// a literal (compared), else its last status write (which must exist),
/// else its return value (which must exist); None when no create handler
/// writes a status field the CRD keeps.
fn handler_readiness(
    dir: &Path,
    functions: &[&Function],
    crd: &Value,
    k: &Kind,
    warnings: &mut Vec<String>,
) -> Option<(String, String)> {
    let names = Names::of(crd);
    for f in functions.iter().rev() {
        let Some(d) = f
            .decorators
            .iter()
            .find(|d| d.cause == "create" && d.selector.matches(&names))
        else {
            continue;
        };
        let at = format!(
            "{}:{}",
            f.file.strip_prefix(dir).unwrap_or(&f.file).display(),
            f.line
        );
        let write = f
            .writes
            .iter()
            .rev()
            .find(|w| w.value != Literal::Other)
            .or(f.writes.last());
        let (path, rule, note) = if let Some(w) = write {
            let path = w.path.clone();
            let shown = format!("status.{}", path.join("."));
            match &w.value {
                Literal::Other => (
                    path,
                    format!(
                        "ready = {{ jsonpath = {}, exists = true }}",
                        q(&jsonpath(&w.path))
                    ),
                    format!("The create handler {} ({at}) writes {shown}.", f.name),
                ),
                v => (
                    path,
                    format!(
                        "ready = {{ jsonpath = {}, equals = {} }}",
                        q(&jsonpath(&w.path)),
                        toml_value(v)
                    ),
                    format!(
                        "The create handler {} ({at}) sets {shown} = {}.",
                        f.name,
                        toml_value(v)
                    ),
                ),
            }
        } else if f.returns && !d.field {
            let id = d.id.clone().unwrap_or_else(|| f.name.clone());
            (
                vec![id.clone()],
                format!(
                    "ready = {{ jsonpath = {}, exists = true }}",
                    q(&jsonpath(std::slice::from_ref(&id)))
                ),
                format!(
                    "kopf stores the create handler {}'s return value ({at}) under status.{id}.",
                    f.name
                ),
            )
        } else {
            continue;
        };
        if status_keeps(crd, &k.version, &path[0]) {
            return Some((rule, note));
        }
        warnings.push(format!(
            "{at}: {} writes status.{}, but the CRD's status schema prunes it: declare it, or set x-kubernetes-preserve-unknown-fields on status, to use it as the readiness rule",
            f.name, path[0]
        ));
    }
    None
}

/// Whether the apiserver keeps `status.<key>` of the kind: a structural
/// schema prunes every field it neither declares nor preserves.
fn status_keeps(crd: &Value, version: &str, key: &str) -> bool {
    let Some(root) = version_schema(crd, version) else {
        return true;
    };
    let preserves = |v: &Value| {
        v.get("x-kubernetes-preserve-unknown-fields")
            .and_then(Value::as_bool)
            == Some(true)
    };
    if preserves(root) {
        return true;
    }
    let Some(status) = root.pointer("/properties/status") else {
        return false;
    };
    preserves(status) || status.get("properties").and_then(|p| p.get(key)).is_some()
}

/// `{.status.a.b}`, quoting a key that is not a plain name.
fn jsonpath(keys: &[String]) -> String {
    let mut s = String::from("{.status");
    for k in keys {
        let plain = k
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && k.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if plain {
            s.push('.');
            s.push_str(k);
        } else {
            s.push_str(&format!("['{k}']"));
        }
    }
    s.push('}');
    s
}

/// The experiment's and the variant's name: the directory's, as a variant
/// name may be spelled (lowercase letters, digits and '-', ≤ 40).
fn experiment_name(dir: &Path) -> String {
    let abs = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let raw = abs
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let mut name = String::new();
    for c in raw.chars() {
        let c = if c.is_ascii_lowercase() || c.is_ascii_digit() {
            c
        } else {
            '-'
        };
        if !(c == '-' && (name.is_empty() || name.ends_with('-'))) {
            name.push(c);
        }
    }
    let name: String = name.chars().take(40).collect();
    let name = name.trim_end_matches('-');
    if name.is_empty() {
        "kopf-operator".into()
    } else {
        name.to_string()
    }
}

/// `to` as seen from `from`, through as many ".." as it takes: the file's
/// paths stay relative wherever the two directories are.
fn relative(from: &Path, to: &Path) -> String {
    let abs = |p: &Path| {
        std::fs::canonicalize(p)
            .or_else(|_| std::path::absolute(p))
            .unwrap_or_else(|_| p.to_path_buf())
    };
    let (f, t) = (abs(from), abs(to));
    let fc: Vec<_> = f.components().collect();
    let tc: Vec<_> = t.components().collect();
    let common = fc.iter().zip(&tc).take_while(|(a, b)| a == b).count();
    let mut parts = vec!["..".to_string(); fc.len() - common];
    parts.extend(
        tc[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    if parts.is_empty() {
        ".".into()
    } else {
        parts.join("/")
    }
}

/// A literal as TOML writes it, for `equals`.
fn toml_value(v: &Literal) -> String {
    match v {
        Literal::Text(s) => q(s),
        Literal::Bool(b) => b.to_string(),
        Literal::Int(n) => n.to_string(),
        Literal::Other => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CRD: &str = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n\
        metadata: {name: kopfexamples.kopf.dev}\n\
        spec:\n  group: kopf.dev\n  scope: Namespaced\n\
        \x20 names: {kind: KopfExample, plural: kopfexamples, singular: kopfexample, shortNames: [kex]}\n\
        \x20 versions:\n  - name: v1\n    served: true\n    storage: true\n    subresources: {status: {}}\n\
        \x20   schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n\
        \x20         spec: {type: object, x-kubernetes-preserve-unknown-fields: true}\n\
        \x20         status: {type: object, properties: {phase: {type: string}}}\n";

    fn crd() -> Value {
        super::super::workload::read_crd(CRD).unwrap()
    }

    /// The rule `generate` writes for `handlers` on `crd`, and the warnings.
    fn rule_of(handlers: &str, crd: &Value) -> (Option<String>, Vec<String>) {
        let f = handlers::PyFile::parse(
            PathBuf::from("/op/handlers.py"),
            &format!("import kopf\n{handlers}"),
        );
        let fns = f.functions();
        let mine: Vec<&Function> = fns.iter().collect();
        let k = super::super::from_cargo::crd_kind(crd).unwrap();
        let mut warnings = Vec::new();
        let r = handler_readiness(Path::new("/op"), &mine, crd, &k, &mut warnings);
        (r.map(|(rule, _)| rule), warnings)
    }

    #[test]
    fn a_create_handlers_status_write_or_return_value_is_the_readiness_rule() {
        let crd = crd();
        let create = "@kopf.on.create('kopfexamples')\n";
        let update = "@kopf.on.update('kopfexamples')\n";
        // The create handler's literal write, not the update handler's.
        let (r, _) = rule_of(
            &format!(
                "{create}def c(patch, **_):\n    patch.status['phase'] = 'Ready'\n    patch.status['n'] = len(x)\n\n\
                 {update}def u(patch, **_):\n    patch['status']['phase'] = 'Updated'\n"
            ),
            &crd,
        );
        assert_eq!(
            r.as_deref(),
            Some("ready = { jsonpath = \"{.status.phase}\", equals = \"Ready\" }")
        );
        // Any other value must exist; a whole status's last key.
        let (r, _) = rule_of(
            &format!(
                "{create}def c(patch, **_):\n    patch[\"status\"] = {{'x': 1, 'phase': compute()}}\n"
            ),
            &crd,
        );
        assert_eq!(
            r.as_deref(),
            Some("ready = { jsonpath = \"{.status.phase}\", exists = true }")
        );
        // A return value is stored under the handler's id, which the
        // status must keep: this schema declares only phase.
        let returns = format!(
            "{create}def create_fn(**_):\n    def inner():\n        return None\n    return {{'message': 'done'}}\n"
        );
        let (r, w) = rule_of(&returns, &crd);
        assert_eq!(r, None);
        assert!(
            w[0].contains(
                "create_fn writes status.create_fn, but the CRD's status schema prunes it"
            ),
            "{w:?}"
        );
        let mut open = crd.clone();
        open["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"]["x-kubernetes-preserve-unknown-fields"] =
            Value::Bool(true);
        let (r, w) = rule_of(&returns, &open);
        assert_eq!(
            r.as_deref(),
            Some("ready = { jsonpath = \"{.status.create_fn}\", exists = true }")
        );
        assert!(w.is_empty(), "{w:?}");
        let (r, _) = rule_of(
            &format!(
                "@kopf.on.create('kopfexamples', id='made')\n{}",
                &returns[create.len()..]
            ),
            &open,
        );
        assert_eq!(
            r.as_deref(),
            Some("ready = { jsonpath = \"{.status.made}\", exists = true }")
        );
        // Nothing to read: a handler returning None, an update handler, a
        // field handler (its id holds the field).
        for handlers in [
            format!("{create}def c(**_):\n    return None\n"),
            format!("{update}def u(**_):\n    return 1\n"),
            "@kopf.on.create('kopfexamples', field='spec.a')\ndef f(**_):\n    return 1\n".into(),
        ] {
            assert_eq!(rule_of(&handlers, &open).0, None, "{handlers}");
        }
    }

    #[test]
    fn values_and_paths_are_written_as_toml_and_jsonpath() {
        assert_eq!(toml_value(&Literal::Text("a\"b".into())), "\"a\\\"b\"");
        assert_eq!(toml_value(&Literal::Bool(false)), "false");
        assert_eq!(toml_value(&Literal::Int(3)), "3");
        assert_eq!(
            jsonpath(&["a_b".into(), "x.y/z".into()]),
            "{.status.a_b['x.y/z']}"
        );
    }
    #[test]
    fn paths_are_relative_however_far_apart() {
        let d = tempfile::tempdir().unwrap();
        let (from, to) = (d.path().join("a/b/c"), d.path().join("a/x/op"));
        std::fs::create_dir_all(&from).unwrap();
        std::fs::create_dir_all(&to).unwrap();
        assert_eq!(relative(&from, &to), "../../x/op");
        assert_eq!(relative(&to, &to), ".");
        assert_eq!(relative(&d.path().join("a"), &to), "x/op");
        assert_eq!(
            experiment_name(Path::new("/x/My_Operator.v2")),
            "my-operator-v2"
        );
        assert_eq!(experiment_name(Path::new("/x/__")), "kopf-operator");
    }

    /// The one line of a failed `generate`.
    #[track_caller]
    fn failure(r: Result<Generated>) -> String {
        let Err(e) = r else { panic!("it succeeded") };
        let e = format!("{e:#}");
        assert!(!e.contains('\n'), "{e}");
        e
    }

    /// A kopf operator in `root/op` with two kinds: apples in apples.py
    /// and orchard/more_apples.py, pears in pears.py.
    fn two_kinds(root: &Path) -> PathBuf {
        let op = root.join("op");
        let crd = |kind: &str, plural: &str| {
            CRD.replace("KopfExample", kind)
                .replace("kopfexamples", plural)
                .replace("kopfexample", &kind.to_lowercase())
        };
        let files = [
            ("deploy/apple-crd.yaml", crd("Apple", "apples")),
            ("deploy/pear-crd.yaml", crd("Pear", "pears")),
            (
                "examples/apple.yaml",
                "apiVersion: kopf.dev/v1\nkind: Apple\nspec: {n: 1}\n".into(),
            ),
            (
                "examples/pear.yaml",
                "apiVersion: kopf.dev/v1\nkind: Pear\nspec: {n: 1}\n".into(),
            ),
            (
                "apples.py",
                "import kopf\n@kopf.on.create('apples')\ndef a(patch, **_):\n    patch.status['phase'] = 'Ready'\n".into(),
            ),
            (
                "orchard/more_apples.py",
                "from kopf import on\n@on.update('apples')\ndef b(**_):\n    pass\n".into(),
            ),
            (
                "pears.py",
                "import kopf\n@kopf.on.create('kopf.dev', 'v1', 'pears')\ndef p(**_):\n    return 'ripe'\n".into(),
            ),
            ("util.py", "import os\n".into()),
            // Installed packages and tests are not the operator's handlers.
            (
                "venv/lib/python3.12/site-packages/x.py",
                "import kopf\n@kopf.on.create('apples')\ndef v(**_):\n    pass\n".into(),
            ),
            (
                "tests/test_apples.py",
                "import kopf\n@kopf.on.create('apples')\ndef t(**_):\n    pass\n".into(),
            ),
            ("requirements.txt", "kopf==1.44.6\n".into()),
        ];
        for (path, text) in files {
            let p = op.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        op
    }

    #[test]
    fn the_handler_files_of_the_chosen_kind_are_run() {
        let root = tempfile::tempdir().unwrap();
        let op = two_kinds(root.path());
        let out = root.path().join("results/exp");
        std::fs::create_dir_all(&out).unwrap();
        assert!(recognised(&op));
        let e = failure(generate(&op, None, &out));
        assert!(
            e.contains("has 2 namespaced kinds (Apple, Pear): choose one with --kind"),
            "{e}"
        );
        let g = generate(&op, Some("apple"), &out).unwrap();
        assert_eq!(g.name, "op");
        for want in [
            "crd = \"../../op/deploy/apple-crd.yaml\"",
            "object = \"../../op/examples/apple.yaml\"",
            "ready = { jsonpath = \"{.status.phase}\", equals = \"Ready\" }",
            "command = [\"python3\", \"-m\", \"kopf\", \"run\", \"{dir}/../../op/apples.py\", \"{dir}/../../op/orchard/more_apples.py\", \"--standalone\", \"--namespace={namespace}\"]",
            "# Needs kopf importable by python3: python3 -m pip install -r ../../op/requirements.txt",
            "{ api_groups = [\"kopf.dev\"], resources = [\"apples\"], verbs = [\"list\", \"watch\", \"patch\"] }",
            "{ api_groups = [\"kopf.dev\"], resources = [\"apples/status\"], verbs = [\"patch\"] }",
            "{ api_groups = [\"\"], resources = [\"events\"], verbs = [\"create\"] }",
            "{ api_groups = [\"apiextensions.k8s.io\"], resources = [\"customresourcedefinitions\"], verbs = [\"list\", \"watch\"] }",
            "{ api_groups = [\"\"], resources = [\"namespaces\"], verbs = [\"list\", \"watch\"] }",
        ] {
            assert!(g.text.contains(want), "{want} not in:\n{}", g.text);
        }
        assert!(!g.text.contains("metrics ="), "{}", g.text);
        assert!(
            g.warnings
                .iter()
                .any(|w| w.contains("kopf serves no Prometheus metrics")),
            "{:?}",
            g.warnings
        );
        // The pears: their own file; a return value the schema prunes
        // leaves the TODO that the Go projects' reader writes.
        let g = generate(&op, Some("Pear"), &out).unwrap();
        assert!(
            g.text
                .contains("\"{dir}/../../op/pears.py\", \"--standalone\""),
            "{}",
            g.text
        );
        assert!(
            g.text.contains(
                "# TODO: Pear's controller sets no condition, and its status schema has no required field"
            ),
            "{}",
            g.text
        );
        assert!(g.text.contains("ready = { todo = "), "{}", g.text);
        // The file is refused until the rule is chosen, with one line.
        let file = out.join("op.toml");
        std::fs::write(&file, &g.text).unwrap();
        let e = super::super::spec::parse(&file, &g.text).unwrap_err();
        assert!(
            e.to_string().contains("the readiness rule is still a TODO"),
            "{e}"
        );
        // A project's own virtualenv runs it.
        std::fs::create_dir_all(op.join(".venv/bin")).unwrap();
        std::fs::write(op.join(".venv/bin/python"), "").unwrap();
        let g = generate(&op, Some("Pear"), &out).unwrap();
        assert!(
            g.text
                .contains("command = [\"../../op/.venv/bin/python\", \"-m\", \"kopf\""),
            "{}",
            g.text
        );
    }

    #[test]
    fn what_is_missing_is_one_line_naming_it() {
        let root = tempfile::tempdir().unwrap();
        let op = two_kinds(root.path());
        // A kind the handlers do not serve.
        let e = failure(generate(&op, Some("Plum"), root.path()));
        assert!(
            e.contains("no kind \"Plum\" in the CRDs the kopf handlers serve: it has Apple, Pear"),
            "{e}"
        );
        // No example of the kind.
        std::fs::remove_file(op.join("examples/pear.yaml")).unwrap();
        let e = failure(generate(&op, Some("Pear"), root.path()));
        assert!(e.contains("no example object of kopf.dev/v1 Pear"), "{e}");
        // Handlers for no CRD here.
        std::fs::remove_file(op.join("deploy/apple-crd.yaml")).unwrap();
        std::fs::remove_file(op.join("pears.py")).unwrap();
        let e = failure(generate(&op, None, root.path()));
        assert!(
            e.contains("no kopf handler is decorated for the CRDs here (Pear)"),
            "{e}"
        );
        // No CRD at all.
        std::fs::remove_dir_all(op.join("deploy")).unwrap();
        let e = failure(generate(&op, None, root.path()));
        assert!(
            e.contains("no CustomResourceDefinition in the directory's YAML files: add the CRD the kopf handlers serve"),
            "{e}"
        );
    }
}
