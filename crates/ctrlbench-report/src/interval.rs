//! How sure a ratio is: B/A of two medians with a 95 % bootstrap interval over
//! the repeats of each side (percentile method, a fixed seed so a report
//! never changes between renderings), and the verdict a reader needs —
//! "within noise" when the interval includes 1. With a single run on either
//! side there is no interval: the ratio is one sample and says so.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::quantile::median;

/// Resamples per interval.
const RESAMPLES: usize = 2000;
const SEED: u64 = 1;

/// B/A and, with two or more runs on each side, its 95 % interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ratio {
    pub ratio: f64,
    pub interval: Option<(f64, f64)>,
}

impl Ratio {
    /// Medians of `a` and `b`, their ratio, and the bootstrap interval.
    pub fn of(a: &[f64], b: &[f64]) -> Option<Ratio> {
        let (ma, mb) = (median(a)?, median(b)?);
        if ma == 0.0 {
            return None;
        }
        let interval = (a.len() >= 2 && b.len() >= 2).then(|| {
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
                return (f64::NAN, f64::NAN);
            }
            let at = |q: f64| rs[((q * (rs.len() - 1) as f64).round() as usize).min(rs.len() - 1)];
            (at(0.025), at(0.975))
        });
        if !(mb / ma).is_finite() {
            return None;
        }
        Some(Ratio {
            ratio: mb / ma,
            interval: interval.filter(|(lo, hi)| lo.is_finite() && hi.is_finite()),
        })
    }

    /// True when the interval includes 1 (no interval: unknown, None).
    pub fn within_noise(&self) -> Option<bool> {
        self.interval.map(|(lo, hi)| lo <= 1.0 && 1.0 <= hi)
    }

    /// "1.23 [1.10–1.41]", or "1.23 (single sample)".
    pub fn cell(&self) -> String {
        match self.interval {
            Some((lo, hi)) => format!("{:.2} [{lo:.2}–{hi:.2}]", self.ratio),
            None => format!("{:.2} (single sample)", self.ratio),
        }
    }

    /// What the ratio says: "within noise", "B higher", "B lower", or that one sample cannot tell.
    pub fn verdict(&self) -> &'static str {
        match self.within_noise() {
            None => "one sample: cannot tell",
            Some(true) => "within noise",
            Some(false) if self.ratio > 1.0 => "B higher",
            Some(false) => "B lower",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_separate_clear_differences_from_noise() {
        // Medians 1.025 and 2.025: every resample's ratio lies in [1.9/1.1, 2.1/0.9].
        let r = Ratio::of(&[1.0, 1.1, 0.9, 1.05], &[2.0, 2.1, 1.9, 2.05]).unwrap();
        assert!((r.ratio - 2.025 / 1.025).abs() < 1e-12);
        let (lo, hi) = r.interval.unwrap();
        assert!(
            lo >= 1.9 / 1.1 - 1e-12 && hi <= 2.1 / 0.9 + 1e-12,
            "{lo} {hi}"
        );
        assert_eq!(r.verdict(), "B higher");
        // Overlapping samples: the interval includes 1.
        let r = Ratio::of(&[1.0, 1.2, 0.8], &[1.1, 0.9, 1.0]).unwrap();
        assert_eq!(r.verdict(), "within noise");
        // One run on a side: no interval.
        let r = Ratio::of(&[1.0], &[2.0, 2.2]).unwrap();
        assert_eq!((r.interval, r.verdict()), (None, "one sample: cannot tell"));
        assert_eq!(r.cell(), "2.10 (single sample)");
        assert!(Ratio::of(&[0.0], &[1.0]).is_none());
        // Seeded: the same input gives the same interval.
        let x = Ratio::of(&[1.0, 1.3, 0.7], &[1.2, 1.0, 1.4]).unwrap();
        assert_eq!(x, Ratio::of(&[1.0, 1.3, 0.7], &[1.2, 1.0, 1.4]).unwrap());
    }
}
