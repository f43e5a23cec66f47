//! `run --grow`: the scales of a growth study, picked for the user. Four
//! scales, geometric from the experiment's smallest (100 when that is
//! smaller) to `--max-n` or to the largest N that the time budget
//! (`--budget-minutes`) and this machine's memory allow, spanning at least
//! 10×; two rounds, each visiting every scale before the next starts (the
//! plan runs round-major, `plan::expand`), so that the growth fit's blocks
//! are whole rounds. The budget prices the plan with the plan's own
//! estimate: every run its whole window (`plan::estimate_s`), or, when runs
//! stop once converged, optimistically (`plan::estimate_converging_s`), since
//! how fast a controller converges is unknown until it runs: round 1 at the
//! smallest scale then re-prices the rest from what it measured and, without
//! `--max-n`, re-picks the largest N (`regrow.rs`). What such a plan can
//! decide comes from the fit's own arithmetic
//! (`ctrlbench_report::growth::detectable`); the fit itself is the report's.

use std::fmt::Write;

use anyhow::{Result, bail};
use ctrlbench_report::growth::{self, MIN_SCALES, MIN_SPAN};

use super::Overrides;
use super::plan;
use super::spec::{self, Experiment, Repeats, Schedule};

/// Scales a grown plan has.
pub const SCALES: usize = 4;
/// Rounds unless `--repeats` says otherwise.
pub const ROUNDS: u32 = 2;
/// The smallest scale is at least this: below it a run's fixed costs
/// (start-up, the first list) swamp the per-object ones.
pub const SMALLEST: u64 = 100;
/// `--budget-minutes` unless given.
pub const DEFAULT_BUDGET_MINUTES: f64 = 30.0;
/// `--budget-minutes` at most: a week, as `window_s`.
pub const MAX_BUDGET_MINUTES: f64 = 7.0 * 24.0 * 60.0;
/// What the apiserver and etcd hold per object besides the object itself:
/// the watch cache's entry, decoded copies, etcd's key index and revisions.
/// A generous round figure, not a measurement: a bare Widget is ~230 bytes
/// as JSON, and `pods-scale` (docs/findings.md) put 10 002 pods and their
/// owners, objects of several KiB each, at about 1.3 GiB over the idle plane.
pub const PLANE_BYTES_PER_OBJECT: u64 = 16 << 10;
/// Each object's own bytes are counted this many times on top (the watch
/// cache, etcd's revisions until compaction, the apiserver's decoded copy).
pub const OBJECT_COPIES: u64 = 4;
/// The idle plane (apiserver and etcd at rest: about 340 MiB measured,
/// findings' `run pods`), rounded up.
pub const PLANE_BASE_BYTES: u64 = 512 << 20;
/// The plane may take this share of MemAvailable; the rest is left to the
/// controllers, ctrlbench and the page cache etcd's fsyncs go through.
pub const MEMORY_SHARE: f64 = 0.5;

/// What the command line asked of `--grow`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Request {
    pub max_n: Option<u64>,
    pub budget_minutes: Option<f64>,
    pub rounds: u32,
}

impl Request {
    /// `--grow`, `--max-n` and `--budget-minutes` against the other flags:
    /// None without `--grow`; a wrong combination is one line saying what
    /// to do. The bounds that need the file are `apply`'s.
    pub fn of(o: &Overrides) -> Result<Option<Request>> {
        if !o.grow {
            if let Some(n) = o.max_n {
                bail!(
                    "--max-n {n}: it bounds the scales --grow picks; add --grow (or give the scales yourself with --scales)"
                );
            }
            if let Some(m) = o.budget_minutes {
                bail!(
                    "--budget-minutes {m}: it bounds the scales --grow picks; add --grow (or give the scales yourself with --scales)"
                );
            }
            return Ok(None);
        }
        if !o.scales.is_empty() {
            bail!(
                "--grow picks the scales itself: drop --scales (or drop --grow to run exactly those scales)"
            );
        }
        if o.until_decided {
            bail!(
                "--grow runs a fixed number of rounds across the scales: drop --until-decided (--repeats R sets the rounds)"
            );
        }
        if let Some(r) = o.repeats
            && r < 2
        {
            bail!(
                "--repeats {r}: --grow needs at least 2 rounds (each round is a block of the growth fit); give --repeats 2 or more"
            );
        }
        if let Some(n) = o.max_n
            && n > spec::top::MAX_SCALE
        {
            bail!(
                "--max-n {n}: at most {} objects per run; give a smaller --max-n",
                growth::fmt_n(spec::top::MAX_SCALE as f64)
            );
        }
        if let Some(m) = o.budget_minutes
            && !(m > 0.0 && m <= MAX_BUDGET_MINUTES)
        {
            bail!(
                "--budget-minutes {m}: must be more than 0 and at most {MAX_BUDGET_MINUTES} (a week)"
            );
        }
        Ok(Some(Request {
            max_n: o.max_n,
            budget_minutes: o.budget_minutes,
            rounds: o.repeats.unwrap_or(ROUNDS),
        }))
    }
}

/// A grown plan: what `--dry-run` prints and the runner re-estimates by.
#[derive(Debug, Clone, PartialEq)]
pub struct Grow {
    pub scales: Vec<u64>,
    pub rounds: u32,
    /// What set the largest scale ("--max-n", "the time budget", …).
    pub largest_by: String,
    /// The plan's estimate of its runs, in seconds.
    pub estimate_s: f64,
    /// The time budget the runner re-estimates against; None when
    /// `--max-n` alone set the largest scale.
    pub budget_s: Option<f64>,
    /// The most objects per run memory allows, and why (None: an existing
    /// cluster, whose memory is not this machine's).
    pub memory: Option<(u64, String)>,
    /// The plan was priced optimistically (its runs stop once converged).
    pub optimistic: bool,
    /// Without `--max-n`: the most objects a run may have (memory's or the
    /// file format's limit), up to which round 1's re-estimate may re-pick
    /// the largest scale. None: `--max-n` fixed it.
    pub ceiling: Option<u64>,
}

/// Objects that run at once: every variant's under the concurrent schedule.
fn together(exp: &Experiment) -> u64 {
    match exp.schedule {
        Schedule::Concurrent => exp.variants.len() as u64,
        Schedule::Isolated => 1,
    }
}

/// The most objects of one run the local plane can hold: half of
/// MemAvailable at [`PLANE_BYTES_PER_OBJECT`] plus the object's copies
/// each, and etcd's 8 GiB limit; with the reason in words.
fn memory_limit(exp: &Experiment, available: u64) -> (u64, String) {
    let per = PLANE_BYTES_PER_OBJECT + OBJECT_COPIES * exp.workload.object_bytes();
    let room = (available as f64 * MEMORY_SHARE) as u64;
    let usable = room
        .saturating_sub(PLANE_BASE_BYTES)
        .saturating_sub(exp.background_objects.saturating_mul(per));
    let by_memory = usable / per / together(exp);
    let bytes = exp.workload.object_bytes();
    let mut by_etcd = spec::top::MAX_SCALE;
    while by_etcd > 0
        && spec::etcd_estimate(by_etcd * together(exp) + exp.background_objects, bytes)
            > spec::ETCD_MAX_QUOTA
    {
        by_etcd = by_etcd * 9 / 10;
    }
    if by_etcd < by_memory {
        return (
            by_etcd,
            format!("etcd's 8 GiB limit at {bytes} bytes an object"),
        );
    }
    (
        by_memory,
        format!(
            "the apiserver and etcd at about {:.0} KiB an object, in half of the {:.1} GiB available",
            per as f64 / 1024.0,
            available as f64 / (1u64 << 30) as f64
        ),
    )
}

/// `v` to two significant figures: rounded, or floored.
pub fn two_figures(v: f64, floor: bool) -> u64 {
    if v < 100.0 {
        return v.round() as u64;
    }
    let unit = 10f64.powi(v.log10().floor() as i32 - 1);
    let q = v / unit;
    ((if floor { q.floor() } else { q.round() }) * unit) as u64
}

/// `SCALES` scales from `smallest` to `largest`, geometric, the middle
/// ones to two significant figures.
pub fn geometric(smallest: u64, largest: u64) -> Vec<u64> {
    let ratio = (largest as f64 / smallest as f64).powf(1.0 / (SCALES - 1) as f64);
    let mut v: Vec<u64> = (0..SCALES)
        .map(|i| match i {
            0 => smallest,
            i if i == SCALES - 1 => largest,
            i => two_figures(smallest as f64 * ratio.powi(i as i32), false),
        })
        .collect();
    v.dedup();
    v
}

/// The plan's estimate, in seconds, of `exp` over these scales: each run
/// its whole window, or optimistic when runs stop once converged.
fn estimate(exp: &Experiment, scales: Vec<u64>) -> f64 {
    let mut e = exp.clone();
    e.scales = scales;
    let runs = plan::expand(&e);
    if e.stop_when_converged {
        plan::estimate_converging_s(&e, &runs)
    } else {
        plan::estimate_s(&e, &runs)
    }
}

/// Replaces `exp`'s scales and repeats with a grown plan, and records it in
/// `exp.grow` (the plan then runs round-major). `available` is MemAvailable
/// (None: unknown, or an existing cluster). A plan that cannot span 10× in
/// `MIN_SCALES` scales is one line saying what to change.
pub fn apply(exp: &mut Experiment, req: &Request, available: Option<u64>) -> Result<()> {
    let smallest = exp.scales.iter().copied().min().unwrap_or(1).max(SMALLEST);
    let least = smallest * MIN_SPAN as u64;
    if least > spec::top::MAX_SCALE {
        bail!(
            "--grow: the file's smallest scale, {smallest}, leaves no 10× range up to {}; give it a scale of {} or less",
            growth::fmt_n(spec::top::MAX_SCALE as f64),
            spec::top::MAX_SCALE / MIN_SPAN as u64
        );
    }
    exp.repeats = Repeats::Fixed(req.rounds);
    let memory = available
        .filter(|_| exp.is_local())
        .map(|a| memory_limit(exp, a));
    if let Some((n, why)) = &memory
        && *n < least
    {
        bail!(
            "--grow: this machine's memory allows about {} objects a run ({why}), under 10× the smallest scale ({smallest}): free memory, or run on a larger machine",
            growth::fmt_n(*n as f64)
        );
    }
    let cap = memory
        .as_ref()
        .map_or(spec::top::MAX_SCALE, |(n, _)| *n)
        .min(spec::top::MAX_SCALE);
    let minutes = |s: f64| s / 60.0;
    let budget_s = req.budget_minutes.map(|m| m * 60.0);
    let (largest, largest_by) = match req.max_n {
        Some(n) => {
            if n < least {
                bail!(
                    "--max-n {n}: under 10× the smallest scale ({smallest}), so no 10× range to fit; give --max-n {least} or more"
                );
            }
            if n > cap {
                let why = memory.as_ref().map_or(String::new(), |(_, w)| w.clone());
                bail!(
                    "--max-n {n}: this machine's memory allows about {} objects a run ({why}); give --max-n {} or less",
                    growth::fmt_n(cap as f64),
                    two_figures(cap as f64, true)
                );
            }
            let est = estimate(exp, geometric(smallest, n));
            if let Some(b) = budget_s
                && est > b
            {
                bail!(
                    "--max-n {n}: the plan takes about {:.0} min by its estimate, beyond --budget-minutes {}; give more minutes or a smaller --max-n",
                    minutes(est).ceil(),
                    minutes(b)
                );
            }
            (n, "--max-n".to_string())
        }
        None => {
            let b = budget_s.unwrap_or(DEFAULT_BUDGET_MINUTES * 60.0);
            // Runs that stop once converged: the first guess stays within
            // what could converge in the window at the plan's create rate.
            let by_window = exp
                .stop_when_converged
                .then(|| plan::most_converging(exp, together(exp)))
                .filter(|&w| w < cap);
            if let Some(w) = by_window
                && w < least
            {
                bail!(
                    "--grow: within window_s = {} s, at {} creates a second and as long again to converge, a run can bring about {} objects to Ready, under 10× the smallest scale ({smallest}): raise window_s",
                    exp.window_s,
                    plan::create_rate(),
                    growth::fmt_n(w as f64)
                );
            }
            let cap = by_window.unwrap_or(cap);
            let fits = |l: u64| estimate(exp, geometric(smallest, l)) <= b;
            if !fits(least) {
                bail!(
                    "--grow: the smallest plan, {SCALES} scales over N = {smallest}–{least} in {} rounds, takes about {:.0} min by the plan's estimate, beyond the budget of {} min; give --budget-minutes {:.0} or more",
                    req.rounds,
                    minutes(estimate(exp, geometric(smallest, least))).ceil(),
                    minutes(b),
                    minutes(estimate(exp, geometric(smallest, least))).ceil()
                );
            }
            if fits(cap) {
                let by = match (&memory, by_window) {
                    (_, Some(_)) => format!(
                        "the window (window_s = {} s, at {} creates a second and as long again to converge)",
                        exp.window_s,
                        plan::create_rate()
                    ),
                    (Some((n, why)), None) if *n <= spec::top::MAX_SCALE => {
                        format!("memory ({why})")
                    }
                    _ => "the most objects a run may create".to_string(),
                };
                (two_figures(cap as f64, true).max(least), by)
            } else {
                // The largest N that fits: fits(lo), !fits(hi).
                let (mut lo, mut hi) = (least, cap);
                while hi - lo > 1 {
                    let mid = lo + (hi - lo) / 2;
                    if fits(mid) { lo = mid } else { hi = mid }
                }
                let rounded = two_figures(lo as f64, true).max(least);
                (rounded, "the time budget".to_string())
            }
        }
    };
    exp.scales = geometric(smallest, largest);
    if exp.scales.len() < MIN_SCALES {
        bail!(
            "--grow: only {} distinct scales over N = {smallest}–{largest}; give a larger --max-n",
            exp.scales.len()
        );
    }
    // Round 1 may raise the largest up to the ceiling: etcd's quota is
    // set for that before the plane starts.
    let ceiling = req.max_n.is_none().then(|| two_figures(cap as f64, true));
    etcd_quota(exp, ceiling.unwrap_or(largest));
    let estimate_s = estimate(exp, exp.scales.clone());
    exp.grow = Some(Grow {
        scales: exp.scales.clone(),
        rounds: req.rounds,
        largest_by,
        estimate_s,
        budget_s: match req.max_n {
            Some(_) => budget_s,
            None => Some(budget_s.unwrap_or(DEFAULT_BUDGET_MINUTES * 60.0)),
        },
        memory,
        optimistic: exp.stop_when_converged,
        ceiling,
    });
    Ok(())
}

/// etcd's largest quota when the grown scales need more than its default,
/// as the file's own check gives it for the file's scales.
fn etcd_quota(exp: &mut Experiment, largest: u64) {
    let objects = largest * together(exp) + exp.background_objects;
    let need = spec::etcd_estimate(objects, exp.workload.object_bytes());
    let local = exp.is_local();
    let c = &mut exp.cluster;
    if local
        && need > spec::ETCD_DEFAULT_QUOTA
        && !c
            .etcd_args
            .iter()
            .any(|a| a.starts_with("--quota-backend-bytes"))
    {
        c.etcd_args
            .push(format!("--quota-backend-bytes={}", spec::ETCD_MAX_QUOTA));
    }
}

/// "100, 460, 2200, 10 000".
pub fn list(scales: &[u64]) -> String {
    scales
        .iter()
        .map(|n| growth::fmt_n(*n as f64))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What `--dry-run` prints of a grown plan: the scales and rounds, what set
/// the largest, the estimate against the budget, and the smallest exponent
/// difference the plan can decide.
pub fn render(g: &Grow, growth_margin: f64) -> String {
    let mut s = String::new();
    let (lo, hi) = (g.scales[0], g.scales[g.scales.len() - 1]);
    let _ = writeln!(
        s,
        "grow: {} scales, N = {} (geometric, {:.0}×), {} rounds, each round visiting every scale before the next starts",
        g.scales.len(),
        list(&g.scales),
        hi as f64 / lo as f64,
        g.rounds
    );
    let mut largest = format!(
        "grow: the largest N, {}, set by {}",
        growth::fmt_n(hi as f64),
        g.largest_by
    );
    if let Some((n, why)) = &g.memory
        && !g.largest_by.starts_with("memory")
    {
        let _ = write!(
            largest,
            "; memory would allow about {} ({why})",
            growth::fmt_n(two_figures(*n as f64, true) as f64)
        );
    }
    let _ = writeln!(s, "{largest}");
    let _ = writeln!(
        s,
        "grow: the runs take about {:.1} min by the plan's estimate{}{}",
        g.estimate_s / 60.0,
        if g.optimistic {
            " (optimistic, as runs stop once converged: each run's creates at the plan's rate and as long again to converge)"
        } else {
            ""
        },
        match (g.budget_s, g.ceiling) {
            (Some(b), Some(c)) => format!(
                ", within a budget of {} min; round 1 at N = {} re-prices the rest from what it measured and re-picks the largest N, up to {}",
                b / 60.0,
                growth::fmt_n(lo as f64),
                growth::fmt_n(c as f64)
            ),
            (Some(b), None) => format!(
                ", within a budget of {} min; re-estimated after round 1 at N = {}, from what it measured",
                b / 60.0,
                growth::fmt_n(lo as f64)
            ),
            _ => String::new(),
        }
    );
    let spread = ctrlbench_report::evidence::DEFAULT_SPREAD.s;
    let scales: Vec<f64> = g.scales.iter().map(|n| *n as f64).collect();
    let df = g.rounds as usize * scales.len() - g.rounds as usize - 1;
    match growth::detectable(&scales, g.rounds, spread, growth::ALPHA, growth::POWER) {
        Some(d) => {
            let _ = writeln!(
                s,
                "grow: the smallest exponent difference it can decide: {d:.2} (one-sided α = {}, power {}, {df} degrees of freedom, a run's spread {spread:.2} in ln units: the machine's default, a pair's, so on the safe side); the growth margin δ is {growth_margin}",
                growth::ALPHA,
                growth::POWER
            );
        }
        None => {
            let _ = writeln!(s, "grow: too few runs for the growth fit's interval");
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exp(top: &str) -> Experiment {
        let text = format!(
            "name = \"t\"\nscales = [50]\nwindow_s = 10\n{top}[[variant]]\nname = \"a\"\npreset = \"good\"\n"
        );
        spec::parse(std::path::Path::new("t.toml"), &text).unwrap()
    }

    fn grow(max_n: Option<u64>, minutes: Option<f64>) -> Overrides {
        Overrides {
            grow: true,
            max_n,
            budget_minutes: minutes,
            ..Overrides::default()
        }
    }

    const GIB: u64 = 1 << 30;

    #[test]
    fn scales_are_geometric_to_two_figures() {
        assert_eq!(geometric(100, 10_000), [100, 460, 2200, 10_000]);
        assert_eq!(geometric(100, 1000), [100, 220, 460, 1000]);
        assert_eq!(two_figures(23_456.0, true), 23_000);
        assert_eq!(two_figures(23_556.0, false), 24_000);
    }

    /// --max-n sets the largest scale; the smallest is 100 though the
    /// file's is 50; rounds 2 unless --repeats; the plan goes round-major.
    #[test]
    fn max_n_sets_the_largest_and_the_rounds_run_across_the_scales() {
        let mut e = exp("repeats = 5\n");
        let r = Request::of(&grow(Some(10_000), None)).unwrap().unwrap();
        apply(&mut e, &r, Some(16 * GIB)).unwrap();
        assert_eq!(e.scales, [100, 460, 2200, 10_000]);
        assert_eq!(e.repeats, Repeats::Fixed(2));
        let g = e.grow.clone().unwrap();
        assert_eq!((g.largest_by.as_str(), g.budget_s), ("--max-n", None));
        let order: Vec<(u32, u64)> = plan::expand(&e)
            .iter()
            .map(|r| (r.repeat, r.scale))
            .collect();
        let want: Vec<(u32, u64)> = [1, 2]
            .iter()
            .flat_map(|&k| e.scales.iter().map(move |&n| (k, n)))
            .collect();
        assert_eq!(order, want, "each round visits every scale before the next");
        let text = render(&g, 0.15);
        assert!(text.contains("N = 100, 460, 2200, 10 000 (geometric, 100×), 2 rounds"));
        assert!(text.contains("decide: 0.18 ("), "{text}");
    }

    /// Without --max-n the budget sets the largest N: the estimate of the
    /// plan fits it, and a plan 10 % larger would not.
    #[test]
    fn the_budget_sets_the_largest_when_max_n_is_not_given() {
        let mut e = exp("");
        let r = Request::of(&grow(None, Some(5.0))).unwrap().unwrap();
        apply(&mut e, &r, Some(64 * GIB)).unwrap();
        let g = e.grow.clone().unwrap();
        assert_eq!(g.largest_by, "the time budget");
        assert!(g.estimate_s <= 300.0, "{g:?}");
        let hi = *e.scales.last().unwrap();
        assert!(hi >= 1000, "{g:?}");
        assert!(estimate(&e, geometric(100, hi * 11 / 10)) > 300.0, "{g:?}");
        // Little memory: memory sets it.
        let mut e = exp("");
        apply(&mut e, &r, Some(GIB + GIB / 4)).unwrap();
        assert!(e.grow.unwrap().largest_by.starts_with("memory ("));
    }

    /// Runs that stop once converged are priced optimistically. Each run
    /// of this file priced at its whole 1200 s window, the least plan
    /// (1000–10 000, 8 runs) would take 160 min, far beyond the default 30;
    /// priced at its creates (300/s) twice, plus the quiet 3 s and 6 s of
    /// overhead, 1000, 2200, 4600, 10 000 in 2 rounds take 2 × 17 800 / 300
    /// × 2 + 8 × 9 + 5 = 314 s. So the plan reaches at least 10 000, and
    /// round 1 may re-pick its largest N up to memory's ceiling.
    #[test]
    fn converging_runs_are_priced_optimistically_and_re_picked_after_round_1() {
        let file = "name = \"t\"\nscales = [1000]\nwindow_s = 1200\nstop_when_converged = true\n[[variant]]\nname = \"a\"\npreset = \"good\"\n";
        let parse = || spec::parse(std::path::Path::new("t.toml"), file).unwrap();
        let mut e = parse();
        let r = Request::of(&grow(None, None)).unwrap().unwrap();
        apply(&mut e, &r, Some(16 * GIB)).unwrap();
        let g = e.grow.clone().unwrap();
        assert!(g.optimistic, "{g:?}");
        assert!(*e.scales.last().unwrap() >= 10_000, "{g:?}");
        assert!(g.estimate_s <= 1800.0, "{g:?}");
        let (n, _) = g.memory.clone().unwrap();
        assert_eq!(
            g.ceiling,
            Some(two_figures(n.min(spec::top::MAX_SCALE) as f64, true))
        );
        let mut least = e.clone();
        least.scales = vec![1000, 2200, 4600, 10_000];
        let runs = plan::expand(&least);
        assert!((plan::estimate_converging_s(&least, &runs) - 314.0).abs() < 1.0);
        assert!(plan::estimate_s(&least, &runs) > 160.0 * 60.0);
        let text = render(&g, 0.15);
        assert!(
            text.contains("(optimistic, as runs stop once converged"),
            "{text}"
        );
        assert!(text.contains("re-picks the largest N, up to"), "{text}");
        // A 120 s window: (120 − 3) / 2 s of creates at 300/s is 17 550
        // objects, the most the first guess may plan; a 6 s window holds
        // 450, under 10× the smallest, 100.
        let short = |window: &str| {
            let text = file.replace("window_s = 1200", &format!("window_s = {window}"));
            let mut e = spec::parse(std::path::Path::new("t.toml"), &text).unwrap();
            e.scales = vec![100];
            apply(&mut e, &r, Some(16 * GIB)).map(|_| e)
        };
        let e = short("120").unwrap();
        assert!(*e.scales.last().unwrap() <= 17_550, "{:?}", e.scales);
        assert!(
            e.grow
                .unwrap()
                .largest_by
                .starts_with("the window (window_s = 120 s")
        );
        let err = short("6").unwrap_err().to_string();
        assert!(
            err.contains("bring about 450 objects to Ready, under 10× the smallest scale (100): raise window_s"),
            "{err}"
        );
        // --max-n fixes the largest: nothing to re-pick.
        let mut e = parse();
        let r = Request::of(&grow(Some(10_000), None)).unwrap().unwrap();
        apply(&mut e, &r, Some(16 * GIB)).unwrap();
        assert_eq!(e.grow.unwrap().ceiling, None);
    }

    #[test]
    fn each_impossible_plan_is_one_line_saying_what_to_do() {
        let o = |f: &dyn Fn(&mut Overrides)| {
            let mut o = grow(None, None);
            f(&mut o);
            Request::of(&o).map(|_| ()).unwrap_err().to_string()
        };
        for (got, want) in [
            (
                o(&|o| o.scales = vec![100]),
                "--grow picks the scales itself",
            ),
            (o(&|o| o.until_decided = true), "--grow runs a fixed number"),
            (o(&|o| o.repeats = Some(1)), "--repeats 1: --grow needs"),
            (
                o(&|o| o.max_n = Some(2_000_000)),
                "--max-n 2000000: at most",
            ),
            (
                o(&|o| o.budget_minutes = Some(0.0)),
                "--budget-minutes 0: must",
            ),
            (
                o(&|o| {
                    o.grow = false;
                    o.max_n = Some(10)
                }),
                "--max-n 10: it bounds",
            ),
            (
                o(&|o| {
                    o.grow = false;
                    o.budget_minutes = Some(3.0)
                }),
                "--budget-minutes 3: it bounds",
            ),
        ] {
            assert!(got.starts_with(want), "{got}");
        }
        let fails =
            |r: Request, mem: u64| apply(&mut exp(""), &r, Some(mem)).unwrap_err().to_string();
        let r = |max_n, budget_minutes| Request {
            max_n,
            budget_minutes,
            rounds: 2,
        };
        let e = fails(r(Some(999), None), 16 * GIB);
        assert!(
            e.starts_with("--max-n 999: under 10× the smallest scale (100)"),
            "{e}"
        );
        assert!(e.contains("give --max-n 1000 or more"), "{e}");
        let e = fails(r(None, Some(0.5)), 16 * GIB);
        assert!(
            e.contains("beyond the budget of 0.5 min; give --budget-minutes"),
            "{e}"
        );
        let e = fails(r(Some(1_000_000), Some(10.0)), 64 * GIB);
        assert!(e.contains("beyond --budget-minutes 10"), "{e}");
        let e = fails(r(Some(1_000_000), None), 2 * GIB);
        assert!(e.contains("memory allows about"), "{e}");
        let e = fails(r(None, None), GIB);
        assert!(e.contains("under 10× the smallest scale (100)"), "{e}");
        let mut big = exp("");
        big.scales = vec![200_000];
        let e = apply(&mut big, &r(None, None), None)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("leaves no 10× range up to 1 000 000; give it a scale of 100000 or less"),
            "{e}"
        );
    }
}
