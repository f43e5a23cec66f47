//! The plots, drawn with plotters' SVG backend into strings for inlining:
//! per scale Ready over time, queue depth, reconciles per second (real gaps
//! between scrapes) and the reconcile latency distribution; throughput
//! against N when the experiment sweeps scales.

use anyhow::{Result, anyhow};
use plotters::prelude::*;

use crate::Block;
use crate::figures::Group;
use crate::load::{Results, Run};
use crate::metrics::Metric;
use crate::stats::fmt_duration;

pub(crate) const SIZE: (u32, u32) = (760, 380);
pub(crate) const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];

/// Polylines: one per run, or split at failed scrapes.
type Segments = Vec<Vec<(f64, f64)>>;

/// One variant's curve.
struct Line {
    name: String,
    color: RGBColor,
    segments: Segments,
}

pub(crate) fn err(e: impl std::fmt::Display) -> anyhow::Error {
    anyhow!("plot: {e}")
}

fn range(v: impl Iterator<Item = f64>, from_zero: bool) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for x in v.filter(|x| x.is_finite()) {
        lo = lo.min(x);
        hi = hi.max(x);
    }
    if lo > hi {
        return (0.0, 1.0);
    }
    if from_zero {
        lo = lo.min(0.0);
    }
    if hi - lo < 1e-9 {
        hi = lo + 1.0;
    }
    (lo, hi + (hi - lo) * 0.05)
}

/// Tick labels with as many decimals as the ticks' step needs and no more
/// (plotters puts about ten ticks on an axis): a sub-second axis reads
/// 0.05, 0.10, 0.15, not 0.1, 0.1, 0.2.
fn tick(v: f64, span: f64) -> String {
    let step = span.abs() / 10.0;
    let decimals = if step > 0.0 && step.is_finite() {
        (-step.log10().floor()).clamp(0.0, 6.0) as usize
    } else {
        0
    };
    format!("{v:.decimals$}")
}

/// A line chart; `marks` are x positions drawn as red vertical lines (faults).
fn line_chart(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    lines: &[Line],
    legend: SeriesLabelPosition,
    marks: &[f64],
) -> Result<String> {
    let pts = || lines.iter().flat_map(|l| l.segments.iter().flatten());
    let (x0, x1) = range(pts().map(|p| p.0).chain(marks.iter().copied()), true);
    let (y0, y1) = range(pts().map(|p| p.1), true);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc(y_desc)
            .y_label_formatter(&|v| tick(*v, y1 - y0))
            .x_label_formatter(&|v| tick(*v, x1 - x0))
            .draw()
            .map_err(err)?;
        for (i, x) in marks.iter().enumerate() {
            let s = chart
                .draw_series(LineSeries::new([(*x, y0), (*x, y1)], RED.stroke_width(1)))
                .map_err(err)?;
            if i == 0 {
                s.label("fault").legend(|(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], RED.stroke_width(1))
                });
            }
        }
        for l in lines {
            let c = l.color;
            for (i, seg) in l.segments.iter().enumerate() {
                let s = chart
                    .draw_series(LineSeries::new(seg.iter().copied(), c.stroke_width(2)))
                    .map_err(err)?;
                if i == 0 {
                    s.label(l.name.as_str()).legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2))
                    });
                }
            }
        }
        if !lines.is_empty() {
            chart
                .configure_series_labels()
                .position(legend)
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .draw()
                .map_err(err)?;
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// Cumulative distribution over histogram bounds, log latency axis.
fn cdf_chart(title: &str, lines: &[Line]) -> Result<String> {
    let xs = || {
        lines
            .iter()
            .flat_map(|l| l.segments.iter().flatten().map(|p| p.0))
    };
    let lo = xs().fold(f64::INFINITY, f64::min).min(0.005);
    let hi = xs().fold(0.0_f64, f64::max).max(lo * 10.0);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d((lo * 0.8..hi * 1.25).log_scale(), 0.0..1.02)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("reconcile latency ≤ bucket bound (log)")
            .y_desc("fraction of reconciles")
            .x_labels(6)
            .x_label_formatter(&|v| fmt_duration(*v))
            .light_line_style(WHITE)
            .draw()
            .map_err(err)?;
        for l in lines {
            let c = l.color;
            for seg in &l.segments {
                chart
                    .draw_series(LineSeries::new(seg.iter().copied(), c.stroke_width(2)))
                    .map_err(err)?
                    .label(l.name.as_str())
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2))
                    });
                chart
                    .draw_series(seg.iter().map(|p| Circle::new(*p, 3, c.filled())))
                    .map_err(err)?;
            }
        }
        if !lines.is_empty() {
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::LowerRight)
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .draw()
                .map_err(err)?;
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// Ready count over time since load start: a step per first-Ready.
fn ready_curve(run: &Run, t0: f64) -> Vec<(f64, f64)> {
    let mut ts: Vec<f64> = run.objects.iter().filter_map(|o| o.ready).collect();
    ts.sort_by(f64::total_cmp);
    let mut pts = vec![(0.0, 0.0)];
    for (i, t) in ts.iter().enumerate() {
        pts.push((t - t0, i as f64));
        pts.push((t - t0, (i + 1) as f64));
    }
    let end = run
        .metrics
        .as_ref()
        .and_then(|m| m.last_good())
        .map(|r| r.t - t0)
        .into_iter()
        .chain(pts.last().map(|p| p.0))
        .fold(0.0, f64::max);
    pts.push((end, ts.len() as f64));
    pts
}

/// A gauge over time; a failed scrape breaks the line.
fn gauge_segments(run: &Run, t0: f64, col: &str) -> Segments {
    let Some(m) = &run.metrics else {
        return vec![];
    };
    let mut segs = vec![Vec::new()];
    for r in &m.rows {
        match m.get(r, col).filter(|_| r.ok) {
            Some(v) => segs.last_mut().expect("non-empty").push((r.t - t0, v)),
            None => segs.push(Vec::new()),
        }
    }
    segs.retain(|s| !s.is_empty());
    segs
}

/// Reconciles per second between consecutive good scrapes, over their real
/// gap (a counter reset counts from 0, as Prometheus's `increase()`).
pub fn reconcile_rate(run: &Run, t0: f64) -> Vec<(f64, f64)> {
    let Some(m) = &run.metrics else {
        return vec![];
    };
    let total = |r| {
        Some(
            m.get(r, "reconcile_success_total")?
                + m.get(r, "reconcile_error_total")?
                + m.get(r, "reconcile_requeue_total").unwrap_or(0.0),
        )
    };
    let good: Vec<_> = m.good().filter_map(|r| Some((r.t, total(r)?))).collect();
    good.windows(2)
        .filter(|w| w[1].0 > w[0].0)
        .map(|w| {
            // A drop is a restarted controller counting from 0 again (increase()).
            let d = if w[1].1 >= w[0].1 {
                w[1].1 - w[0].1
            } else {
                w[1].1
            };
            (w[1].0 - t0, d / (w[1].0 - w[0].0))
        })
        .collect()
}

/// Every plot of the report.
pub fn all(results: &Results, groups: &[Group]) -> Result<Vec<Block>> {
    let mut blocks = Vec::new();
    let mut scales: Vec<u64> = groups.iter().map(|g| g.scale).collect();
    scales.dedup();
    let variants: Vec<&str> = groups.iter().fold(Vec::new(), |mut v, g| {
        if !v.contains(&g.variant.as_str()) {
            v.push(g.variant.as_str());
        }
        v
    });
    let color = |v: &str| PALETTE[variants.iter().position(|x| *x == v).unwrap_or(0) % 8];
    for &n in &scales {
        let runs: Vec<&Run> = results.runs.iter().filter(|r| r.scale == n).collect();
        let lines = |f: &dyn Fn(&Run, f64) -> Segments| -> Vec<Line> {
            groups
                .iter()
                .filter(|g| g.scale == n)
                .map(|g| Line {
                    name: g.variant.clone(),
                    color: color(&g.variant),
                    segments: runs
                        .iter()
                        .filter(|r| r.variant == g.variant)
                        .flat_map(|r| f(r, r.origin()))
                        .collect(),
                })
                .collect()
        };
        let t = "seconds since load start";
        // Every fault of the scale's runs, in seconds since their load start.
        let mut marks: Vec<f64> = runs
            .iter()
            .flat_map(|r| r.faults.iter().map(|f| f.actual_s))
            .collect();
        marks.sort_by(f64::total_cmp);
        marks.dedup_by(|a, b| (*a - *b).abs() < 0.05);
        let plots = [
            (
                format!("Ready objects over time, N={n} (every run)"),
                line_chart(
                    &format!("Ready over time, N={n}"),
                    t,
                    "Ready",
                    &lines(&|r, t0| vec![ready_curve(r, t0)]),
                    SeriesLabelPosition::LowerRight,
                    &marks,
                )?,
            ),
            (
                format!("Work queue depth over time, N={n}"),
                line_chart(
                    &format!("Queue depth, N={n}"),
                    t,
                    "keys waiting",
                    &lines(&|r, t0| gauge_segments(r, t0, "queue_depth")),
                    SeriesLabelPosition::UpperRight,
                    &marks,
                )?,
            ),
            (
                format!("Reconciles per second (real scrape gaps), N={n}"),
                line_chart(
                    &format!("Reconciles per second, N={n}"),
                    t,
                    "reconciles/s",
                    &lines(&|r, t0| vec![reconcile_rate(r, t0)]),
                    SeriesLabelPosition::UpperRight,
                    &marks,
                )?,
            ),
            (
                format!(
                    "Reconcile latency distribution (cumulative, from histogram buckets), N={n}"
                ),
                cdf_chart(
                    &format!("Reconcile latency distribution, N={n}"),
                    &latency_lines(results, groups, n, &color),
                )?,
            ),
        ];
        for (title, svg) in plots {
            blocks.push(Block::Plot { title, svg });
        }
    }
    if scales.len() > 1 {
        let lines: Vec<Line> = variants
            .iter()
            .map(|v| Line {
                name: v.to_string(),
                color: color(v),
                segments: vec![
                    groups
                        .iter()
                        .filter(|g| g.variant == *v)
                        .filter_map(|g| Some((g.scale as f64, g.stat(Metric::ReadyPerS)?.median)))
                        .collect(),
                ],
            })
            .collect();
        blocks.push(Block::Plot {
            title: "Throughput against N (median Ready/s)".into(),
            svg: line_chart(
                "Throughput against N",
                "N (objects)",
                "Ready/s",
                &lines,
                SeriesLabelPosition::UpperRight,
                &[],
            )?,
        });
    }
    Ok(blocks)
}

/// Per variant: the fraction of reconciles ≤ each finite bucket bound,
/// from the bucket deltas summed over the runs the medians use.
fn latency_lines(
    results: &Results,
    groups: &[Group],
    n: u64,
    color: &dyn Fn(&str) -> RGBColor,
) -> Vec<Line> {
    groups
        .iter()
        .filter(|g| g.scale == n)
        .filter_map(|g| {
            let used: Vec<u32> = g.used().iter().map(|f| f.repeat).collect();
            let mut sum: Vec<(f64, f64)> = Vec::new();
            for r in results
                .runs
                .iter()
                .filter(|r| r.scale == n && r.variant == g.variant && used.contains(&r.repeat))
            {
                let Some(m) = &r.metrics else { continue };
                let b = m.bucket_delta("reconcile_latency");
                if sum.is_empty() {
                    sum = b;
                } else {
                    for (s, x) in sum.iter_mut().zip(b) {
                        s.1 += x.1;
                    }
                }
            }
            let total = sum.iter().find(|b| b.0.is_infinite())?.1;
            if total <= 0.0 {
                return None;
            }
            // Up to the first bound holding every observation: the tail is flat.
            let mut pts = Vec::new();
            for (le, c) in sum.iter().filter(|b| b.0.is_finite()) {
                pts.push((*le, c / total));
                if *c >= total {
                    break;
                }
            }
            Some(Line {
                name: g.variant.clone(),
                color: color(&g.variant),
                segments: vec![pts],
            })
        })
        .collect()
}

#[cfg(test)]
mod tick_tests {
    use super::tick;

    #[test]
    fn ticks_have_the_decimals_their_step_needs() {
        let labels: Vec<String> = (0..=4).map(|i| tick(f64::from(i) * 0.05, 0.5)).collect();
        assert_eq!(labels, ["0.00", "0.05", "0.10", "0.15", "0.20"]);
        assert_eq!(tick(2.5, 5.0), "2.5");
        assert_eq!(tick(120.0, 300.0), "120");
    }
}
