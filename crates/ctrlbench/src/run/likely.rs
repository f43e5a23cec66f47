//! The likely lines: where an experiment names the operator's source
//! (`[workload] source`, written by `init --from`), the harness walks it
//! once before the runs (the bounded walk of `experiment::scan`) and
//! matches each diagnosis rule's patterns (`Rule::likely` in
//! ctrlbench-report's table) against its Go, Rust and Python files — Go
//! with controller-runtime's and client-go's patterns, Rust with kube-rs's,
//! Python with kopf's — and writes every match to `likely.csv`, so that the
//! report, which reads only results files, can print a few under each
//! finding. They are pointers for the reader, never the evidence: nothing
//! here decides whether a rule fires.

use std::path::Path;

use anyhow::Result;
use ctrlbench_record::ResultsDir;
use ctrlbench_record::likely::{self, LikelyRow, MAX_TEXT};
use ctrlbench_report::diagnosis::{Framework, RULES};
use regex::Regex;

use crate::experiment::scan;

/// The most lines kept per rule (the report prints three).
pub const MAX_PER_RULE: usize = 20;

/// Source files worth reading: Go, Rust and Python, but no Go test or
/// generated file.
fn source_file(name: &str) -> bool {
    let ext_ok = name.ends_with(".go") || name.ends_with(".rs") || name.ends_with(".py");
    ext_ok && !name.ends_with("_test.go") && !name.starts_with("zz_generated")
}

/// A line that is only a comment: not where the code is.
fn comment(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("//") || t.starts_with('#') || t.starts_with("/*") || t.starts_with('*')
}

/// One rule's pattern, compiled.
struct Compiled {
    rule: &'static str,
    frameworks: Framework,
    find: Regex,
    unless: Option<Regex>,
}

/// Every rule's patterns, in the table's order, compiled (an invalid one,
/// which a unit test forbids, is left out).
fn compiled() -> Vec<Compiled> {
    let mut out = Vec::new();
    for r in RULES {
        for f in Framework::ALL {
            for p in r.likely.of(f) {
                let Ok(find) = Regex::new(p.find) else {
                    continue;
                };
                let unless = match p.unless {
                    "" => None,
                    u => match Regex::new(u) {
                        Ok(u) => Some(u),
                        Err(_) => continue,
                    },
                };
                out.push(Compiled {
                    rule: r.id,
                    frameworks: f,
                    find,
                    unless,
                });
            }
        }
    }
    out
}

/// The likely lines of the source under `root`, by rule (the table's
/// order), then pattern, file and line; at most [`MAX_PER_RULE`] per rule,
/// each line once per rule. Also the walk's notes (where it stopped).
pub fn scan(root: &Path) -> (Vec<LikelyRow>, Vec<String>) {
    let found = scan::files(root, &source_file);
    let files: Vec<(String, &'static [Framework], &str)> = found
        .files
        .iter()
        .map(|(p, text)| {
            let rel = p.strip_prefix(root).unwrap_or(p);
            let shown = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/");
            let ext = p.extension().and_then(|e| e.to_str()).unwrap_or_default();
            (shown, Framework::of_extension(ext), text.as_str())
        })
        .collect();
    let mut rows: Vec<LikelyRow> = Vec::new();
    for c in compiled() {
        for (path, frameworks, text) in &files {
            if !frameworks.contains(&c.frameworks)
                || c.unless.as_ref().is_some_and(|u| u.is_match(text))
            {
                continue;
            }
            for (i, line) in text.lines().enumerate() {
                if comment(line) || !c.find.is_match(line) {
                    continue;
                }
                let kept = rows.iter().filter(|r| r.rule == c.rule).count();
                let seen = rows
                    .iter()
                    .any(|r| r.rule == c.rule && r.path == *path && r.line == i as u64 + 1);
                if kept < MAX_PER_RULE && !seen {
                    rows.push(LikelyRow {
                        rule: c.rule.to_string(),
                        path: path.clone(),
                        line: i as u64 + 1,
                        text: line.trim().chars().take(MAX_TEXT).collect(),
                    });
                }
            }
        }
    }
    (rows, found.notes)
}

/// Scans `source` and writes `likely.csv` into the results directory;
/// returns how many lines it kept. A source that is not a directory is
/// said once and written as nothing.
pub fn write(results: &ResultsDir, source: &Path) -> Result<usize> {
    if !source.is_dir() {
        eprintln!(
            "note: [workload] source {} is not a directory: findings get no likely lines",
            source.display()
        );
        return Ok(0);
    }
    let (rows, notes) = scan(source);
    for n in notes {
        eprintln!("note: {n}");
    }
    likely::write(&results.likely(), &rows)?;
    Ok(rows.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every pattern of the table is a valid regular expression.
    #[test]
    fn every_rules_patterns_compile() {
        let mut n = 0;
        for r in RULES {
            for f in Framework::ALL {
                for p in r.likely.of(f) {
                    Regex::new(p.find).unwrap_or_else(|e| panic!("{}: {e}", r.id));
                    if !p.unless.is_empty() {
                        Regex::new(p.unless).unwrap_or_else(|e| panic!("{}: {e}", r.id));
                    }
                    n += 1;
                }
            }
        }
        assert_eq!(compiled().len(), n);
    }

    fn fixture(name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name)
    }

    /// (rule, path:line) of the rows, for comparing with lists written by hand.
    fn found(name: &str, rule: &str) -> Vec<String> {
        let (rows, notes) = scan(&fixture(name));
        assert!(notes.is_empty(), "{notes:?}");
        rows.iter()
            .filter(|r| r.rule == rule)
            .map(|r| format!("{}:{} {}", r.path, r.line, r.text))
            .collect()
    }

    /// memcached-operator (kubebuilder, controller-runtime): each rule's
    /// lines as read off the fixture by hand.
    #[test]
    fn the_kubebuilder_fixtures_likely_lines() {
        let ctl = "internal/controller/memcached_controller.go";
        let at = |n: u32, text: &str| format!("{ctl}:{n} {text}");
        let status = |n| {
            at(
                n,
                &format!(
                    "if err {} r.Status().Update(ctx, memcached); err != nil {{",
                    if n == 105 { "=" } else { ":=" }
                ),
            )
        };
        let m = "memcached-operator";
        assert_eq!(
            found(m, "cluster-wide-cache"),
            ["cmd/main.go:161 mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{"]
        );
        assert_eq!(
            found(m, "replicas-without-election"),
            ["cmd/main.go:166 LeaderElection:         enableLeaderElection,"]
        );
        // The For( of a setup with no generation predicate first, then the
        // object's own updates.
        assert_eq!(
            found(m, "self-triggered-loop"),
            [
                at(445, "For(&cachev1alpha1.Memcached{})."),
                at(127, "if err = r.Update(ctx, memcached); err != nil {"),
                at(183, "if err := r.Update(ctx, memcached); err != nil {"),
                at(243, "if err = r.Update(ctx, found); err != nil {"),
            ]
        );
        assert_eq!(
            found(m, "status-every-reconcile"),
            [105, 145, 171, 205, 261, 280].map(status)
        );
        // r.Update, never r.Status().Update: that is the fix.
        assert_eq!(
            found(m, "status-dropped"),
            found(m, "self-triggered-loop")[1..]
        );
        assert_eq!(
            found(m, "requeue-loop"),
            [224, 272].map(|n| at(n, "return ctrl.Result{RequeueAfter: time.Minute}, nil"))
        );
        assert_eq!(
            found(m, "blind-creates"),
            [at(215, "if err = r.Create(ctx, dep); err != nil {")]
        );
        assert_eq!(
            found(m, "event-spam"),
            [at(
                302,
                "r.Recorder.Eventf(cr, nil, corev1.EventTypeWarning, \"Deleting\", \"DeleteCR\","
            )]
        );
        for none in [
            "list-per-reconcile",
            "uncached-reads",
            "watch-per-reconcile",
            "client-throttling",
        ] {
            assert!(found(m, none).is_empty(), "{none}: {:?}", found(m, none));
        }
    }

    /// echo-operator (kube-rs): Api::all and a Controller::new without
    /// predicates::generation or a lease.
    #[test]
    fn the_kube_rs_fixtures_likely_lines() {
        let e = "echo-operator";
        let new = "src/main.rs:58 Controller::new(echoes, watcher::Config::default())";
        assert_eq!(
            found(e, "cluster-wide-cache"),
            ["src/main.rs:57 let echoes: Api<Echo> = Api::all(client.clone());"]
        );
        assert_eq!(found(e, "self-triggered-loop"), [new]);
        assert_eq!(found(e, "replicas-without-election"), [new]);
        assert_eq!(
            found(e, "status-every-reconcile"),
            ["src/main.rs:40 api.patch_status("]
        );
        assert_eq!(
            found(e, "requeue-loop"),
            ["src/main.rs:51 Action::requeue(Duration::from_secs(1))"]
        );
        for none in [
            "status-dropped",
            "list-per-reconcile",
            "uncached-reads",
            "conflicts",
        ] {
            assert!(found(e, none).is_empty(), "{none}: {:?}", found(e, none));
        }
    }

    /// kopf-operator: status patched in each handler; an update handler
    /// on a field (`field="spec.message"`) is no loop.
    #[test]
    fn the_kopf_fixtures_likely_lines() {
        let k = "kopf-operator";
        assert_eq!(
            found(k, "status-every-reconcile"),
            [
                "handlers.py:21 patch.status[\"reply\"] = f\"hello, {spec.get('message', 'world')}\"",
                "handlers.py:22 patch.status[\"phase\"] = \"Ready\"",
                "handlers.py:27 patch.status[\"reply\"] = f\"hello, {new}\"",
            ]
        );
        for none in [
            "self-triggered-loop",
            "cluster-wide-cache",
            "list-per-reconcile",
        ] {
            assert!(found(k, none).is_empty(), "{none}: {:?}", found(k, none));
        }
    }
}
