//! How sure a ratio B/A is, two ways. Paired, when the variants ran
//! interleaved in one results directory: repeat k of A and repeat k of B ran
//! minutes apart under the same machine state, so the unit is the pair, and
//! drift between repeats moves both sides alike instead of counting as
//! noise twice. The estimate is the geometric mean of the per-repeat ratios
//! with a 95 % Student t interval on their logarithms (K − 1 degrees of
//! freedom); one pair has no interval. Unpaired, for two results
//! directories (nothing lines their repeats up): B/A of the two medians with
//! a 95 % percentile bootstrap over each side's runs, with a fixed seed so
//! a report never changes between renderings. What a ratio *means* (higher,
//! lower, equivalent, undecided) is `verdict`'s.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::quantile::median;
use crate::student::t975;

/// Resamples per bootstrap interval.
const RESAMPLES: usize = 2000;
const SEED: u64 = 1;

/// Which analysis produced a ratio, and over how many runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// K repeat pairs (B_k / A_k at the same scale).
    Paired { pairs: usize },
    /// Runs on each side, resampled independently.
    Unpaired { a: usize, b: usize },
}

/// B/A and, when there is enough data for one, its 95 % interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ratio {
    pub ratio: f64,
    pub interval: Option<(f64, f64)>,
    pub method: Method,
}

impl Ratio {
    /// Unpaired: medians of `a` and `b`, their ratio, and the bootstrap
    /// interval (two or more runs on each side).
    pub fn of(a: &[f64], b: &[f64]) -> Option<Ratio> {
        let (ma, mb) = (median(a)?, median(b)?);
        if ma == 0.0 || !(mb / ma).is_finite() {
            return None;
        }
        let interval = (a.len() >= 2 && b.len() >= 2)
            .then(|| bootstrap(a, b))
            .flatten();
        Some(Ratio {
            ratio: mb / ma,
            interval,
            method: Method::Unpaired {
                a: a.len(),
                b: b.len(),
            },
        })
    }

    /// Paired: (A_k, B_k) per repeat k. The logarithm needs both sides
    /// positive, so a pair with a zero (no errors, no conflicts) makes the
    /// paired analysis undefined: None, and the caller falls back to `of`.
    pub fn paired(pairs: &[(f64, f64)]) -> Option<Ratio> {
        if pairs.is_empty()
            || !pairs
                .iter()
                .all(|(a, b)| *a > 0.0 && *b > 0.0 && a.is_finite() && b.is_finite())
        {
            return None;
        }
        let logs: Vec<f64> = pairs.iter().map(|(a, b)| (b / a).ln()).collect();
        let k = logs.len();
        let mean = logs.iter().sum::<f64>() / k as f64;
        let interval = t975(k - 1).map(|t| {
            let var = logs.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (k - 1) as f64;
            let half = t * var.sqrt() / (k as f64).sqrt();
            ((mean - half).exp(), (mean + half).exp())
        });
        Some(Ratio {
            ratio: mean.exp(),
            interval,
            method: Method::Paired { pairs: k },
        })
    }

    /// Paired over `pairs` when that is defined, else unpaired over each
    /// side's values (a zero on one side of some repeat).
    pub fn interleaved(pairs: &[(f64, f64)], a: &[f64], b: &[f64]) -> Option<Ratio> {
        Ratio::paired(pairs).or_else(|| Ratio::of(a, b))
    }

    /// The same analysis of the reciprocal, A/B.
    pub fn inverse(&self) -> Ratio {
        Ratio {
            ratio: 1.0 / self.ratio,
            interval: self.interval.map(|(lo, hi)| (1.0 / hi, 1.0 / lo)),
            method: self.method,
        }
    }

    /// "1.23 [1.10–1.41]", "1.23 (one pair)" or "1.23 (single sample)".
    pub fn cell(&self) -> String {
        match (self.interval, self.method) {
            (Some((lo, hi)), _) => format!("{:.2} [{lo:.2}–{hi:.2}]", self.ratio),
            (None, Method::Paired { .. }) => format!("{:.2} (one pair)", self.ratio),
            (None, Method::Unpaired { .. }) => format!("{:.2} (single sample)", self.ratio),
        }
    }

    /// "paired over 3 repeats", or "unpaired (2 and 3 runs)".
    pub fn basis(&self) -> String {
        match self.method {
            Method::Paired { pairs: 1 } => "paired over 1 repeat".into(),
            Method::Paired { pairs } => format!("paired over {pairs} repeats"),
            Method::Unpaired { a, b } => format!("unpaired ({a} and {b} runs)"),
        }
    }
}

/// The percentile bootstrap of median(b)/median(a): None when no resample
/// gives a finite ratio.
fn bootstrap(a: &[f64], b: &[f64]) -> Option<(f64, f64)> {
    let mut rng = StdRng::seed_from_u64(SEED);
    let mut draw = |v: &[f64]| -> f64 {
        let s: Vec<f64> = (0..v.len())
            .map(|_| v[rng.random_range(0..v.len())])
            .collect();
        median(&s).unwrap_or(f64::NAN)
    };
    let mut rs: Vec<f64> = (0..RESAMPLES)
        .filter_map(|_| {
            let (x, y) = (draw(a), draw(b));
            (x != 0.0).then(|| y / x).filter(|r| r.is_finite())
        })
        .collect();
    rs.sort_by(f64::total_cmp);
    if rs.is_empty() {
        return None;
    }
    let at = |q: f64| rs[((q * (rs.len() - 1) as f64).round() as usize).min(rs.len() - 1)];
    Some((at(0.025), at(0.975)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bootstrap_intervals_separate_clear_differences_from_noise() {
        // Medians 1.025 and 2.025: every resample's ratio lies in [1.9/1.1, 2.1/0.9].
        let r = Ratio::of(&[1.0, 1.1, 0.9, 1.05], &[2.0, 2.1, 1.9, 2.05]).unwrap();
        assert!((r.ratio - 2.025 / 1.025).abs() < 1e-12);
        let (lo, hi) = r.interval.unwrap();
        assert!(
            lo >= 1.9 / 1.1 - 1e-12 && hi <= 2.1 / 0.9 + 1e-12,
            "{lo} {hi}"
        );
        assert_eq!(r.basis(), "unpaired (4 and 4 runs)");
        // Overlapping samples: the interval includes 1.
        let (lo, hi) = Ratio::of(&[1.0, 1.2, 0.8], &[1.1, 0.9, 1.0])
            .unwrap()
            .interval
            .unwrap();
        assert!(lo < 1.0 && hi > 1.0);
        // One run on a side: no interval.
        let r = Ratio::of(&[1.0], &[2.0, 2.2]).unwrap();
        assert_eq!(r.interval, None);
        assert_eq!(r.cell(), "2.10 (single sample)");
        assert!(Ratio::of(&[0.0], &[1.0]).is_none());
        // Seeded: the same input gives the same interval.
        let x = Ratio::of(&[1.0, 1.3, 0.7], &[1.2, 1.0, 1.4]).unwrap();
        assert_eq!(x, Ratio::of(&[1.0, 1.3, 0.7], &[1.2, 1.0, 1.4]).unwrap());
    }

    #[test]
    fn paired_is_the_geometric_mean_with_a_t_interval_on_the_logs() {
        // Rust/Go Ready/s per repeat on this machine: 1.170, 1.182, 1.175.
        let pairs = [(1.0, 1.170), (1.0, 1.182), (1.0, 1.175)];
        let r = Ratio::paired(&pairs).unwrap();
        // By hand: logs 0.157004, 0.167208, 0.161268; mean 0.161827, sd
        // 0.005125; half-width 4.303 × 0.005125 / √3 = 0.012732.
        assert!((r.ratio - 1.175656).abs() < 1e-5, "{}", r.ratio);
        let (lo, hi) = r.interval.unwrap();
        assert!((lo - 1.160783).abs() < 1e-5, "{lo}");
        assert!((hi - 1.190721).abs() < 1e-5, "{hi}");
        assert_eq!(r.cell(), "1.18 [1.16–1.19]");
        assert_eq!(r.basis(), "paired over 3 repeats");
        // One pair: the ratio, no interval.
        let one = Ratio::paired(&[(2.0, 3.0)]).unwrap();
        assert_eq!((one.ratio, one.interval), (1.5, None));
        assert_eq!(one.cell(), "1.50 (one pair)");
        // A zero makes the log undefined: paired is None, interleaved falls back.
        assert!(Ratio::paired(&[(1.0, 0.0), (1.0, 1.0)]).is_none());
        let r = Ratio::interleaved(&[(2.0, 0.0), (2.0, 1.0)], &[2.0, 2.0], &[0.0, 1.0]).unwrap();
        assert!(matches!(r.method, Method::Unpaired { a: 2, b: 2 }));
        // The reciprocal flips the interval.
        let inv = Ratio::paired(&pairs).unwrap().inverse();
        assert!((inv.interval.unwrap().0 - 1.0 / hi).abs() < 1e-12);
    }
}
