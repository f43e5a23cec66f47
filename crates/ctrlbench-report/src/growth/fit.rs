//! The growth rule's statistics: the blocked least-squares fit of ln
//! value against ln N, its t interval and verdict, the curvature check and
//! the Fieller interval of a limit's crossing, and how each is worded. Pure
//! numbers; the report-facing part (which figures, per group) is mod.rs.

use statrs::distribution::{ContinuousCDF, StudentsT};

/// The default margin δ on the exponent: ±0.15 around 0 (flat) and 1 (linear).
pub const DEFAULT_DELTA: f64 = 0.15;
/// δ must stay below this: at 0.5 the flat and linear regions would meet.
pub const MAX_DELTA: f64 = 0.5;
/// Each one-sided claim's error before it is divided among the figures.
pub const ALPHA: f64 = 0.05;
/// Fewest scales, and the least span of N, a growth fit needs.
pub const MIN_SCALES: usize = 3;
pub const MIN_SPAN: f64 = 10.0;
/// How far under [`MIN_SPAN`] a results directory's span may fall and
/// still count: scales rounded to whole objects (3 334 and 33 334
/// Deployments of 3 pods, 10 002 and 100 002 pods) span 9.998×.
pub const SPAN_ROUNDING: f64 = 0.999;
/// A crossing past this multiple of the largest N is not printed: a straight
/// log-log line so far beyond the data is a guess.
pub const MAX_EXTRAPOLATION: f64 = 3.0;

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

    /// The words for a level (a latency, fitted as it is, not per object):
    /// its exponent is the level's own growth with N.
    pub fn level_words(self) -> &'static str {
        match self {
            GrowthVerdict::Flat => "flat (does not depend on N)",
            GrowthVerdict::Linear => "linear in N",
            GrowthVerdict::WorseThanLinear => "worse than linear in N",
            GrowthVerdict::AtLeastLinear => "at least about linear in N",
            other => other.words(),
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

/// The power at which [`detectable`] states the smallest difference it can decide.
pub const POWER: f64 = 0.8;

/// The smallest difference in exponent a plan of `rounds` rounds over
/// `scales` can decide with one-sided error `alpha` and chance `power`,
/// when one run's ln value scatters by `s` around its round's line: the
/// fit's degrees of freedom ν = r·k − r − 1 (one block per round, one
/// slope), the slope's standard error s / √(r · Σ(ln Nᵢ − mean)²) for
/// this ln N design, and the difference (t(1 − α, ν) + t(power, ν)) · se.
/// None for a design with no degrees of freedom or no spread in N.
pub fn detectable(scales: &[f64], rounds: u32, s: f64, alpha: f64, power: f64) -> Option<f64> {
    let k = scales.len() as f64;
    let r = f64::from(rounds);
    let df = r * k - r - 1.0;
    if df < 1.0 || scales.iter().any(|n| n.is_nan() || *n <= 0.0) {
        return None;
    }
    let mean = scales.iter().map(|n| n.ln()).sum::<f64>() / k;
    let sxx: f64 = scales.iter().map(|n| (n.ln() - mean).powi(2)).sum();
    if sxx <= 0.0 {
        return None;
    }
    let se = s / (r * sxx).sqrt();
    Some((t_upper(alpha, df) + t_upper(1.0 - power, df)) * se)
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
        let what = if p.value < 0.0 { "below zero" } else { "zero" };
        return Err(format!("{what} at N = {}", fmt_n(p.n)));
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
    if scales.len() < MIN_SCALES || n_max / n_min < MIN_SPAN * SPAN_ROUNDING {
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

    /// By hand: N = 100, 1000, 10 000 in 2 rounds. ln N is ln 100 + {0, 1,
    /// 2}·ln 10, so Σ(ln Nᵢ − mean)² = 2·(ln 10)² and r·Σ = 4·(ln 10)²,
    /// whose root is 2·ln 10 = 4.60517: se = 0.30 / 4.60517 = 0.065144.
    /// ν = 2·3 − 2 − 1 = 3; a t table gives t(0.95, 3) = 2.3534 and
    /// t(0.80, 3) = 0.9785, together 3.3319: 3.3319 × 0.065144 = 0.21705.
    #[test]
    fn the_detectable_difference_of_a_three_scale_two_round_plan() {
        let d = detectable(&[100.0, 1000.0, 10000.0], 2, 0.30, 0.05, 0.8).unwrap();
        assert!((d - 0.21705).abs() < 2e-4, "{d}");
        // More rounds, a wider range: smaller; no degrees of freedom: none.
        let more = detectable(&[100.0, 1000.0, 10000.0], 4, 0.30, 0.05, 0.8).unwrap();
        assert!(more < d);
        assert_eq!(detectable(&[100.0, 1000.0], 1, 0.30, 0.05, 0.8), None);
        assert_eq!(detectable(&[100.0, 100.0, 100.0], 2, 0.30, 0.05, 0.8), None);
    }
}
