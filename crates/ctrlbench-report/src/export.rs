//! The results in forms that programs read: `verdicts.json`, written beside
//! every report (each question's figure, scale, A, B, ratio, interval,
//! verdict, repeats and the evidence that decided it, plus every variant's
//! headline figures), and what `ctrlbench export` turns it into for CI
//! dashboards: Bencher's metric format (BMF) and github-action-benchmark's
//! custom JSON, one array per better side since that action takes one
//! direction per file. All are built from the same answers and groups the
//! report prints, so a dashboard shows what the report says; which side is
//! better is `gate::better`'s.

use std::path::Path;

use anyhow::Result;
use serde_json::{Map, Value, json};

use crate::figures::{self, Group};
use crate::gate::better;
use crate::load::Results;
use crate::metrics::{Metric, Unit};
use crate::questions::{self, Answer, Source};
use crate::verdict::Verdict;

/// The format tag of `verdicts.json`; a reader refuses another.
pub const VERDICTS_FORMAT: &str = "ctrlbench-verdicts/1";

/// The per-variant figures a dashboard tracks: the report's headline ones.
pub const TRACKED: &[Metric] = &[
    Metric::ReadyPerS,
    Metric::T100,
    Metric::TtrP99,
    Metric::P99,
    Metric::WritesPerObject,
    Metric::CpuPerReconcile,
    Metric::PeakRss,
];

/// The formats of `ctrlbench export`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Bencher Metric Format: `{benchmark: {measure: {value, lower_value, upper_value}}}`.
    Bmf,
    /// github-action-benchmark's custom JSON: `[{name, unit, value, range, extra}]`,
    /// two arrays (see [`github_action_benchmark`]).
    GithubActionBenchmark,
}

impl Format {
    pub const NAMES: &[&str] = &["bmf", "github-action-benchmark"];

    pub fn parse(s: &str) -> Option<Format> {
        match s {
            "bmf" => Some(Format::Bmf),
            "github-action-benchmark" => Some(Format::GithubActionBenchmark),
            _ => None,
        }
    }
}

/// A results directory's `verdicts.json` value, computed from its rows.
pub fn verdicts_of(dir: &Path, margin: Option<f64>) -> Result<Value> {
    let results = Results::load(dir)?;
    let groups = figures::groups(&results);
    let opts = crate::Options { margin };
    let (margin, _) = crate::context::margin(&opts, &results);
    let (answers, _) = questions::answers(&results, &groups, margin);
    Ok(verdicts(&results, &groups, &answers, margin))
}

/// `verdicts.json`: the questions, then every variant's tracked figures.
pub fn verdicts(results: &Results, groups: &[Group], answers: &[Answer], margin: f64) -> Value {
    let m = &results.manifest;
    let decided = answers.iter().filter(|a| a.verdict.decided()).count();
    json!({
        "format": VERDICTS_FORMAT,
        "experiment": m.experiment,
        "started_at": m.started_at,
        "finished_at": m.finished_at,
        "complete": m.complete,
        "git_revision": m.git_revision,
        "margin": margin,
        "decided": decided,
        "asked": answers.len(),
        "questions": answers.iter().map(question).collect::<Vec<_>>(),
        "growth": crate::growth::of(groups, crate::growth::delta_of(m)).iter().map(growth).collect::<Vec<_>>(),
        "diagnosis": crate::diagnosis::diagnose(groups).iter().map(|f| finding(f, results, groups)).collect::<Vec<_>>(),
        "variants": groups.iter().map(variant).collect::<Vec<_>>(),
        "budgets": crate::budget::judge(&m.budgets, groups).iter().map(budget).collect::<Vec<_>>(),
    })
}

/// One variant against one `[budget]` limit.
fn budget(j: &crate::budget::Judged) -> Value {
    json!({
        "scale": j.scale,
        "variant": j.variant,
        "key": j.key,
        "figure": j.figure,
        "measured": finite(j.measured),
        "limit": j.limit,
        "verdict": j.verdict(),
    })
}

/// One finding of the diagnosis: its rule, where, its evidence and fix,
/// and the likely lines of the operator's source (pointers, not evidence).
fn finding(f: &crate::diagnosis::Finding, results: &Results, groups: &[Group]) -> Value {
    let likely: Vec<Value> = crate::diagnosis::likely_for(&results.likely, groups, f)
        .into_iter()
        .map(|l| json!({"path": l.path, "line": l.line, "text": l.text}))
        .collect();
    json!({
        "rule": f.rule.id,
        "name": f.rule.name,
        "basis": f.rule.basis.name(),
        "scale": f.scale,
        "variant": f.variant,
        "evidence": f.evidence,
        "cost": f.cost,
        "framework": f.framework.map(|fw| fw.name()),
        "fix": f.framework.map(|fw| f.rule.fix.of(fw)),
        "likely": likely,
    })
}

/// One figure's growth exponent: its interval, verdict, range and curvature,
/// or why it could not be estimated.
fn growth(g: &crate::growth::Growth) -> Value {
    match &g.fit {
        Err(why) => json!({
            "variant": g.variant,
            "figure": g.figure.name,
            "verdict": "not-estimable",
            "reason": why,
        }),
        Ok(f) => {
            let c = f.curvature;
            json!({
                "variant": g.variant,
                "figure": g.figure.name,
                "b": finite(Some(f.b)),
                "lo": finite(Some(f.lo)),
                "hi": finite(Some(f.hi)),
                "verdict": f.verdict.tag(),
                "range": [f.n_min, f.n_max],
                "curvature": c.and_then(|c| c.bend).map(|b| match b {
                    crate::growth::Bend::Accelerating => "accelerating",
                    crate::growth::Bend::Decelerating => "decelerating",
                }),
                "local_exponent": c.map(|c| json!({
                    "b": finite(Some(c.local)),
                    "lo": finite(Some(c.local_lo)),
                    "hi": finite(Some(c.local_hi)),
                    "at": f.n_max,
                })),
            })
        }
    }
}

fn question(a: &Answer) -> Value {
    let worse = match (a.verdict, a.higher_is_better) {
        (Verdict::Higher, Some(false)) | (Verdict::Lower, Some(true)) => Some(true),
        (Verdict::Higher, Some(true)) | (Verdict::Lower, Some(false)) => Some(false),
        _ => None,
    };
    json!({
        "question": a.label,
        "source": match a.source {
            Source::Counterpart => "counterpart",
            Source::RustGo => "rust-vs-go",
            Source::Goal => "goal",
            Source::Compare => "compare",
        },
        "figure": a.figure,
        "scale": a.scale,
        "a": a.a,
        "b": a.b,
        "ratio": finite(a.ratio),
        "lower": finite(a.lo),
        "upper": finite(a.hi),
        "verdict": verdict_word(a.verdict),
        "b_worse": worse,
        "higher_is_better": a.higher_is_better,
        "repeats": a.pairs,
        "paired": a.paired,
        "evidence": a.evidence,
        "min_detectable": finite(a.mde),
        "words": a.words,
    })
}

fn variant(g: &Group) -> Value {
    let mut figures = Map::new();
    for &m in TRACKED {
        if let Some(s) = g.stat(m).filter(|s| s.median.is_finite()) {
            figures.insert(
                m.label().to_string(),
                json!({
                    "unit": unit(m.def().unit),
                    "median": s.median,
                    "min": finite(Some(s.min)),
                    "max": finite(Some(s.max)),
                    "runs": s.n,
                }),
            );
        }
    }
    json!({ "variant": g.variant, "scale": g.scale, "figures": figures })
}

/// "higher", "lower", "equivalent", "undecided".
pub fn verdict_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Higher => "higher",
        Verdict::Lower => "lower",
        Verdict::Equivalent => "equivalent",
        Verdict::Undecided => "undecided",
    }
}

fn unit(u: Unit) -> &'static str {
    match u {
        Unit::Count => "count",
        Unit::Duration | Unit::Seconds => "s",
        Unit::Rate => "1/s",
        Unit::Bytes => "bytes",
    }
}

/// JSON has no ∞ or NaN: a censored or missing figure is null.
fn finite(v: Option<f64>) -> Option<f64> {
    v.filter(|x| x.is_finite())
}

/// github-action-benchmark's `tool:` for the entries where bigger is better.
pub const BIGGER_TOOL: &str = "customBiggerIsBetter";
/// Its `tool:` for the entries where smaller is better.
pub const SMALLER_TOOL: &str = "customSmallerIsBetter";

/// Benchmark names: `<experiment>/N=<scale>/<variant>` for a variant's
/// figures, `<experiment>/N=<scale>/<B> / <A>` for a question's ratio.
struct Names<'a> {
    experiment: &'a str,
}

impl Names<'_> {
    fn variant(&self, v: &Value) -> String {
        format!(
            "{}/N={}/{}",
            self.experiment,
            v["scale"],
            v["variant"].as_str().unwrap_or("?")
        )
    }

    fn question(&self, q: &Value) -> String {
        format!(
            "{}/N={}/{} / {}",
            self.experiment,
            q["scale"],
            q["b"].as_str().unwrap_or("?"),
            q["a"].as_str().unwrap_or("?")
        )
    }
}

fn parts(verdicts: &Value) -> (Names<'_>, Vec<Value>, Vec<Value>) {
    let experiment = verdicts["experiment"].as_str().unwrap_or("ctrlbench");
    let list = |k: &str| verdicts[k].as_array().cloned().unwrap_or_default();
    (Names { experiment }, list("variants"), list("questions"))
}

/// `verdicts.json` (as written) in Bencher's metric format.
pub fn bmf(verdicts: &Value) -> Value {
    let (names, variants, qs) = parts(verdicts);
    let mut out = Map::new();
    for v in &variants {
        let mut measures = Map::new();
        for (fig, f) in v["figures"].as_object().into_iter().flatten() {
            measures.insert(
                fig.clone(),
                json!({"value": f["median"], "lower_value": f["min"], "upper_value": f["max"]}),
            );
        }
        out.insert(names.variant(v), Value::Object(measures));
    }
    for q in qs.iter().filter(|q| !q["ratio"].is_null()) {
        let entry = out
            .entry(names.question(q))
            .or_insert_with(|| Value::Object(Map::new()));
        entry[format!("{} ratio", q["figure"].as_str().unwrap_or("?"))] =
            json!({"value": q["ratio"], "lower_value": q["lower"], "upper_value": q["upper"]});
    }
    Value::Object(out)
}

/// github-action-benchmark's custom JSON, split by better side: the action
/// alerts on a change in one direction per file (`tool:`), so a mixed array
/// would call half the improvements regressions.
#[derive(Debug, Default)]
pub struct Split {
    /// For `tool: customBiggerIsBetter`.
    pub bigger: Vec<Value>,
    /// For `tool: customSmallerIsBetter`.
    pub smaller: Vec<Value>,
    /// Names of the ratios left out: their figure has no better side.
    pub sideless: Vec<String>,
}

impl Split {
    fn push(&mut self, higher_is_better: Option<bool>, name: String, entry: Value) {
        match higher_is_better {
            Some(true) => self.bigger.push(entry),
            Some(false) => self.smaller.push(entry),
            None => self.sideless.push(name),
        }
    }
}

/// `verdicts.json` (as written) as github-action-benchmark's two arrays. A
/// variant's figure goes by `gate::better`; a question's ratio B/A by its
/// `higher_is_better` (a ratio above 1 is B higher).
pub fn github_action_benchmark(verdicts: &Value) -> Split {
    let (names, variants, qs) = parts(verdicts);
    let mut out = Split::default();
    for v in &variants {
        for (fig, f) in v["figures"].as_object().into_iter().flatten() {
            let name = format!("{} {fig}", names.variant(v));
            let entry = json!({
                "name": name,
                "unit": f["unit"],
                "value": f["median"],
                "range": range(&f["min"], &f["max"]),
                "extra": format!("median of {} run(s)", f["runs"]),
            });
            out.push(Metric::named(fig).and_then(better), name, entry);
        }
    }
    for q in qs.iter().filter(|q| !q["ratio"].is_null()) {
        let name = format!(
            "{} {} ratio",
            names.question(q),
            q["figure"].as_str().unwrap_or("?")
        );
        let entry = json!({
            "name": name,
            "unit": "ratio",
            "value": q["ratio"],
            "range": range(&q["lower"], &q["upper"]),
            "extra": q["words"],
        });
        out.push(q["higher_is_better"].as_bool(), name, entry);
    }
    out
}

/// "0.93–1.07", or "" without an interval.
fn range(lo: &Value, hi: &Value) -> String {
    match (lo.as_f64(), hi.as_f64()) {
        (Some(l), Some(h)) => format!("{l:.4}–{h:.4}"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Value {
        json!({
            "format": VERDICTS_FORMAT,
            "experiment": "quick",
            "questions": [
                {"question": "N=50 Ready/s: b / a", "figure": "Ready/s", "scale": 50, "a": "a", "b": "b",
                 "ratio": 0.5, "lower": 0.4, "upper": 0.6, "verdict": "lower", "higher_is_better": true,
                 "words": "b lower (worse), 3 repeats"},
                {"question": "N=50 T100: b / a", "figure": "T100", "scale": 50, "a": "a", "b": "b",
                 "ratio": null, "lower": null, "upper": null, "verdict": "undecided", "higher_is_better": false,
                 "words": "undecided"},
                {"question": "N=50 409s: b / a", "figure": "409s", "scale": 50, "a": "a", "b": "b",
                 "ratio": 1.2, "lower": 1.1, "upper": 1.3, "verdict": "higher", "higher_is_better": null,
                 "words": "b higher, 3 repeats"}
            ],
            "variants": [
                {"variant": "a", "scale": 50, "figures": {
                    "Ready/s": {"unit": "1/s", "median": 20.0, "min": 18.0, "max": 22.0, "runs": 3},
                    "peak RSS": {"unit": "bytes", "median": 3.0e7, "min": 2.9e7, "max": 3.1e7, "runs": 3}}}
            ]
        })
    }

    /// Bencher's format: benchmarks map to measures, each with exactly
    /// value, lower_value and upper_value (numbers).
    #[test]
    fn bmf_has_benchmarks_of_measures_of_three_numbers() {
        let out = bmf(&sample());
        let obj = out.as_object().unwrap();
        assert_eq!(
            obj.keys().collect::<Vec<_>>(),
            ["quick/N=50/a", "quick/N=50/b / a"]
        );
        let m = &obj["quick/N=50/a"]["Ready/s"];
        assert_eq!(
            m,
            &json!({"value": 20.0, "lower_value": 18.0, "upper_value": 22.0})
        );
        let r = &obj["quick/N=50/b / a"]["Ready/s ratio"];
        assert_eq!(
            r,
            &json!({"value": 0.5, "lower_value": 0.4, "upper_value": 0.6})
        );
        // The unmeasured question has no entry: BMF has no null value.
        assert!(
            !obj["quick/N=50/b / a"]
                .as_object()
                .unwrap()
                .contains_key("T100 ratio")
        );
    }

    /// github-action-benchmark's custom JSON: arrays of objects with name,
    /// unit and value (a number), and the optional range and extra
    /// (strings); Ready/s and its ratio where bigger is better, peak RSS
    /// where smaller is, and the 409s ratio, which has no better side, in
    /// neither.
    #[test]
    fn github_action_benchmark_splits_by_better_side_with_its_field_names() {
        let out = github_action_benchmark(&sample());
        for e in out.bigger.iter().chain(&out.smaller) {
            let mut keys: Vec<&String> = e.as_object().unwrap().keys().collect();
            keys.sort();
            assert_eq!(keys, ["extra", "name", "range", "unit", "value"]);
            assert!(e["name"].is_string() && e["unit"].is_string());
            assert!(e["value"].is_number());
            assert!(e["range"].is_string() && e["extra"].is_string());
        }
        let names = |v: &[Value]| -> Vec<String> {
            v.iter()
                .map(|e| e["name"].as_str().unwrap().to_string())
                .collect()
        };
        assert_eq!(
            names(&out.bigger),
            ["quick/N=50/a Ready/s", "quick/N=50/b / a Ready/s ratio"]
        );
        assert_eq!(names(&out.smaller), ["quick/N=50/a peak RSS"]);
        assert_eq!(out.sideless, ["quick/N=50/b / a 409s ratio"]);
        assert_eq!(out.bigger[0]["range"], "18.0000–22.0000");
        assert_eq!(out.bigger[1]["unit"], "ratio");
        assert_eq!(out.bigger[1]["extra"], "b lower (worse), 3 repeats");
    }

    /// Every figure a dashboard tracks lands in one of the two files.
    #[test]
    fn every_tracked_figure_has_a_better_side() {
        for m in TRACKED {
            assert!(better(*m).is_some(), "{}", m.label());
        }
    }

    #[test]
    fn format_names_parse() {
        for n in Format::NAMES {
            assert!(Format::parse(n).is_some(), "{n}");
        }
        assert_eq!(Format::parse("csv"), None);
    }
}
