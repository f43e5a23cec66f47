//! `ctrlbench init --from DIR`: an experiment file read off an operator's
//! own repository, so that its first run needs no edit. A kubebuilder or
//! operator-sdk Go layout is recognised by its `PROJECT` file; from it and
//! the files the scaffold generates come the CRD (config/crd/bases), the
//! object template (config/samples), the Role and the cluster-wide reads
//! (config/rbac/role.yaml), the readiness rule (a condition type named in
//! the Go sources, else `observedGeneration` in the status schema), and the
//! build and command with the flags that make the manager measurable:
//! metrics on loopback in plain HTTP, health probes and webhooks off.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use super::from_code::Lang;

pub(super) use super::init_workload::{q, workload_toml};
pub(super) use super::project_file::choose;
pub use super::project_file::{Kind, Project, read_project};
pub use super::readiness::TODO_CHOICES;
pub(super) use super::readiness::{readiness, version_schema};

/// What `init --from` found: the file's text and what the user should check.
pub struct Generated {
    pub name: String,
    pub text: String,
    pub warnings: Vec<String>,
}

/// The experiment file for `kind` (or the project's only kind) of the
/// project at `dir`, with paths as seen from `out_dir`, where it is written.
pub fn generate(dir: &Path, kind: Option<&str>, out_dir: &Path) -> Result<Generated> {
    let project_file = dir.join("PROJECT");
    if !dir.is_dir() {
        bail!("{} is not a directory", dir.display());
    }
    if !project_file.is_file() {
        bail!(
            "{}: no PROJECT file or Cargo.toml: init --from reads a kubebuilder or operator-sdk Go project (PROJECT, config/crd/bases, config/samples, config/rbac/role.yaml) or a kube-rs Cargo package; for another operator, `ctrlbench init NAME` writes a file to fill in",
            dir.display()
        );
    }
    let text = std::fs::read_to_string(&project_file)
        .with_context(|| format!("cannot read {}", project_file.display()))?;
    let project =
        read_project(&text).map_err(|e| anyhow::anyhow!("{}: {e}", project_file.display()))?;
    let (name, kinds) = (project.name.clone(), project.kinds.clone());
    let chosen =
        choose(&kinds, kind, "PROJECT").map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))?;
    let mut warnings = Vec::new();
    let shown = shown_path(dir, out_dir);
    let at = |rel: &str| format!("{shown}/{rel}");

    let (crd_rel, crd) = find_crd(dir, &chosen)?;
    let sample = find_sample(dir, &chosen, &crd, &mut warnings)?;
    let sources = go_sources(dir, &mut warnings);
    let own = super::from_code::go_controller_files(&sources, &chosen.kind);
    let ready = readiness(dir, &own, &sources, Lang::Go, &crd, &chosen);
    let rules = read_role(&dir.join("config/rbac/role.yaml"), &mut warnings)?;
    let (main_pkg, lease) = main_package(dir);
    // Every kind the manager watches must be served, or controller-runtime
    // waits for its cache and exits: the project's other kinds with a
    // controller, and those its controllers own or watch.
    let mut extra = Vec::new();
    for k in manager_kinds(&project, &sources) {
        if k == chosen {
            continue;
        }
        match find_crd(dir, &k) {
            Ok((rel, _)) => extra.push(at(&rel)),
            Err(_) => warnings.push(format!(
                "the manager also watches {} ({}/{}), whose CRD is not in config/crd/bases: run `make manifests`, then add its file to [workload] extra_crds",
                k.kind, k.group, k.version
            )),
        }
    }
    for e in &project.external {
        warnings.push(format!(
            "the manager also watches {e}, a kind from outside the project: add its CRD's file to [workload] extra_crds, or the manager waits for that kind's cache and exits"
        ));
    }

    let mut t = String::new();
    t.push_str(&format!(
        "# An experiment for {name}'s {kind} ({group}/{version}), written by\n\
         # `ctrlbench init --from {shown}` from its kubebuilder project: PROJECT,\n\
         # config/crd/bases, config/samples and config/rbac/role.yaml.\n\
         # Next: ctrlbench run {name}.toml --dry-run, then ctrlbench run {name}.toml\n\
         # Paths are relative to this file. Unknown keys are errors (file:line: key).\n",
        kind = chosen.kind,
        group = chosen.group,
        version = chosen.version,
    ));
    t.push_str(&top_keys(&name, &chosen.kind));
    t.push_str(&workload_toml(
        &shown,
        &at(&crd_rel),
        &extra,
        &at(&sample),
        &ready.toml(),
    ));
    if let Some(w) = ready.warning() {
        warnings.push(w);
    }

    t.push_str("[[variant]]\n");
    t.push_str(&format!("name = {}\n", q(&name)));
    t.push_str("impl = \"command\"\n");
    t.push_str("framework = \"controller-runtime\"\n");
    t.push_str(
        "# Built before anything starts, in build_dir; skipped while its files are\n\
         # unchanged since the last build that succeeded.\n",
    );
    t.push_str(&format!(
        "build = [\"go\", \"build\", \"-o\", \"bin/manager\", {}]\n",
        q(&main_pkg)
    ));
    t.push_str(&format!("build_dir = {}\n", q(&shown)));
    t.push_str(
        "# Metrics on loopback in plain HTTP (kubebuilder's default turns them off,\n\
         # or serves HTTPS behind authentication); health probes off. {port}: a\n\
         # free 127.0.0.1 port; {kubeconfig}: the run's ServiceAccount token.\n",
    );
    if let Some(lease) = &lease {
        t.push_str(&format!(
            "# Leader election: add \"--leader-elect\" and lease = {}.\n",
            q(lease)
        ));
    }
    t.push_str(&format!(
        "command = [{}, \"--metrics-bind-address=127.0.0.1:{{port}}\", \"--metrics-secure=false\", \"--health-probe-bind-address=0\", \"--kubeconfig={{kubeconfig}}\"]\n",
        q(&at("bin/manager"))
    ));
    let mut env = vec![("ENABLE_WEBHOOKS".to_string(), "false".to_string())];
    let from_manager = manager_env(dir, &mut warnings);
    if !from_manager.is_empty() {
        t.push_str("# Webhooks off; the rest from config/manager/manager.yaml's container.\n");
    }
    env.extend(from_manager);
    let env: Vec<String> = env
        .iter()
        .map(|(k, v)| format!("{} = {}", q(k), q(v)))
        .collect();
    t.push_str(&format!("env = {{ {} }}\n", env.join(", ")));
    t.push_str("metrics = \"http://127.0.0.1:{port}/metrics\"\n");
    t.push_str(
        "# config/rbac/role.yaml (the manager's ClusterRole), granted in the run's namespace.\n",
    );
    t.push_str(&rules_toml("rbac", &rules));
    let reads = cluster_reads(&rules);
    t.push_str(
        "# The list/watch a manager that caches every namespace makes (a ClusterRole;\n\
         # the report states cluster-wide reads).\n",
    );
    t.push_str(&rules_toml("cluster_rbac", &reads));
    Ok(Generated {
        name,
        text: t,
        warnings,
    })
}

/// The file's top keys, alike for every kind of project: its name, what it
/// measures, and a short first run (N=50, stopping once converged).
pub(super) fn top_keys(name: &str, kind: &str) -> String {
    // A budget is a limit on what this operator measured, so none is
    // guessed: the keys are listed, commented, to fill from a first run.
    let mut budget = String::from(
        "# Limits each variant must stay at or below (`run --fail-on-budget` exits 3 above one).\n\
         # Fill them from a first run: `ctrlbench budget RESULTS` prints this table measured.\n\
         # [budget]\n",
    );
    for k in super::spec::budget::KEYS {
        let doc = k.doc.lines().next().unwrap_or_default().trim();
        budget.push_str(&format!("# {} =    # {doc}\n", k.name));
    }
    budget.push('\n');
    let top = format!(
        "name = {}\n\
         description = {}\n\
         scales = [50]                # objects per run\n\
         window_s = 120               # observation window from the first create\n\
         stop_when_converged = true   # stop once every object is ready and the reconciles are quiet\n\
         quiet_s = 3\n\
         repeats = \"auto\"             # until every question is decided (3 to 10): one repeat cannot decide a 10 % change\n\
         concurrency = 16             # loader: creates in flight\n\n",
        q(name),
        q(&format!(
            "{name}'s {kind} under load: time from create to ready per object."
        ))
    );
    top + &budget
}

/// The path of `dir` as the experiment file in `out_dir` names it: always
/// relative, so that the file can be committed and used from any clone.
pub(super) fn shown_path(dir: &Path, out_dir: &Path) -> String {
    relative(dir, out_dir)
}

/// `to` relative to the directory `from`, through their canonical paths.
pub(super) fn relative(to: &Path, from: &Path) -> String {
    let abs = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let (t, f) = (abs(to), abs(from));
    let (tc, fc): (Vec<_>, Vec<_>) = (t.components().collect(), f.components().collect());
    let common = tc.iter().zip(&fc).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = vec!["..".to_string(); fc.len() - common];
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

/// The kinds of the project the manager watches: those with a controller,
/// and those a controller `Owns` or `Watches` (matched by kind name and
/// version among the project's kinds).
fn manager_kinds(project: &Project, sources: &[(PathBuf, String)]) -> Vec<Kind> {
    let mut out: Vec<Kind> = project.controllers.clone();
    let re = regex::Regex::new(r"\b(?:For|Owns|Watches)\(\s*&\s*(\w+)\.(\w+)\s*\x7b")
        .expect("a valid pattern");
    for (_, text) in sources {
        let text = super::from_code::strip_comments(text, Lang::Go);
        let imports = go_imports(&text);
        for c in re.captures_iter(&text) {
            let path = imports
                .iter()
                .find(|(a, _)| *a == c[1])
                .map(|(_, p)| p.as_str());
            let Some(path) = path else { continue };
            // The package of an API version: .../api/v1 or .../api/<group>/v1.
            let mut segs = path.rsplit('/');
            let (version, group) = (
                segs.next().unwrap_or_default(),
                segs.next().unwrap_or_default(),
            );
            for k in &project.kinds {
                let group_ok =
                    group == "api" || group == "apis" || k.group.split('.').next() == Some(group);
                if k.kind == c[2] && k.version == version && group_ok && !out.contains(k) {
                    out.push(k.clone());
                }
            }
        }
    }
    out
}

/// A Go file's imports: (alias or last path element, path).
fn go_imports(text: &str) -> Vec<(String, String)> {
    let re = regex::Regex::new(r#"(?m)^\s*(?:import\s+)?(\w+)?\s*"([\w.\-/]+)"\s*$"#)
        .expect("a valid pattern");
    re.captures_iter(text)
        .map(|c| {
            let path = c[2].to_string();
            let alias = c
                .get(1)
                .map(|a| a.as_str().to_string())
                .unwrap_or_else(|| path.rsplit('/').next().unwrap_or_default().to_string());
            (alias, path)
        })
        .collect()
}

/// config/crd/bases' file for the kind: (path relative to the project, CRD).
fn find_crd(dir: &Path, k: &Kind) -> Result<(String, Value)> {
    let bases = dir.join("config/crd/bases");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&bases)
        .with_context(|| {
            format!(
                "{}: cannot list the CRDs: run `make manifests` in the project",
                bases.display()
            )
        })?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .collect();
    files.sort();
    for f in files {
        let text = std::fs::read_to_string(&f)?;
        let Ok(crd) = super::workload::read_crd(&text) else {
            continue;
        };
        let kind = crd.pointer("/spec/names/kind").and_then(Value::as_str);
        let group = crd.pointer("/spec/group").and_then(Value::as_str);
        if kind == Some(k.kind.as_str()) && group == Some(k.group.as_str()) {
            let rel = f.strip_prefix(dir).unwrap_or(&f).display().to_string();
            return Ok((rel, crd));
        }
    }
    bail!(
        "{}: no CustomResourceDefinition of {} ({}): run `make manifests` in the project",
        bases.display(),
        k.kind,
        k.group
    )
}

/// config/samples' file for the kind, relative to the project; warns when
/// its spec is still the scaffold's TODO.
fn find_sample(dir: &Path, k: &Kind, crd: &Value, warnings: &mut Vec<String>) -> Result<String> {
    let samples = dir.join("config/samples");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&samples)
        .with_context(|| format!("{}: no samples to take an object from", samples.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .collect();
    files.sort();
    let api_version = format!("{}/{}", k.group, k.version);
    for f in files {
        let text = std::fs::read_to_string(&f)?;
        let Ok(v) = super::yaml::one::<Value>(&text) else {
            continue;
        };
        if v.get("kind").and_then(Value::as_str) != Some(k.kind.as_str())
            || v.get("apiVersion").and_then(Value::as_str) != Some(api_version.as_str())
        {
            continue;
        }
        let rel = f.strip_prefix(dir).unwrap_or(&f).display().to_string();
        let empty = match v.get("spec") {
            None | Some(Value::Null) => true,
            Some(Value::Object(m)) => m.is_empty(),
            _ => false,
        };
        if empty {
            let fields: Vec<String> = version_schema(crd, &k.version)
                .and_then(|s| s.pointer("/properties/spec/properties"))
                .and_then(Value::as_object)
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default();
            warnings.push(format!(
                "{rel}: its spec is still the scaffold's TODO: fill in {}Spec{} so that objects mean something",
                k.kind,
                if fields.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", fields.join(", "))
                }
            ));
        }
        return Ok(rel);
    }
    bail!(
        "{}: no sample of {api_version} {}: add one (`kubebuilder create api` writes it)",
        samples.display(),
        k.kind
    )
}

/// The project's Go sources but tests and generated code.
fn go_sources(dir: &Path, warnings: &mut Vec<String>) -> Vec<(PathBuf, String)> {
    let found = super::scan::files(dir, &|n| {
        n.ends_with(".go") && !n.ends_with("_test.go") && !n.starts_with("zz_generated")
    });
    warnings.extend(found.notes);
    found.files
}

/// The literal environment of the manager's container in
/// config/manager/manager.yaml (deploy-image's MEMCACHED_IMAGE, say):
/// the manager may need it to reconcile at all.
fn manager_env(dir: &Path, warnings: &mut Vec<String>) -> Vec<(String, String)> {
    let path = dir.join("config/manager/manager.yaml");
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let docs = super::yaml::documents(&text).unwrap_or_else(|e| {
        warnings.push(format!("{}: skipped, not YAML ({e})", path.display()));
        Vec::new()
    });
    for v in docs {
        let Some(containers) = v
            .pointer("/spec/template/spec/containers")
            .and_then(Value::as_array)
        else {
            continue;
        };
        let c = containers
            .iter()
            .find(|c| c.get("name").and_then(Value::as_str) == Some("manager"))
            .or(containers.first());
        for e in c
            .and_then(|c| c.get("env"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(name) = e.get("name").and_then(Value::as_str) else {
                continue;
            };
            match e.get("value").and_then(Value::as_str) {
                Some(_) if super::spec::policy::env_denied(name) || name == "ENABLE_WEBHOOKS" => {}
                Some(value) => out.push((name.to_string(), value.to_string())),
                None => warnings.push(format!(
                    "{}: {name} comes from a reference (valueFrom): set it in env if the manager needs it",
                    path.display()
                )),
            }
        }
    }
    out
}

/// The manager's main package ("./cmd" in kubebuilder v4, "." before) and
/// its leader-election Lease, when main.go names one.
fn main_package(dir: &Path) -> (String, Option<String>) {
    let (pkg, main) = if dir.join("cmd/main.go").is_file() {
        ("./cmd", dir.join("cmd/main.go"))
    } else {
        (".", dir.join("main.go"))
    };
    let lease = std::fs::read_to_string(main).ok().and_then(|t| {
        let at = t.find("LeaderElectionID:")?;
        let rest = &t[at..];
        let start = rest.find('"')? + 1;
        let end = rest[start..].find('"')? + start;
        Some(rest[start..end].to_string())
    });
    (pkg.to_string(), lease)
}

/// (api_groups, resources, verbs) of each rule of role.yaml's ClusterRole(s).
pub(super) type Rule = (Vec<String>, Vec<String>, Vec<String>);

fn read_role(path: &Path, warnings: &mut Vec<String>) -> Result<Vec<Rule>> {
    let text = std::fs::read_to_string(path).with_context(|| {
        format!(
            "cannot read {}: run `make manifests` in the project",
            path.display()
        )
    })?;
    let strings = |v: Option<&Value>| -> Vec<String> {
        v.and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect()
    };
    let mut rules = Vec::new();
    let docs = super::yaml::documents(&text)
        .map_err(|e| anyhow::anyhow!("{}: not YAML: {e}", path.display()))?;
    for v in docs {
        for r in v
            .get("rules")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let rule = (
                strings(r.get("apiGroups")),
                strings(r.get("resources")),
                strings(r.get("verbs")),
            );
            if rule.1.is_empty() || rule.2.is_empty() {
                continue;
            }
            if rule.2.iter().any(|v| v == "*") || rule.1.iter().any(|r| r == "*") {
                warnings.push(format!(
                    "{}: a rule with \"*\" ({}) is left out: an experiment file names its resources and verbs",
                    path.display(),
                    rule.1.join(", ")
                ));
                continue;
            }
            rules.push(rule);
        }
    }
    if rules.is_empty() {
        bail!("{}: no rules", path.display());
    }
    Ok(rules)
}

/// The list/watch part of every rule (secrets and subresources left out).
fn cluster_reads(rules: &[Rule]) -> Vec<Rule> {
    rules
        .iter()
        .filter_map(|(g, r, v)| {
            let verbs: Vec<String> = ["list", "watch"]
                .iter()
                .filter(|x| v.iter().any(|y| y == *x))
                .map(|x| x.to_string())
                .collect();
            let res: Vec<String> = r
                .iter()
                .filter(|x| !x.contains('/') && *x != "secrets")
                .cloned()
                .collect();
            (!verbs.is_empty() && !res.is_empty()).then(|| (g.clone(), res, verbs))
        })
        .collect()
}

pub(super) fn rules_toml(key: &str, rules: &[Rule]) -> String {
    let list = |v: &[String]| v.iter().map(|s| q(s)).collect::<Vec<_>>().join(", ");
    let mut s = format!("{key} = [\n");
    for (g, r, v) in rules {
        s.push_str(&format!(
            "  {{ api_groups = [{}], resources = [{}], verbs = [{}] }},\n",
            list(g),
            list(r),
            list(v)
        ));
    }
    s.push_str("]\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO_KINDS: &str = "domain: example.com\nprojectName: shop\nresources:\n\
        - api: {crdVersion: v1, namespaced: true}\n  group: shop\n  kind: Cart\n  version: v1\n\
        - api: {crdVersion: v1, namespaced: false}\n  group: shop\n  kind: Store\n  version: v1\n\
        - controller: true\n  group: apps\n  kind: Deployment\n  version: v1\n  external: true\n";

    #[test]
    fn project_kinds_carry_their_domain_and_scope() {
        let p = read_project(TWO_KINDS).unwrap();
        let (name, kinds) = (p.name, p.kinds);
        assert_eq!(name, "shop");
        assert_eq!(
            kinds,
            [
                Kind {
                    kind: "Cart".into(),
                    group: "shop.example.com".into(),
                    version: "v1".into(),
                    namespaced: true
                },
                Kind {
                    kind: "Store".into(),
                    group: "shop.example.com".into(),
                    version: "v1".into(),
                    namespaced: false
                },
            ]
        );
        // Only a namespaced kind can be measured: the one is chosen.
        assert_eq!(choose(&kinds, None, "PROJECT").unwrap().kind, "Cart");
        assert!(
            choose(&kinds, Some("Store"), "PROJECT")
                .unwrap_err()
                .starts_with("Store is cluster-scoped"),
        );
        assert_eq!(
            choose(&kinds, Some("cart"), "PROJECT").unwrap().kind,
            "Cart"
        );
        assert!(
            choose(&kinds, Some("Pod"), "PROJECT")
                .unwrap_err()
                .contains("no kind \"Pod\"")
        );
    }

    #[test]
    fn cluster_reads_are_list_and_watch_of_whole_resources() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let rules = vec![
            (
                s(&["apps"]),
                s(&["deployments"]),
                s(&["create", "get", "list", "watch"]),
            ),
            (s(&["x.io"]), s(&["things/status"]), s(&["get", "update"])),
            (s(&[""]), s(&["secrets", "configmaps"]), s(&["list"])),
        ];
        assert_eq!(
            cluster_reads(&rules),
            vec![
                (s(&["apps"]), s(&["deployments"]), s(&["list", "watch"])),
                (s(&[""]), s(&["configmaps"]), s(&["list"])),
            ]
        );
    }
}
