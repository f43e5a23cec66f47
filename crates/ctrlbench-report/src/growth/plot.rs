//! A growth figure drawn on log-log axes: each round's points per variant
//! (circles for the first round, triangles after), the fitted line over the
//! tested range with the band its slope's interval spans, the line dashed
//! beyond the largest N (up to 3×, the farthest a crossing is printed), and
//! a budget's horizontal line. The line passes through the points' mean in
//! ln N and ln value, as a fit with a level per round does on average.

use anyhow::Result;
use plotters::prelude::*;

use super::Growth;
use crate::plots::{SIZE, err};

/// How far past the largest N the line is drawn dashed.
const EXTRAPOLATE: f64 = 3.0;

/// The fitted line's value at `n` for slope `b` through the points' centre.
fn at(centre: (f64, f64), b: f64, n: f64) -> f64 {
    (centre.1 + b * (n.ln() - centre.0)).exp()
}

/// The mean of ln N and of ln value over a fit's points.
fn centre(g: &Growth) -> Option<(f64, f64)> {
    let pts: Vec<_> = g
        .points
        .iter()
        .filter(|p| p.value > 0.0 && p.n > 0.0)
        .collect();
    if pts.is_empty() {
        return None;
    }
    let k = pts.len() as f64;
    Some((
        pts.iter().map(|p| p.n.ln()).sum::<f64>() / k,
        pts.iter().map(|p| p.value.ln()).sum::<f64>() / k,
    ))
}

/// The SVG of one figure's fits, one colour per variant; None when no fit
/// of it could be drawn (every one not estimable).
pub fn svg(
    title: &str,
    fits: &[(&Growth, RGBColor)],
    budget: Option<f64>,
) -> Result<Option<String>> {
    let drawn: Vec<_> = fits
        .iter()
        .filter_map(|(g, c)| Some((*g, *c, g.fit.as_ref().ok()?, centre(g)?)))
        .collect();
    if drawn.is_empty() {
        return Ok(None);
    }
    let n_lo = drawn
        .iter()
        .map(|d| d.2.n_min)
        .fold(f64::INFINITY, f64::min);
    let n_hi = drawn.iter().map(|d| d.2.n_max).fold(0.0, f64::max) * EXTRAPOLATE;
    let mut ys: Vec<f64> = drawn
        .iter()
        .flat_map(|(g, _, f, c)| {
            let ends = [f.n_min, f.n_max * EXTRAPOLATE];
            g.points
                .iter()
                .map(|p| p.value)
                .chain(
                    ends.iter()
                        .flat_map(|&n| [at(*c, f.lo, n), at(*c, f.hi, n)]),
                )
                .collect::<Vec<_>>()
        })
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    ys.extend(budget);
    let y_lo = ys.iter().copied().fold(f64::INFINITY, f64::min) / 1.5;
    let y_hi = ys.iter().copied().fold(0.0, f64::max) * 1.5;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d((n_lo / 1.2..n_hi).log_scale(), (y_lo..y_hi).log_scale())
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("N (log scale)")
            .y_desc("per object (log scale)")
            .y_label_formatter(&|v| format!("{v:.3}"))
            .x_label_formatter(&|v| format!("{v:.0}"))
            .draw()
            .map_err(err)?;
        if let Some(limit) = budget {
            chart
                .draw_series(LineSeries::new(
                    [(n_lo / 1.2, limit), (n_hi, limit)],
                    RED.stroke_width(1),
                ))
                .map_err(err)?
                .label("budget")
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], RED.stroke_width(1)));
        }
        for (g, color, f, c) in &drawn {
            let (c, color, f) = (*c, *color, *f);
            let band = [f.n_min, f.n_max]
                .iter()
                .map(|&n| (n, at(c, f.lo, n)))
                .chain([f.n_max, f.n_min].iter().map(|&n| (n, at(c, f.hi, n))))
                .collect::<Vec<_>>();
            chart
                .draw_series([Polygon::new(band, color.mix(0.15).filled())])
                .map_err(err)?;
            chart
                .draw_series(LineSeries::new(
                    [f.n_min, f.n_max].map(|n| (n, at(c, f.b, n))),
                    color.stroke_width(2),
                ))
                .map_err(err)?
                .label(g.variant.as_str())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                });
            chart
                .draw_series(DashedLineSeries::new(
                    [f.n_max, f.n_max * EXTRAPOLATE].map(|n| (n, at(c, f.b, n))),
                    6,
                    4,
                    color.stroke_width(1),
                ))
                .map_err(err)?;
            for p in g.points.iter().filter(|p| p.value > 0.0) {
                let xy = (p.n, p.value);
                if p.round <= 1 {
                    chart
                        .draw_series([Circle::new(xy, 4, color.filled())])
                        .map_err(err)?;
                } else {
                    chart
                        .draw_series([TriangleMarker::new(xy, 5, color.filled())])
                        .map_err(err)?;
                }
            }
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(err)?;
        root.present().map_err(err)?;
    }
    Ok(Some(svg))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::growth::{FIGURES, Fit, GrowthVerdict, Point};

    /// A linear figure: its points, its band and its dashed line are drawn;
    /// a figure with no fit is no plot. At b = 1 through the centre
    /// (ln 1000, ln 10), the line reads 1 at N = 100 and 100 at N = 10 000.
    #[test]
    fn a_fit_is_drawn_and_no_fit_is_no_plot() {
        let points: Vec<Point> = [(100.0, 1, 1.0), (1000.0, 1, 10.0), (10_000.0, 2, 100.0)]
            .map(|(n, round, value)| Point { n, round, value })
            .to_vec();
        let fit = Fit {
            b: 1.0,
            lo: 0.9,
            hi: 1.1,
            se: 0.05,
            df: 3.0,
            verdict: GrowthVerdict::Linear,
            n_min: 100.0,
            n_max: 10_000.0,
            curvature: None,
        };
        let g = Growth {
            variant: "v".into(),
            figure: &FIGURES[0],
            by_scale: Vec::new(),
            fit: Ok(fit),
            crossing: None,
            points,
        };
        let c = centre(&g).unwrap();
        assert!((at(c, 1.0, 100.0) - 1.0).abs() < 1e-9);
        assert!((at(c, 1.0, 10_000.0) - 100.0).abs() < 1e-9);
        let svg = svg("t", &[(&g, RED)], Some(50.0)).unwrap().unwrap();
        assert!(svg.contains("<svg") && svg.contains("polygon"), "{svg}");
        let none = Growth {
            fit: Err("zero at N = 100".into()),
            ..g
        };
        assert!(svg_of_none(&none));
    }

    fn svg_of_none(g: &Growth) -> bool {
        svg("t", &[(g, RED)], None).unwrap().is_none()
    }
}
