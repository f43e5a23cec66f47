//! Shared arithmetic and formatting of the report: median and range over
//! repeats, and how counts, durations and "median [min–max]" cells are shown.

use crate::quantile::median;

/// Whole counts as integers; a median between two counts keeps its half.
pub fn fmt_count(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// Seconds, shown as ms below one second.
pub fn fmt_duration(v: f64) -> String {
    let ms = v * 1000.0;
    if v.abs() >= 1.0 {
        format!("{v:.2} s")
    } else if ms.abs() >= 10.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{ms:.2} ms")
    }
}

/// Median, range and provenance of one figure over a group's runs.
pub struct Stat {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub n: usize,
}

pub fn stat(mut v: Vec<f64>) -> Option<Stat> {
    // +∞ (censored) stays: the median of runs that never got there is "> window".
    v.retain(|x| !x.is_nan());
    Some(Stat {
        median: median(&v)?,
        min: v.iter().copied().reduce(f64::min)?,
        max: v.iter().copied().reduce(f64::max)?,
        n: v.len(),
    })
}

/// "47.0 [22.5–71.4] ms" (unit once when all three share it).
pub fn fmt_stat(s: &Stat, f: impl Fn(f64) -> String) -> String {
    if s.n <= 1 || s.min == s.max {
        return f(s.median);
    }
    let [m, lo, hi] = [s.median, s.min, s.max].map(&f);
    let unit = |x: &str| {
        let i = x.rfind(|c: char| c.is_ascii_digit()).map_or(0, |i| i + 1);
        x[i..].to_string()
    };
    let u = unit(&m);
    if !u.is_empty() && unit(&lo) == u && unit(&hi) == u {
        let strip = |x: &str| x[..x.len() - u.len()].to_string();
        format!("{} [{}–{}]{u}", strip(&m), strip(&lo), strip(&hi))
    } else {
        format!("{m} [{lo}–{hi}]")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Metric;

    #[test]
    fn formats() {
        assert_eq!(fmt_duration(0.0042), "4.20 ms");
        assert_eq!(fmt_duration(0.0517), "51.7 ms");
        assert_eq!(fmt_duration(2.3652), "2.37 s");
        assert_eq!(fmt_count(11.5), "11.5");
        assert_eq!(Metric::PeakRss.fmt(23068672.0), "22.0 MiB");
        let s = stat(vec![0.0225, 0.0714, 0.047]).unwrap();
        assert_eq!(fmt_stat(&s, fmt_duration), "47.0 [22.5–71.4] ms");
        let s = stat(vec![0.157, 2.37]).unwrap();
        assert_eq!(fmt_stat(&s, fmt_duration), "1.26 s [157.0 ms–2.37 s]");
        assert!(stat(vec![f64::NAN]).is_none());
    }
}
