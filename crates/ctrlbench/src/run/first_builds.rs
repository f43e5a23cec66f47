//! What a run would build before its first run, told from the cache and the
//! environment with nothing built, written or fetched, for the estimate
//! `run --dry-run` prints: each local plane's binaries (etcd and
//! kube-apiserver per Kubernetes version; kube-controller-manager,
//! kube-scheduler and KWOK only where `[cluster]` asks for them), our
//! controllers for the variants that run them, and the command variants'
//! `build` steps that are due (a baseline's twins among them). Each is
//! priced in minutes as measured cold on the project's 2-core machine. The
//! harness is not counted: a dry run means it is built. What builds what
//! stays where it is (`ctrlbench_plane::binaries`, `controllers.rs`,
//! `build.rs`); this file only asks them where a binary would be.

use std::path::PathBuf;

use anyhow::Result;
use ctrlbench_plane::binaries::{self, Lookup};
use ctrlbench_plane::fetch::Downloads;
use ctrlbench_plane::kwok_build;

use crate::controllers;
use crate::experiment::plan::FirstBuild;
use crate::experiment::{Experiment, Impl};

// Minutes per build, cold (empty Go module and build caches), measured on
// the project's 2-core machine on 2026-12-06 (docs/findings.md, "Cold main
// job" at d1ef2ba, builds in sequence; README "The two commands").

/// kube-apiserver: 316 s, built after etcd and the Go controller.
const KUBE_APISERVER_MIN: f64 = 5.3;
/// etcd and the Go controller took 129 s together; etcd alone took 94 s
/// ("Plane start and cold builds" in docs/findings.md).
const ETCD_MIN: f64 = 1.6;
/// The Go controller alone with empty module and build caches, as where
/// the plane's binaries download: 90 s (2026-12-07). Beside etcd's build it
/// took about 35 s, since they share packages; the estimate is the most.
const GO_CONTROLLER_MIN: f64 = 1.5;
/// `cluster install --controller-manager --nodes` after that job, 2 min
/// 42 s: kube-controller-manager 83 s, then kube-scheduler 8 s (the
/// packages it shares with it compiled already), KWOK 63 s; the 8 s left
/// over (module resolution) are counted with kube-scheduler.
const KUBE_CONTROLLER_MANAGER_MIN: f64 = 1.4;
const KUBE_SCHEDULER_MIN: f64 = 0.2;
const KWOK_MIN: f64 = 1.1;
/// The Rust controller after the harness's release build: 37 s
/// (2026-12-07). It reuses the harness's compiled dependencies (the
/// workspace hack unifies them), so its own crates and a link remain.
const RUST_CONTROLLER_MIN: f64 = 0.6;
/// The Rust controller with another allocator compiles every dependency
/// again in a target directory of its own: taken as the harness's cold
/// release build, 5.1 min (f521d77).
const ALLOCATOR_BUILD_MIN: f64 = 5.1;
/// A `@name` third-party controller, not timed: taken as the Go
/// controller's build (client-go and its modules, a small main package).
const THIRD_PARTY_MIN: f64 = 0.5;
/// A command variant's `build`: the memcached operator's two builds (the
/// working tree's and the base's) took about 1.5 min with Go's module cache
/// cold (docs/ci.md), 0.75 each, rounded up. A user's build may take any
/// time: it is their step.
const COMMAND_BUILD_MIN: f64 = 0.8;

/// Where builds are looked for: the process's environment and cache, or a
/// test's own.
pub struct Where {
    /// envtest's variables and the cache root.
    pub plane: Lookup,
    /// Where the Rust controller must be for the run not to build it; None
    /// where `CTRLBENCH_WIDGET_CONTROLLER` names it (never built then).
    pub rust_controller: Option<PathBuf>,
    /// The checkout, whose target/ holds the allocator builds.
    pub workspace: PathBuf,
    /// Whether `go` is on PATH.
    pub go: bool,
    /// `CTRLBENCH_MIRROR` and `CTRLBENCH_OFFLINE`, which win over the
    /// file's `[cluster]` keys.
    pub downloads: Downloads,
}

impl Where {
    /// This process's environment and cache.
    pub fn here() -> Result<Where> {
        Ok(Where {
            plane: Lookup::from_env()?,
            rust_controller: controllers::rust_binary_path()?,
            workspace: controllers::workspace(),
            go: binaries::which_go_opt().is_some(),
            downloads: Downloads::from_env()?,
        })
    }
}

/// The builds to do, and what the dry run should say about them.
#[derive(Debug, Default)]
pub struct FirstBuilds {
    pub builds: Vec<FirstBuild>,
    pub notes: Vec<String>,
}

/// What `exp`'s run would build first; `local` when it runs on local planes
/// (no kubeconfig or context).
pub fn find(exp: &Experiment, local: bool, at: &Where) -> Result<FirstBuilds> {
    let mut out = FirstBuilds::default();
    // What Go would build: said once, if Go is missing.
    let mut with_go: Vec<String> = Vec::new();
    let mut plane_pair = false;
    let mut add = |out: &mut FirstBuilds, what: String, minutes: f64, go: bool| {
        if go {
            plane_pair |= what.starts_with("etcd ") || what.starts_with("kube-apiserver ");
            with_go.push(what.clone());
        }
        out.builds.push(FirstBuild {
            what,
            minutes,
            fetchable: false,
        });
    };
    if local {
        planes(exp, at, &mut out, &mut add)?;
    }
    let root = &at.plane.root;
    let mut seen: Vec<String> = Vec::new();
    for v in &exp.variants {
        // The same choices, in the same order, as `Builds::prepare`.
        let (key, what, minutes, go) = if v.implementation == Impl::Command {
            let first = v.command().first().cloned().unwrap_or_default();
            let Some(name) = first.strip_prefix('@') else {
                continue;
            };
            match controllers::third_party_path(root, name) {
                Ok(p) if p.is_file() => continue,
                Ok(_) => (first.clone(), first.clone(), THIRD_PARTY_MIN, true),
                Err(e) => {
                    out.notes.push(format!("variant {}: {e:#}", v.name));
                    continue;
                }
            }
        } else if v.keys.binary.is_some() && v.is_own() {
            continue;
        } else if let Some(a) = v.keys.allocator.as_deref().filter(|a| *a != "system") {
            let bin =
                controllers::allocator_target(&at.workspace, a).join("release/widget-controller");
            if bin.is_file() {
                continue;
            }
            (
                format!("allocator {a}"),
                format!("the Rust controller with {a} (cargo, a target directory of its own)"),
                ALLOCATOR_BUILD_MIN,
                false,
            )
        } else {
            match &v.implementation {
                Impl::Rust => match &at.rust_controller {
                    Some(p) if !p.is_file() => (
                        "rust".to_string(),
                        "the Rust controller (cargo build -p widget-controller)".to_string(),
                        RUST_CONTROLLER_MIN,
                        false,
                    ),
                    _ => continue,
                },
                Impl::Go(label) => match controllers::go_binary_path(root, label) {
                    Ok(p) if p.is_file() => continue,
                    Ok(_) => (
                        format!("go@{label}"),
                        format!("the Go controller (controller-runtime {label})"),
                        GO_CONTROLLER_MIN,
                        true,
                    ),
                    Err(e) => {
                        out.notes.push(format!("variant {}: {e:#}", v.name));
                        continue;
                    }
                },
                Impl::Command | Impl::External => continue,
            }
        };
        if !seen.contains(&key) {
            seen.push(key);
            add(&mut out, what, minutes, go);
        }
    }
    for s in super::build::steps(exp) {
        if super::build::due(exp, &s, root) {
            // The plan's variants say where; a baseline's tree is long.
            let what = format!("`{}` for {}", s.command.join(" "), s.variants.join(", "));
            add(&mut out, what, COMMAND_BUILD_MIN, s.command[0] == "go");
        }
    }
    if !at.go && !with_go.is_empty() {
        out.notes.push(format!(
            "Go is not installed: building {} needs Go ≥ 1.26{}",
            with_go.join(", "),
            if plane_pair {
                " (or KUBEBUILDER_ASSETS naming setup-envtest's etcd and kube-apiserver)"
            } else {
                ""
            }
        ));
    }
    Ok(out)
}

/// Every local plane's binaries still to build: one set per Kubernetes
/// version the runs use, KWOK once.
fn planes(
    exp: &Experiment,
    at: &Where,
    out: &mut FirstBuilds,
    add: &mut impl FnMut(&mut FirstBuilds, String, f64, bool),
) -> Result<()> {
    let version_of = |e: &Experiment| {
        binaries::normalize_version(
            e.cluster
                .k8s_version
                .as_deref()
                .unwrap_or(binaries::DEFAULT_K8S_VERSION),
        )
    };
    let mut versions = vec![version_of(exp)?];
    for i in 0..exp.variants.len() {
        if let Some(p) = exp.variant_plane(i) {
            let v = version_of(&exp.on_plane(&p))?;
            if !versions.contains(&v) {
                versions.push(v);
            }
        }
    }
    let c = &exp.cluster;
    let nodes = c.nodes > 0;
    let offline = c.downloads().offline || at.downloads.offline;
    let mut fetchable: Vec<String> = Vec::new();
    for v in &versions {
        for name in binaries::missing(&at.plane, v, c.controller_manager, nodes)? {
            fetchable.push(name.to_string());
            let (what, minutes) = match name {
                "etcd" => (
                    format!("etcd {} (for Kubernetes {v})", binaries::etcd_version(v)),
                    ETCD_MIN,
                ),
                "kube-apiserver" => (format!("kube-apiserver {v}"), KUBE_APISERVER_MIN),
                "kube-controller-manager" => (
                    format!("kube-controller-manager {v}"),
                    KUBE_CONTROLLER_MANAGER_MIN,
                ),
                _ => (format!("{name} {v}"), KUBE_SCHEDULER_MIN),
            };
            add(out, what, minutes, true);
            if let Some(b) = out.builds.last_mut() {
                b.fetchable = !offline;
            }
        }
    }
    fetchable.dedup();
    if !fetchable.is_empty() {
        out.notes
            .push(download_note(&fetchable, &c.downloads(), &at.downloads));
    }
    if nodes && kwok_build::missing(&at.plane) {
        add(
            out,
            format!("KWOK {} (the fake nodes)", kwok_build::KWOK_VERSION),
            KWOK_MIN,
            true,
        );
    }
    Ok(())
}

/// What becomes of the plane's binaries that a build is priced for above:
/// they are downloaded first unless offline, so the estimate is the most it
/// can be. The environment's settings win over the file's, as when they
/// are installed.
fn download_note(names: &[String], file: &Downloads, env: &Downloads) -> String {
    let names = names.join(", ");
    if file.offline || env.offline {
        return format!("{names}: built, not downloaded (offline)");
    }
    let from = match env.mirror.as_ref().or(file.mirror.as_ref()) {
        Some(m) => format!("the mirror {m}"),
        None => "Kubernetes' and etcd's release hosts".to_string(),
    };
    format!(
        "{names}: downloaded and verified first from {from}, in seconds where it answers; \
         priced above as built, which is what happens where it does not"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn touch(p: &Path) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "").unwrap();
    }

    fn total(f: &FirstBuilds) -> f64 {
        // Hundredths, so that sums of tenths compare exactly.
        (f.builds.iter().map(|b| b.minutes).sum::<f64>() * 100.0).round() / 100.0
    }

    fn names(f: &FirstBuilds) -> Vec<&str> {
        f.builds.iter().map(|b| b.what.as_str()).collect()
    }

    /// A fake cache decides what is counted: what it holds is not, what it
    /// lacks is, at its measured minutes; KUBEBUILDER_ASSETS holds etcd
    /// and kube-apiserver; nothing is written to the cache.
    #[test]
    fn the_builds_to_do_are_read_from_the_cache() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("cache/ctrlbench");
        let k8s = root.join("k8s").join(binaries::DEFAULT_K8S_VERSION);
        touch(&k8s.join("etcd"));
        touch(&k8s.join("kube-scheduler"));
        let rust = tmp.path().join("bin/widget-controller");
        touch(&rust);
        let at = |vars: &[(&str, &Path)], rust: &Path| Where {
            plane: Lookup::new(&root, vars),
            rust_controller: Some(rust.to_path_buf()),
            workspace: tmp.path().join("ws"),
            go: false,
            downloads: Downloads::default(),
        };
        let file = tmp.path().join("t.toml");
        let text = "name = \"t\"\nscales = [5]\n[cluster]\nnodes = 2\n\
                    [[variant]]\nname = \"r\"\nimpl = \"rust\"\npreset = \"good\"\n\
                    [[variant]]\nname = \"g\"\nimpl = \"go@v0.18.4\"\npreset = \"good\"\n\
                    [[variant]]\nname = \"g2\"\nimpl = \"go@v0.18.4\"\npreset = \"bad-fix\"\n";
        let exp = crate::experiment::spec::parse(&file, text).unwrap();
        let found = find(&exp, true, &at(&[], &rust)).unwrap();
        // kube-apiserver 5.3 + kube-controller-manager 1.4 + KWOK 1.1 +
        // the Go controller once for both of its variants 1.5 = 9.3; etcd,
        // kube-scheduler and the Rust controller are there.
        assert_eq!(total(&found), 9.3, "{:?}", found.builds);
        let v = binaries::DEFAULT_K8S_VERSION;
        assert_eq!(
            names(&found),
            [
                format!("kube-apiserver {v}").as_str(),
                &format!("kube-controller-manager {v}"),
                &format!("KWOK {} (the fake nodes)", kwok_build::KWOK_VERSION),
                "the Go controller (controller-runtime v0.18.4)",
            ]
        );
        // Without Go, the dry run says which builds need it.
        assert!(
            found
                .notes
                .iter()
                .any(|n| n.starts_with("Go is not installed")
                    && n.contains("kube-apiserver")
                    && n.contains("controller-runtime v0.18.4")),
            "{:?}",
            found.notes
        );
        // The plane's binaries priced as builds are downloaded first; the
        // note says from where, or that nothing is (KWOK is always built).
        let fetched = "kube-apiserver, kube-controller-manager: downloaded and verified first \
                       from Kubernetes' and etcd's release hosts";
        assert!(
            found.notes.iter().any(|n| n.starts_with(fetched)),
            "{:?}",
            found.notes
        );
        // Those, and only those, are priced apart as downloadable.
        let fetchable = |f: &FirstBuilds| -> Vec<String> {
            f.builds
                .iter()
                .filter(|b| b.fetchable)
                .map(|b| b.what.clone())
                .collect()
        };
        assert_eq!(
            fetchable(&found),
            [
                format!("kube-apiserver {v}"),
                format!("kube-controller-manager {v}")
            ]
        );
        let mut offline = at(&[], &rust);
        offline.downloads.offline = true;
        assert!(fetchable(&find(&exp, true, &offline).unwrap()).is_empty());
        let notes = find(&exp, true, &offline).unwrap().notes;
        assert!(
            notes.contains(
                &"kube-apiserver, kube-controller-manager: built, not downloaded (offline)"
                    .to_string()
            ),
            "{notes:?}"
        );
        // The environment's mirror wins over the file's.
        let mirrored = crate::experiment::spec::parse(
            &file,
            &text.replace(
                "nodes = 2",
                "nodes = 2\nmirror = \"http://127.0.0.1:9/file\"",
            ),
        )
        .unwrap();
        let notes = find(&mirrored, true, &at(&[], &rust)).unwrap().notes;
        assert!(
            notes
                .iter()
                .any(|n| n.contains("from the mirror http://127.0.0.1:9/file,")),
            "{notes:?}"
        );
        let mut env = at(&[], &rust);
        env.downloads.mirror = Some("http://127.0.0.1:9/env".into());
        let notes = find(&mirrored, true, &env).unwrap().notes;
        assert!(
            notes
                .iter()
                .any(|n| n.contains("from the mirror http://127.0.0.1:9/env,")),
            "{notes:?}"
        );
        // On an existing cluster only the controllers count: the Go one, 1.5.
        assert_eq!(total(&find(&exp, false, &at(&[], &rust)).unwrap()), 1.5);

        // KUBEBUILDER_ASSETS with etcd, kube-apiserver and
        // kube-controller-manager; the Go controller cached; the Rust one
        // missing: KWOK 1.1 + the Rust controller 0.6 = 1.7.
        let assets = tmp.path().join("assets");
        for b in ["etcd", "kube-apiserver", "kube-controller-manager"] {
            touch(&assets.join(b));
        }
        touch(&controllers::go_binary_path(&root, "v0.18.4").unwrap());
        let gone = tmp.path().join("nowhere/widget-controller");
        let found = find(&exp, true, &at(&[("KUBEBUILDER_ASSETS", &assets)], &gone)).unwrap();
        assert_eq!(total(&found), 1.7, "{:?}", found.builds);
        // Without nodes, neither KWOK nor the Kubernetes extras count (the
        // Go controller is cached by now): kube-apiserver alone.
        let plain =
            crate::experiment::spec::parse(&file, &text.replace("nodes = 2", "nodes = 0")).unwrap();
        assert_eq!(total(&find(&plain, true, &at(&[], &rust)).unwrap()), 5.3);
        // The lookups wrote nothing: the cache holds what the test put there.
        let mut files: Vec<String> = walk(&root)
            .iter()
            .map(|p| p.strip_prefix(&root).unwrap().display().to_string())
            .collect();
        files.sort();
        assert_eq!(files.len(), 3, "{files:?}");
    }

    /// A command variant's `build` counts until its last success is
    /// remembered for the same tree and program.
    #[test]
    fn a_build_step_counts_until_its_tree_was_built() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("cache/ctrlbench");
        let op = tmp.path().join("op");
        touch(&op.join("main.go"));
        let file = op.join("t.toml");
        let text = "name = \"t\"\nscales = [5]\n\
                    [[variant]]\nname = \"op\"\nimpl = \"command\"\ncommand = [\"./bin/manager\"]\nbuild = [\"make\"]\n";
        std::fs::write(&file, text).unwrap();
        let exp = crate::experiment::spec::parse(&file, text).unwrap();
        let at = Where {
            plane: Lookup::new(&root, &[]),
            rust_controller: None,
            workspace: tmp.path().join("ws"),
            go: true,
            downloads: Downloads::default(),
        };
        let found = find(&exp, false, &at).unwrap();
        assert_eq!(total(&found), 0.8, "{:?}", found.builds);
        assert_eq!(found.builds[0].what, "`make` for op");
        // What a successful build leaves: the tree's hash and the program's.
        touch(&op.join("bin/manager"));
        let step = &super::super::build::steps(&exp)[0];
        let stamp = super::super::build::stamp_path(&root, step);
        let tree = super::super::build::tree_hash(&step.dir).unwrap();
        let sha = ctrlbench_plane::origin::sha256_of(&op.join("bin/manager")).unwrap();
        touch(&stamp);
        std::fs::write(&stamp, format!("{tree}\n{sha}\n")).unwrap();
        assert_eq!(total(&find(&exp, false, &at).unwrap()), 0.0);
        // A changed source makes it due again.
        std::fs::write(op.join("main.go"), "package main\n").unwrap();
        assert_eq!(total(&find(&exp, false, &at).unwrap()), 0.8);
    }

    fn walk(d: &Path) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
        out
    }
}
