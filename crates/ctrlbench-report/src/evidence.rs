//! What a paired ratio may decide when the machine's between-run spread is
//! known beforehand. Repeats alone need two pairs for any interval and
//! several for a useful one; but an A/A run has already measured how far
//! two runs of one controller land apart on this machine (or, without one,
//! a conservative default stands in). That spread enters as prior
//! information: the variance of a pair's log ratio is the calibration's
//! s² (worth its degrees of freedom, fewer when the repeats contradict
//! it) pooled with the repeats' own sample variance, and the
//! interval is Student's t on the pooled degrees of freedom. One repeat can
//! then decide an effect far beyond the machine's noise (an eightfold write
//! rate), never one within it (5 %).
//!
//! "Repeats until decided" looks after every repeat, and each look is a
//! chance to be wrong. Each look's interval is therefore at Pocock's
//! nominal level for the planned number of looks (a group-sequential
//! boundary: the same level at every look, chosen so that the whole
//! sequence errs 5 % of the time; beyond 10 looks, Bonferroni's 5 %/looks),
//! so the chance that any look of an A/A sequence decides "higher" or
//! "lower" stays at or below 5 % whatever the stopping;
//! tests/sequential.rs simulates it.
//!
//! The same rule says beforehand what a run can find: the chance that K
//! repeats decide a true change of a given size (its power), and the
//! fewest repeats that reach 80 %. tests/power.rs checks it against the
//! decision code by simulation.

use ctrlbench_record::manifest::{Evidence, Spread};
use statrs::distribution::{ChiSquared, ContinuousCDF, Normal, StudentsT};

/// The error the whole sequence of looks may make.
pub const ALPHA: f64 = 0.05;

/// The spread assumed without a calibration: a pair's log ratio with a
/// standard deviation of 0.30 (two runs of one controller 30 % apart at one
/// standard deviation), worth 4 degrees of freedom. The last round measured
/// 8–17 % on long runs and 45 % per run (64 % per pair) on runs of a few
/// seconds, where the repeats' own spread, pooled in, soon outweighs it.
pub const DEFAULT_SPREAD: Spread = Spread { s: 0.30, df: 4.0 };

/// The default for figures that time the controller (Ready/s, latencies,
/// CPU per reconcile): a pair 65 % apart at one standard deviation, the
/// 45 % per run (64 % per pair) that three identical controllers showed on
/// runs of a few seconds. Counts per object hardly move with the machine;
/// timings do, and under DEFAULT_SPREAD an A/A sequence of such runs would
/// be decided apart about 10 % of the time (tests/sequential.rs).
pub const DEFAULT_TIMING_SPREAD: Spread = Spread { s: 0.65, df: 4.0 };

/// The default for the API footprint's request counts per object (the
/// audit log's requests, GETs, LISTs, watches, accepted writes, Events):
/// the same reconciles send the same requests. Measured on 2026-12-06, an
/// A/A of the memcached fixture (8 interleaved pairs, N = 50): requests per
/// object 1.5 % apart per pair at one standard deviation, writes 0 %; the
/// default is several times that. Conflicts, no-op writes, 404s and 429s
/// depend on races between reconciles (conflicts spread 25 % per pair in
/// the same run), so they keep the counts' default.
pub const DEFAULT_FOOTPRINT_SPREAD: Spread = Spread { s: 0.10, df: 4.0 };

/// The footprint's counts, which take DEFAULT_FOOTPRINT_SPREAD.
pub fn footprint_counts() -> [&'static str; 6] {
    use crate::metrics::Metric::*;
    [
        RequestsPerObject,
        GetsPerObject,
        ListsPerObject,
        WatchesOpened,
        ApiWritesPerObject,
        EventsPerObject,
    ]
    .map(|m| m.def().label)
}

/// The footprint counts' default spreads, as a per-figure table.
pub fn footprint_spreads() -> std::collections::BTreeMap<String, Spread> {
    footprint_counts()
        .iter()
        .map(|f| (f.to_string(), DEFAULT_FOOTPRINT_SPREAD))
        .collect()
}

/// The evidence rule with the default spreads and `looks` planned looks.
pub fn default_evidence(looks: u32) -> Evidence {
    Evidence {
        source: "default".into(),
        spread: footprint_spreads(),
        default: DEFAULT_SPREAD,
        timing: Some(DEFAULT_TIMING_SPREAD),
        looks: looks.max(1),
    }
}

/// Whether `figure` times the controller (a rate, a duration, seconds)
/// rather than counting what it did.
pub fn times(figure: &str) -> bool {
    use crate::metrics::{Metric, Unit};
    Metric::named(figure)
        .is_some_and(|m| matches!(m.def().unit, Unit::Rate | Unit::Duration | Unit::Seconds))
}

/// The spread a figure is judged with: its calibration, else the default
/// for its kind.
pub fn spread_for(e: &Evidence, figure: &str) -> Spread {
    let label = crate::metrics::Metric::named(figure).map_or(figure, |m| m.label());
    if let Some(s) = e.spread.get(figure).or_else(|| e.spread.get(label)) {
        return *s;
    }
    match e.timing {
        Some(t) if times(figure) => t,
        _ => e.default,
    }
}

/// Pocock's nominal two-sided level per look for 1 … 10 equally spaced
/// looks at an overall 5 % (Pocock 1977, Biometrika 64:191; Jennison &
/// Turnbull, table 2.1).
const POCOCK: [f64; 10] = [
    0.05, 0.0294, 0.0221, 0.0182, 0.0158, 0.0142, 0.0130, 0.0120, 0.0112, 0.0106,
];

/// The two-sided level of each of `looks` looks.
pub fn level_per_look(looks: u32) -> f64 {
    match looks {
        0 | 1 => ALPHA,
        2..=10 => POCOCK[looks as usize - 1],
        _ => ALPHA / f64::from(looks),
    }
}

/// The two-sided critical value of Student's t for one of `looks` looks.
pub fn critical(df: f64, looks: u32) -> f64 {
    let alpha = level_per_look(looks);
    StudentsT::new(0.0, 1.0, df)
        .map(|t| t.inverse_cdf(1.0 - alpha / 2.0))
        .unwrap_or(f64::INFINITY)
}

/// The interval of the mean of `logs` (per-pair log ratios) on the ratio
/// scale, with `prior` pooled in and the error split over `looks`; and the
/// pooled degrees of freedom. None without a pair.
pub fn pooled_interval(logs: &[f64], prior: Spread, looks: u32) -> Option<((f64, f64), f64)> {
    let k = logs.len();
    if k == 0 || !logs.iter().all(|d| d.is_finite()) {
        return None;
    }
    let kf = k as f64;
    let mean = logs.iter().sum::<f64>() / kf;
    let sample_ss = logs.iter().map(|d| (d - mean).powi(2)).sum::<f64>();
    let worth = prior_worth(prior, sample_ss, k);
    let df = worth + (kf - 1.0);
    if df <= 0.0 {
        return None;
    }
    let var = (worth * prior.s * prior.s + sample_ss) / df;
    let half = critical(df, looks) * (var / kf).sqrt();
    Some((((mean - half).exp(), (mean + half).exp()), df))
}

/// The degrees of freedom the prior is worth beside `k` repeats whose log
/// ratios scatter by `sample_ss` about their mean: all of its own while the
/// repeats agree with it, less as they contradict it, either way.
///
/// - Repeats that spread more than the prior says: less in proportion (a
///   prior s² a quarter of the repeats' is worth a quarter of its degrees
///   of freedom). A default or a calibration from a quieter day
///   understates a busy machine's spread; pooled at full worth it would
///   narrow the interval the repeats themselves widen.
/// - Repeats that spread far less: from three repeats on, once the
///   chance that repeats spreading as the prior says would spread this
///   little falls below [`CONTRADICTED`] (χ² on K − 1 degrees of
///   freedom), in proportion to that chance. A conservative default (65 %
///   for a pair's timing) would otherwise hold ten repeats of runs 3 %
///   apart at ±70 %; discounted, the repeats' own t interval takes over.
///   tests/sequential.rs checks both sides against the false-decision
///   bound.
fn prior_worth(prior: Spread, sample_ss: f64, k: usize) -> f64 {
    let prior_var = prior.s * prior.s;
    if k < 2 || prior_var <= 0.0 {
        return prior.df;
    }
    let sample_var = sample_ss / (k as f64 - 1.0);
    if sample_var > prior_var {
        return prior.df * prior_var / sample_var;
    }
    if k < 3 {
        return prior.df;
    }
    let q = sample_ss / prior_var;
    let chance = ChiSquared::new(k as f64 - 1.0).map_or(1.0, |c| c.cdf(q));
    prior.df * (chance / CONTRADICTED).min(1.0)
}

/// How unlikely a spread this small must be under the prior before the
/// prior counts less (a one-sided χ² level).
pub const CONTRADICTED: f64 = 0.01;

/// The chance that `repeats` paired repeats decide a true change `effect`
/// (a ratio: 1.10 for 10 % higher, 0.90 for 10 % lower) beyond `margin`,
/// each pair's log ratio spreading as `spread` says and each look at the
/// level of `looks`. The mean log ratio is normal around the effect and,
/// independent of it, the pairs' own sum of squares is s² times a χ² on
/// K − 1 degrees of freedom; the interval's half-width follows from that
/// sum (the prior's worth included), so the chance is averaged over the
/// χ²'s quantiles.
pub fn power(spread: Spread, effect: f64, margin: f64, repeats: u32, looks: u32) -> f64 {
    let k = repeats.max(1) as usize;
    let kf = k as f64;
    let se = spread.s / kf.sqrt();
    let (d, edge) = if effect >= 1.0 {
        (effect.ln(), (1.0 + margin).ln())
    } else {
        (-effect.ln(), -(1.0 - margin).ln())
    };
    if se <= 0.0 {
        return if d > edge { 1.0 } else { 0.0 };
    }
    let given = |ss: f64| {
        let worth = prior_worth(spread, ss, k);
        let df = worth + kf - 1.0;
        let var = (worth * spread.s * spread.s + ss) / df;
        let half = critical(df, looks) * (var / kf).sqrt();
        Normal::standard().cdf((d - edge - half) / se)
    };
    let Some(chi2) = (k > 1).then(|| ChiSquared::new(kf - 1.0).ok()).flatten() else {
        return given(0.0);
    };
    const POINTS: usize = 64;
    (0..POINTS)
        .map(|i| {
            let q = chi2.inverse_cdf((i as f64 + 0.5) / POINTS as f64);
            given(spread.s * spread.s * q)
        })
        .sum::<f64>()
        / POINTS as f64
}

/// The fewest repeats, up to `max`, whose power for `effect` reaches `want`.
pub fn repeats_for(
    spread: Spread,
    effect: f64,
    margin: f64,
    want: f64,
    looks: u32,
    max: u32,
) -> Option<u32> {
    (1..=max.max(1)).find(|&k| power(spread, effect, margin, k, looks) >= want)
}

/// The smallest change (as a fraction: 0.10 for ±10 %) that `repeats`
/// repeats decide with probability `want`: `power` inverted by bisection.
pub fn detectable(spread: Spread, margin: f64, want: f64, repeats: u32, looks: u32) -> f64 {
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while power(spread, 1.0 + hi, margin, repeats, looks) < want && hi < 1e6 {
        lo = hi;
        hi *= 2.0;
    }
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if power(spread, 1.0 + mid, margin, repeats, looks) < want {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}

/// One line per figure of what a run with at most `max` repeats can decide
/// at 80 % power: "Ready/s: a 10 % change in 3 repeats" or, when 10 % is
/// out of reach, the change it can decide.
pub fn power_lines(e: &Evidence, figures: &[&str], margin: f64, max: u32) -> Vec<String> {
    const WANT: f64 = 0.8;
    let mut out = Vec::new();
    for f in figures {
        let s = spread_for(e, f);
        let plural = |k: u32| if k == 1 { "repeat" } else { "repeats" };
        let line = match repeats_for(s, 1.10, margin, WANT, e.looks, max) {
            Some(k) => format!(
                "{f}: a 10 % change is decided with 80 % probability in {k} {}",
                plural(k)
            ),
            None => format!(
                "{f}: a 10 % change is out of reach in {max} {}, which decide a change of {} with 80 % probability",
                plural(max),
                crate::verdict::percent(round_up(detectable(s, margin, WANT, max, e.looks)))
            ),
        };
        out.push(line);
    }
    out
}

/// Up to the next whole percent (a detectable change is never shown smaller).
fn round_up(fraction: f64) -> f64 {
    (fraction * 100.0).ceil() / 100.0
}

/// How the evidence is named beside a verdict: "one repeat and this
/// machine's spread (default)", "3 repeats pooled with this machine's
/// spread (calibrated …)".
pub fn basis(e: &Evidence, pairs: usize) -> String {
    let what = if pairs == 1 {
        "one repeat and the machine's spread".to_string()
    } else {
        format!("{pairs} repeats pooled with the machine's spread")
    };
    let looks = if e.looks > 1 {
        format!(", the level for {} looks", e.looks)
    } else {
        String::new()
    };
    format!("{what} ({}{looks})", e.source)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn critical_values_match_the_tables() {
        assert!((critical(4.0, 1) - 2.776).abs() < 1e-3);
        assert!((critical(30.0, 1) - 2.042).abs() < 1e-3);
        // Pocock at 10 looks, 1.06 % two-sided: the 99.47 % point (a
        // normal's would be 2.555).
        let t = critical(1e6, 10);
        assert!((t - 2.555).abs() < 2e-3, "{t}");
        // Beyond the table, Bonferroni: 0.25 %, past t(0.9975, 10) = 3.581.
        assert_eq!(level_per_look(20), 0.0025);
        assert!(critical(10.0, 20) > 3.581);
    }

    /// One repeat decides an eightfold effect and not a 5 % one; pooling
    /// a prior worth no degrees of freedom is the plain paired t interval.
    #[test]
    fn one_repeat_decides_only_what_the_spread_allows() {
        let ((lo, hi), df) = pooled_interval(&[8f64.ln()], DEFAULT_SPREAD, 1).unwrap();
        assert_eq!(df, 4.0);
        let half = 2.776 * 0.30;
        assert!((lo - (8f64.ln() - half).exp()).abs() < 1e-2, "{lo}");
        assert!((hi - (8f64.ln() + half).exp()).abs() < 1e-1, "{hi}");
        assert!(lo > 1.05);
        let ((lo, hi), _) = pooled_interval(&[1.05f64.ln()], DEFAULT_SPREAD, 1).unwrap();
        assert!(lo < 0.95 && hi > 1.05);
        let logs = [0.1, 0.2, 0.15];
        let ((lo, hi), df) = pooled_interval(&logs, Spread { s: 0.0, df: 0.0 }, 1).unwrap();
        assert_eq!(df, 2.0);
        let sd = (0.005f64 / 2.0).sqrt();
        let half = 4.303 * sd / 3f64.sqrt();
        assert!((lo.ln() - (0.15 - half)).abs() < 1e-3 && (hi.ln() - (0.15 + half)).abs() < 1e-3);
    }

    /// Three A/A pairs 2.47× apart on average and 0.69 apart from each
    /// other (a log-ratio sample variance of 0.476, five times the default
    /// prior's 0.09), looked at as the 3rd of 3 looks. At its full 4
    /// degrees of freedom the prior would narrow this to [1.09–5.60]
    /// ("higher"); worth 4 × 0.09 / 0.476 = 0.756 of them it leaves the
    /// interval across 1. Repeats that agree with the prior pool with it
    /// at full worth.
    #[test]
    fn a_prior_the_repeats_contradict_counts_less() {
        let logs = [0.904 - 0.69, 0.904, 0.904 + 0.69];
        let ((lo, hi), df) = pooled_interval(&logs, DEFAULT_SPREAD, 3).unwrap();
        let worth = 4.0 * 0.09 / 0.4761;
        assert!((df - (worth + 2.0)).abs() < 1e-3, "{df}");
        assert!(lo < 1.0 && hi > 6.0, "[{lo}–{hi}]");
        // The same mean with a spread inside the prior's: full worth.
        let quiet = [0.904 - 0.2, 0.904, 0.904 + 0.2];
        let ((lo, _), df) = pooled_interval(&quiet, DEFAULT_SPREAD, 3).unwrap();
        assert_eq!(df, 6.0);
        let var: f64 = (4.0 * 0.09 + 0.08) / 6.0;
        let half = critical(6.0, 3) * (var / 3.0).sqrt();
        assert!((lo.ln() - (0.904 - half)).abs() < 1e-9, "{lo}");
    }

    /// Ten repeats 3 % apart under the timings' 65 % default: a spread that
    /// small has a χ²(9) chance near 1e-12 under the prior, so the prior is
    /// worth next to nothing and the interval is the repeats' own paired t
    /// interval (9 degrees of freedom, Pocock's level for 10 looks), not
    /// the ±70 % the default would hold it to. Two repeats keep the prior
    /// whole (too few to contradict it), and so do three whose spread is
    /// merely smaller: 2 × 0.2² / 0.65² = 0.19 has a χ²(2) chance of 9 %.
    #[test]
    fn a_prior_far_above_the_repeats_counts_less() {
        let logs: Vec<f64> = (0..10)
            .map(|i| 0.02 * if i % 2 == 0 { 1.0 } else { -1.0 })
            .collect();
        // Mean 0, sample variance 10 × 0.0004 / 9.
        let ((lo, hi), df) = pooled_interval(&logs, DEFAULT_TIMING_SPREAD, 10).unwrap();
        assert!(df > 9.0 && df < 9.0 + 1e-6, "{df}");
        let sd = (10.0f64 * 0.0004 / 9.0).sqrt();
        let half = critical(9.0, 10) * sd / 10f64.sqrt();
        assert!(
            (hi.ln() - half).abs() < 1e-6 && (lo.ln() + half).abs() < 1e-6,
            "[{lo}–{hi}]"
        );
        assert!(hi < 1.05 && lo > 0.95, "[{lo}–{hi}]");
        let (_, df) = pooled_interval(&logs[..2], DEFAULT_TIMING_SPREAD, 10).unwrap();
        assert_eq!(df, 4.0 + 1.0);
        let (_, df) = pooled_interval(&[0.2, 0.0, -0.2], DEFAULT_TIMING_SPREAD, 10).unwrap();
        assert_eq!(df, 4.0 + 2.0);
    }
}
