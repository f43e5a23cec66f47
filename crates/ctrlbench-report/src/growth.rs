//! How each per-object cost grows with N, decided. For a results directory
//! with at least three scales spanning at least 10×, every per-object figure
//! of a variant is fitted as ln(value per object) = a_round + b·ln N by least
//! squares, with each interleaved round (repeat number) as a block: a fixed
//! effect per round, so a round that ran slow moves all its scales alike and
//! does not count as scatter. A level figure (time-to-Ready p99) is fitted
//! as the level itself. The slope b gets a Student t interval on n − r − 1
//! degrees of freedom at 90 % two-sided (two one-sided 5 % tests, as TOST
//! decides equivalence), the 5 % divided among the figures asked (Bonferroni),
//! and a verdict only when the whole interval lies inside a region of the
//! margin δ: flat, linear per object, sublinear, and so on. A curvature term
//! (quadratic in ln N, fitted separately) flags accelerating or decelerating
//! growth with the local exponent at the largest N, without changing the
//! verdict (switching to it raised the worst-case error in simulation). A
//! budget crossing inverts a pooled fit of the level with a Fieller interval.
//! The rule, its prior art and its simulated error rates:
//! the "deciding how a cost grows with N" background note. Pure: it reads
//! groups already computed, never files.

use statrs::distribution::{ContinuousCDF, StudentsT};

use crate::figures::{Group, RunFigures};
use crate::metrics::Metric;

/// The default margin δ on the exponent: ±0.15 around 0 (flat) and 1 (linear).
pub const DEFAULT_DELTA: f64 = 0.15;
/// Each one-sided claim's error before it is divided among the figures.
pub const ALPHA: f64 = 0.05;
/// Fewest scales, and the least span of N, a growth fit needs.
pub const MIN_SCALES: usize = 3;
pub const MIN_SPAN: f64 = 10.0;
/// A crossing past this multiple of the largest N is not printed: a straight
/// log-log line so far beyond the data is a guess.
pub const MAX_EXTRAPOLATION: f64 = 3.0;

/// How a figure becomes the value whose growth is fitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Per {
    /// The catalogue's figure is already per object.
    Object,
    /// A run total, divided by the run's N.
    DivideByN,
    /// A level (a latency), fitted as it is.
    Level,
}

/// One figure whose growth the report decides.
pub struct GrowthFigure {
    pub name: &'static str,
    pub metric: Metric,
    pub per: Per,
    /// A limit whose crossing is estimated (seconds for a level), and what it is.
    pub budget: Option<(f64, &'static str)>,
}

/// Every figure the growth verdicts cover, in the report's order: the one
/// table to extend when a new per-object figure joins the catalogue.
pub const FIGURES: &[GrowthFigure] = &[
    GrowthFigure {
        name: "reconciles per object",
        metric: Metric::ReconcilesPerObject,
        per: Per::Object,
        budget: None,
    },
    GrowthFigure {
        name: "writes per object",
        metric: Metric::WritesPerObject,
        per: Per::Object,
        budget: None,
    },
    GrowthFigure {
        name: "requests per object",
        metric: Metric::RequestsPerObject,
        per: Per::Object,
        budget: None,
    },
    GrowthFigure {
        name: "GETs per object",
        metric: Metric::GetsPerObject,
        per: Per::Object,
        budget: None,
    },
    GrowthFigure {
        name: "LISTs per object",
        metric: Metric::ListsPerObject,
        per: Per::Object,
        budget: None,
    },
    GrowthFigure {
        name: "controller CPU / N",
        metric: Metric::Cpu,
        per: Per::DivideByN,
        budget: None,
    },
    GrowthFigure {
        name: "peak RSS / N",
        metric: Metric::PeakRss,
        per: Per::DivideByN,
        budget: None,
    },
    // The Kubernetes pod-startup SLO (p99 ≤ 5 s) as a soft reference: the
    // one published latency budget a controller's objects are held to.
    GrowthFigure {
        name: "time-to-Ready p99",
        metric: Metric::TtrP99,
        per: Per::Level,
        budget: Some((5.0, "5 s (the pod-startup SLO's p99, a soft reference)")),
    },
    GrowthFigure {
        name: "apiserver CPU / N",
        metric: Metric::ApiserverCpu,
        per: Per::DivideByN,
        budget: None,
    },
];

impl GrowthFigure {
    /// The value fitted for one run, as measured (None: not measured).
    pub fn value(&self, r: &RunFigures) -> Option<f64> {
        let v = r.get(self.metric)?;
        Some(match self.per {
            Per::Object | Per::Level => v,
            Per::DivideByN => v / r.scale as f64,
        })
    }
}

/// One run's value: its N, its round (repeat number) and the value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    pub n: f64,
    pub round: u32,
    pub value: f64,
}

/// What an exponent's interval decides, first matching row of the rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GrowthVerdict {
    Flat,
    Linear,
    WorseThanLinear,
    AtLeastLinear,
    Sublinear,
    Shrinking,
    Grows,
    DoesNotGrow,
    Undecided,
}

impl GrowthVerdict {
    pub fn words(self) -> &'static str {
        match self {
            GrowthVerdict::Flat => "flat (O(1) per object)",
            GrowthVerdict::Linear => "linear per object (O(N²) in total)",
            GrowthVerdict::WorseThanLinear => "worse than linear per object",
            GrowthVerdict::AtLeastLinear => "at least about linear per object",
            GrowthVerdict::Sublinear => "sublinear growth",
            GrowthVerdict::Shrinking => "shrinking (a fixed cost amortised)",
            GrowthVerdict::Grows => "grows",
            GrowthVerdict::DoesNotGrow => "does not grow",
            GrowthVerdict::Undecided => "undecided",
        }
    }

    /// The short tag verdicts.json carries.
    pub fn tag(self) -> &'static str {
        match self {
            GrowthVerdict::Flat => "flat",
            GrowthVerdict::Linear => "linear",
            GrowthVerdict::WorseThanLinear => "worse-than-linear",
            GrowthVerdict::AtLeastLinear => "at-least-linear",
            GrowthVerdict::Sublinear => "sublinear",
            GrowthVerdict::Shrinking => "shrinking",
            GrowthVerdict::Grows => "grows",
            GrowthVerdict::DoesNotGrow => "does-not-grow",
            GrowthVerdict::Undecided => "undecided",
        }
    }
}

/// The verdict of an exponent's interval [lo, hi] against margin δ.
pub fn decide(lo: f64, hi: f64, delta: f64) -> GrowthVerdict {
    use GrowthVerdict::*;
    if lo >= -delta && hi <= delta {
        Flat
    } else if lo >= 1.0 - delta && hi <= 1.0 + delta {
        Linear
    } else if lo > 1.0 + delta {
        WorseThanLinear
    } else if lo > 1.0 - delta {
        AtLeastLinear
    } else if lo > delta && hi < 1.0 - delta {
        Sublinear
    } else if hi < -delta {
        Shrinking
    } else if lo > delta {
        Grows
    } else if hi < delta {
        DoesNotGrow
    } else {
        Undecided
    }
}

/// The upper `alpha` point of Student's t on `df` degrees of freedom.
pub fn t_upper(alpha: f64, df: f64) -> f64 {
    StudentsT::new(0.0, 1.0, df)
        .map(|t| t.inverse_cdf(1.0 - alpha))
        .unwrap_or(f64::INFINITY)
}

/// Whether the curvature term bends the line up or down.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bend {
    Accelerating,
    Decelerating,
}

/// The quadratic fit's curvature and the local exponent at the largest N.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Curvature {
    /// The coefficient of (ln N)² and its t statistic.
    pub c: f64,
    pub t: f64,
    /// Set when |t| exceeds t(0.975, ν − 1).
    pub bend: Option<Bend>,
    /// d ln y / d ln N at the largest N, with its interval at the fit's level.
    pub local: f64,
    pub local_lo: f64,
    pub local_hi: f64,
}

/// The exponent of one figure's growth.
#[derive(Clone, Debug, PartialEq)]
pub struct Fit {
    pub b: f64,
    pub lo: f64,
    pub hi: f64,
    pub se: f64,
    pub df: f64,
    pub verdict: GrowthVerdict,
    pub n_min: f64,
    pub n_max: f64,
    pub curvature: Option<Curvature>,
}

/// Why a figure has no exponent.
pub type NotEstimable = String;

/// A least-squares fit: coefficients, residual sum of squares, (XᵀX)⁻¹
/// and the residual degrees of freedom.
struct Ols {
    beta: Vec<f64>,
    rss: f64,
    inv: Vec<Vec<f64>>,
    df: f64,
}

/// Least squares with a fixed effect per round: each regressor column and
/// y are centred within their round, which is what the round dummies do.
/// One or two regressors.
fn blocked_ols(points: &[Point], cols: &[fn(f64) -> f64]) -> Option<Ols> {
    let mut rounds: Vec<u32> = points.iter().map(|p| p.round).collect();
    rounds.sort_unstable();
    rounds.dedup();
    let p = cols.len();
    // Centred design rows and responses.
    let mut xs: Vec<Vec<f64>> = Vec::new();
    let mut ys: Vec<f64> = Vec::new();
    for &r in &rounds {
        let pts: Vec<&Point> = points.iter().filter(|q| q.round == r).collect();
        let k = pts.len() as f64;
        let mean_y = pts.iter().map(|q| q.value.ln()).sum::<f64>() / k;
        let means: Vec<f64> = cols
            .iter()
            .map(|f| pts.iter().map(|q| f(q.n.ln())).sum::<f64>() / k)
            .collect();
        for q in pts {
            xs.push(
                cols.iter()
                    .zip(&means)
                    .map(|(f, m)| f(q.n.ln()) - m)
                    .collect(),
            );
            ys.push(q.value.ln() - mean_y);
        }
    }
    let df = points.len() as f64 - rounds.len() as f64 - p as f64;
    if df < 1.0 {
        return None;
    }
    let mut xtx = vec![vec![0.0; p]; p];
    let mut xty = vec![0.0; p];
    for (x, y) in xs.iter().zip(&ys) {
        for i in 0..p {
            xty[i] += x[i] * y;
            for j in 0..p {
                xtx[i][j] += x[i] * x[j];
            }
        }
    }
    let inv = match p {
        1 => vec![vec![1.0 / xtx[0][0]]],
        2 => {
            let det = xtx[0][0] * xtx[1][1] - xtx[0][1] * xtx[1][0];
            if det.abs() < 1e-12 {
                return None;
            }
            vec![
                vec![xtx[1][1] / det, -xtx[0][1] / det],
                vec![-xtx[1][0] / det, xtx[0][0] / det],
            ]
        }
        _ => return None,
    };
    if !inv[0][0].is_finite() {
        return None;
    }
    let beta: Vec<f64> = (0..p)
        .map(|i| (0..p).map(|j| inv[i][j] * xty[j]).sum())
        .collect();
    let rss: f64 = xs
        .iter()
        .zip(&ys)
        .map(|(x, y)| {
            let fit: f64 = x.iter().zip(&beta).map(|(a, b)| a * b).sum();
            (y - fit).powi(2)
        })
        .sum();
    Some(Ols { beta, rss, inv, df })
}

/// The exponent of `points`' growth, its interval at one-sided level `alpha`
/// (already divided among the figures), its verdict against `delta`, and
/// the curvature flag. Err says why not: a value that is zero, negative or
/// censored, fewer than three scales, less than a 10× span, or no degrees
/// of freedom left.
pub fn fit(points: &[Point], alpha: f64, delta: f64) -> Result<Fit, NotEstimable> {
    if let Some(p) = points.iter().find(|p| p.value.is_nan() || p.value <= 0.0) {
        return Err(format!("zero at N = {}", fmt_n(p.n)));
    }
    if let Some(p) = points.iter().find(|p| !p.value.is_finite()) {
        return Err(format!(
            "censored (beyond the window) at N = {}",
            fmt_n(p.n)
        ));
    }
    let mut scales: Vec<f64> = points.iter().map(|p| p.n).collect();
    scales.sort_by(f64::total_cmp);
    scales.dedup();
    let (n_min, n_max) = match (scales.first(), scales.last()) {
        (Some(&a), Some(&b)) => (a, b),
        _ => return Err("no values".into()),
    };
    if scales.len() < MIN_SCALES || n_max / n_min < MIN_SPAN {
        return Err(format!(
            "needs {MIN_SCALES} scales spanning {MIN_SPAN}×: {} over N = {}–{}",
            scales.len(),
            fmt_n(n_min),
            fmt_n(n_max)
        ));
    }
    let Ols { beta, rss, inv, df } =
        blocked_ols(points, &[|x| x]).ok_or("too few runs for an interval")?;
    let b = beta[0];
    let se = (rss / df * inv[0][0]).sqrt();
    let t = t_upper(alpha, df);
    let (lo, hi) = (b - t * se, b + t * se);
    // The quadratic in ln N, fitted on its own: x is centred on the grand
    // mean first so the two columns are not nearly collinear.
    let centre = points.iter().map(|p| p.n.ln()).sum::<f64>() / points.len() as f64;
    let shifted: Vec<Point> = points
        .iter()
        .map(|p| Point {
            n: (p.n.ln() - centre).exp(),
            ..*p
        })
        .collect();
    let curvature =
        blocked_ols(&shifted, &[|x| x, |x| x * x]).and_then(|Ols { beta, rss, inv, df }| {
            let s2 = rss / df;
            let (b1, c) = (beta[0], beta[1]);
            let t_c = c / (s2 * inv[1][1]).sqrt();
            let threshold = t_upper(0.025, df);
            let bend = (t_c.abs() > threshold).then_some(if c > 0.0 {
                Bend::Accelerating
            } else {
                Bend::Decelerating
            });
            // d/dx (b1·x + c·x²) = b1 + 2c·x at the largest N.
            let g = 2.0 * (n_max.ln() - centre);
            let local = b1 + c * g;
            let var = s2 * (inv[0][0] + 2.0 * g * inv[0][1] + g * g * inv[1][1]);
            let half = t_upper(alpha, df) * var.sqrt();
            t_c.is_finite().then_some(Curvature {
                c,
                t: t_c,
                bend,
                local,
                local_lo: local - half,
                local_hi: local + half,
            })
        });
    Ok(Fit {
        b,
        lo,
        hi,
        se,
        df,
        verdict: decide(lo, hi, delta),
        n_min,
        n_max,
        curvature,
    })
}

/// Where the fitted level reaches a limit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Crossing {
    /// The slope's interval includes 0: the set of N is unbounded.
    CannotBeBounded,
    /// N* and its Fieller interval; `extrapolated` past the largest N.
    At {
        n: f64,
        lo: f64,
        hi: f64,
        extrapolated: bool,
    },
    /// N* lies past `MAX_EXTRAPOLATION` × the largest N: not printed.
    BeyondTested,
}

/// Where ln y = ȳ + b(ln N − x̄) reaches ln `limit`, from a pooled fit of the
/// level (ν = n − 2), with the Fieller interval at one-sided level `alpha`:
/// the x where (ȳ − ln T + b·d)² ≤ t²s²(1/n + d²/S). None without a fit.
pub fn crossing(points: &[Point], limit: f64, alpha: f64) -> Option<Crossing> {
    let n = points.len() as f64;
    if points.len() < 3
        || limit.is_nan()
        || limit <= 0.0
        || points
            .iter()
            .any(|p| !(p.value > 0.0 && p.value.is_finite()))
    {
        return None;
    }
    let xbar = points.iter().map(|p| p.n.ln()).sum::<f64>() / n;
    let ybar = points.iter().map(|p| p.value.ln()).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.n.ln() - xbar).powi(2)).sum();
    let sxy: f64 = points
        .iter()
        .map(|p| (p.n.ln() - xbar) * (p.value.ln() - ybar))
        .sum();
    if sxx <= 0.0 {
        return None;
    }
    let b = sxy / sxx;
    let s2 = points
        .iter()
        .map(|p| (p.value.ln() - ybar - b * (p.n.ln() - xbar)).powi(2))
        .sum::<f64>()
        / (n - 2.0);
    let t2s2 = t_upper(alpha, n - 2.0).powi(2) * s2;
    let a = b * b - t2s2 / sxx;
    if a <= 0.0 {
        return Some(Crossing::CannotBeBounded);
    }
    let g = ybar - limit.ln();
    let (bq, cq) = (2.0 * b * g, g * g - t2s2 / n);
    let disc = (bq * bq - 4.0 * a * cq).max(0.0).sqrt();
    let (d1, d2) = ((-bq - disc) / (2.0 * a), (-bq + disc) / (2.0 * a));
    let d = -g / b;
    let n_max = points.iter().map(|p| p.n).fold(f64::MIN, f64::max);
    let at = (xbar + d).exp();
    if at > MAX_EXTRAPOLATION * n_max {
        return Some(Crossing::BeyondTested);
    }
    Some(Crossing::At {
        n: at,
        lo: (xbar + d1.min(d2)).exp(),
        hi: (xbar + d1.max(d2)).exp(),
        extrapolated: at > n_max,
    })
}

/// One figure of one variant: its per-scale medians and its fit (or why not).
pub struct Growth {
    pub variant: String,
    pub figure: &'static GrowthFigure,
    /// (N, median value over the rounds) per scale, ascending.
    pub by_scale: Vec<(u64, Option<f64>)>,
    pub fit: Result<Fit, NotEstimable>,
    pub crossing: Option<Crossing>,
}

/// Every variant whose scales qualify (≥ 3 spanning ≥ 10×), every figure
/// measured at one or more of them at least once, fitted at α / (figures asked).
pub fn of(groups: &[Group], delta: f64) -> Vec<Growth> {
    let mut variants: Vec<&str> = Vec::new();
    for g in groups {
        if !variants.contains(&g.variant.as_str()) {
            variants.push(&g.variant);
        }
    }
    // (variant, its groups by ascending N, figure) for every fit asked.
    let mut asked = Vec::new();
    for v in variants {
        let mut gs: Vec<&Group> = groups.iter().filter(|g| g.variant == v).collect();
        gs.sort_by_key(|g| g.scale);
        let (lo, hi) = (gs[0].scale as f64, gs[gs.len() - 1].scale as f64);
        if gs.len() < MIN_SCALES || lo <= 0.0 || hi / lo < MIN_SPAN {
            continue;
        }
        for f in FIGURES {
            let measured = gs
                .iter()
                .any(|g| g.used().iter().any(|r| f.value(r).is_some()));
            if measured {
                asked.push((v, gs.clone(), f));
            }
        }
    }
    let alpha = ALPHA / asked.len().max(1) as f64;
    asked
        .into_iter()
        .map(|(v, gs, f)| {
            let mut points = Vec::new();
            let mut missing = None;
            let by_scale = gs
                .iter()
                .map(|g| {
                    let vals: Vec<f64> = g.used().iter().filter_map(|r| f.value(r)).collect();
                    points.extend(g.used().iter().filter_map(|r| {
                        Some(Point {
                            n: g.scale as f64,
                            round: r.repeat,
                            value: f.value(r)?,
                        })
                    }));
                    if vals.is_empty() && missing.is_none() {
                        missing = Some(g.scale);
                    }
                    (g.scale, crate::quantile::median(&vals))
                })
                .collect();
            let fit = match missing {
                Some(n) => Err(format!("not measured at N = {}", fmt_n(n as f64))),
                None => fit(&points, alpha, delta),
            };
            let crossing = match (&fit, f.budget) {
                (Ok(_), Some((limit, _))) => crossing(&points, limit, alpha),
                _ => None,
            };
            Growth {
                variant: v.to_string(),
                figure: f,
                by_scale,
                fit,
                crossing,
            }
        })
        .collect()
}

/// "300", "3000", "10 000": thousands grouped from five digits on.
pub fn fmt_n(n: f64) -> String {
    let s = format!("{:.0}", n);
    if s.len() < 5 {
        return s;
    }
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(' ');
        }
        out.push(ch);
    }
    out
}

/// A signed number with a real minus sign: "0.03", "−0.06".
fn signed(v: f64) -> String {
    format!("{v:.2}").replace('-', "−")
}

impl Fit {
    /// "b = 0.03 [−0.06, 0.11] over N = 300–10 000".
    pub fn line(&self) -> String {
        format!(
            "b = {} [{}, {}] over N = {}–{}",
            signed(self.b),
            signed(self.lo),
            signed(self.hi),
            fmt_n(self.n_min),
            fmt_n(self.n_max)
        )
    }

    /// "N = 300–10 000".
    pub fn range(&self) -> String {
        format!("{}–{}", fmt_n(self.n_min), fmt_n(self.n_max))
    }

    /// ", accelerating: local exponent 1.20 [0.95, 1.45] at N = 10 000" or "".
    pub fn curvature_words(&self) -> String {
        match self.curvature {
            Some(c) if c.bend.is_some() => format!(
                "; {}: local exponent {} [{}, {}] at N = {} (the verdict stays the whole range's)",
                match c.bend {
                    Some(Bend::Accelerating) => "accelerating",
                    _ => "decelerating",
                },
                signed(c.local),
                signed(c.local_lo),
                signed(c.local_hi),
                fmt_n(self.n_max)
            ),
            _ => String::new(),
        }
    }
}

impl Crossing {
    /// "reaches 5 s at N ≈ 13 900 [10 500, 19 700] (extrapolated)", or None
    /// past 3× the largest N.
    pub fn words(&self, limit: &str) -> String {
        match *self {
            Crossing::CannotBeBounded => {
                format!(
                    "where it reaches {limit} cannot be bounded (the slope's interval includes 0)"
                )
            }
            Crossing::BeyondTested => {
                format!("reaches {limit} only beyond {MAX_EXTRAPOLATION}× the largest N tested")
            }
            Crossing::At {
                n,
                lo,
                hi,
                extrapolated,
            } => format!(
                "reaches {limit} at N ≈ {} [{}, {}]{}",
                fmt_n(round3(n)),
                fmt_n(round3(lo)),
                fmt_n(round3(hi)),
                if extrapolated { " (extrapolated)" } else { "" }
            ),
        }
    }
}

/// Three significant figures: a crossing is not known better.
fn round3(v: f64) -> f64 {
    if !v.is_finite() || v <= 0.0 {
        return v;
    }
    let scale = 10f64.powi(v.log10().floor() as i32 - 2);
    (v / scale).round() * scale
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdict_rows_in_order() {
        use GrowthVerdict::*;
        let d = DEFAULT_DELTA;
        for (lo, hi, want) in [
            (-0.06, 0.11, Flat),
            (-0.15, 0.15, Flat),
            (0.9, 1.1, Linear),
            (1.2, 1.5, WorseThanLinear),
            (0.9, 1.3, AtLeastLinear),
            (0.3, 0.7, Sublinear),
            (-0.5, -0.2, Shrinking),
            (0.2, 0.9, Grows),
            (-0.3, 0.1, DoesNotGrow),
            (-0.1, 0.3, Undecided),
        ] {
            assert_eq!(decide(lo, hi, d), want, "[{lo}, {hi}]");
        }
    }

    #[test]
    fn an_exact_power_law_is_fitted_exactly_and_a_zero_is_not_estimable() {
        let mut pts = Vec::new();
        for (round, shift) in [(1, 1.0), (2, 1.3)] {
            for n in [300.0, 1000.0, 3000.0, 10000.0] {
                // A tiny wobble keeps the residual variance above zero.
                let wobble = if n == 1000.0 { 1.0001 } else { 1.0 };
                pts.push(Point {
                    n,
                    round,
                    value: shift * 2.0 * f64::powf(n, 0.5) * wobble,
                });
            }
        }
        let f = fit(&pts, ALPHA, DEFAULT_DELTA).unwrap();
        assert!((f.b - 0.5).abs() < 1e-3, "{f:?}");
        assert_eq!(f.df, 5.0);
        assert_eq!(f.verdict, GrowthVerdict::Sublinear);
        assert!(f.line().ends_with("over N = 300–10 000"), "{}", f.line());
        pts[0].value = 0.0;
        assert_eq!(
            fit(&pts, ALPHA, DEFAULT_DELTA).unwrap_err(),
            "zero at N = 300"
        );
    }

    #[test]
    fn thousands_are_grouped_from_five_digits() {
        assert_eq!(fmt_n(300.0), "300");
        assert_eq!(fmt_n(3000.0), "3000");
        assert_eq!(fmt_n(10000.0), "10 000");
        assert_eq!(fmt_n(1234567.0), "1 234 567");
    }

    /// Groups at three scales with reconciles per object growing as N^0.5
    /// and controller CPU growing as N (so flat per object), two rounds.
    fn groups(cpu_at_3000: bool) -> Vec<Group> {
        [300u64, 3000, 30000]
            .iter()
            .map(|&n| Group {
                scale: n,
                variant: "rust-good".into(),
                runs: (1..=2)
                    .map(|rep| {
                        let mut r = RunFigures::empty(n, "rust-good", rep);
                        let wobble =
                            if rep == 2 { 1.02 } else { 1.0 } * if n == 3000 { 1.01 } else { 1.0 };
                        r.set(
                            Metric::ReconcilesPerObject,
                            Some((n as f64).sqrt() * wobble),
                        );
                        if n != 3000 || cpu_at_3000 {
                            r.set(Metric::Cpu, Some(0.002 * n as f64 * wobble));
                        }
                        r
                    })
                    .collect(),
            })
            .collect()
    }

    #[test]
    fn groups_become_fits_per_figure_with_the_error_split_between_them() {
        let all = of(&groups(true), DEFAULT_DELTA);
        assert_eq!(all.len(), 2, "only the two measured figures are asked");
        let rec = all
            .iter()
            .find(|g| g.figure.metric == Metric::ReconcilesPerObject)
            .unwrap();
        let fit = rec.fit.as_ref().unwrap();
        assert!((fit.b - 0.5).abs() < 0.01, "{fit:?}");
        assert_eq!(fit.verdict, GrowthVerdict::Sublinear);
        assert_eq!(rec.by_scale.len(), 3);
        let cpu = all.iter().find(|g| g.figure.metric == Metric::Cpu).unwrap();
        let fit = cpu.fit.as_ref().unwrap();
        assert!(fit.b.abs() < 0.01, "CPU / N is flat: {fit:?}");
        assert_eq!(fit.verdict, GrowthVerdict::Flat);
        // A scale without the figure leaves it not estimable, saying where.
        let all = of(&groups(false), DEFAULT_DELTA);
        let cpu = all.iter().find(|g| g.figure.metric == Metric::Cpu).unwrap();
        assert_eq!(cpu.fit.as_ref().unwrap_err(), "not measured at N = 3000");
        // Two scales, or less than a 10× span: nothing is asked.
        let mut two = groups(true);
        two.pop();
        assert!(of(&two, DEFAULT_DELTA).is_empty());
    }
}
