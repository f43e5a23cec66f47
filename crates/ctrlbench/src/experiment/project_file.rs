//! A kubebuilder or operator-sdk project's `PROJECT` file as `init --from`
//! reads it: the project's name, its kinds with an API (domain, group,
//! version, scope), the kinds with a controller (one manager watches them
//! all) and the kinds from other projects a controller watches; and the
//! choice of one kind by `--kind` (`group/Kind` where two groups have it).
//! Helm- and Ansible-based layouts are refused here, where they show.

use serde_json::Value;

/// One kind of the project (a `resources` entry of PROJECT).
#[derive(Clone, Debug, PartialEq)]
pub struct Kind {
    pub kind: String,
    /// The API group, domain included ("cache.example.com").
    pub group: String,
    pub version: String,
    pub namespaced: bool,
}

/// What PROJECT says: the project's name, its kinds with an API, the kinds
/// with a controller (the manager watches each), and the kinds from other
/// projects that a controller watches (described for a note).
#[derive(Debug)]
pub struct Project {
    pub name: String,
    pub kinds: Vec<Kind>,
    pub controllers: Vec<Kind>,
    pub external: Vec<String>,
}

/// PROJECT's projectName and its kinds with an API.
pub fn read_project(text: &str) -> Result<Project, String> {
    let v: Value = super::yaml::one(text).map_err(|e| format!("not YAML: {e}"))?;
    let name = v
        .get("projectName")
        .and_then(Value::as_str)
        .ok_or("no projectName")?
        .to_string();
    super::spec::policy::check_name(&name).map_err(|e| format!("projectName {name:?}: {e}"))?;
    // operator-sdk's Helm and Ansible layouts have PROJECT too, and no Go.
    for l in v
        .get("layout")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        for (prefix, what) in [("helm.", "Helm"), ("ansible.", "Ansible")] {
            if l.starts_with(prefix) {
                return Err(format!(
                    "layout {l}: {what}-based operators are not supported yet: init --from reads Go (kubebuilder, operator-sdk), kube-rs and kopf operators; `ctrlbench init NAME` writes a file to fill in"
                ));
            }
        }
    }
    let domain = v.get("domain").and_then(Value::as_str).unwrap_or_default();
    let mut project = Project {
        name,
        kinds: Vec::new(),
        controllers: Vec::new(),
        external: Vec::new(),
    };
    for r in v
        .get("resources")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let s = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or_default();
        let d = if s("domain").is_empty() {
            domain
        } else {
            s("domain")
        };
        let group = match (s("group"), d) {
            ("", d) => d.to_string(),
            (g, "") => g.to_string(),
            (g, d) => format!("{g}.{d}"),
        };
        let controller = r.get("controller").and_then(Value::as_bool) == Some(true)
            || r.get("controllers")
                .and_then(Value::as_array)
                .is_some_and(|c| !c.is_empty());
        let external = r.get("external").and_then(Value::as_bool) == Some(true);
        // A controller for a kind of another project (core, external) has no CRD here.
        if r.get("api").is_none() || external {
            if controller && external {
                project.external.push(format!(
                    "{} ({group}/{}{})",
                    s("kind"),
                    s("version"),
                    if s("path").is_empty() {
                        String::new()
                    } else {
                        format!(", from {}", s("path"))
                    }
                ));
            }
            continue;
        }
        let k = Kind {
            kind: s("kind").to_string(),
            group,
            version: s("version").to_string(),
            namespaced: r
                .pointer("/api/namespaced")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        };
        // A kind with several versions is one CRD: the first version listed
        // (the one `create api` made first) stands for it.
        let same = |o: &Kind| o.kind == k.kind && o.group == k.group;
        if controller && !project.controllers.iter().any(same) {
            project.controllers.push(k.clone());
        }
        if !project.kinds.iter().any(same) {
            project.kinds.push(k);
        }
    }
    if project.kinds.is_empty() {
        return Err("no resources with an API: create one with `kubebuilder create api`".into());
    }
    Ok(project)
}

/// The kind `want` names ("Kind", or "group/Kind" where two groups have
/// it), or the only namespaced one; `from` says where they were read.
pub(super) fn choose(kinds: &[Kind], want: Option<&str>, from: &str) -> Result<Kind, String> {
    let namespaced: Vec<&Kind> = kinds.iter().filter(|k| k.namespaced).collect();
    let label = |k: &Kind| {
        if kinds.iter().filter(|o| o.kind == k.kind).count() > 1 {
            format!(
                "{}/{}",
                k.group.split('.').next().unwrap_or_default(),
                k.kind
            )
        } else {
            k.kind.clone()
        }
    };
    let names = || {
        namespaced
            .iter()
            .map(|k| label(k))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Some(w) = want else {
        return match namespaced.as_slice() {
            [one] => Ok((*one).clone()),
            [] => Err(format!(
                "{from} has no namespaced kind: ctrlbench creates each run's objects in a namespace of its own"
            )),
            _ => Err(format!(
                "{from} has {} namespaced kinds ({}): choose one with --kind",
                namespaced.len(),
                names()
            )),
        };
    };
    let (group, kind) = match w.rsplit_once('/') {
        Some((g, k)) => (Some(g), k),
        None => (None, w),
    };
    let matches: Vec<&Kind> = kinds
        .iter()
        .filter(|k| k.kind.eq_ignore_ascii_case(kind))
        .filter(|k| {
            group.is_none_or(|g| {
                k.group.eq_ignore_ascii_case(g)
                    || k.group
                        .split('.')
                        .next()
                        .is_some_and(|p| p.eq_ignore_ascii_case(g))
            })
        })
        .collect();
    match matches.as_slice() {
        [] => Err(format!("no kind {w:?} in {from}: it has {}", names())),
        [k] if !k.namespaced => Err(format!(
            "{} is cluster-scoped: ctrlbench creates each run's objects in a namespace of its own, so the kind must be namespaced; {from} has {}",
            k.kind,
            names()
        )),
        [k] => Ok((*k).clone()),
        several => Err(format!(
            "{from} has {w:?} in {} groups: name one as {}",
            several.len(),
            several
                .iter()
                .map(|k| format!(
                    "{}/{}",
                    k.group.split('.').next().unwrap_or_default(),
                    k.kind
                ))
                .collect::<Vec<_>>()
                .join(" or ")
        )),
    }
}
