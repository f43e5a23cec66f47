//! `ctrlbench init NAME`: a commented experiment file for a user's own
//! controller (impl = "command", a `[workload]` whose CRD and template
//! paths the user fills in); `init --from DIR` one read off the operator's
//! repository (`from_project` for kubebuilder and operator-sdk Go
//! projects, `from_cargo` for kube-rs, `from_kopf` for kopf). Never
//! overwrites a file.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

/// The file's text, with `__NAME__` to replace.
const TEMPLATE: &str = include_str!("../templates/init.toml");

/// The experiment file `init` writes for `name`.
pub fn text(name: &str) -> String {
    TEMPLATE.replace("__NAME__", name)
}

/// Writes `<dir>/<name>.toml`; an error if it exists.
pub fn write(name: &str, dir: &Path) -> Result<PathBuf> {
    super::spec::policy::check_name(name).map_err(anyhow::Error::msg)?;
    create(&dir.join(format!("{name}.toml")), &text(name))
}

/// Writes `<out>/<projectName>.toml` (or `<out>/<name>.toml`) from the
/// project at `project`; returns its path and what to check in it.
pub fn write_from(
    project: &Path,
    kind: Option<&str>,
    name: Option<&str>,
    cargo_profile: &str,
    out: &Path,
) -> Result<(PathBuf, Vec<String>)> {
    if !project.is_dir() {
        bail!("{} is not a directory", project.display());
    }
    // A PROJECT file says kubebuilder or operator-sdk even beside a
    // Cargo.toml or Python files; only without one is a Cargo package read
    // as kube-rs, and only without either are Python files read as kopf.
    let project_file = project.join("PROJECT");
    let g = if project_file.is_file() {
        refuse_layout(&project_file)?;
        super::from_project::generate(project, kind, out)?
    } else if super::from_cargo::recognised(project) {
        super::from_cargo::generate(project, kind, cargo_profile, out)?
    } else if super::from_kopf::recognised(project) {
        super::from_kopf::generate(project, kind, out)?
    } else {
        bail!(
            "{}: no PROJECT file, Cargo.toml or Python file importing kopf: init --from reads a kubebuilder or operator-sdk Go project, a kube-rs package or a kopf operator; for another controller, `ctrlbench init NAME` writes a file to fill in",
            project.display()
        );
    };
    let name = match name {
        Some(n) => {
            super::spec::policy::check_name(n).map_err(anyhow::Error::msg)?;
            n.to_string()
        }
        None => g.name.clone(),
    };
    let text = if name == g.name {
        g.text
    } else {
        g.text.replacen(
            &format!("name = \"{}\"", g.name),
            &format!("name = \"{name}\""),
            1,
        )
    };
    let path = create(&out.join(format!("{name}.toml")), &text)?;
    Ok((path, g.warnings))
}

/// Refuses an operator-sdk project whose operator is a Helm chart or
/// Ansible roles: it has no Go code to build, and its operator is
/// operator-sdk's own binary, which ctrlbench does not run yet.
fn refuse_layout(project_file: &Path) -> Result<()> {
    let text = std::fs::read_to_string(project_file)
        .with_context(|| format!("cannot read {}", project_file.display()))?;
    for l in layouts(&text) {
        let what = if l.starts_with("helm.sdk.operatorframework.io/") {
            "Helm"
        } else if l.starts_with("ansible.sdk.operatorframework.io/") {
            "Ansible"
        } else {
            continue;
        };
        bail!(
            "{}: layout {l}: {what}-based operators are not supported by init --from yet; `ctrlbench init NAME` writes a file to fill in by hand",
            project_file.display()
        );
    }
    Ok(())
}

/// PROJECT's `layout`: a list of plugin keys (`layout:` then
/// `- go.kubebuilder.io/v4`), or one key in config version 2. Read as
/// lines, not YAML: the CLI writes the file, one key a line, and YAML
/// parsing stays in the few helpers that need it.
fn layouts(text: &str) -> Vec<String> {
    let unquote = |s: &str| s.trim().trim_matches(['"', '\'']).to_string();
    let mut out = Vec::new();
    let mut in_list = false;
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("layout:") {
            let v = v.trim();
            match v.strip_prefix('[').and_then(|v| v.strip_suffix(']')) {
                Some(items) => out.extend(items.split(',').map(unquote)),
                None if v.is_empty() => in_list = true,
                None => out.push(unquote(v)),
            }
            continue;
        }
        if in_list {
            match line.trim_start().strip_prefix("- ") {
                Some(v) => out.push(unquote(v)),
                None => in_list = false,
            }
        }
    }
    out
}

fn create(path: &Path, text: &str) -> Result<PathBuf> {
    let path = path.to_path_buf();
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        .with_context(|| {
            format!(
                "cannot write {}{}",
                path.display(),
                if path.exists() {
                    " (it exists; ctrlbench init never overwrites)"
                } else {
                    ""
                }
            )
        })?;
    f.write_all(text.as_bytes())?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_written_file_parses_once_its_paths_exist_and_is_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = write("my-operator", dir.path()).unwrap();
        assert_eq!(path, dir.path().join("my-operator.toml"));
        let text = std::fs::read_to_string(&path).unwrap();
        // Without the files, the error names the key.
        let e = super::super::spec::parse(&path, &text).unwrap_err();
        assert_eq!(e.key, "crd", "{e}");
        std::fs::create_dir(dir.path().join("my-operator")).unwrap();
        std::fs::write(
            dir.path().join("my-operator/crd.yaml"),
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: things.example.com\nspec:\n  group: example.com\n  scope: Namespaced\n  names: {kind: Thing, plural: things}\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("my-operator/object.yaml"),
            "apiVersion: example.com/v1\nkind: Thing\nmetadata:\n  name: \"{{name}}\"\nspec:\n  n: {{index}}\n",
        )
        .unwrap();
        let e = super::super::spec::parse(&path, &text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(e.variants[0].implementation, super::super::Impl::Command);
        assert_eq!(e.workload.resource.kind, "Thing");
        // Never overwritten.
        std::fs::write(&path, "mine").unwrap();
        let err = write("my-operator", dir.path()).unwrap_err();
        assert!(format!("{err:#}").contains("never overwrites"), "{err:#}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "mine");
        assert!(write("../x", dir.path()).is_err());
    }

    #[test]
    fn helm_and_ansible_layouts_are_refused_and_go_ones_pass() {
        let project = |layout: &str| {
            format!("domain: example.com\n{layout}\nprojectName: p\nversion: \"3\"\n")
        };
        assert_eq!(
            layouts(&project(
                "layout:\n- go.kubebuilder.io/v4\n- deploy-image.go.kubebuilder.io/v1-alpha"
            )),
            [
                "go.kubebuilder.io/v4",
                "deploy-image.go.kubebuilder.io/v1-alpha"
            ]
        );
        assert_eq!(
            layouts(&project("layout: ansible.sdk.operatorframework.io/v1")),
            ["ansible.sdk.operatorframework.io/v1"]
        );
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("PROJECT");
        for (layout, refused) in [
            ("layout:\n- helm.sdk.operatorframework.io/v1", Some("Helm")),
            (
                "layout: ansible.sdk.operatorframework.io/v1",
                Some("Ansible"),
            ),
            ("layout:\n- go.kubebuilder.io/v4", None),
            // Hybrid Helm projects hold Go code of their own, built as any Go project.
            (
                "layout:\n- hybrid.helm.sdk.operatorframework.io/v1-alpha\n- go.kubebuilder.io/v3",
                None,
            ),
        ] {
            std::fs::write(&file, project(layout)).unwrap();
            match (refuse_layout(&file), refused) {
                (Ok(()), None) => {}
                (Err(e), Some(what)) => {
                    let e = format!("{e:#}");
                    assert!(
                        e.contains(&format!("{what}-based operators are not supported")),
                        "{e}"
                    );
                    assert!(!e.contains('\n'), "{e}");
                }
                (r, _) => panic!("{layout}: {r:?}"),
            }
        }
    }
}
