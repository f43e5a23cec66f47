//! The plan: an experiment expanded into runs (scale × repeat × variant
//! group, variants interleaved in a rotating order), with an estimate of how
//! long it takes.

use std::fmt::Write;

use super::Impl;
use super::spec::{Experiment, Schedule, Variant};

/// One run: a scale, a repeat, and the variants that run together.
#[derive(Debug, Clone)]
pub struct Run {
    pub scale: u64,
    pub repeat: u32,
    /// Indices into `Experiment::variants`.
    pub variants: Vec<usize>,
}

/// Seconds a run costs besides its window: namespace, identity, controller
/// start, first scrape, teardown.
const RUN_OVERHEAD_S: f64 = 6.0;
/// Seconds to start a local plane with cached binaries.
const PLANE_START_S: f64 = 5.0;
/// A conservative create rate for the estimate (objects per second).
const CREATE_RATE: f64 = 300.0;

pub fn expand(exp: &Experiment) -> Vec<Run> {
    let mut runs = Vec::new();
    for &scale in &exp.scales {
        // Repeat 0: the discarded warm-up.
        let first = if exp.warmup { 0 } else { 1 };
        for repeat in first..=exp.repeats.max() {
            match exp.schedule {
                // Each repeat starts one variant later (A B C, B C A, C A B):
                // no variant always runs first, on the freshest plane, or
                // always right after the same neighbour.
                Schedule::Isolated => {
                    let n = exp.variants.len();
                    for k in 0..n {
                        runs.push(Run {
                            scale,
                            repeat,
                            variants: vec![(k + repeat as usize + n - 1) % n],
                        });
                    }
                }
                Schedule::Concurrent => runs.push(Run {
                    scale,
                    repeat,
                    variants: (0..exp.variants.len()).collect(),
                }),
            }
        }
    }
    runs
}

/// Upper-bound estimate in seconds (every run uses its whole window, and
/// every phase after it its timeout or duration).
pub fn estimate_s(exp: &Experiment, runs: &[Run]) -> f64 {
    let plane = if exp.is_local() { PLANE_START_S } else { 0.0 };
    let phases: f64 = exp.phases.iter().map(|p| p.max_seconds()).sum();
    plane
        + runs
            .iter()
            .map(|r| {
                let creates = r.scale as f64 * r.variants.len() as f64 / CREATE_RATE;
                exp.window_s.max(creates) + phases + RUN_OVERHEAD_S
            })
            .sum::<f64>()
}

/// What `run --dry-run` prints.
pub fn render(exp: &Experiment, runs: &[Run]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "experiment {} ({})", exp.name, exp.file.display());
    if !exp.description.is_empty() {
        let _ = writeln!(s, "  {}", exp.description.trim());
    }
    render_cluster(&mut s, exp);
    let _ = writeln!(
        s,
        "schedule {:?}, window {} s{}, scrape every {} s, loader concurrency {}",
        exp.schedule,
        exp.window_s,
        if exp.stop_when_converged {
            format!(
                " (stops early once converged and quiet for {} s)",
                exp.quiet_s
            )
        } else {
            String::new()
        },
        exp.scrape_interval_s,
        exp.concurrency
    );
    let _ = writeln!(s, "workload: {}", exp.workload.describe());
    for f in &exp.faults {
        let _ = writeln!(
            s,
            "fault at {} s: {} {}{}",
            f.at_s,
            f.action.as_str(),
            f.target,
            if f.duration_s > 0.0 {
                format!(" for {} s", f.duration_s)
            } else {
                String::new()
            }
        );
    }
    let _ = writeln!(s, "variants:");
    for v in &exp.variants {
        let baseline = if v.faulted() {
            ""
        } else {
            "  (no faults: the baseline)"
        };
        let fleet = match (v.replicas(), v.lease()) {
            (1, None) => String::new(),
            (r, None) => format!("  (× {r} replicas)"),
            (r, Some(lease)) => format!("  (× {r} replicas, leader elected on Lease {lease})"),
        };
        let alloc = match v.keys.allocator.as_deref() {
            Some(a) if a != "system" => format!("  (allocator {a})"),
            _ => String::new(),
        };
        let _ = writeln!(
            s,
            "  {:<20} {:<10} {}{alloc}{fleet}{baseline}",
            v.name,
            v.implementation.to_string(),
            what_runs(v)
        );
    }
    let _ = writeln!(s, "runs ({}):", runs.len());
    for r in runs {
        let names: Vec<&str> = r
            .variants
            .iter()
            .map(|i| exp.variants[*i].name.as_str())
            .collect();
        let _ = writeln!(
            s,
            "  N={:<6} rep {}  {}",
            r.scale,
            r.repeat,
            names.join(" + ")
        );
    }
    let est = estimate_s(exp, runs);
    let _ = writeln!(
        s,
        "estimated duration: at most {:.0} min {:.0} s",
        (est / 60.0).floor(),
        est % 60.0
    );
    s
}

/// The plan's cluster line(s).
fn render_cluster(s: &mut String, exp: &Experiment) {
    let c = &exp.cluster;
    if !exp.is_local() {
        let _ = writeln!(
            s,
            "cluster: existing, kubeconfig {} context {}",
            c.kubeconfig.as_deref().unwrap_or("(default)"),
            c.context.as_deref().unwrap_or("(current)")
        );
        return;
    }
    let _ = writeln!(
        s,
        "cluster: local plane, Kubernetes {}, etcd fsync {}{}",
        c.k8s_version
            .as_deref()
            .unwrap_or(ctrlbench_plane::DEFAULT_K8S_VERSION),
        if c.etcd_fsync { "on" } else { "off" },
        if c.feature_gates.is_empty() {
            String::new()
        } else {
            format!(", feature gates {}", c.feature_gates.join(","))
        }
    );
    let (members, apiservers) = (c.etcd_members, c.apiservers);
    if members > 1 || apiservers > 1 {
        let _ = writeln!(
            s,
            "  {members} etcd member(s), {apiservers} apiserver(s){}",
            if apiservers > 1 {
                " behind the front"
            } else {
                ""
            }
        );
    }
}

/// What a variant runs: our controller's flags, the user's command, or
/// where the external one is.
fn what_runs(v: &Variant) -> String {
    match v.implementation {
        Impl::Command => {
            let mut w = v.command().join(" ");
            if !v.cluster_rbac().is_empty() {
                w.push_str(&format!(
                    " (cluster-wide reads: {} rule(s))",
                    v.cluster_rbac().len()
                ));
            }
            w
        }
        Impl::External => format!(
            "started by nobody: namespace {}, metrics {}",
            v.keys
                .namespace
                .as_deref()
                .unwrap_or("(a fresh one per run)"),
            v.keys.metrics.as_deref().unwrap_or("(none)")
        ),
        _ => v.flags().join(" "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_interleave_variants_in_a_rotating_order() {
        let text = "name = \"t\"\nscales = [5]\nrepeats = 3\n[[variant]]\nname = \"a\"\npreset = \"good\"\n[[variant]]\nname = \"b\"\npreset = \"good\"\n[[variant]]\nname = \"c\"\npreset = \"good\"\n";
        let exp = crate::experiment::spec::parse(std::path::Path::new("t.toml"), text).unwrap();
        let order: Vec<(u32, usize)> = expand(&exp)
            .iter()
            .map(|r| (r.repeat, r.variants[0]))
            .collect();
        assert_eq!(
            order,
            [
                (1, 0),
                (1, 1),
                (1, 2),
                (2, 1),
                (2, 2),
                (2, 0),
                (3, 2),
                (3, 0),
                (3, 1)
            ]
        );
    }
}
