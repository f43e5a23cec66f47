//! The results in forms that programs read: `verdicts.json`, written beside
//! every report (each question's figure, scale, A, B, ratio, interval,
//! verdict, repeats and the evidence that decided it, plus every variant's
//! headline figures), and what `ctrlbench export` turns it into for CI
//! dashboards: Bencher's metric format (BMF) and github-action-benchmark's
//! custom JSON. All three are built from the same answers and groups the
//! report prints, so a dashboard shows what the report says.

use std::path::Path;

use anyhow::Result;
use serde_json::{Map, Value, json};

use crate::figures::{self, Group};
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
    /// github-action-benchmark's custom JSON: `[{name, unit, value, range, extra}]`.
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
        "variants": groups.iter().map(variant).collect::<Vec<_>>(),
    })
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

/// `verdicts.json` (as written) in `format`.
pub fn convert(verdicts: &Value, format: Format) -> Value {
    let experiment = verdicts["experiment"].as_str().unwrap_or("ctrlbench");
    let variants = verdicts["variants"].as_array().cloned().unwrap_or_default();
    let qs = verdicts["questions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let var_name = |v: &Value| {
        format!(
            "{experiment}/N={}/{}",
            v["scale"],
            v["variant"].as_str().unwrap_or("?")
        )
    };
    let q_name = |q: &Value| {
        format!(
            "{experiment}/N={}/{} / {}",
            q["scale"],
            q["b"].as_str().unwrap_or("?"),
            q["a"].as_str().unwrap_or("?")
        )
    };
    match format {
        Format::Bmf => {
            let mut out = Map::new();
            for v in &variants {
                let mut measures = Map::new();
                for (fig, f) in v["figures"].as_object().into_iter().flatten() {
                    measures.insert(
                        fig.clone(),
                        json!({"value": f["median"], "lower_value": f["min"], "upper_value": f["max"]}),
                    );
                }
                out.insert(var_name(v), Value::Object(measures));
            }
            for q in qs.iter().filter(|q| !q["ratio"].is_null()) {
                let entry = out
                    .entry(q_name(q))
                    .or_insert_with(|| Value::Object(Map::new()));
                entry[format!("{} ratio", q["figure"].as_str().unwrap_or("?"))] = json!({"value": q["ratio"], "lower_value": q["lower"], "upper_value": q["upper"]});
            }
            Value::Object(out)
        }
        Format::GithubActionBenchmark => {
            let mut out = Vec::new();
            for v in &variants {
                for (fig, f) in v["figures"].as_object().into_iter().flatten() {
                    out.push(json!({
                        "name": format!("{} {fig}", var_name(v)),
                        "unit": f["unit"],
                        "value": f["median"],
                        "range": range(&f["min"], &f["max"]),
                        "extra": format!("median of {} run(s)", f["runs"]),
                    }));
                }
            }
            for q in qs.iter().filter(|q| !q["ratio"].is_null()) {
                out.push(json!({
                    "name": format!("{} {} ratio", q_name(q), q["figure"].as_str().unwrap_or("?")),
                    "unit": "ratio",
                    "value": q["ratio"],
                    "range": range(&q["lower"], &q["upper"]),
                    "extra": q["words"],
                }));
            }
            Value::Array(out)
        }
    }
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
                 "ratio": 0.5, "lower": 0.4, "upper": 0.6, "verdict": "lower", "words": "b lower (worse), 3 repeats"},
                {"question": "N=50 T100: b / a", "figure": "T100", "scale": 50, "a": "a", "b": "b",
                 "ratio": null, "lower": null, "upper": null, "verdict": "undecided", "words": "undecided"}
            ],
            "variants": [
                {"variant": "a", "scale": 50, "figures": {"Ready/s": {"unit": "1/s", "median": 20.0, "min": 18.0, "max": 22.0, "runs": 3}}}
            ]
        })
    }

    /// Bencher's format: benchmarks map to measures, each with exactly
    /// value, lower_value and upper_value (numbers).
    #[test]
    fn bmf_has_benchmarks_of_measures_of_three_numbers() {
        let out = convert(&sample(), Format::Bmf);
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

    /// github-action-benchmark's custom JSON: an array of objects with
    /// name, unit and value (a number), and the optional range and extra
    /// (strings).
    #[test]
    fn github_action_benchmark_entries_have_its_field_names() {
        let out = convert(&sample(), Format::GithubActionBenchmark);
        let arr = out.as_array().unwrap();
        assert_eq!(arr.len(), 2);
        for e in arr {
            let mut keys: Vec<&String> = e.as_object().unwrap().keys().collect();
            keys.sort();
            assert_eq!(keys, ["extra", "name", "range", "unit", "value"]);
            assert!(e["name"].is_string() && e["unit"].is_string());
            assert!(e["value"].is_number());
            assert!(e["range"].is_string() && e["extra"].is_string());
        }
        assert_eq!(arr[0]["name"], "quick/N=50/a Ready/s");
        assert_eq!(arr[0]["range"], "18.0000–22.0000");
        assert_eq!(arr[1]["unit"], "ratio");
        assert_eq!(arr[1]["extra"], "b lower (worse), 3 repeats");
    }

    #[test]
    fn format_names_parse() {
        for n in Format::NAMES {
            assert!(Format::parse(n).is_some(), "{n}");
        }
        assert_eq!(Format::parse("csv"), None);
    }
}
