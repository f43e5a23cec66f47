//! Generates the built-in experiment table from the repository's
//! `experiments/` directory, so a file dropped there (or in
//! `experiments/lab/`, ctrlbench's own studies) is runnable by name with no
//! hand-kept list to forget. Also embeds the workload files (`*.yaml`) those
//! experiments name, keyed by the path they resolve to.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The `.toml` files directly in `dir`, sorted by name: the listing's order.
fn tomls(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "toml"))
        .collect();
    // By name, not path: `failover` before `failover-hung`.
    v.sort_by_key(|p| p.file_stem().unwrap().to_os_string());
    v
}

/// Every `.yaml` file below `dir`, sorted.
fn yamls(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            yamls(&p, out);
        } else if p.extension().is_some_and(|x| x == "yaml") {
            out.push(p);
        }
    }
}

/// `file`'s path in the repository, with `/` on every platform: the key
/// experiments and their workload files are looked up by.
fn repo_path(file: &Path, root: &Path) -> String {
    file.strip_prefix(root)
        .unwrap()
        .to_str()
        .unwrap()
        .replace('\\', "/")
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let root = manifest.join("../..");
    let exp = root.join("experiments");
    // A directory here is scanned as a whole: adding, removing or editing a
    // file below it reruns this script.
    println!("cargo::rerun-if-changed={}", exp.display());

    let mut code =
        String::from("/// Every built-in experiment, the user's then the lab's, each by name.\n");
    code.push_str("pub const BUILTIN: &[Builtin] = &[\n");
    let mut seen = std::collections::BTreeMap::new();
    for (dir, lab) in [(exp.clone(), false), (exp.join("lab"), true)] {
        for file in tomls(&dir) {
            let name = file.file_stem().unwrap().to_str().unwrap().to_string();
            let rel = repo_path(&file, &root);
            if let Some(other) = seen.insert(name.clone(), rel.clone()) {
                panic!("built-in experiment {name:?} is both {other} and {rel}: rename one");
            }
            let abs = file.canonicalize().unwrap();
            let abs = abs.to_str().unwrap();
            writeln!(
                code,
                "    Builtin {{ name: {name:?}, path: {rel:?}, lab: {lab}, text: include_str!({abs:?}) }},"
            )
            .unwrap();
        }
    }
    code.push_str("];\n\n");

    code.push_str("/// The workload files built-in experiments may name, by repository path.\n");
    code.push_str("pub const FILES: &[(&str, &str)] = &[\n");
    let mut files = Vec::new();
    yamls(&exp, &mut files);
    for file in files {
        let rel = repo_path(&file, &root);
        let abs = file.canonicalize().unwrap();
        let abs = abs.to_str().unwrap();
        writeln!(code, "    ({rel:?}, include_str!({abs:?})),").unwrap();
    }
    code.push_str("];\n");

    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("builtin.rs");
    std::fs::write(out, code).unwrap();
}
