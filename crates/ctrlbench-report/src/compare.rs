//! `ctrlbench compare`: the headline figures of two results directories
//! side by side, per scale × variant present in both, with the ratio B/A
//! (unpaired: nothing lines two directories' repeats up), or the variants of
//! one directory against each other (paired by repeat: they ran
//! interleaved). One-line answers on the figures with a better side come
//! first, then one Markdown table; and the regression gate, which fails
//! only on a decided regression, optionally on figures normalised by a
//! reference (`normalise`).

use std::path::Path;

use anyhow::{Result, bail};

use crate::Table;
use crate::figures::{Group, groups, interleaved};
use crate::gate::better;
pub use crate::gate::{GATE, Gate};
use crate::interval::Ratio;
use crate::load::Results;
use crate::metrics::Metric;
use crate::normalise::{self, Reference};
use crate::verdict::{DEFAULT_MARGIN, Verdict, decide, mde, named, percent, plus_minus};

/// The figures compared (the throughput, latency and cost headline).
pub const HEADLINE: &[Metric] = &[
    Metric::Ready,
    Metric::Convergence,
    Metric::Success,
    Metric::Errors,
    Metric::Retries,
    Metric::MeanLatency,
    Metric::P50,
    Metric::P99,
    Metric::TtrP99,
    Metric::T50,
    Metric::T90,
    Metric::T100,
    Metric::ReadyPerS,
    Metric::WritesPerS,
    Metric::WritesPerObject,
    Metric::Conflicts,
    Metric::ThrottleWait,
    Metric::Cpu,
    Metric::PeakRss,
    Metric::ApiP99,
    Metric::ApiCreateP99,
    Metric::FsyncP99,
    Metric::OwnUpdateP99,
];

/// How `compare` judges: the margin of its verdicts and the reference its
/// answers divide by.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// The equivalence margin of the verdicts (a fraction); None: A's
    /// manifest margin, else B's, else ±5 %.
    pub margin: Option<f64>,
    /// Two directories only: divide every figure by this reference first.
    pub reference: Option<Reference>,
}

impl Options {
    /// The margin in force: the command line's, else the first manifest's that has one.
    fn margin(&self, manifests: &[&Results]) -> f64 {
        self.margin
            .or_else(|| manifests.iter().find_map(|r| r.manifest.margin))
            .unwrap_or(DEFAULT_MARGIN)
    }
}

/// Figures from the apiserver's and etcd's own metrics, which name no caller.
fn server_side(m: Metric) -> bool {
    matches!(m, Metric::ApiP99 | Metric::ApiCreateP99 | Metric::FsyncP99)
}

/// B/A; None when undefined (a missing value, or A = 0).
pub fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    let (a, b) = (a?, b?);
    (a != 0.0).then(|| b / a)
}

/// The scale × variant groups present on both sides, in A's order.
fn pairs<'a>(ga: &'a [Group], gb: &'a [Group]) -> Vec<(&'a Group, &'a Group)> {
    ga.iter()
        .filter_map(|x| {
            let y = gb
                .iter()
                .find(|y| y.scale == x.scale && y.variant == x.variant)?;
            Some((x, y))
        })
        .collect()
}

/// Two results directories, loaded, with their groups.
struct Sides {
    a: Results,
    b: Results,
    ga: Vec<Group>,
    gb: Vec<Group>,
}

impl Sides {
    fn load(a: &Path, b: &Path, reference: Option<&Reference>) -> Result<Sides> {
        let (a, b) = (Results::load(a)?, Results::load(b)?);
        let (ga, gb) = (groups(&a), groups(&b));
        if let Some(by) = reference {
            for (r, g) in [(&a, &ga), (&b, &gb)] {
                if let Some(why) = normalise::unusable(r, g, by) {
                    bail!("--reference: {why}");
                }
            }
        }
        Ok(Sides { a, b, ga, gb })
    }

    /// B/A of one figure for a pair of groups: unpaired, on the normalised
    /// figures when there is a reference (None: not normalisable).
    fn ratio(&self, x: &Group, y: &Group, m: Metric, by: Option<&Reference>) -> Option<Ratio> {
        match by {
            None => Ratio::of(&x.values(m), &y.values(m)),
            Some(by) => Ratio::of(
                &normalise::values(&self.a, &self.ga, x, m, by)?,
                &normalise::values(&self.b, &self.gb, y, m, by)?,
            ),
        }
    }

    /// The pairs an answer or the gate is about: the reference variant,
    /// 1 by construction on both sides, is left out.
    fn judged(&self, by: Option<&Reference>) -> Vec<(&Group, &Group)> {
        pairs(&self.ga, &self.gb)
            .into_iter()
            .filter(|(x, _)| !matches!(by, Some(Reference::Variant(v)) if *v == x.variant))
            .collect()
    }
}

/// The gate on B against A: a regression is a gate figure whose whole
/// interval lies beyond `threshold` (0.10 = 10 %) on the worse side;
/// a figure whose interval straddles it is undecided, never a failure.
pub fn gate(a: &Path, b: &Path, threshold: f64, reference: Option<&Reference>) -> Result<Gate> {
    let s = Sides::load(a, b, reference)?;
    let mut out = Gate {
        normalised: reference.map_or("not normalised".into(), |r| r.describe()),
        ..Gate::default()
    };
    for (x, y) in s.judged(reference) {
        for &(m, higher_is_better) in GATE {
            let Some(r) = s.ratio(x, y, m, reference) else {
                continue;
            };
            let v = decide(r.interval, threshold);
            let worse = matches!(
                (v, higher_is_better),
                (Verdict::Lower, true) | (Verdict::Higher, false)
            );
            let what = format!(
                "N{} {}: {} {} → {} (B/A {})",
                x.scale,
                x.variant,
                m.label(),
                cell(x, m),
                cell(y, m),
                r.cell()
            );
            if worse {
                out.regressions.push(what);
            } else if v == Verdict::Undecided {
                let can = match mde(r.interval) {
                    Some(d) if d.is_finite() => {
                        format!("could only tell a change beyond {}", plus_minus(d))
                    }
                    Some(_) => "interval unbounded".into(),
                    None => "no interval: one run on a side".into(),
                };
                out.undecided.push(format!(
                    "{what}: undecided against ±{} ({can})",
                    percent(threshold)
                ));
            }
        }
    }
    Ok(out)
}

/// Headline figures of `b` worse than `a`'s by more than `threshold`,
/// decided (the gate's regressions, not normalised), one line each.
pub fn regressions(a: &Path, b: &Path, threshold: f64) -> Result<Vec<String>> {
    Ok(gate(a, b, threshold, None)?.regressions)
}

fn cell(g: &Group, m: Metric) -> String {
    let flag = if g.flagged_only() { " ⚠" } else { "" };
    match (m, g.stat(m)) {
        (_, Some(s)) => format!("{}{flag}", m.fmt(s.median)),
        (Metric::Convergence, None) => "not converged".into(),
        (_, None) => "—".into(),
    }
}

/// "A: dir (experiment, 4 runs)".
fn side(dir: &Path, r: &Results) -> String {
    format!(
        "{} ({}, {} runs{})",
        dir.display(),
        r.experiment(),
        r.runs.len(),
        if r.complete() { "" } else { ", INCOMPLETE" }
    )
}

/// The comparison as Markdown, with the default options.
pub fn compare(a: &Path, b: &Path) -> Result<String> {
    compare_with(a, b, &Options::default())
}

/// The comparison of two directories as Markdown.
pub fn compare_with(a: &Path, b: &Path, opts: &Options) -> Result<String> {
    let by = opts.reference.as_ref();
    let s = Sides::load(a, b, by)?;
    let margin = opts.margin(&[&s.a, &s.b]);
    let mut out = format!(
        "# ctrlbench compare\n\nA: {}\n\nB: {}\n\n",
        side(a, &s.a),
        side(b, &s.b)
    );
    let mut lines = Vec::new();
    for (x, y) in s.judged(by) {
        for &(m, hib) in GATE {
            if let Some(r) = s.ratio(x, y, m, by) {
                lines.push(answer(x.scale, &x.variant, m, &r, margin, "B", Some(hib)));
            }
        }
    }
    out.push_str(&answers_block(
        &lines,
        margin,
        &match by {
            Some(r) => format!(
                "unpaired: two results directories; {}; the table shows the raw figures",
                r.describe()
            ),
            None => "unpaired: two results directories; not normalised".into(),
        },
    ));
    out.push_str(&format!("{}\n\n", intervals(margin, false)));
    let rows: Vec<Row> = pairs(&s.ga, &s.gb)
        .into_iter()
        .flat_map(|(x, y)| HEADLINE.iter().map(move |&m| (x, y, m)))
        .map(|(x, y, m)| (x, y, m, Ratio::of(&x.values(m), &y.values(m))))
        .collect();
    if rows.is_empty() {
        out.push_str("No scale × variant is present in both directories.\n");
    } else {
        out.push_str(&ratio_table(&rows, margin, |x, _| x.variant.clone()));
    }
    let only = |g: &[Group], other: &[Group]| -> Vec<String> {
        g.iter()
            .filter(|x| {
                !other
                    .iter()
                    .any(|y| y.scale == x.scale && y.variant == x.variant)
            })
            .map(|x| format!("N{}/{}", x.scale, x.variant))
            .collect()
    };
    for (name, v) in [("A", only(&s.ga, &s.gb)), ("B", only(&s.gb, &s.ga))] {
        if !v.is_empty() {
            out.push_str(&format!("\nOnly in {name}: {}\n", v.join(", ")));
        }
    }
    Ok(out)
}

/// "N20 rust-good Ready/s: B/A = 0.85 [0.84–0.86] — B lower (worse), unpaired (2 and 2 runs)".
fn answer(
    scale: u64,
    what: &str,
    m: Metric,
    r: &Ratio,
    margin: f64,
    b: &str,
    hib: Option<bool>,
) -> String {
    format!(
        "N{scale} {what} {}: B/A = {} — {}, {}",
        m.label(),
        r.cell(),
        named(r, margin, b, hib),
        r.basis()
    )
}

/// The one-line answers, before the table.
fn answers_block(lines: &[String], margin: f64, how: &str) -> String {
    if lines.is_empty() {
        return String::new();
    }
    let mut s = format!(
        "Answers on the figures with a better side ({how}; margin ±{}):\n\n",
        percent(margin)
    );
    for l in lines {
        s.push_str(&format!("- {l}\n"));
    }
    s.push('\n');
    s
}

/// How ratios, intervals and verdicts are read (both kinds of comparison).
fn intervals(margin: f64, paired: bool) -> String {
    let how = if paired {
        "ratio = B/A paired over the repeats (the variants ran interleaved): the geometric mean \
         of the per-repeat ratios with a 95 % t interval on their logarithms (unpaired, with a \
         bootstrap interval, only where a zero leaves a log ratio undefined); one pair gives no \
         interval"
    } else {
        "ratio = B/A of the medians with a 95 % bootstrap interval over the repeats of both \
         sides (percentile method, 2000 resamples, fixed seed), unpaired: two directories' \
         repeats do not line up; one run on a side gives no interval"
    };
    format!(
        "Medians over each side's runs without problems (⚠: only flagged runs); {how}. \
         \"B higher\" / \"B lower\" only when the whole interval lies beyond ±{m}, with \
         (better) or (worse) on the figures that have a better side; \"equivalent\" when it \
         lies within ±{m}; otherwise \"undecided\", with the smallest difference this many \
         repeats can detect.",
        m = percent(margin)
    )
}

/// Variant pairs of one directory: each `rust-X` with `go-X` when present.
pub fn default_variant_pairs(dir: &Path) -> Result<Vec<(String, String)>> {
    let r = Results::load(dir)?;
    let mut names: Vec<String> = r.runs.iter().map(|x| x.variant.clone()).collect();
    names.dedup();
    Ok(names
        .iter()
        .filter_map(|n| {
            let rest = n.strip_prefix("rust-")?;
            let go = format!("go-{rest}");
            names.contains(&go).then(|| (n.clone(), go))
        })
        .collect())
}

/// Variants of one results directory against each other (A = the first of
/// each pair, B = the second), per scale, with the default options.
pub fn compare_variants(dir: &Path, pairs: &[(String, String)]) -> Result<String> {
    compare_variants_with(dir, pairs, &Options::default())
}

/// Variants of one results directory against each other (A = the first of
/// each pair, B = the second), per scale: ratios paired by repeat, since the
/// variants of one run were interleaved, which is where ratios between
/// variants belong.
pub fn compare_variants_with(
    dir: &Path,
    pairs: &[(String, String)],
    opts: &Options,
) -> Result<String> {
    if opts.reference.is_some() {
        bail!("--reference normalises two results directories: give B too");
    }
    let r = Results::load(dir)?;
    let g = groups(&r);
    let margin = opts.margin(&[&r]);
    let mut out = format!(
        "# ctrlbench compare (variants of one run)\n\n{}\n\n",
        side(dir, &r)
    );
    let mut rows = Vec::new();
    let mut missing = Vec::new();
    for (a, b) in pairs {
        let mut found = false;
        for x in g.iter().filter(|x| &x.variant == a) {
            if let Some(y) = g.iter().find(|y| y.scale == x.scale && &y.variant == b) {
                rows.push((x, y));
                found = true;
            }
        }
        if !found {
            missing.push(format!("{a} vs {b}"));
        }
    }
    if rows.is_empty() {
        anyhow::bail!(
            "{}: no scale has both variants of {} (variants here: {})",
            dir.display(),
            missing.join(", "),
            g.iter()
                .map(|x| x.variant.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let mut lines = Vec::new();
    for (x, y) in &rows {
        for &(m, hib) in GATE {
            if let Some(r) = interleaved(x, y, |f| f.get(m)) {
                let what = format!("{} → {}", x.variant, y.variant);
                lines.push(answer(x.scale, &what, m, &r, margin, &y.variant, Some(hib)));
            }
        }
    }
    out.push_str(&answers_block(&lines, margin, "paired over the repeats"));
    out.push_str(&format!("{}\n\n", intervals(margin, true)));
    let table_rows: Vec<Row> = rows
        .iter()
        .flat_map(|&(x, y)| HEADLINE.iter().map(move |&m| (x, y, m)))
        .map(|(x, y, m)| (x, y, m, interleaved(x, y, |f| f.get(m))))
        .collect();
    out.push_str(&ratio_table(&table_rows, margin, |x, y| {
        format!("{} → {}", x.variant, y.variant)
    }));
    if !missing.is_empty() {
        out.push_str(&format!(
            "\nNot found at any scale: {}\n",
            missing.join(", ")
        ));
    }
    Ok(out)
}

/// A row of the table: A's group, B's, the figure and its ratio.
type Row<'a> = (&'a Group, &'a Group, Metric, Option<Ratio>);

/// One row per pair × headline figure: A, B, B/A with its interval, the verdict.
fn ratio_table(rows: &[Row], margin: f64, label: impl Fn(&Group, &Group) -> String) -> String {
    let mut t = Table {
        head: ["N", "variant", "figure", "A", "B", "B/A [95 %]", "verdict"]
            .map(String::from)
            .to_vec(),
        rows: vec![],
    };
    for &(x, y, m, r) in rows {
        let shared = [x, y].iter().any(|g| g.runs.iter().any(|r| r.concurrent));
        // Under the concurrent schedule these cover every variant that
        // ran alongside: say so on the row instead of crediting one.
        let figure = if shared && server_side(m) {
            format!("{} (cluster-wide: all variants together)", m.label())
        } else {
            m.label().to_string()
        };
        t.rows.push(vec![
            x.scale.to_string(),
            label(x, y),
            figure,
            cell(x, m),
            cell(y, m),
            r.map(|r| r.cell()).unwrap_or("—".into()),
            r.map(|r| named(&r, margin, "B", better(m)))
                .unwrap_or("—".into()),
        ]);
    }
    t.markdown()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::RunFigures;
    use crate::interval::Method;

    /// A decided rise names a side only where the gate's table gives one:
    /// writes/s rises when a build converges sooner, writes per object
    /// only when it writes more.
    #[test]
    fn a_decided_writes_per_s_claims_no_side_and_writes_per_object_does() {
        let g = |v: &str| Group {
            scale: 20,
            variant: v.into(),
            runs: vec![RunFigures::empty(20, v, 1)],
        };
        let (a, b) = (g("x"), g("x"));
        let r = Ratio {
            ratio: 1.6,
            interval: Some((1.5, 1.7)),
            method: Method::Paired { pairs: 5 },
        };
        let t = ratio_table(
            &[
                (&a, &b, Metric::WritesPerS, Some(r)),
                (&a, &b, Metric::WritesPerObject, Some(r)),
            ],
            0.05,
            |x, _| x.variant.clone(),
        );
        let row = |figure: &str| {
            t.lines()
                .find(|l| l.contains(&format!("| {figure} |")))
                .unwrap_or_else(|| panic!("no {figure} row in {t}"))
                .to_string()
        };
        assert!(row("writes/s").ends_with("| B higher |"), "{t}");
        assert!(
            row("writes per object").ends_with("| B higher (worse) |"),
            "{t}"
        );
        let line = answer(
            20,
            "x",
            Metric::WritesPerS,
            &r,
            0.05,
            "B",
            better(Metric::WritesPerS),
        );
        assert!(line.contains("— B higher, "), "{line}");
    }
}
