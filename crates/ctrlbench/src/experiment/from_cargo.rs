//! `ctrlbench init --from DIR` for a kube-rs project: a Cargo package that
//! depends on kube, with its CRD committed as YAML somewhere in the
//! repository (kube-rs projects print it with a `crdgen` binary and keep
//! it under yaml/ or deploy/). `cargo metadata` names the package, its
//! binaries and the target directory; the CRD gives the kind, its scope and
//! its status schema; an example object of the kind in the repository's
//! YAML is the object template. There is no generated Role, so the rules
//! are those the kind itself needs, and the reads of a controller that
//! watches every namespace, as `Api::all` does.

use std::path::{Path, PathBuf};

fn canon(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde_json::Value;

use super::from_code::Lang;
use super::from_project::{
    Generated, Kind, Rule, choose, q, readiness, relative, rules_toml, shown_path, top_keys,
    workload_toml,
};

/// A kube-rs project is a Cargo package at `dir`.
pub fn recognised(dir: &Path) -> bool {
    dir.join("Cargo.toml").is_file()
}

/// The package of `cargo metadata` that the file is written for.
struct Package {
    name: String,
    bin: String,
    target_dir: PathBuf,
    workspace_root: PathBuf,
    /// Other packages share the workspace: the build names this one.
    in_workspace: bool,
}

/// The experiment file for `kind` (or the only CRD's kind) of the kube-rs
/// project at `dir`, built with cargo's `profile`, paths as seen from
/// `out_dir`.
pub fn generate(
    dir: &Path,
    kind: Option<&str>,
    profile: &str,
    out_dir: &Path,
) -> Result<Generated> {
    let mut warnings = Vec::new();
    let pkg = package(dir, &mut warnings)?;
    let (yamls, notes) = super::scan::yaml(dir);
    warnings.extend(notes);
    let crds = repo_crds(&yamls);
    if crds.is_empty() {
        bail!(
            "{}: no CustomResourceDefinition in the project's YAML files: commit the CRD (kube-rs: `cargo run --bin crdgen > yaml/crd.yaml`) and run init again",
            dir.display()
        );
    }
    let kinds: Vec<Kind> = crds.iter().map(|c| c.2.clone()).collect();
    let chosen = choose(&kinds, kind, "the project's CRDs")
        .map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))?;
    if !chosen.namespaced {
        bail!(
            "{}: {} is cluster-scoped: ctrlbench creates each run's objects in a namespace of its own, so the kind must be namespaced",
            dir.display(),
            chosen.kind
        );
    }
    let (crd_path, crd, _) = crds
        .iter()
        .find(|c| c.2 == chosen)
        .expect("the chosen kind is one of the CRDs");
    let sample = find_example(&yamls, &chosen).with_context(|| {
        format!(
            "{}: no example object of {}/{} {} in the project's YAML files: add one (e.g. yaml/{}-example.yaml) and run init again",
            dir.display(),
            chosen.group,
            chosen.version,
            chosen.kind,
            chosen.kind.to_lowercase()
        )
    })?;
    let sources = rust_sources(dir, &mut warnings);
    let own = super::from_code::rust_kind_files(&sources, &chosen.kind);
    let ready = readiness(dir, &own, &sources, Lang::Rust, crd, &chosen);
    // The project's other kinds its code works on (Api<Kind>): a watch on
    // a kind the plane does not serve fails, so their CRDs are installed too.
    let extra: Vec<&PathBuf> = crds
        .iter()
        .filter(|c| c.2 != chosen)
        .filter(|c| !super::from_code::rust_kind_files(&sources, &c.2.kind).is_empty())
        .map(|c| &c.0)
        .collect();
    let plural = crd
        .pointer("/spec/names/plural")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();

    let shown = shown_path(dir, out_dir);
    let rel = |p: &Path| {
        let r = p.strip_prefix(dir).unwrap_or(p).display().to_string();
        format!("{shown}/{r}")
    };
    // Cargo's own target directory (the workspace's target/, unless the
    // environment or a config moves it), relative to the file like every
    // other path.
    let profile_dir = if profile == "dev" { "debug" } else { profile };
    let program = relative(&pkg.target_dir.join(profile_dir).join(&pkg.bin), out_dir);
    if !pkg.target_dir.starts_with(canon(&pkg.workspace_root)) {
        warnings.push(format!(
            "cargo builds {} into {} (CARGO_TARGET_DIR or a cargo config): the command's path points there; for a file to commit, init again without it",
            pkg.name,
            pkg.target_dir.display()
        ));
    }
    let mut build = vec![
        "cargo".to_string(),
        "build".into(),
        "--profile".into(),
        profile.into(),
    ];
    if pkg.in_workspace {
        build.extend(["-p".into(), pkg.name.clone()]);
    }
    build.extend(["--bin".into(), pkg.bin.clone()]);
    let build: Vec<String> = build.iter().map(|s| q(s)).collect();

    let mut t = String::new();
    t.push_str(&format!(
        "# An experiment for {name}'s {kind} ({group}/{version}), written by\n\
         # `ctrlbench init --from {shown}` from its kube-rs project: Cargo.toml,\n\
         # the CRD in {crd} and the example object in {sample}.\n\
         # Next: ctrlbench run {name}.toml --dry-run, then ctrlbench run {name}.toml\n\
         # Paths are relative to this file. Unknown keys are errors (file:line: key).\n",
        name = pkg.name,
        kind = chosen.kind,
        group = chosen.group,
        version = chosen.version,
        crd = rel(crd_path),
        sample = rel(&sample),
    ));
    t.push_str(&top_keys(&pkg.name, &chosen.kind));
    let extra: Vec<String> = extra.iter().map(|p| rel(p)).collect();
    t.push_str(&workload_toml(
        &shown,
        &rel(crd_path),
        &extra,
        &rel(&sample),
        &ready.toml(),
    ));
    if let Some(w) = ready.warning() {
        warnings.push(w);
    }

    t.push_str("[[variant]]\n");
    t.push_str(&format!("name = {}\n", q(&pkg.name)));
    t.push_str("impl = \"command\"\n");
    t.push_str("framework = \"kube-rs\"\n");
    t.push_str(&format!(
        "# Built before anything starts, in build_dir, with cargo's {profile} profile;\n\
         # skipped while its files are unchanged since the last build that succeeded.\n"
    ));
    t.push_str(&format!("build = [{}]\n", build.join(", ")));
    t.push_str(&format!("build_dir = {}\n", q(&shown)));
    t.push_str(
        "# The client reads KUBECONFIG, which ctrlbench sets to the run's\n\
         # ServiceAccount token ({kubeconfig} in arguments).\n",
    );
    t.push_str(&format!("command = [{}]\n", q(&program)));
    t.push_str(
        "# kube-rs has no metrics convention: serve Prometheus text on a loopback\n\
         # {port} and say where, for the controller-side figures.\n\
         # metrics = \"http://127.0.0.1:{port}/metrics\"\n",
    );
    warnings.push(format!(
        "{}: no metrics URL: the report's reconcile and queue figures are read from controller-runtime's metric names (controller_runtime_reconcile_total, workqueue_*); a kube-rs controller that serves those names on a loopback port can set metrics, others get the figures ctrlbench measures itself",
        pkg.name
    ));
    t.push_str(&rbac_toml(&chosen.group, &plural));
    warnings.push(format!(
        "rbac covers {plural} and {plural}/status only: add the kinds the controller creates or reads"
    ));
    Ok(Generated {
        name: pkg.name,
        text: t,
        warnings,
    })
}

/// The rules a kube-rs controller of the kind needs at least: the kind and
/// its status in the run's namespace, and its list/watch everywhere.
fn rbac_toml(group: &str, plural: &str) -> String {
    let rule = |resource: String, verbs: &[&str]| -> Rule {
        (
            vec![group.to_string()],
            vec![resource],
            verbs.iter().map(|v| v.to_string()).collect(),
        )
    };
    let mut t = String::from(
        "# The kind and its status. A kube-rs project has no generated Role: add\n\
         # the kinds the controller creates or reads.\n",
    );
    t.push_str(&rules_toml(
        "rbac",
        &[
            rule(plural.into(), &["get", "list", "watch", "patch", "update"]),
            rule(format!("{plural}/status"), &["get", "patch", "update"]),
        ],
    ));
    t.push_str(
        "# The list/watch of a controller that watches every namespace (Api::all;\n\
         # a ClusterRole; the report states cluster-wide reads).\n",
    );
    t.push_str(&rules_toml(
        "cluster_rbac",
        &[rule(plural.into(), &["list", "watch"])],
    ));
    t
}

/// The package at `dir` (or the one kube-rs package of the workspace there)
/// and the binary to run.
fn package(dir: &Path, warnings: &mut Vec<String>) -> Result<Package> {
    let mut cmd = Command::new("cargo");
    crate::controllers::without_package_env(&mut cmd);
    let out = cmd
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(dir)
        .output()
        .with_context(|| format!("{}: cannot run cargo metadata", dir.display()))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        bail!(
            "{}: cargo metadata failed: {}",
            dir.display(),
            err.lines().last().unwrap_or("no output")
        );
    }
    let m: Value = serde_json::from_slice(&out.stdout).context("cargo metadata's output")?;
    let here = canon(&dir.join("Cargo.toml"));
    let packages: Vec<&Value> = m
        .get("packages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .collect();
    let uses_kube = |p: &Value| {
        p.get("dependencies")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .any(|d| {
                d.get("kind").is_none_or(Value::is_null)
                    && matches!(
                        d.get("name").and_then(Value::as_str),
                        Some("kube" | "kube-runtime")
                    )
            })
    };
    let at_dir = packages.iter().find(|p| {
        p.get("manifest_path")
            .and_then(Value::as_str)
            .is_some_and(|m| canon(Path::new(m)) == here)
    });
    let p = match at_dir {
        Some(p) => *p,
        None => {
            let kube: Vec<&&Value> = packages.iter().filter(|p| uses_kube(p)).collect();
            match kube.as_slice() {
                [one] => **one,
                _ => bail!(
                    "{}: a workspace with {} kube packages: run init --from on the package's own directory",
                    dir.display(),
                    kube.len()
                ),
            }
        }
    };
    let name = p
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if !uses_kube(p) {
        bail!(
            "{}: package {name} does not depend on kube: init --from reads a kube-rs project, or a kubebuilder or operator-sdk one (PROJECT)",
            dir.display()
        );
    }
    super::spec::policy::check_name(&name)
        .map_err(|e| anyhow::anyhow!("{}: package name {name:?}: {e}", dir.display()))?;
    let bins: Vec<String> = p
        .get("targets")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|t| {
            t.get("kind")
                .and_then(Value::as_array)
                .is_some_and(|k| k.iter().any(|k| k == "bin"))
        })
        .filter_map(|t| t.get("name").and_then(Value::as_str).map(str::to_string))
        .filter(|b| !b.contains("crdgen"))
        .collect();
    let bin = match bins.iter().find(|b| **b == name) {
        Some(b) => b.clone(),
        None => match bins.as_slice() {
            [] => bail!(
                "{}: package {name} has no binary but crdgen: init --from runs the controller's binary",
                dir.display()
            ),
            [b, rest @ ..] => {
                if !rest.is_empty() {
                    warnings.push(format!(
                        "{name} has several binaries ({}): the command runs {b}",
                        bins.join(", ")
                    ));
                }
                b.clone()
            }
        },
    };
    let path = |key: &str| {
        m.get(key)
            .and_then(Value::as_str)
            .map(PathBuf::from)
            .unwrap_or_else(|| dir.join("target"))
    };
    Ok(Package {
        target_dir: canon(&path("target_directory")),
        workspace_root: path("workspace_root"),
        name,
        bin,
        in_workspace: packages.len() > 1,
    })
}

/// Every CustomResourceDefinition in a repository's YAML, with its file and kind.
pub(super) fn repo_crds(yamls: &[(PathBuf, Vec<Value>)]) -> Vec<(PathBuf, Value, Kind)> {
    yamls
        .iter()
        .flat_map(|(p, docs)| docs.iter().map(move |d| (p, d)))
        .filter(|(_, d)| d.get("kind").and_then(Value::as_str) == Some("CustomResourceDefinition"))
        .filter_map(|(p, crd)| Some((p.clone(), crd.clone(), crd_kind(crd)?)))
        .collect()
}

/// The kind a CRD defines, at its storage version.
pub(super) fn crd_kind(crd: &Value) -> Option<Kind> {
    let s = |p: &str| crd.pointer(p).and_then(Value::as_str);
    let versions = crd.pointer("/spec/versions")?.as_array()?;
    let version = versions
        .iter()
        .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        .or(versions.first())?
        .get("name")?
        .as_str()?;
    Some(Kind {
        kind: s("/spec/names/kind")?.to_string(),
        group: s("/spec/group")?.to_string(),
        version: version.to_string(),
        namespaced: s("/spec/scope") == Some("Namespaced"),
    })
}

/// The first single-document YAML file holding an object of `k`, one
/// whose name does not say it is meant to fail first.
pub(super) fn find_example(yamls: &[(PathBuf, Vec<Value>)], k: &Kind) -> Option<PathBuf> {
    let api_version = format!("{}/{}", k.group, k.version);
    let meant_to_fail = |p: &PathBuf| {
        let n = p
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .to_lowercase();
        ["illegal", "invalid", "bad", "broken", "fail"]
            .iter()
            .any(|w| n.contains(w))
    };
    let mut ordered: Vec<&(PathBuf, Vec<Value>)> = yamls.iter().collect();
    ordered.sort_by_key(|(p, _)| meant_to_fail(p));
    ordered.into_iter().find_map(|(p, docs)| {
        let [v] = docs.as_slice() else { return None };
        (v.get("kind").and_then(Value::as_str) == Some(k.kind.as_str())
            && v.get("apiVersion").and_then(Value::as_str) == Some(api_version.as_str()))
        .then(|| p.clone())
    })
}

fn rust_sources(dir: &Path, warnings: &mut Vec<String>) -> Vec<(PathBuf, String)> {
    let found = super::scan::files(&dir.join("src"), &|n| n.ends_with(".rs"));
    warnings.extend(found.notes);
    found.files
}

#[cfg(test)]
mod tests {
    use super::*;

    const CRD: &str = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n\
        spec:\n  group: demo.example.com\n  names: {kind: Echo, plural: echoes}\n  scope: Namespaced\n\
        \n  versions:\n  - {name: v1alpha1, served: true, storage: false}\n  - {name: v1, served: true, storage: true}\n";

    #[test]
    fn a_crd_gives_its_kind_at_the_storage_version() {
        let crd = super::super::workload::read_crd(CRD).unwrap();
        assert_eq!(
            crd_kind(&crd).unwrap(),
            Kind {
                kind: "Echo".into(),
                group: "demo.example.com".into(),
                version: "v1".into(),
                namespaced: true
            }
        );
    }

    #[test]
    fn an_example_is_a_one_document_file_of_the_kind() {
        let k = crd_kind(&super::super::workload::read_crd(CRD).unwrap()).unwrap();
        let doc = "apiVersion: demo.example.com/v1\nkind: Echo\nspec: {message: hi}\n";
        let parse = |t: &str| super::super::yaml::documents(t).unwrap();
        let yamls = vec![
            (PathBuf::from("a.yaml"), parse(&format!("{doc}---\n{doc}"))),
            (PathBuf::from("b.yaml"), parse(&doc.replace("/v1", "/v2"))),
            (PathBuf::from("c.yaml"), parse(doc)),
        ];
        assert_eq!(find_example(&yamls, &k), Some(PathBuf::from("c.yaml")));
    }
}
