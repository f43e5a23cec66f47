//! The plan: an experiment expanded into runs (scale × repeat × variant
//! group, variants interleaved in a rotating order), with an estimate of how
//! long it takes.

use std::fmt::Write;

use super::spec::{Experiment, Schedule};

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
    for &scale in exp.scales() {
        for repeat in 1..=exp.repeats() {
            match exp.spec.schedule {
                // Each repeat starts one variant later (A B C, B C A, C A B):
                // no variant always runs first, on the freshest plane, or
                // always right after the same neighbour.
                Schedule::Isolated => {
                    let n = exp.variants.len();
                    for k in 0..n {
                        runs.push(Run {
                            scale,
                            repeat,
                            variants: vec![(k + repeat as usize - 1) % n],
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
                exp.window_s().max(creates) + phases + RUN_OVERHEAD_S
            })
            .sum::<f64>()
}

/// What `run --dry-run` prints.
pub fn render(exp: &Experiment, runs: &[Run]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "experiment {} ({})", exp.name(), exp.file.display());
    if !exp.spec.description.is_empty() {
        let _ = writeln!(s, "  {}", exp.spec.description.trim());
    }
    let c = &exp.spec.cluster;
    if exp.is_local() {
        let _ = writeln!(
            s,
            "cluster: local plane, Kubernetes {}, etcd fsync {}{}",
            c.k8s_version
                .as_ref()
                .map(|v| v.get_ref().as_str())
                .unwrap_or(crate::cluster::DEFAULT_K8S_VERSION),
            if c.etcd_fsync.unwrap_or(true) {
                "on"
            } else {
                "off"
            },
            if c.feature_gates.is_empty() {
                String::new()
            } else {
                format!(", feature gates {}", c.feature_gates.join(","))
            }
        );
        let members = c.etcd_members.as_ref().map_or(1, |v| *v.get_ref());
        let apiservers = c.apiservers.as_ref().map_or(1, |v| *v.get_ref());
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
    } else {
        let _ = writeln!(
            s,
            "cluster: existing, kubeconfig {} context {}",
            c.kubeconfig
                .as_ref()
                .map(|v| v.get_ref().as_str())
                .unwrap_or("(default)"),
            c.context
                .as_ref()
                .map(|v| v.get_ref().as_str())
                .unwrap_or("(current)")
        );
    }
    let _ = writeln!(
        s,
        "schedule {:?}, window {} s{}, scrape every {} s, loader concurrency {}",
        exp.spec.schedule,
        exp.window_s(),
        if exp.spec.stop_when_converged {
            format!(
                " (stops early once converged and quiet for {} s)",
                exp.spec.quiet_s.get_ref()
            )
        } else {
            String::new()
        },
        exp.spec.scrape_interval_s.get_ref(),
        exp.spec.concurrency.get_ref()
    );
    let _ = writeln!(s, "workload: {}", exp.workload.describe());
    for f in &exp.spec.faults {
        let _ = writeln!(
            s,
            "fault at {} s: {} {}{}",
            f.at_s.get_ref(),
            f.action.get_ref().as_str(),
            f.target.get_ref(),
            if *f.duration_s.get_ref() > 0.0 {
                format!(" for {} s", f.duration_s.get_ref())
            } else {
                String::new()
            }
        );
    }
    let _ = writeln!(s, "variants:");
    for v in &exp.variants {
        let what = match v.implementation {
            super::Impl::Command => {
                let mut w = v
                    .spec
                    .command
                    .as_ref()
                    .map(|c| c.get_ref().join(" "))
                    .unwrap_or_default();
                if let Some(r) = v
                    .spec
                    .cluster_rbac
                    .as_ref()
                    .filter(|r| !r.get_ref().is_empty())
                {
                    w.push_str(&format!(
                        " (cluster-wide reads: {} rule(s))",
                        r.get_ref().len()
                    ));
                }
                w
            }
            super::Impl::External => format!(
                "started by nobody: namespace {}, metrics {}",
                v.spec
                    .namespace
                    .as_ref()
                    .map_or("(a fresh one per run)", |n| n.get_ref().as_str()),
                v.spec
                    .metrics
                    .as_ref()
                    .map_or("(none)", |n| n.get_ref().as_str())
            ),
            _ => v.flags().join(" "),
        };
        let baseline = if v.spec.faults.as_ref().is_some_and(|f| !*f.get_ref()) {
            "  (no faults: the baseline)"
        } else {
            ""
        };
        let _ = writeln!(
            s,
            "  {:<20} {:<10} {}{baseline}",
            v.name,
            v.implementation.to_string(),
            what
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
