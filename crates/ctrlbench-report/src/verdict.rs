//! What a ratio's interval decides, against an equivalence margin M (a
//! fraction; 0.05 by default): B higher or lower only when the whole
//! interval lies beyond the margin on one side, equivalent when it lies
//! inside [1 − M, 1 + M], and otherwise undecided — said with the minimum
//! detectable effect at this many repeats (the interval's half-width), so
//! "cannot tell yet" is never read as "no difference". Used by every verdict
//! the report and `compare` print, and by the regression gate with its own
//! threshold as the margin.

use crate::interval::Ratio;

/// The default equivalence margin: ±5 %.
pub const DEFAULT_MARGIN: f64 = 0.05;

/// The four answers a ratio can give.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The whole interval above 1 + M.
    Higher,
    /// The whole interval below 1 − M.
    Lower,
    /// The whole interval inside [1 − M, 1 + M].
    Equivalent,
    /// Anything else, and every ratio without an interval.
    Undecided,
}

impl Verdict {
    pub fn decided(self) -> bool {
        self != Verdict::Undecided
    }
}

/// The verdict of a 95 % interval against margin `margin`.
pub fn decide(interval: Option<(f64, f64)>, margin: f64) -> Verdict {
    match interval {
        Some((lo, _)) if lo > 1.0 + margin => Verdict::Higher,
        Some((_, hi)) if hi < 1.0 - margin => Verdict::Lower,
        Some((lo, hi)) if lo >= 1.0 - margin && hi <= 1.0 + margin => Verdict::Equivalent,
        _ => Verdict::Undecided,
    }
}

/// The minimum detectable effect at this many repeats: the interval's
/// half-width on the log scale, √(hi/lo) − 1 (for the paired t interval,
/// exactly e^(t·s/√K) − 1). None without an interval.
pub fn mde(interval: Option<(f64, f64)>) -> Option<f64> {
    let (lo, hi) = interval?;
    Some(if lo > 0.0 {
        (hi / lo).sqrt() - 1.0
    } else {
        f64::INFINITY
    })
}

/// "5 %", "2.5 %".
pub fn percent(fraction: f64) -> String {
    let p = fraction * 100.0;
    if (p - p.round()).abs() < 1e-9 {
        format!("{p:.0} %")
    } else {
        format!("{p:.1} %")
    }
}

/// "±12 %" ("±4.2 %" below 10 %), or "interval unbounded".
pub fn plus_minus(mde: f64) -> String {
    let p = mde * 100.0;
    if !p.is_finite() {
        "interval unbounded".into()
    } else if p < 10.0 {
        format!("±{p:.1} %")
    } else {
        format!("±{p:.0} %")
    }
}

/// A ratio's verdict in words: `higher` / `lower` name the decided
/// directions ("B higher", "Rust lower (better)", "worse"); equivalent
/// names the margin; undecided gives the minimum detectable effect, or why
/// there is no interval.
pub fn words(r: &Ratio, margin: f64, higher: &str, lower: &str) -> String {
    match decide(r.interval, margin) {
        Verdict::Higher => higher.to_string(),
        Verdict::Lower => lower.to_string(),
        Verdict::Equivalent => format!("equivalent within ±{}", percent(margin)),
        Verdict::Undecided => match mde(r.interval) {
            Some(m) => format!("undecided ({})", plus_minus(m)),
            None => match r.method {
                crate::interval::Method::Paired { .. } => "undecided (one pair)".into(),
                crate::interval::Method::Unpaired { .. } => "undecided (one sample)".into(),
            },
        },
    }
}

/// " (better)" / " (worse)" for a decided direction of a figure that has
/// one; "" for equivalent, undecided, or a figure without a better side.
pub fn direction(v: Verdict, higher_is_better: Option<bool>) -> &'static str {
    match (v, higher_is_better) {
        (Verdict::Higher, Some(true)) | (Verdict::Lower, Some(false)) => " (better)",
        (Verdict::Higher, Some(false)) | (Verdict::Lower, Some(true)) => " (worse)",
        _ => "",
    }
}

/// "B higher (worse)", "equivalent within ±5 %", "undecided (±12 %)": the
/// verdict on B/A naming B, with the direction when the figure has one.
pub fn named(r: &Ratio, margin: f64, b: &str, higher_is_better: Option<bool>) -> String {
    let v = decide(r.interval, margin);
    let d = direction(v, higher_is_better);
    words(
        r,
        margin,
        &format!("{b} higher{d}"),
        &format!("{b} lower{d}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interval::Method;

    fn r(lo: f64, hi: f64) -> Ratio {
        Ratio {
            ratio: (lo * hi).sqrt(),
            interval: Some((lo, hi)),
            method: Method::Paired { pairs: 3 },
        }
    }

    #[test]
    fn four_verdicts_from_intervals_and_margins() {
        use Verdict::*;
        let table = [
            // (lo, hi, margin, verdict)
            (1.10, 1.30, 0.05, Higher),
            (1.051, 1.30, 0.05, Higher),
            (1.05, 1.30, 0.05, Undecided), // lo on the margin: not beyond it
            (1.02, 1.10, 0.05, Undecided), // above 1, but partly inside the band
            (1.02, 1.10, 0.01, Higher),    // a tighter margin decides it
            (0.70, 0.90, 0.05, Lower),
            (0.70, 0.96, 0.05, Undecided),
            (0.97, 1.03, 0.05, Equivalent),
            (0.95, 1.05, 0.05, Equivalent), // the band's edges are inside
            (0.97, 1.03, 0.02, Undecided),  // too wide for ±2 %
            (0.90, 1.20, 0.05, Undecided),
            (0.90, 1.20, 0.25, Equivalent),
            (0.0, 0.5, 0.05, Lower),
        ];
        for (lo, hi, m, want) in table {
            assert_eq!(decide(Some((lo, hi)), m), want, "[{lo}, {hi}] ±{m}");
        }
        assert_eq!(decide(None, 0.05), Undecided);
    }

    #[test]
    fn words_name_the_side_the_margin_and_the_detectable_effect() {
        let m = DEFAULT_MARGIN;
        assert_eq!(named(&r(1.1, 1.3), m, "B", None), "B higher");
        assert_eq!(
            named(&r(1.1, 1.3), m, "Rust", Some(true)),
            "Rust higher (better)"
        );
        assert_eq!(named(&r(0.7, 0.9), m, "B", Some(true)), "B lower (worse)");
        assert_eq!(named(&r(0.7, 0.9), m, "B", Some(false)), "B lower (better)");
        assert_eq!(
            named(&r(0.97, 1.03), m, "B", Some(true)),
            "equivalent within ±5 %"
        );
        assert_eq!(
            named(&r(0.98, 1.02), 0.025, "B", None),
            "equivalent within ±2.5 %"
        );
        // √(1.25/0.8) − 1 = 25 %.
        assert_eq!(named(&r(0.8, 1.25), m, "B", None), "undecided (±25 %)");
        assert_eq!(named(&r(0.96, 1.1), 0.01, "B", None), "undecided (±7.0 %)");
        let one = Ratio {
            ratio: 1.2,
            interval: None,
            method: Method::Paired { pairs: 1 },
        };
        assert_eq!(named(&one, m, "B", None), "undecided (one pair)");
        assert_eq!(mde(Some((0.0, 2.0))), Some(f64::INFINITY));
        assert_eq!(
            named(&r(0.0, 2.0), m, "B", None),
            "undecided (interval unbounded)"
        );
    }
}
