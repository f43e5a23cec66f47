//! Student's t distribution, the one quantile the report needs: the 97.5 %
//! point for K − 1 degrees of freedom, which turns the spread of K per-repeat
//! log ratios into a 95 % interval. A table for 1–30 degrees of freedom
//! (where the tails differ most from the normal's, and a few repeats is the
//! common case) and the Cornish–Fisher expansion beyond, which is within
//! 1e-4 of the exact value from 30 on. Nothing else of the distribution.

/// t(0.975, ν) for ν = 1 … 30, to three decimals (any statistics table).
const T975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// The normal distribution's 97.5 % point.
const Z975: f64 = 1.959_963_984_540_054;

/// t(0.975, df): the two-sided 95 % critical value for `df` degrees of
/// freedom; None for df = 0 (one sample has no spread).
pub fn t975(df: usize) -> Option<f64> {
    match df {
        0 => None,
        1..=30 => Some(T975[df - 1]),
        _ => {
            // Cornish–Fisher: the normal quantile corrected in powers of 1/ν.
            let (z, v) = (Z975, df as f64);
            let g1 = (z.powi(3) + z) / 4.0;
            let g2 = (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / 96.0;
            let g3 = (3.0 * z.powi(7) + 19.0 * z.powi(5) + 17.0 * z.powi(3) - 15.0 * z) / 384.0;
            Some(z + g1 / v + g2 / (v * v) + g3 / (v * v * v))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_quantiles() {
        assert_eq!(t975(0), None);
        assert_eq!(t975(1), Some(12.706));
        assert_eq!(t975(2), Some(4.303));
        assert_eq!(t975(5), Some(2.571));
        assert_eq!(t975(30), Some(2.042));
        // Beyond the table (exact values: 2.0211, 2.0003, 1.9799, 1.9623).
        for (df, want) in [(40, 2.0211), (60, 2.0003), (120, 1.9799), (1000, 1.9623)] {
            let got = t975(df).unwrap();
            assert!((got - want).abs() < 2e-4, "t975({df}) = {got}, want {want}");
        }
        // The expansion meets the table where they hand over.
        assert!((t975(31).unwrap() - 2.0395).abs() < 2e-4);
    }
}
