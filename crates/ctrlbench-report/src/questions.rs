//! The experiment's questions and their answers, which the report opens
//! with and a runner can ask after every repeat to decide whether another
//! is needed. The questions are every variant beside its counterpart preset
//! (on its question's headline figure), every rust-X / go-X pair (on
//! throughput, memory and CPU per reconcile when both ran with zero work,
//! else throughput), the pairs of the manifest's `[[goal]]`s on their
//! figures where no question above asks the same, and its `[[compare]]`
//! pairs, per scale. Each answer is B/A paired over the repeats (the variants of one
//! results directory ran interleaved) with its 95 % interval, the verdict
//! against the margin and the minimum detectable effect. How the report
//! shows them is `sections/answers.rs` and `forest.rs`.

use std::path::Path;

use anyhow::{Result, bail};
use ctrlbench_record::manifest::Evidence;

use crate::counterparts::{self, Zero};
use crate::direction::better;
use crate::evidence;
use crate::figures::{self, Group, RunFigures, interleaved};
use crate::goals::{self, RUST_GO_FIGURES};
use crate::interval::{Method, Ratio};
use crate::load::Results;
use crate::metrics::Metric;
use crate::verdict::{Verdict, decide, mde, named};

/// Where a question comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// A preset against its counterpart (deploy/presets.toml).
    Counterpart,
    /// Our Rust controller against our controller-runtime one (`rust-X` / `go-X`).
    RustGo,
    /// A pair the experiment file's `[[goal]]` speaks of.
    Goal,
    /// The experiment file's `[[compare]]`.
    Compare,
}

/// One question's answer: is B higher, lower or equivalent to A on a figure?
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    pub source: Source,
    /// "N=30 Ready/s: rust-good / go-good".
    pub label: String,
    pub scale: u64,
    pub a: String,
    pub b: String,
    /// The figure's label, as the metric catalogue names it.
    pub figure: String,
    /// B/A: the geometric mean of the per-repeat ratios (paired), or the
    /// ratio of medians (unpaired); None when not measured.
    pub ratio: Option<f64>,
    /// The 95 % interval; None with one pair or nothing measured.
    pub lo: Option<f64>,
    pub hi: Option<f64>,
    /// Repeat pairs (paired), or the smaller side's run count (unpaired).
    pub pairs: usize,
    pub paired: bool,
    pub verdict: Verdict,
    /// The minimum detectable effect at this many repeats (the interval's
    /// half-width, a fraction); None without an interval.
    pub mde: Option<f64>,
    /// Whether the figure has a better side: Some(true) when higher is better.
    pub higher_is_better: Option<bool>,
    /// The verdict as printed: "rust-good higher (better)", "undecided (±12 %)".
    pub words: String,
    /// The ratio cell as printed: "1.18 [1.16–1.19]".
    pub cell: String,
    /// What the interval rests on: "3 repeats, paired", "one repeat and the
    /// machine's spread (default)"; empty when nothing was measured.
    pub evidence: String,
}

impl Answer {
    /// The one line the report and `compare` print.
    pub fn line(&self) -> String {
        match self.ratio {
            Some(_) => format!("{} = {} — {}", self.label, self.cell, self.words),
            None => format!("{} — {}", self.label, self.words),
        }
    }

    fn of(
        source: Source,
        (a, b): (&Group, &Group),
        figure: &str,
        (r, basis): Judged,
        higher_is_better: Option<bool>,
        margin: f64,
    ) -> Answer {
        let mut ans = Answer {
            source,
            label: format!("N={} {figure}: {} / {}", a.scale, b.variant, a.variant),
            scale: a.scale,
            a: a.variant.clone(),
            b: b.variant.clone(),
            figure: figure.to_string(),
            ratio: None,
            lo: None,
            hi: None,
            pairs: 0,
            paired: true,
            verdict: Verdict::Undecided,
            mde: None,
            higher_is_better,
            words: "undecided: not measured on both sides".into(),
            cell: "—".into(),
            evidence: String::new(),
        };
        if let Some(r) = r {
            let (pairs, paired) = match r.method {
                Method::Paired { pairs } => (pairs, true),
                Method::Unpaired { a, b } => (a.min(b), false),
            };
            ans.ratio = Some(r.ratio);
            (ans.lo, ans.hi) = (r.interval.map(|i| i.0), r.interval.map(|i| i.1));
            (ans.pairs, ans.paired) = (pairs, paired);
            ans.verdict = decide(r.interval, margin);
            ans.mde = mde(r.interval);
            ans.evidence = basis.unwrap_or_else(|| r.basis());
            ans.words = format!(
                "{}, {}",
                named(&r, margin, &b.variant, higher_is_better),
                ans.evidence
            );
            ans.cell = r.cell();
            if let Some(note) = client_limit_note(a, b) {
                ans.words = format!("{}; {note}", ans.words);
            }
        }
        ans
    }
}

/// A difference by design the answer must name: the two sides run with
/// different client rate limits, and one of them spends a tenth or more of
/// each reconcile waiting in its own. Then a timed ratio measures the limit
/// as much as the controller (controller-runtime's default client limit
/// against kube-rs, which has none).
fn client_limit_note(a: &Group, b: &Group) -> Option<String> {
    let limit = |g: &Group| {
        g.runs
            .iter()
            .find_map(|r| r.settings.as_ref())
            .map(|s| s.client_limit())
    };
    let (la, lb) = (limit(a)?, limit(b)?);
    if la == lb || la == "?" || lb == "?" {
        return None;
    }
    // The median share of a reconcile spent in the client's limiter.
    let share = |g: &Group| {
        let mut v: Vec<f64> = g
            .runs
            .iter()
            .filter(|r| r.problems.is_empty())
            .filter_map(|r| {
                let at = r.attribution;
                Some(at.throttle? / at.mean.filter(|m| *m > 0.0)?)
            })
            .collect();
        v.sort_by(f64::total_cmp);
        (!v.is_empty()).then(|| v[v.len() / 2])
    };
    let (sa, sb) = (share(a).unwrap_or(0.0), share(b).unwrap_or(0.0));
    let (waits, limit, other, other_limit, s) = if sb > sa {
        (&b.variant, &lb, &a.variant, &la, sb)
    } else {
        (&a.variant, &la, &b.variant, &lb, sa)
    };
    (s >= 0.10).then(|| {
        format!(
            "client limits differ by design: {waits} waits {:.0} % of each reconcile in its client limit ({limit}), {other}'s is {other_limit}",
            s * 100.0
        )
    })
}

/// A ratio and, when the machine's spread took part, how to name its evidence.
type Judged = (Option<Ratio>, Option<String>);

/// B/A on `figure`: paired over the repeats with the machine's spread
/// pooled in when the manifest records one (see `evidence`), else as the
/// repeats alone give it.
fn judge(
    ev: Option<&Evidence>,
    figure: &str,
    a: &Group,
    b: &Group,
    f: impl Fn(&RunFigures) -> Option<f64>,
) -> Judged {
    if let Some(ev) = ev {
        let pairs = figures::repeat_pairs(a, b, &f);
        let logs: Option<Vec<f64>> = pairs
            .iter()
            .map(|(x, y)| (*x > 0.0 && *y > 0.0).then(|| (y / x).ln()))
            .collect();
        if let Some(logs) = logs
            && let Some((interval, _)) =
                evidence::pooled_interval(&logs, evidence::spread_for(ev, figure), ev.looks)
        {
            let k = logs.len();
            let mean = logs.iter().sum::<f64>() / k as f64;
            let r = Ratio {
                ratio: mean.exp(),
                interval: Some(interval),
                method: Method::Paired { pairs: k },
            };
            return (Some(r), Some(evidence::basis(ev, k)));
        }
    }
    (interleaved(a, b, f), None)
}

/// The answers of a results directory with equivalence margin `margin` (a
/// fraction: 0.05 = ±5 %). Fails on a `[[compare]]` figure the metric
/// catalogue does not name; a question whose variants have not both run
/// yet is answered undecided, so "every answer decided" means what it says.
pub fn questions(dir: &Path, margin: f64) -> Result<Vec<Answer>> {
    let results = Results::load(dir)?;
    let groups = figures::groups(&results);
    let (answers, problems) = answers(&results, &groups, margin);
    if !problems.is_empty() {
        bail!("{}: {}", dir.display(), problems.join("; "));
    }
    Ok(answers)
}

/// True when there are questions and every one is decided.
pub fn all_decided(answers: &[Answer]) -> bool {
    !answers.is_empty() && answers.iter().all(|a| a.verdict.decided())
}

/// The answers, and what kept a `[[compare]]` question from being asked.
pub(crate) fn answers(
    results: &Results,
    groups: &[Group],
    margin: f64,
) -> (Vec<Answer>, Vec<String>) {
    let ev = results.manifest.evidence.as_ref();
    let mut out = counterpart_answers(groups, margin, ev);
    // A rust-X / go-X pair with simulated work per reconcile asks the
    // throughput question only: its memory and CPU are the work's.
    let zero_work = goals::pairs(groups);
    for (rust, go) in goals::rust_go(groups) {
        let zero = zero_work
            .iter()
            .any(|(r, _)| r.variant == rust.variant && r.scale == rust.scale);
        let figures = if zero {
            RUST_GO_FIGURES
        } else {
            &RUST_GO_FIGURES[..1]
        };
        for &m in figures
            .iter()
            .filter(|m| goals::rust_go_asks(**m, rust, go))
        {
            let r = judge(ev, m.label(), go, rust, |f| f.get(m));
            out.push(Answer::of(
                Source::RustGo,
                (go, rust),
                m.label(),
                r,
                better(m),
                margin,
            ));
        }
    }
    let mut problems = Vec::new();
    for g in &results.manifest.goals {
        if Metric::named(&g.figure).is_none() {
            problems.push(format!(
                "[[goal]] {} vs {}: no figure named {:?} (use a label of the metric catalogue)",
                g.b, g.a, g.figure
            ));
        }
    }
    for p in goals::declared(&results.manifest.goals, groups) {
        let label = p.metric.label();
        let asked = out.iter().any(|x| {
            (x.scale, x.a.as_str(), x.b.as_str(), x.figure.as_str())
                == (p.b.scale, p.a.variant.as_str(), p.b.variant.as_str(), label)
        });
        if !asked {
            let r = judge(ev, label, p.a, p.b, |f| f.get(p.metric));
            out.push(Answer::of(
                Source::Goal,
                (p.a, p.b),
                label,
                r,
                Some(p.goal.at_least),
                margin,
            ));
        }
    }
    let mut scales: Vec<u64> = groups.iter().map(|g| g.scale).collect();
    scales.dedup();
    for q in &results.manifest.compare {
        let Some(m) = Metric::named(&q.figure) else {
            problems.push(format!(
                "[[compare]] {} vs {}: no figure named {:?} (use a label of the metric \
                 catalogue, e.g. \"Ready/s\", \"peak RSS\", \"reconcile p99\")",
                q.a, q.b, q.figure
            ));
            continue;
        };
        for &n in &scales {
            let find = |v: &str| groups.iter().find(|g| g.scale == n && g.variant == v);
            match (find(&q.a), find(&q.b)) {
                (Some(a), Some(b)) => {
                    let r = judge(ev, m.label(), a, b, |f| f.get(m));
                    out.push(Answer::of(
                        Source::Compare,
                        (a, b),
                        m.label(),
                        r,
                        better(m),
                        margin,
                    ));
                }
                (a, b) => out.push(missing(n, q, m, a.is_none(), b.is_none())),
            }
        }
    }
    (out, problems)
}

/// A `[[compare]]` question one of whose variants has no runs at this scale.
fn missing(
    n: u64,
    q: &ctrlbench_record::manifest::CompareQuestion,
    m: Metric,
    no_a: bool,
    no_b: bool,
) -> Answer {
    let absent: Vec<&str> = [(no_b, q.b.as_str()), (no_a, q.a.as_str())]
        .iter()
        .filter(|x| x.0)
        .map(|x| x.1)
        .collect();
    Answer {
        source: Source::Compare,
        label: format!("N={n} {}: {} / {}", m.label(), q.b, q.a),
        scale: n,
        a: q.a.clone(),
        b: q.b.clone(),
        figure: m.label().to_string(),
        ratio: None,
        lo: None,
        hi: None,
        pairs: 0,
        paired: true,
        verdict: Verdict::Undecided,
        mde: None,
        higher_is_better: better(m),
        words: format!(
            "undecided: no runs of {} at this scale",
            absent.join(" or ")
        ),
        cell: "—".into(),
        evidence: String::new(),
    }
}

/// Each counterpart pairing as B = the variant, A = its counterpart.
fn counterpart_answers(groups: &[Group], margin: f64, ev: Option<&Evidence>) -> Vec<Answer> {
    counterparts::pairings(groups)
        .iter()
        .map(|p| {
            let (a, b) = (p.counterpart, p.variant);
            let f = |r: &RunFigures| p.figure.of(r);
            let mut ans = Answer::of(
                Source::Counterpart,
                (a, b),
                p.figure.label(),
                judge(ev, p.figure.label(), a, b, f),
                Some(p.higher_is_better),
                margin,
            );
            // Zeros have no ratio, but an answer all the same.
            let one = |ratio: f64, verdict: Verdict, words: String, cell: &str| Answer {
                ratio: Some(ratio),
                lo: Some(ratio),
                hi: Some(ratio),
                verdict,
                words,
                cell: cell.to_string(),
                evidence: "a count of 0".into(),
                ..ans.clone()
            };
            match counterparts::zero_case(p) {
                Some(Zero::Both) => {
                    ans = one(1.0, Verdict::Equivalent, "same (both 0)".into(), "—");
                }
                Some(Zero::Worse(cell)) => {
                    let (ratio, side) = if p.higher_is_better {
                        (0.0, Verdict::Lower)
                    } else {
                        (f64::INFINITY, Verdict::Higher)
                    };
                    let dir = if p.higher_is_better {
                        "lower"
                    } else {
                        "higher"
                    };
                    let words = format!("{} {dir} (worse)", b.variant);
                    ans = one(ratio, side, words, cell);
                }
                None => {}
            }
            ans
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A group of `vals` (one run per repeat) of Ready/s.
    fn group(variant: &str, vals: &[f64]) -> Group {
        let runs = vals
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let mut r = RunFigures::empty(100, variant, i as u32 + 1);
                r.set(Metric::ReadyPerS, Some(*v));
                r
            })
            .collect();
        Group {
            scale: 100,
            variant: variant.into(),
            runs,
        }
    }

    /// Machine drift moves both sides of each repeat alike (repeat 2 ran on
    /// a machine 30 % slower, repeat 3 on one 20 % faster), while B is
    /// steadily 10 % above A: paired, the drift cancels and the interval
    /// decides; unpaired, it counts as noise twice and nothing is decided.
    #[test]
    fn paired_decides_where_drift_leaves_unpaired_undecided() {
        let drift = [1.0, 0.7, 1.2, 0.9, 1.1];
        let jitter = [1.0, 1.01, 0.99, 1.005, 0.995];
        let a: Vec<f64> = drift.iter().map(|d| 100.0 * d).collect();
        let b: Vec<f64> = drift
            .iter()
            .zip(jitter)
            .map(|(d, j)| 110.0 * d * j)
            .collect();
        let (ga, gb) = (group("go-x", &a), group("rust-x", &b));
        let paired = interleaved(&ga, &gb, |r| r.get(Metric::ReadyPerS)).unwrap();
        assert_eq!(paired.method, Method::Paired { pairs: 5 });
        let (lo, hi) = paired.interval.unwrap();
        assert!(lo > 1.05 && hi < 1.15, "paired [{lo}, {hi}]");
        assert_eq!(decide(paired.interval, 0.05), Verdict::Higher);
        let unpaired = Ratio::of(&a, &b).unwrap();
        let (lo, hi) = unpaired.interval.unwrap();
        assert!(lo < 1.0 && hi > 1.2, "unpaired [{lo}, {hi}]");
        assert_eq!(decide(unpaired.interval, 0.05), Verdict::Undecided);
    }

    #[test]
    fn an_answer_names_the_client_limit_one_side_waits_in() {
        use ctrlbench_record::summary::Settings;
        // go-good: 20 qps, burst 30 (the library's default), 75 of 92 ms
        // per reconcile in the limiter; rust-good: no limiter.
        let with = |variant: &str, vals: &[f64], limit: Option<(f64, u32)>, wait: f64| {
            let mut g = group(variant, vals);
            for r in &mut g.runs {
                r.settings = Some(Settings {
                    client_buckets: vec!["controller".into()],
                    effective_client_qps: limit.map(|l| l.0),
                    effective_client_burst: limit.map(|l| l.1),
                    ..Default::default()
                });
                r.attribution.mean = Some(0.092);
                r.attribution.throttle = Some(wait);
            }
            g
        };
        let go = with("go-good", &[10.0, 11.0, 10.5], Some((20.0, 30)), 0.075);
        let rust = with("rust-good", &[50.0, 52.0, 51.0], None, 0.0);
        let a = Answer::of(
            Source::RustGo,
            (&go, &rust),
            "Ready/s",
            judge(None, "Ready/s", &go, &rust, |f| f.get(Metric::ReadyPerS)),
            Some(true),
            0.05,
        );
        // 75 / 92 = 81.5 %.
        let want = "client limits differ by design: go-good waits 82 % of each reconcile in its client limit (20 qps / burst 30 (library default)), rust-good's is none (library default)";
        assert!(a.words.ends_with(want), "{}", a.words);
        // Same limit on both sides: nothing to name.
        let go2 = with("go-x", &[10.0, 11.0, 10.5], Some((20.0, 30)), 0.075);
        let b = Answer::of(
            Source::Compare,
            (&go, &go2),
            "Ready/s",
            judge(None, "Ready/s", &go, &go2, |f| f.get(Metric::ReadyPerS)),
            None,
            0.05,
        );
        assert!(!b.words.contains("client limits"), "{}", b.words);
    }

    #[test]
    fn answers_carry_the_verdict_its_words_and_the_detectable_effect() {
        let (ga, gb) = (
            group("a", &[100.0, 70.0, 120.0]),
            group("b", &[110.0, 77.7, 131.0]),
        );
        let r = interleaved(&ga, &gb, |r| r.get(Metric::ReadyPerS));
        let ans = Answer::of(
            Source::Compare,
            (&ga, &gb),
            "Ready/s",
            (r, None),
            Some(true),
            0.05,
        );
        assert_eq!(ans.verdict, Verdict::Higher);
        assert_eq!((ans.pairs, ans.paired), (3, true));
        assert!(ans.mde.unwrap() < 0.05);
        assert!(
            ans.words
                .starts_with("b higher (better), paired over 3 repeats")
        );
        assert!(
            ans.line().starts_with("N=100 Ready/s: b / a = 1.10 ["),
            "{}",
            ans.line()
        );
        // One pair: a ratio, no interval, undecided.
        let (ga, gb) = (group("a", &[100.0]), group("b", &[150.0]));
        let r = interleaved(&ga, &gb, |r| r.get(Metric::ReadyPerS));
        let ans = Answer::of(
            Source::Compare,
            (&ga, &gb),
            "Ready/s",
            (r, None),
            None,
            0.05,
        );
        assert_eq!(
            (ans.verdict, ans.lo, ans.mde),
            (Verdict::Undecided, None, None)
        );
        assert_eq!(
            ans.line(),
            "N=100 Ready/s: b / a = 1.50 (one pair) — undecided (one pair), paired over 1 repeat"
        );
        assert!(!all_decided(&[ans]) && !all_decided(&[]));
    }

    /// A counterpart question is B = the variant, A = its counterpart, on
    /// the raw ratio (not the section's "worse" orientation), with the
    /// question's better side; zeros are answered without a ratio.
    #[test]
    fn counterparts_are_questions_too() {
        use ctrlbench_record::Settings;
        use ctrlbench_record::summary::PresetInfo;
        let with_preset = |mut g: Group, preset: &str, q: &str, cp: &str| {
            for r in &mut g.runs {
                r.implementation = Some("rust".into());
                r.settings = Some(Settings {
                    preset: preset.into(),
                    ..Settings::default()
                });
                r.preset_info = Some(PresetInfo {
                    description: String::new(),
                    question: q.into(),
                    counterpart: cp.into(),
                });
            }
            g
        };
        let groups = vec![
            with_preset(
                group("good", &[100.0, 110.0, 90.0]),
                "good",
                "throughput",
                "",
            ),
            with_preset(
                group("list", &[25.0, 20.0, 30.0]),
                "list-in-reconcile",
                "throughput",
                "good",
            ),
        ];
        let a = counterpart_answers(&groups, 0.05, None);
        assert_eq!(a.len(), 1);
        assert_eq!((a[0].a.as_str(), a[0].b.as_str()), ("good", "list"));
        // 1 / 4.04: the section's ratio, the other way up.
        assert!((a[0].ratio.unwrap() - 1.0 / 4.041240).abs() < 1e-5);
        assert_eq!(a[0].verdict, Verdict::Lower);
        assert!(
            a[0].words.starts_with("list lower (worse)"),
            "{}",
            a[0].words
        );
        let groups = vec![
            with_preset(
                group("good", &[100.0, 110.0, 90.0]),
                "good",
                "throughput",
                "",
            ),
            with_preset(group("bad", &[0.0, 0.0, 0.0]), "bad", "throughput", "good"),
        ];
        let a = counterpart_answers(&groups, 0.05, None);
        assert_eq!((a[0].verdict, a[0].ratio), (Verdict::Lower, Some(0.0)));
        assert_eq!(a[0].words, "bad lower (worse)");
    }
}
