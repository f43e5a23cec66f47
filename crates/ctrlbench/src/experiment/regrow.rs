//! `run --grow`'s second look at its budget. The plan was priced by the
//! model (`grow.rs`: every run its whole window, or an optimistic guess
//! when runs stop once converged); once round 1 has run at the smallest
//! scale, the runner knows what a run costs on this machine: its wall
//! time, its observation span, how long its creates took and how long it
//! took to converge. Each remaining run is re-estimated as that run's wall
//! time plus the creates beyond its span and a time to converge in
//! proportion to N. Without `--max-n` the largest scale is then re-picked:
//! the largest N, up to memory's ceiling, whose geometric plan fits the time
//! budget and converges within the window, raised or lowered. With it, the
//! largest scales are dropped until the rest fits, keeping at least
//! `MIN_SCALES` scales spanning `MIN_SPAN`. When even that does not fit,
//! the experiment stops. One line says which. Not here: the plan
//! (`grow.rs`), the runs (`run/session.rs` calls [`Watch`]).

use std::time::{Duration, Instant};

use ctrlbench_record::summary::Summary;
use ctrlbench_report::growth::{MIN_SCALES, MIN_SPAN, fmt_n};

use super::grow::{geometric, list, two_figures};
use super::plan;
use super::spec::Experiment;

/// One run of round 1 at the smallest scale, as measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// The plan's variant group (`plan::Run::variants`).
    pub variants: Vec<usize>,
    /// Wall time of the whole run: start-up, window, phases, teardown.
    pub wall_s: f64,
    /// The observation span (summary.json's `elapsed_s`), the longest of its variants'.
    pub span_s: f64,
    /// The creates' seconds (summary.json's `load.seconds`), the longest.
    pub load_s: f64,
    /// Seconds from the load's start to Ready == N (summary.json's
    /// `convergence_s`), the longest; the span's part that grows with N
    /// (the rest, the quiet wait and the window's end, does not). None:
    /// some run did not converge.
    pub converge_s: Option<f64>,
}

/// What the re-estimate decides, with its line.
#[derive(Debug, Clone, PartialEq)]
pub enum Regrow {
    Keep(String),
    Drop(Vec<u64>, String),
    /// The plan's scales re-picked, index for index.
    Rescale(Vec<u64>, String),
    Stop(String),
}

/// `run`'s seconds re-estimated from `m`, measured at `n1` objects: the
/// measured cost, plus the creates beyond its span, plus (when runs stop
/// once converged) a span that grows in proportion to N, up to the window.
fn predict(m: &Measured, n1: u64, run: &plan::Run, window: Option<f64>) -> f64 {
    let grow = run.scale as f64 / n1 as f64;
    let creates = m.load_s * grow;
    let span = match window {
        Some(w) => span_at(m, grow).min(w).max(m.span_s),
        None => m.span_s,
    };
    m.wall_s + (span - m.span_s) + (creates - span.max(m.load_s)).max(0.0)
}

/// A converging run's span at `grow` times the measured N: its time to
/// converge grows in proportion, the rest of its span does not.
fn span_at(m: &Measured, grow: f64) -> f64 {
    let converge = m.converge_s.unwrap_or(m.span_s).min(m.span_s);
    m.span_s - converge + converge * grow
}

/// The share of the window a run is planned to converge in: its time to
/// converge is extrapolated from one small run, and a run that does not
/// converge has no figure to fit. (The fixture operator's 4900-object
/// runs, planned from its 100-object ones at 108 s, took 111.)
pub const WINDOW_SHARE: f64 = 0.8;

/// The scales whose runs would not converge within [`WINDOW_SHARE`] of
/// `window` seconds, if a run's span grows in proportion to N from what
/// `measured` took at `n1`.
fn beyond_window(scales: &[u64], n1: u64, measured: &[Measured], window: f64) -> Vec<u64> {
    scales
        .iter()
        .copied()
        .filter(|&n| {
            measured
                .iter()
                .any(|m| span_at(m, n as f64 / n1 as f64) > WINDOW_SHARE * window)
        })
        .collect()
}

/// `runs`' seconds re-estimated from `measured` at `n1` (each run by the
/// measurement of its own variant group, else the slowest).
fn rest_s(measured: &[Measured], n1: u64, runs: &[plan::Run], window: Option<f64>) -> f64 {
    let Some(slowest) = measured.iter().max_by(|a, b| a.wall_s.total_cmp(&b.wall_s)) else {
        return 0.0;
    };
    runs.iter()
        .map(|r| {
            let m = measured
                .iter()
                .find(|m| m.variants == r.variants)
                .unwrap_or(slowest);
            predict(m, n1, r, window)
        })
        .sum()
}

/// `runs` with each of the plan's `scales` replaced by its counterpart in
/// `new` (same index).
pub fn rescaled(runs: &[plan::Run], scales: &[u64], new: &[u64]) -> Vec<plan::Run> {
    runs.iter()
        .map(|r| plan::Run {
            scale: scales
                .iter()
                .position(|&n| n == r.scale)
                .and_then(|i| new.get(i).copied())
                .unwrap_or(r.scale),
            ..r.clone()
        })
        .collect()
}

/// Re-estimates `rest` (the runs still to come) from `measured` (round 1 at
/// `n1`) after `elapsed_s` of a `budget_s` budget, over the plan's `scales`;
/// with a `ceiling` (no `--max-n`), re-picks the largest scale up to it.
#[allow(clippy::too_many_arguments)]
pub fn regrow(
    scales: &[u64],
    budget_s: f64,
    n1: u64,
    measured: &[Measured],
    rest: &[plan::Run],
    elapsed_s: f64,
    window: Option<f64>,
    ceiling: Option<u64>,
) -> Regrow {
    if measured.is_empty() {
        return Regrow::Keep(
            "grow: nothing measured at the smallest scale to re-estimate from".into(),
        );
    }
    let per_object_ms = measured.iter().map(|m| m.load_s).fold(0.0, f64::max) / n1 as f64 * 1e3;
    let mean_wall = measured.iter().map(|m| m.wall_s).sum::<f64>() / measured.len() as f64;
    let head = format!(
        "grow: re-estimated after round 1 at N = {} ({per_object_ms:.2} ms per object created, {mean_wall:.0} s a run)",
        fmt_n(n1 as f64)
    );
    let total = |kept: &[u64]| -> f64 {
        let runs: Vec<plan::Run> = rest
            .iter()
            .filter(|r| kept.contains(&r.scale))
            .cloned()
            .collect();
        rest_s(measured, n1, &runs, window)
    };
    let min = |s: f64| s / 60.0;
    let budget = format!(
        "the budget of {} min ({:.1} min used)",
        min(budget_s),
        min(elapsed_s)
    );
    if let Some(ceiling) = ceiling {
        return repick(
            scales, budget_s, n1, measured, rest, elapsed_s, window, ceiling, &head, &budget,
        );
    }
    let mut kept: Vec<u64> = scales.to_vec();
    let mut dropped: Vec<u64> = Vec::new();
    let mut slow: Vec<u64> = Vec::new();
    // A run that would not converge within its window has no figure to fit.
    if let Some(w) = window {
        slow = beyond_window(scales, n1, measured, w);
        let fewer: Vec<u64> = kept.iter().copied().filter(|n| !slow.contains(n)).collect();
        if !slow.is_empty() {
            if fewer.len() < MIN_SCALES
                || (fewer[fewer.len() - 1] as f64) < fewer[0] as f64 * MIN_SPAN
            {
                return Regrow::Stop(format!(
                    "{head}: at that pace N = {} would not converge within 80 % of the window of {w:.0} s, and fewer scales would not span {MIN_SPAN}× in {MIN_SCALES}: stopping; raise window_s or give a smaller --max-n",
                    list(&slow)
                ));
            }
            eprintln!(
                "{head}: at that pace N = {} would not converge within 80 % of the window of {w:.0} s: dropped",
                list(&slow)
            );
            kept = fewer;
        }
    }
    loop {
        let rest_s = total(&kept);
        if elapsed_s + rest_s <= budget_s {
            if dropped.is_empty() && slow.is_empty() {
                return Regrow::Keep(format!(
                    "{head}: the rest takes about {:.1} min, within {budget}; every scale kept",
                    min(rest_s)
                ));
            }
            let why = if dropped.is_empty() {
                format!("the rest fits {budget}")
            } else {
                dropped.sort_unstable();
                format!("N = {} would not fit {budget}; dropped", list(&dropped))
            };
            let mut all: Vec<u64> = dropped.iter().chain(&slow).copied().collect();
            all.sort_unstable();
            return Regrow::Drop(
                all,
                format!(
                    "{head}: {why}, running N = {} ({:.0}×, about {:.1} min more)",
                    list(&kept),
                    kept[kept.len() - 1] as f64 / kept[0] as f64,
                    min(rest_s)
                ),
            );
        }
        let fewer = &kept[..kept.len() - 1];
        if fewer.len() < MIN_SCALES || (fewer[fewer.len() - 1] as f64) < kept[0] as f64 * MIN_SPAN {
            return Regrow::Stop(format!(
                "{head}: even N = {} would take about {:.1} min more, beyond {budget}, and fewer scales would not span {MIN_SPAN}× in {MIN_SCALES}: stopping; give --budget-minutes {:.0} or more",
                list(&kept),
                min(rest_s),
                min(elapsed_s + rest_s).ceil()
            ));
        }
        dropped.push(kept.pop().expect("more than MIN_SCALES scales"));
    }
}

/// Without `--max-n`: the largest N up to `ceiling` whose geometric plan
/// from `n1` fits the budget and converges within the window, so the plan
/// grows when round 1 ran faster than the first guess and shrinks when
/// slower.
#[allow(clippy::too_many_arguments)]
fn repick(
    scales: &[u64],
    budget_s: f64,
    n1: u64,
    measured: &[Measured],
    rest: &[plan::Run],
    elapsed_s: f64,
    window: Option<f64>,
    ceiling: u64,
    head: &str,
    budget: &str,
) -> Regrow {
    let min = |s: f64| s / 60.0;
    let least = (n1 as f64 * MIN_SPAN).ceil() as u64;
    let converges =
        |new: &[u64]| window.is_none_or(|w| beyond_window(new, n1, measured, w).is_empty());
    let more_s = |new: &[u64]| rest_s(measured, n1, &rescaled(rest, scales, new), window);
    let fits = |l: u64| {
        let new = geometric(n1, l);
        converges(&new) && elapsed_s + more_s(&new) <= budget_s
    };
    let smallest = geometric(n1, least);
    if !converges(&smallest) {
        return Regrow::Stop(format!(
            "{head}: at that pace even N = {} would not converge within 80 % of the window of {:.0} s: stopping; raise window_s",
            list(&smallest),
            window.unwrap_or(0.0)
        ));
    }
    if !fits(least) {
        return Regrow::Stop(format!(
            "{head}: even N = {} would take about {:.1} min more, beyond {budget}: stopping; give --budget-minutes {:.0} or more",
            list(&smallest),
            min(more_s(&smallest)),
            min(elapsed_s + more_s(&smallest)).ceil()
        ));
    }
    // The largest N up to the ceiling that `ok` accepts (ok(least) holds).
    let largest = |ok: &dyn Fn(u64) -> bool| {
        if ok(ceiling) {
            return ceiling;
        }
        let (mut lo, mut hi) = (least, ceiling);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if ok(mid) { lo = mid } else { hi = mid }
        }
        lo
    };
    let by_window = largest(&|l| converges(&geometric(n1, l)));
    let by_budget = largest(&|l| fits(l));
    let chosen = two_figures(by_budget as f64, true).max(least);
    let new = geometric(n1, chosen);
    let why = if by_budget >= ceiling {
        format!(
            "the largest N, {}, is the most a run may have",
            fmt_n(chosen as f64)
        )
    } else if by_budget == by_window && window.is_some() {
        format!(
            "the largest N whose runs converge within 80 % of the window of {:.0} s is {}",
            window.unwrap_or(0.0),
            fmt_n(chosen as f64)
        )
    } else {
        format!(
            "the largest N that fits {budget} is {}",
            fmt_n(chosen as f64)
        )
    };
    if new == scales {
        return Regrow::Keep(format!(
            "{head}: {why}, as planned; the rest takes about {:.1} min",
            min(more_s(&new))
        ));
    }
    Regrow::Rescale(
        new.clone(),
        format!(
            "{head}: {why}: running N = {} ({:.0}×, about {:.1} min more) instead of N = {}",
            list(&new),
            new[new.len() - 1] as f64 / new[0] as f64,
            min(more_s(&new)),
            list(scales)
        ),
    )
}

/// The runner's side: which scales are dropped, and the measurements of
/// round 1 at the smallest scale until its last run, when it re-estimates.
pub struct Watch {
    scales: Vec<u64>,
    budget_s: f64,
    ceiling: Option<u64>,
    started: Instant,
    measured: Vec<Measured>,
    done: bool,
    dropped: Vec<u64>,
    /// The re-estimate's line, until the runner records it.
    line: Option<String>,
}

impl Watch {
    /// For a grown experiment with a time budget; None otherwise.
    pub fn new(exp: &Experiment) -> Option<Watch> {
        let g = exp.grow.as_ref()?;
        Some(Watch {
            scales: g.scales.clone(),
            budget_s: g.budget_s?,
            ceiling: g.ceiling,
            started: Instant::now(),
            measured: Vec::new(),
            done: false,
            dropped: Vec::new(),
            line: None,
        })
    }

    /// The re-estimate's line once it was made, for manifest.json.
    pub fn take_line(&mut self) -> Option<String> {
        self.line.take()
    }

    /// Whether the runs of `scale` were dropped.
    pub fn skips(&self, scale: u64) -> bool {
        self.dropped.contains(&scale)
    }

    /// After `run`, which took `wall`; `last_of_block` when it ends its
    /// (scale, repeat), `summaries` every run's so far, `rest` the runs
    /// after it. At the end of round 1 at the smallest scale: the
    /// re-estimate, its line printed; Ok(Some(scales)) when the plan's
    /// scales were re-picked (index for index), Err(line) to stop the
    /// experiment.
    pub fn after_run(
        &mut self,
        exp: &Experiment,
        run: &plan::Run,
        wall: Duration,
        last_of_block: bool,
        summaries: &[Summary],
        rest: &[plan::Run],
    ) -> Result<Option<Vec<u64>>, String> {
        let n1 = self.scales[0];
        if self.done || run.repeat != 1 || run.scale != n1 {
            return Ok(None);
        }
        let mine: Vec<&Summary> = summaries
            .iter()
            .filter(|s| (s.scale, s.repeat) == (run.scale, run.repeat))
            .filter(|s| {
                run.variants
                    .iter()
                    .any(|&v| exp.variants[v].name == s.variant)
            })
            .collect();
        let longest = |f: fn(&Summary) -> f64| mine.iter().map(|s| f(s)).fold(0.0, f64::max);
        self.measured.push(Measured {
            variants: run.variants.clone(),
            wall_s: wall.as_secs_f64(),
            span_s: longest(|s| s.elapsed_s),
            load_s: longest(|s| s.load.seconds),
            converge_s: mine
                .iter()
                .map(|s| s.convergence_s)
                .try_fold(0.0, |a: f64, c| c.map(|c| a.max(c))),
        });
        if !last_of_block {
            return Ok(None);
        }
        self.done = true;
        let elapsed = self.started.elapsed().as_secs_f64();
        let window = exp.stop_when_converged.then_some(exp.window_s);
        match regrow(
            &self.scales,
            self.budget_s,
            n1,
            &self.measured,
            rest,
            elapsed,
            window,
            self.ceiling,
        ) {
            Regrow::Keep(line) => {
                eprintln!("{line}");
                self.line = Some(line);
            }
            Regrow::Drop(scales, line) => {
                eprintln!("{line}");
                self.line = Some(line);
                self.dropped = scales;
            }
            Regrow::Rescale(scales, line) => {
                eprintln!("{line}");
                self.line = Some(line);
                return Ok(Some(scales));
            }
            Regrow::Stop(line) => return Err(line),
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCALES: [u64; 4] = [100, 460, 2200, 10_000];

    /// Round 1's other scales and round 2, one variant.
    fn rest() -> Vec<plan::Run> {
        let mut v = Vec::new();
        for k in [1, 2] {
            for n in SCALES {
                if (n, k) != (100, 1) {
                    v.push(plan::Run {
                        scale: n,
                        repeat: k,
                        variants: vec![0],
                    });
                }
            }
        }
        v
    }

    /// A run of 20 s wall, a 10 s window, creates at `ms` per object.
    fn measured(ms: f64) -> Vec<Measured> {
        vec![Measured {
            variants: vec![0],
            wall_s: 20.0,
            span_s: 10.0,
            load_s: ms * 100.0 / 1e3,
            converge_s: None,
        }]
    }

    #[test]
    fn a_run_is_its_measured_cost_plus_the_creates_beyond_its_span() {
        let m = &measured(5.0)[0];
        let run = |n| plan::Run {
            scale: n,
            repeat: 1,
            variants: vec![0],
        };
        // 2200 × 5 ms = 11 s of creates: 1 s beyond the 10 s span.
        assert!((predict(m, 100, &run(2200), None) - 21.0).abs() < 1e-9);
        assert!((predict(m, 100, &run(460), None) - 20.0).abs() < 1e-9);
    }

    /// 3 ms per object: 10 000 takes 30 s of creates, 20 s beyond the
    /// span, so the rest is 20 + 20 + 40 (round 1) + 20 + 20 + 20 + 40
    /// (round 2) = 180 s, and 60 s used: within 300 s.
    #[test]
    fn scales_are_kept_dropped_from_the_top_or_the_experiment_stops() {
        let r = regrow(
            &SCALES,
            300.0,
            100,
            &measured(3.0),
            &rest(),
            60.0,
            None,
            None,
        );
        let Regrow::Keep(line) = r else {
            panic!("{r:?}")
        };
        assert!(
            line.contains("(3.00 ms per object created, 20 s a run)"),
            "{line}"
        );
        assert!(
            line.contains("about 3.0 min, within the budget of 5 min (1.0 min used)"),
            "{line}"
        );
        // 20 ms per object: 10 000 costs 200 s a run, beyond the budget;
        // 100–2200 keeps 3 scales over 22×.
        let r = regrow(
            &SCALES,
            300.0,
            100,
            &measured(20.0),
            &rest(),
            60.0,
            None,
            None,
        );
        let Regrow::Drop(d, line) = r else {
            panic!("{r:?}")
        };
        assert_eq!(d, [10_000]);
        assert!(
            line.contains("N = 10 000 would not fit the budget of 5 min"),
            "{line}"
        );
        assert!(line.contains("running N = 100, 460, 2200 (22×"), "{line}");
        // A budget nearly spent: 3 scales over 10× would not fit either.
        let r = regrow(
            &SCALES,
            120.0,
            100,
            &measured(20.0),
            &rest(),
            60.0,
            None,
            None,
        );
        let Regrow::Stop(line) = r else {
            panic!("{r:?}")
        };
        assert!(line.contains("stopping; give --budget-minutes"), "{line}");
        assert!(line.contains("even N = 100, 460, 2200"), "{line}");
    }

    /// Runs that stop once converged: the span grows in proportion to N.
    /// A 2 s span at N = 100 is 200 s at 10 000, beyond 80 % of a 120 s
    /// window (96 s), so 10 000 is dropped; a 10 s span leaves only 100 and
    /// 460 within it; 0.9 s is 90 s at 10 000, within.
    #[test]
    fn scales_that_would_not_converge_within_the_window_are_dropped() {
        let m = |span: f64| {
            vec![Measured {
                variants: vec![0],
                wall_s: span + 5.0,
                span_s: span,
                load_s: 0.1,
                converge_s: None,
            }]
        };
        let run = plan::Run {
            scale: 2200,
            repeat: 1,
            variants: vec![0],
        };
        // 2 s × 22 = 44 s of span: 42 s more than measured.
        assert!((predict(&m(2.0)[0], 100, &run, Some(120.0)) - 49.0).abs() < 1e-9);
        let r = regrow(
            &SCALES,
            3600.0,
            100,
            &m(2.0),
            &rest(),
            60.0,
            Some(120.0),
            None,
        );
        let Regrow::Drop(d, _) = r else {
            panic!("{r:?}")
        };
        assert_eq!(d, [10_000]);
        let r = regrow(
            &SCALES,
            3600.0,
            100,
            &m(10.0),
            &rest(),
            60.0,
            Some(120.0),
            None,
        );
        let Regrow::Stop(line) = r else {
            panic!("{r:?}")
        };
        assert!(
            line.contains("N = 2200, 10 000 would not converge within 80 % of the window of 120 s"),
            "{line}"
        );
        let r = regrow(
            &SCALES,
            3600.0,
            100,
            &m(0.9),
            &rest(),
            60.0,
            Some(120.0),
            None,
        );
        assert!(matches!(r, Regrow::Keep(_)), "{r:?}");
    }

    /// Only the time to converge grows with N: a 6 s span of which 2 s
    /// converging is 4 + 2 × 22 = 48 s at 2200 and 204 s at 10 000.
    #[test]
    fn only_the_time_to_converge_grows_with_n() {
        let m = vec![Measured {
            variants: vec![0],
            wall_s: 8.0,
            span_s: 6.0,
            load_s: 0.1,
            converge_s: Some(2.0),
        }];
        assert!((span_at(&m[0], 22.0) - 48.0).abs() < 1e-9);
        assert_eq!(beyond_window(&SCALES, 100, &m, 120.0), [10_000]);
    }

    /// Without --max-n, round 1 re-picks the largest scale. A fast
    /// controller (0.1 s to converge at N = 100) gets the ceiling, 50 000:
    /// its runs converge in about 50 s there, far within the window and
    /// the hour. A slow one (20 s at 100, all of its span) converges in
    /// 20 s × N/100, so 80 % of a 1200 s window holds N = 4800 at most,
    /// and the plan is re-picked down to 100–4800 (ratio 48^(1/3) ≈ 3.63:
    /// 360, 1300 to two figures).
    #[test]
    fn without_max_n_round_1_re_picks_the_largest_scale() {
        let m = |span: f64, converge: f64| {
            vec![Measured {
                variants: vec![0],
                wall_s: span + 1.0,
                span_s: span,
                load_s: 0.01,
                converge_s: Some(converge),
            }]
        };
        let r = regrow(
            &SCALES,
            3600.0,
            100,
            &m(0.5, 0.1),
            &rest(),
            30.0,
            Some(1200.0),
            Some(50_000),
        );
        let Regrow::Rescale(new, line) = r else {
            panic!("{r:?}")
        };
        assert_eq!(new, [100, 790, 6300, 50_000]);
        assert!(
            line.contains("the largest N, 50 000, is the most a run may have"),
            "{line}"
        );
        assert!(
            line.contains("instead of N = 100, 460, 2200, 10 000"),
            "{line}"
        );
        let r = regrow(
            &SCALES,
            36_000.0,
            100,
            &m(20.0, 20.0),
            &rest(),
            30.0,
            Some(1200.0),
            Some(50_000),
        );
        let Regrow::Rescale(new, line) = r else {
            panic!("{r:?}")
        };
        assert_eq!(new, [100, 360, 1300, 4800]);
        assert!(
            line.contains(
                "the largest N whose runs converge within 80 % of the window of 1200 s is 4800"
            ),
            "{line}"
        );
        // The fast one against a 2-minute budget: its runs would converge
        // within the window up to the ceiling, but about 1 ms a run per
        // object (its 0.1 s to converge at 100) over 7 runs fits 1.5 min
        // only well under 50 000.
        let r = regrow(
            &SCALES,
            120.0,
            100,
            &m(0.5, 0.1),
            &rest(),
            30.0,
            Some(1200.0),
            Some(50_000),
        );
        let Regrow::Rescale(fast, line) = r else {
            panic!("{r:?}")
        };
        assert!((10_000..50_000).contains(&fast[3]), "{fast:?}");
        assert!(
            line.contains("the largest N that fits the budget of 2 min (0.5 min used) is"),
            "{line}"
        );
        // The later runs take the new scales, index for index.
        let later = rescaled(&rest(), &SCALES, &new);
        let got: Vec<(u32, u64)> = later.iter().map(|r| (r.repeat, r.scale)).collect();
        assert_eq!(
            got,
            [
                (1, 360),
                (1, 1300),
                (1, 4800),
                (2, 100),
                (2, 360),
                (2, 1300),
                (2, 4800)
            ]
        );
        // Too slow for even 100–1000 in the window, or in the budget.
        let r = regrow(
            &SCALES,
            36_000.0,
            100,
            &m(200.0, 200.0),
            &rest(),
            30.0,
            Some(1200.0),
            Some(50_000),
        );
        let Regrow::Stop(line) = r else {
            panic!("{r:?}")
        };
        assert!(
            line.contains("would not converge within 80 % of the window of 1200 s: stopping"),
            "{line}"
        );
        let r = regrow(
            &SCALES,
            60.0,
            100,
            &m(20.0, 20.0),
            &rest(),
            30.0,
            Some(1200.0),
            Some(50_000),
        );
        let Regrow::Stop(line) = r else {
            panic!("{r:?}")
        };
        assert!(line.contains("stopping; give --budget-minutes"), "{line}");
    }
}
