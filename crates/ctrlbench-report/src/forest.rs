//! The forest plot the report opens with: one row per question, its ratio
//! B/A as a dot and its 95 % interval as a whisker on a log axis (so 0.5 and
//! 2 sit equally far from 1), the ±margin band shaded, and each row's
//! verdict beside it. Decided rows get a filled dot coloured by whether the
//! decided side is better (green), worse (red) or has no better side
//! (blue); undecided rows a hollow grey one. Drawn with plotters' SVG
//! backend into a string, like the other plots; the labels are drawn by
//! hand beside the chart, where a categorical axis would crowd them.

use anyhow::{Result, anyhow};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::questions::Answer;
use crate::verdict::{Verdict, percent};

const WIDTH: u32 = 1060;
const LABEL_W: u32 = 420;
const VERDICT_W: u32 = 250;
const ROW_H: u32 = 26;
/// Caption above the rows, axis below them.
const TOP: u32 = 44;
const BOTTOM: u32 = 48;
/// Ratios drawn are kept within [1/CLAMP, CLAMP]: a zero or an unbounded
/// interval still gets a whisker, to the axis's end.
const CLAMP: f64 = 1000.0;

const BETTER: RGBColor = RGBColor(44, 160, 44);
const WORSE: RGBColor = RGBColor(214, 39, 40);
const NEUTRAL: RGBColor = RGBColor(31, 119, 180);
const GREY: RGBColor = RGBColor(130, 130, 130);

fn err(e: impl std::fmt::Display) -> anyhow::Error {
    anyhow!("forest plot: {e}")
}

/// A row's colour: by the decided side's direction; grey when undecided.
fn colour(a: &Answer) -> RGBColor {
    match (a.verdict, a.higher_is_better) {
        (Verdict::Undecided, _) => GREY,
        (Verdict::Higher, Some(true)) | (Verdict::Lower, Some(false)) => BETTER,
        (Verdict::Higher, Some(false)) | (Verdict::Lower, Some(true)) => WORSE,
        _ => NEUTRAL,
    }
}

/// The short verdict beside a row ("higher (better)", "equivalent", "undecided ±12 %").
fn short(a: &Answer) -> String {
    let words = a.words.split(", paired").next().unwrap_or(&a.words);
    let words = words.split(", unpaired").next().unwrap_or(words);
    words
        .strip_prefix(a.b.as_str())
        .map(|w| w.trim_start().to_string())
        .unwrap_or_else(|| words.to_string())
}

/// An axis label without trailing zeros: 0.001, 0.5, 1, 12.5.
fn tick(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The x range: every drawn value, 1 ± margin and a little room, clamped.
fn x_range(answers: &[Answer], margin: f64) -> (f64, f64) {
    let clamp = |v: f64| v.clamp(1.0 / CLAMP, CLAMP);
    let vals = answers
        .iter()
        .flat_map(|a| [a.ratio, a.lo, a.hi])
        .flatten()
        .map(clamp)
        .chain([1.0 - margin, 1.0 + margin]);
    let (lo, hi) = vals.fold((f64::INFINITY, 0.0_f64), |(l, h), v| (l.min(v), h.max(v)));
    (lo / 1.15, hi * 1.15)
}

/// The forest plot of `answers` as an SVG document.
pub fn svg(answers: &[Answer], margin: f64) -> Result<String> {
    let n = answers.len();
    let height = TOP + BOTTOM + ROW_H * n as u32;
    let (x0, x1) = x_range(answers, margin);
    let clamp = |v: f64| v.clamp(x0, x1);
    // Row i (from the top) is centred on y = n − i − 0.5.
    let y = |i: usize| (n - i) as f64 - 0.5;
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!(
                    "B/A with 95 % intervals (log scale); shaded: ±{}",
                    percent(margin)
                ),
                ("sans-serif", 16),
            )
            .margin_left(LABEL_W)
            .margin_right(VERDICT_W)
            .margin_top(8)
            .x_label_area_size(BOTTOM - 8)
            .build_cartesian_2d((x0..x1).log_scale(), 0.0..n as f64)
            .map_err(err)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .disable_y_axis()
            .x_labels(8)
            .x_label_formatter(&|v| tick(*v))
            .x_desc("B/A")
            .light_line_style(WHITE)
            .draw()
            .map_err(err)?;
        let band = RGBColor(200, 230, 200).mix(0.6).filled();
        chart
            .draw_series([Rectangle::new(
                [(1.0 - margin, 0.0), (1.0 + margin, n as f64)],
                band,
            )])
            .map_err(err)?;
        chart
            .draw_series(LineSeries::new(
                [(1.0, 0.0), (1.0, n as f64)],
                BLACK.stroke_width(1),
            ))
            .map_err(err)?;
        let label = TextStyle::from(("sans-serif", 13)).pos(Pos::new(HPos::Right, VPos::Center));
        let side = TextStyle::from(("sans-serif", 13)).pos(Pos::new(HPos::Left, VPos::Center));
        for (i, a) in answers.iter().enumerate() {
            let (_, py) = chart.backend_coord(&(1.0, y(i)));
            root.draw(&Text::new(
                a.label.clone(),
                (LABEL_W as i32 - 8, py),
                &label,
            ))
            .map_err(err)?;
            let c = colour(a);
            let Some(r) = a.ratio else {
                root.draw(&Text::new(
                    "not measured",
                    (WIDTH as i32 - VERDICT_W as i32 + 8, py),
                    &side,
                ))
                .map_err(err)?;
                continue;
            };
            if let (Some(lo), Some(hi)) = (a.lo, a.hi) {
                let (lo, hi) = (clamp(lo), clamp(hi));
                let s = c.stroke_width(2);
                chart
                    .draw_series([
                        PathElement::new(vec![(lo, y(i)), (hi, y(i))], s),
                        PathElement::new(vec![(lo, y(i) - 0.2), (lo, y(i) + 0.2)], s),
                        PathElement::new(vec![(hi, y(i) - 0.2), (hi, y(i) + 0.2)], s),
                    ])
                    .map_err(err)?;
            }
            let dot = if a.verdict.decided() {
                c.filled()
            } else {
                c.stroke_width(2)
            };
            chart
                .draw_series([Circle::new((clamp(r), y(i)), 5, dot)])
                .map_err(err)?;
            let mark = if a.verdict.decided() { "● " } else { "○ " };
            let text = format!("{mark}{}", short(a));
            root.draw(&Text::new(
                text,
                (WIDTH as i32 - VERDICT_W as i32 + 8, py),
                side.color(&c),
            ))
            .map_err(err)?;
        }
        root.present().map_err(err)?;
    }
    Ok(out)
}
