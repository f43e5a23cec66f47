//! The bounded walk `init --from` makes through someone else's repository.
//! A repository can hold anything: vendored trees, build output, Helm chart
//! templates that are not YAML until rendered, files of hundreds of
//! megabytes. So the walk skips what is never an operator's own source or
//! manifest, and stops at a count of files, a size and a time, saying so in
//! one note instead of running on: `init` ends within seconds whatever the
//! repository holds.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Where a walk stops.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Directory entries looked at, files and directories.
    pub entries: usize,
    /// A larger file is skipped: no manifest or source file is this big.
    pub file_bytes: u64,
    /// Bytes read in all.
    pub total_bytes: u64,
    pub time: Duration,
    pub depth: u32,
}

pub const LIMITS: Limits = Limits {
    entries: 50_000,
    file_bytes: 4 << 20,
    total_bytes: 128 << 20,
    time: Duration::from_secs(5),
    depth: 8,
};

/// Files a walk kept, sorted by path, and what it has to say.
#[derive(Debug, Default)]
pub struct Files {
    pub files: Vec<(PathBuf, String)>,
    pub notes: Vec<String>,
}

/// Directories that never hold an operator's own source or manifests.
fn skipped_dir(dir: &Path, name: &str) -> bool {
    name.starts_with('.')
        || matches!(
            name,
            "target" | "vendor" | "node_modules" | "bin" | "testbin" | "__pycache__"
        )
        // A Helm chart's templates are Go templates, YAML only once rendered.
        || (name == "templates" && dir.join("Chart.yaml").is_file())
}

/// The text files under `root` whose names `keep` accepts.
pub fn files(root: &Path, keep: &dyn Fn(&str) -> bool) -> Files {
    files_with(root, keep, LIMITS)
}

pub fn files_with(root: &Path, keep: &dyn Fn(&str) -> bool, limits: Limits) -> Files {
    let t0 = Instant::now();
    let mut out = Files::default();
    let (mut entries, mut bytes) = (0usize, 0u64);
    let mut stack = vec![(root.to_path_buf(), 0u32)];
    let mut stopped = None;
    while let Some((dir, depth)) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut here: Vec<std::fs::DirEntry> = rd.flatten().collect();
        here.sort_by_key(|e| e.file_name());
        // Depth first, in name order: push subdirectories in reverse.
        let mut subdirs = Vec::new();
        for e in here {
            entries += 1;
            if entries > limits.entries {
                stopped = Some(format!("{} entries", limits.entries));
                break;
            }
            if t0.elapsed() > limits.time {
                stopped = Some(format!("{:?}", limits.time));
                break;
            }
            let name = e.file_name().to_string_lossy().into_owned();
            // Symbolic links are not followed: a link can make a cycle.
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_dir() {
                if depth < limits.depth && !skipped_dir(&dir, &name) {
                    subdirs.push((e.path(), depth + 1));
                }
                continue;
            }
            if !ft.is_file() || !keep(&name) {
                continue;
            }
            let size = e.metadata().map(|m| m.len()).unwrap_or(0);
            if size > limits.file_bytes {
                continue;
            }
            if bytes + size > limits.total_bytes {
                stopped = Some(format!("{} MiB read", limits.total_bytes >> 20));
                break;
            }
            bytes += size;
            if let Ok(t) = std::fs::read_to_string(e.path()) {
                out.files.push((e.path(), t));
            }
        }
        if stopped.is_some() {
            break;
        }
        stack.extend(subdirs.into_iter().rev());
    }
    if let Some(what) = stopped {
        out.notes.push(format!(
            "{}: stopped looking after {what}; the files found so far were read",
            root.display()
        ));
    }
    out.files.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// The YAML files under `root`, each with its documents. A file with `{{`
/// is a template of some tool (Helm's, most often) and is left out, unless
/// its only `{{…}}` are ctrlbench's own placeholders (an object template
/// written for it); one that does not parse is left out with a note naming
/// it.
pub fn yaml(root: &Path) -> (Vec<(PathBuf, Vec<Value>)>, Vec<String>) {
    let found = files(root, &|n| n.ends_with(".yaml") || n.ends_with(".yml"));
    let mut notes = found.notes;
    let mut out = Vec::new();
    for (p, text) in found.files {
        if foreign_template(&text) {
            continue;
        }
        match super::yaml::documents(&text) {
            Ok(docs) => out.push((p, docs)),
            Err(e) => notes.push(format!("{}: skipped, not YAML ({e})", p.display())),
        }
    }
    (out, notes)
}

/// Whether `text` holds a `{{…}}` that is not one of ctrlbench's placeholders.
fn foreign_template(text: &str) -> bool {
    let mut rest = text;
    while let Some(at) = rest.find("{{") {
        let after = &rest[at + 2..];
        let Some(end) = after.find("}}") else {
            return true;
        };
        let inner = &after[..end];
        let ours = super::workload::PLACEHOLDERS.contains(&format!("{{{{{inner}}}}}").as_str())
            || inner
                .strip_prefix("pad ")
                .is_some_and(|n| n.trim().parse::<u64>().is_ok());
        if !ours {
            return true;
        }
        rest = &after[end + 2..];
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helm_templates_build_output_and_templated_files_are_skipped() {
        let d = tempfile::tempdir().unwrap();
        let w = |p: &str, t: &str| {
            let p = d.path().join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, t).unwrap();
        };
        w("charts/c/Chart.yaml", "name: c\n");
        w(
            "charts/c/templates/sa.yaml",
            "metadata:\n  labels:\n    {{- include \"x\" . | nindent 4 }}\n",
        );
        w("charts/c/values.yaml", "replicas: 1\n");
        w("deploy/other.yaml", "a: {{ .Values.x }}\n");
        w("deploy/bad.yaml", "a: [\n");
        w("target/x.yaml", "a: 1\n");
        w("yaml/crd.yaml", "kind: CustomResourceDefinition\n");
        w(
            "yaml/example.yaml",
            "kind: Thing\nspec:\n  message: \"hello {{index}}{{pad 3}}\"\n",
        );
        let (docs, notes) = yaml(d.path());
        let names: Vec<String> = docs
            .iter()
            .map(|(p, _)| p.strip_prefix(d.path()).unwrap().display().to_string())
            .collect();
        assert_eq!(
            names,
            [
                "charts/c/Chart.yaml",
                "charts/c/values.yaml",
                "yaml/crd.yaml",
                "yaml/example.yaml"
            ]
        );
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].contains("deploy/bad.yaml: skipped, not YAML"),
            "{notes:?}"
        );
    }

    #[test]
    fn a_walk_stops_at_its_bounds_and_says_so() {
        let d = tempfile::tempdir().unwrap();
        for i in 0..50 {
            std::fs::write(d.path().join(format!("f{i:02}.go")), "package x\n").unwrap();
        }
        let limits = Limits {
            entries: 10,
            ..LIMITS
        };
        let f = files_with(d.path(), &|n| n.ends_with(".go"), limits);
        assert_eq!(f.files.len(), 10);
        assert!(
            f.notes[0].contains("stopped looking after 10 entries"),
            "{:?}",
            f.notes
        );
    }
}
