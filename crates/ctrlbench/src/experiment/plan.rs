//! The plan: an experiment expanded into runs (scale × repeat × variant
//! group, variants interleaved in a counterbalanced order; with `--grow`
//! round × scale × variant group), with an estimate of how
//! long it takes: the runs, and the builds still to do before them (found
//! by `run::first_builds`; priced there).

use std::fmt::Write;

use super::Impl;
use super::spec::{Experiment, FreshPlane, Schedule, Variant};

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

/// The (scale, repeat) blocks in the order they run: scale by scale, each
/// scale's repeats together; with `--grow` round by round instead, each
/// round visiting every scale before the next starts, so that a drift
/// between rounds moves all of a round's scales alike (the growth fit's
/// blocks).
fn blocks(exp: &Experiment) -> Vec<(u64, u32)> {
    // Repeat 0: the discarded warm-up.
    let first = if exp.warmup { 0 } else { 1 };
    let repeats = first..=exp.repeats.max();
    if exp.grow.is_some() {
        repeats
            .flat_map(|k| exp.scales.iter().map(move |&n| (n, k)))
            .collect()
    } else {
        exp.scales
            .iter()
            .flat_map(|&n| repeats.clone().map(move |k| (n, k)))
            .collect()
    }
}

pub fn expand(exp: &Experiment) -> Vec<Run> {
    let mut runs = Vec::new();
    for (scale, repeat) in blocks(exp) {
        match exp.schedule {
            // Counterbalanced: each repeat takes a row of a Williams
            // square (AB then BA for a pair), the rows in a seeded random
            // order, so every variant runs equally often in each position
            // and after each other variant: a position or carry-over
            // effect moves every variant alike.
            Schedule::Isolated => {
                let n = exp.variants.len();
                for v in order(n, repeat, exp.order_seed()) {
                    runs.push(Run {
                        scale,
                        repeat,
                        variants: vec![v],
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
    runs
}

/// The rows of a Williams square for `n` variants: each variant once in
/// each position, and right after each other variant equally often (`n`
/// rows for even `n`, `2n` for odd, the square and its mirror).
pub fn williams(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return Vec::new();
    }
    // 0, 1, n−1, 2, n−2, …
    let first: Vec<usize> = (0..n)
        .map(|j| {
            if j % 2 == 1 {
                j.div_ceil(2)
            } else {
                (n - j / 2) % n
            }
        })
        .collect();
    let mut rows: Vec<Vec<usize>> = (0..n)
        .map(|r| first.iter().map(|c| (c + r) % n).collect())
        .collect();
    if n % 2 == 1 {
        let mirror: Vec<Vec<usize>> = rows
            .iter()
            .map(|r| r.iter().rev().copied().collect())
            .collect();
        rows.extend(mirror);
    }
    rows
}

/// The order of the variants in `repeat`: the rows of the Williams square
/// are dealt in a random order (seeded) per block of as many repeats as
/// there are rows, so every block is balanced; repeat 0 (the warm-up) takes
/// a row of its own block.
pub fn order(n: usize, repeat: u32, seed: u64) -> Vec<usize> {
    use rand::SeedableRng;
    use rand::seq::SliceRandom;
    let rows = williams(n);
    if rows.is_empty() {
        return Vec::new();
    }
    // Repeat 1 starts a block; repeat 0 ends one of its own.
    let at = repeat as usize + rows.len() - 1;
    let block = at / rows.len();
    let mut idx: Vec<usize> = (0..rows.len()).collect();
    let mut rng = rand::rngs::StdRng::seed_from_u64(
        seed ^ (block as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15),
    );
    idx.shuffle(&mut rng);
    rows[idx[at % rows.len()]].clone()
}

/// A build a run does before its first run (a binary not cached yet, a
/// `build` step that is due), with its estimated minutes.
#[derive(Debug, Clone, PartialEq)]
pub struct FirstBuild {
    pub what: String,
    pub minutes: f64,
    /// A plane binary that is downloaded first (downloads are on): built,
    /// and so priced, only where no release host or mirror answers.
    pub fetchable: bool,
}

/// Upper-bound estimate in seconds (every run uses its whole window, and
/// every phase after it its timeout or duration).
pub fn estimate_s(exp: &Experiment, runs: &[Run]) -> f64 {
    priced(exp, runs, |creates| exp.window_s.max(creates))
}

/// The least a plan whose runs stop once converged may take: each run's
/// creates at [`CREATE_RATE`], as long again to converge, the quiet wait
/// (its window at most). A first guess only: `--grow` re-prices its plan
/// from round 1's smallest scale as measured (`regrow.rs`).
pub fn estimate_converging_s(exp: &Experiment, runs: &[Run]) -> f64 {
    priced(exp, runs, |creates| {
        (2.0 * creates + exp.quiet_s).min(exp.window_s.max(creates))
    })
}

/// The plane's start plus each run's observation (`span`, from its
/// creates' seconds at [`CREATE_RATE`]), phases and overhead.
fn priced(exp: &Experiment, runs: &[Run], span: impl Fn(f64) -> f64) -> f64 {
    let plane = if exp.is_local() { PLANE_START_S } else { 0.0 };
    let phases: f64 = exp.phases.iter().map(|p| p.max_seconds()).sum();
    plane
        + runs
            .iter()
            .map(|r| {
                let creates = r.scale as f64 * r.variants.len() as f64 / CREATE_RATE;
                span(creates) + phases + RUN_OVERHEAD_S
            })
            .sum::<f64>()
}

/// The most objects per variant a run that stops once converged can
/// bring to Ready within its window by [`estimate_converging_s`]'s
/// optimistic price (creates at [`CREATE_RATE`], as long again to converge,
/// then the quiet wait), with `together` variants creating at once.
pub fn most_converging(exp: &Experiment, together: u64) -> u64 {
    let seconds = ((exp.window_s - exp.quiet_s) / 2.0).max(0.0);
    (seconds * CREATE_RATE / together.max(1) as f64) as u64
}

/// The plan's create rate, for words.
pub const fn create_rate() -> f64 {
    CREATE_RATE
}

/// What `run --dry-run` prints: the plan, the builds still to do and the
/// estimate of both.
pub fn render(exp: &Experiment, runs: &[Run], builds: &[FirstBuild]) -> String {
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
    match exp.fresh_plane {
        FreshPlane::Run => {
            let _ = writeln!(
                s,
                "a fresh local plane before every run (fresh_plane = \"run\")"
            );
        }
        FreshPlane::Repeat => {
            let _ = writeln!(
                s,
                "a fresh local plane before every repeat of each scale (fresh_plane = \"repeat\")"
            );
        }
        FreshPlane::Experiment => {}
    }
    let _ = writeln!(s, "workload: {}", exp.workload.describe());
    if exp.workload.field_managers > 0 {
        let _ = writeln!(
            s,
            "  each object created carrying {} appliers' managedFields entries (field_managers)",
            exp.workload.field_managers
        );
    }
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
    if builds.is_empty() {
        let _ = writeln!(
            s,
            "estimated duration: at most {} (nothing to build)",
            min_s(est)
        );
        return s;
    }
    let _ = writeln!(
        s,
        "builds first (once, then cached; minutes as measured cold on a 2-core machine):"
    );
    let width = builds
        .iter()
        .map(|b| b.what.chars().count())
        .max()
        .unwrap_or(0);
    for b in builds {
        let _ = writeln!(s, "  {:<width$}  {:>4.1} min", b.what, b.minutes);
    }
    let build_min: f64 = builds.iter().map(|b| b.minutes).sum();
    let _ = writeln!(
        s,
        "estimated duration: at most {}: runs {}, builds {build_min:.1} min (first use only)",
        min_s(est + build_min * 60.0),
        min_s(est)
    );
    let fetch_min: f64 = builds
        .iter()
        .filter(|b| b.fetchable)
        .map(|b| b.minutes)
        .sum();
    if fetch_min > 0.0 {
        // A download from a mirror on loopback took under a second; from
        // the release hosts it takes the time of about 130 MB.
        let _ = writeln!(
            s,
            "  where the plane's binaries download instead: at most {} and the download",
            min_s(est + (build_min - fetch_min) * 60.0)
        );
    }
    s
}

/// "4 min 5 s", the seconds rounded first (so never "60 s").
fn min_s(seconds: f64) -> String {
    let s = seconds.round() as u64;
    format!("{} min {} s", s / 60, s % 60)
}

/// What the plan can decide: per figure asked about (Ready/s and every
/// `[[compare]]` figure), the repeats at which a 10 % change is decided
/// with 80 % probability at the spread `evidence` holds (this machine's
/// calibration, or the default), or the change its repeats can decide.
pub fn render_power(exp: &Experiment, evidence: &ctrlbench_record::manifest::Evidence) -> String {
    let mut figures = vec!["Ready/s"];
    for c in &exp.compare {
        if !figures.contains(&c.figure.as_str()) {
            figures.push(&c.figure);
        }
    }
    let max = match exp.repeats {
        super::spec::Repeats::Fixed(n) => n,
        super::spec::Repeats::Auto { max, .. } => max,
    };
    let mut s = format!(
        "power at this machine's spread ({}), margin ±{:.0} %:\n",
        evidence.source,
        exp.margin * 100.0
    );
    for line in ctrlbench_report::evidence::power_lines(evidence, &figures, exp.margin, max) {
        let _ = writeln!(s, "  {line}");
    }
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
    if c.nodes > 0 {
        let _ = writeln!(
            s,
            "  {} fake node(s) of {} pods each (KWOK, kube-scheduler, kube-controller-manager)",
            c.nodes, c.node_pods
        );
        if c.scheduler_without_default_spread {
            let _ = writeln!(
                s,
                "  kube-scheduler without PodTopologySpread's default constraints (scheduler_default_spread = false)"
            );
        }
    }
    for (who, limits) in [
        ("kube-controller-manager", c.controller_manager_client),
        ("kube-scheduler", c.scheduler_client),
    ] {
        if let Some(l) = limits {
            let _ = writeln!(
                s,
                "  {who}'s client limit: {} requests a second, bursts of {}",
                l.qps, l.burst
            );
        }
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
            if let Some(b) = &v.keys.build {
                w.push_str(&format!(
                    ", built first by `{}` in {}",
                    b.join(" "),
                    v.keys.build_dir.as_deref().unwrap_or(".")
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

    /// Each variant once per position and after every other variant
    /// equally often, in every block of rows; the order is the seed's.
    #[test]
    fn repeats_are_counterbalanced() {
        for n in 1..=6 {
            let rows = williams(n);
            assert_eq!(rows.len(), if n % 2 == 0 { n } else { 2 * n });
            for pos in 0..n {
                let mut seen: Vec<usize> = rows.iter().map(|r| r[pos]).collect();
                seen.sort();
                let times = rows.len() / n;
                let want: Vec<usize> = (0..n).flat_map(|v| std::iter::repeat_n(v, times)).collect();
                assert_eq!(seen, want, "n={n} position {pos}");
            }
            let mut after = std::collections::HashMap::new();
            for r in &rows {
                for w in r.windows(2) {
                    *after.entry((w[0], w[1])).or_insert(0) += 1;
                }
            }
            if n > 1 {
                assert_eq!(after.len(), n * (n - 1), "n={n}: every ordered pair");
                let counts: std::collections::HashSet<i32> = after.values().copied().collect();
                assert_eq!(counts.len(), 1, "n={n}: {after:?}");
            }
        }
        let text = "name = \"t\"\nscales = [5]\nrepeats = 4\n[[variant]]\nname = \"a\"\npreset = \"good\"\n[[variant]]\nname = \"b\"\npreset = \"good\"\n";
        let exp = crate::experiment::spec::parse(std::path::Path::new("t.toml"), text).unwrap();
        let order: Vec<Vec<usize>> = (1..=4u32)
            .map(|k| {
                expand(&exp)
                    .iter()
                    .filter(|r| r.repeat == k)
                    .map(|r| r.variants[0])
                    .collect()
            })
            .collect();
        // Two blocks of AB and BA, each in the seed's order.
        for block in order.chunks(2) {
            let mut b = block.to_vec();
            b.sort();
            assert_eq!(b, [vec![0, 1], vec![1, 0]]);
        }
        assert_eq!(expand(&exp).len(), 8);
    }

    /// The plan's order: scale by scale, repeat by repeat (the warm-up,
    /// repeat 0, first when asked for), each isolated repeat every variant
    /// once, a concurrent repeat one run of them all.
    #[test]
    fn runs_go_scale_by_repeat_by_variant_warm_up_first() {
        let vars = "[[variant]]\nname = \"a\"\npreset = \"good\"\n[[variant]]\nname = \"b\"\npreset = \"good\"\n[[variant]]\nname = \"c\"\npreset = \"good\"\n";
        for (top, warmup, concurrent) in [
            ("", false, false),
            ("warmup = true\n", true, false),
            ("schedule = \"concurrent\"\n", false, true),
            ("warmup = true\nschedule = \"concurrent\"\n", true, true),
        ] {
            let text = format!("name = \"t\"\nscales = [5, 50]\nrepeats = 2\n{top}{vars}");
            let exp =
                crate::experiment::spec::parse(std::path::Path::new("t.toml"), &text).unwrap();
            let runs = expand(&exp);
            // (scale, repeat) of each block, in the order they run.
            let repeats: Vec<u32> = if warmup { vec![0, 1, 2] } else { vec![1, 2] };
            let want: Vec<(u64, u32)> = [5, 50]
                .iter()
                .flat_map(|&n| repeats.iter().map(move |&k| (n, k)))
                .collect();
            let per = if concurrent { 1 } else { 3 };
            assert_eq!(runs.len(), want.len() * per, "{top}");
            for (block, &(n, k)) in runs.chunks(per).zip(&want) {
                assert!(
                    block.iter().all(|r| (r.scale, r.repeat) == (n, k)),
                    "{top}: {block:?}"
                );
                let mut seen: Vec<usize> = block.iter().flat_map(|r| r.variants.clone()).collect();
                seen.sort();
                assert_eq!(seen, [0, 1, 2], "{top}: N={n} repeat {k}");
                if concurrent {
                    assert_eq!(block[0].variants.len(), 3);
                }
            }
        }
    }

    /// With `--grow` the plan is round-major: every scale of round 1
    /// (after the warm-up round, when asked for) before any of round 2,
    /// each (scale, round) block every variant once.
    #[test]
    fn a_grown_plan_runs_each_round_across_every_scale() {
        let text = "name = \"t\"\nscales = [5, 50, 500]\nrepeats = 2\nwarmup = true\n[[variant]]\nname = \"a\"\npreset = \"good\"\n[[variant]]\nname = \"b\"\npreset = \"good\"\n";
        let mut exp = crate::experiment::spec::parse(std::path::Path::new("t.toml"), text).unwrap();
        exp.grow = Some(crate::experiment::grow::Grow {
            scales: exp.scales.clone(),
            rounds: 2,
            largest_by: "--max-n".into(),
            estimate_s: 0.0,
            budget_s: None,
            memory: None,
            optimistic: false,
            ceiling: None,
        });
        let runs = expand(&exp);
        let want: Vec<(u64, u32)> = [0, 1, 2]
            .iter()
            .flat_map(|&k| [5, 50, 500].map(|n| (n, k)))
            .collect();
        assert_eq!(runs.len(), want.len() * 2);
        for (block, &(n, k)) in runs.chunks(2).zip(&want) {
            assert!(
                block.iter().all(|r| (r.scale, r.repeat) == (n, k)),
                "{block:?}"
            );
            let mut seen: Vec<usize> = block.iter().map(|r| r.variants[0]).collect();
            seen.sort();
            assert_eq!(seen, [0, 1]);
        }
    }

    /// The builds' total, and the same plan where the plane's binaries
    /// download: 5.3 + 0.5 = 5.8 min of builds, 0.5 without kube-apiserver.
    #[test]
    fn builds_are_priced_built_and_where_they_download() {
        let text = "name = \"t\"\nscales = [5]\nwindow_s = 60\n[[variant]]\nname = \"a\"\npreset = \"good\"\n";
        let exp = crate::experiment::spec::parse(std::path::Path::new("t.toml"), text).unwrap();
        let runs = expand(&exp);
        let est = estimate_s(&exp, &runs);
        let b = |what: &str, minutes: f64, fetchable: bool| FirstBuild {
            what: what.into(),
            minutes,
            fetchable,
        };
        let builds = [
            b("kube-apiserver", 5.3, true),
            b("the Go controller", 0.5, false),
        ];
        let out = render(&exp, &runs, &builds);
        let all = format!("at most {}: runs", min_s(est + 348.0));
        let fetched = format!(
            "download instead: at most {} and the download",
            min_s(est + 30.0)
        );
        assert!(out.contains(&all), "{out}");
        assert!(out.contains(&fetched), "{out}");
        // Offline, or nothing to download: no second line.
        let out = render(&exp, &runs, &[b("kube-apiserver", 5.3, false)]);
        assert!(!out.contains("download instead"), "{out}");
    }
}
