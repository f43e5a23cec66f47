//! Quantiles: PromQL's `histogram_quantile` over cumulative buckets, and the
//! linear-interpolation percentile of raw samples (time-to-Ready).

/// `histogram_quantile(q, …)` as Prometheus computes it (promql/quantile.go,
/// `BucketQuantile`): `buckets` are (upper bound, cumulative count) pairs.
///
/// q < 0 gives -Inf, q > 1 +Inf; no +Inf bucket, fewer than two buckets or no
/// observations give NaN; a rank in the +Inf bucket gives the highest finite
/// bound; the first bucket's lower bound is 0 (unless its upper bound is ≤ 0).
pub fn histogram_quantile(q: f64, buckets: &[(f64, f64)]) -> f64 {
    if q.is_nan() {
        return f64::NAN;
    }
    if q < 0.0 {
        return f64::NEG_INFINITY;
    }
    if q > 1.0 {
        return f64::INFINITY;
    }
    let mut b: Vec<(f64, f64)> = buckets.to_vec();
    b.sort_by(|x, y| x.0.total_cmp(&y.0));
    if b.last().is_none_or(|l| l.0 != f64::INFINITY) {
        return f64::NAN;
    }
    // Same upper bound twice: add the counts (coalesceBuckets).
    b.dedup_by(|next, kept| {
        if next.0 == kept.0 {
            kept.1 += next.1;
            true
        } else {
            false
        }
    });
    // Scrape skew can make a cumulative count dip: force it monotonic.
    let mut max = f64::NEG_INFINITY;
    for x in &mut b {
        max = max.max(x.1);
        x.1 = max;
    }
    if b.len() < 2 {
        return f64::NAN;
    }
    let observations = b[b.len() - 1].1;
    if observations == 0.0 {
        return f64::NAN;
    }
    let mut rank = q * observations;
    let i = b[..b.len() - 1].partition_point(|x| x.1 < rank);
    if i == b.len() - 1 {
        return b[b.len() - 2].0;
    }
    if i == 0 && b[0].0 <= 0.0 {
        return b[0].0;
    }
    let end = b[i].0;
    let mut count = b[i].1;
    let start = if i > 0 {
        count -= b[i - 1].1;
        rank -= b[i - 1].1;
        b[i - 1].0
    } else {
        0.0
    };
    start + (end - start) * (rank / count)
}

/// Percentile of raw samples with linear interpolation between closest ranks
/// (numpy's default, Hyndman–Fan type 7); None for no samples. Samples of +∞
/// are censored: a percentile whose rank touches one is +∞ ("> window").
pub fn percentile(samples: &[f64], q: f64) -> Option<f64> {
    if samples.is_empty() {
        return None;
    }
    let mut s = samples.to_vec();
    s.sort_by(f64::total_cmp);
    let h = (s.len() - 1) as f64 * q.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(s.len() - 1);
    let (a, b, frac) = (s[lo], s[hi], h - lo as f64);
    // +∞ marks a censored sample (never observed within the window): a
    // percentile that reaches one is only known to be beyond the window.
    if a == f64::INFINITY || (frac > 0.0 && b == f64::INFINITY) {
        return Some(f64::INFINITY);
    }
    Some(a + frac * (b - a))
}

/// The median of values (mean of the middle two for an even count).
pub fn median(values: &[f64]) -> Option<f64> {
    percentile(values, 0.5)
}

#[cfg(test)]
mod tests {
    use super::*;

    const INF: f64 = f64::INFINITY;

    #[test]
    fn censored_samples_make_a_percentile_open_ended() {
        let v = [1.0, 2.0, 3.0, INF];
        assert_eq!(percentile(&v, 0.5), Some(2.5));
        // Rank 2.97 lies between 3.0 and a censored sample.
        assert_eq!(percentile(&v, 0.99), Some(INF));
        assert_eq!(percentile(&[INF, INF], 0.5), Some(INF));
        assert_eq!(percentile(&[1.0, 3.0], 0.5), Some(2.0));
    }

    #[test]
    fn interpolates_inside_a_bucket() {
        // 10 in (0, 0.1], 10 in (0.1, 0.2]: the median is the first bucket's top.
        let b = [(0.1, 10.0), (0.2, 20.0), (INF, 20.0)];
        assert_eq!(histogram_quantile(0.5, &b), 0.1);
        assert!((histogram_quantile(0.75, &b) - 0.15).abs() < 1e-12);
        // First bucket's lower bound is 0.
        assert!((histogram_quantile(0.25, &b) - 0.05).abs() < 1e-12);
    }

    #[test]
    fn edge_cases() {
        let b = [(0.1, 1.0), (INF, 1.0)];
        assert!((histogram_quantile(0.5, &b) - 0.05).abs() < 1e-12);
        assert_eq!(histogram_quantile(-0.1, &b), f64::NEG_INFINITY);
        assert_eq!(histogram_quantile(1.1, &b), INF);
        assert!(histogram_quantile(0.5, &[(0.1, 0.0), (INF, 0.0)]).is_nan());
        assert!(histogram_quantile(0.5, &[]).is_nan());
        assert!(histogram_quantile(0.5, &[(0.1, 3.0), (0.2, 3.0)]).is_nan());
        assert!(histogram_quantile(0.5, &[(INF, 3.0)]).is_nan());
        // In the +Inf bucket: the highest finite bound.
        assert_eq!(
            histogram_quantile(0.99, &[(0.1, 1.0), (1.0, 2.0), (INF, 10.0)]),
            1.0
        );
        // A non-positive first bound is returned as is.
        assert_eq!(
            histogram_quantile(0.1, &[(0.0, 5.0), (1.0, 6.0), (INF, 6.0)]),
            0.0
        );
    }

    #[test]
    fn percentiles_of_samples() {
        let s = [4.0, 1.0, 3.0, 2.0];
        assert_eq!(percentile(&s, 0.5), Some(2.5));
        assert_eq!(percentile(&s, 1.0), Some(4.0));
        assert!((percentile(&s, 0.99).unwrap() - 3.97).abs() < 1e-12);
        assert_eq!(median(&[]), None);
    }
}
