//! Budgets: the limits an experiment file's `[budget]` sets on figures of
//! each variant (manifest.json's `budgets`), judged here against the median
//! over the repeats, and the highest values a results directory measured
//! (what `ctrlbench budget` turns into a `[budget]` table). The figures are
//! the metric catalogue's, plus peak RSS per object, which the catalogue
//! has no place for: a limit on RSS must not depend on the scale it ran at.
//! Most are counts per object, nearly free of the machine's noise, so one
//! repeat decides them; the median is there for the timing figure.

use ctrlbench_record::manifest::Budget;

use crate::figures::{Group, RunFigures};
use crate::metrics::{Metric, Unit};
use crate::quantile::median;

/// What a budget limits: a catalogue figure, or peak RSS ÷ N in KiB.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Figure {
    Metric(Metric),
    RssPerObjectKib,
}

/// The label of [`Figure::RssPerObjectKib`], as the manifest records it.
pub const RSS_PER_OBJECT: &str = "peak RSS per object (KiB)";

impl Figure {
    pub fn label(self) -> &'static str {
        match self {
            Figure::Metric(m) => m.label(),
            Figure::RssPerObjectKib => RSS_PER_OBJECT,
        }
    }

    /// The figure a manifest's label names (a catalogue label or column).
    pub fn named(label: &str) -> Option<Figure> {
        if label.eq_ignore_ascii_case(RSS_PER_OBJECT) {
            return Some(Figure::RssPerObjectKib);
        }
        Metric::named(label).map(Figure::Metric)
    }

    /// One run's value; None when its files do not measure it.
    pub fn of(self, r: &RunFigures) -> Option<f64> {
        match self {
            Figure::Metric(m) => r.get(m),
            Figure::RssPerObjectKib => {
                let n = r.scale as f64;
                r.get(Metric::PeakRss)
                    .filter(|_| n > 0.0)
                    .map(|b| b / n / 1024.0)
            }
        }
    }

    /// The value as the report shows it; counts to three decimals, not
    /// the catalogue's one, since a limit such as 0.05 conflicts per object
    /// must read as written.
    pub fn fmt(self, v: f64) -> String {
        match self {
            Figure::Metric(m) if matches!(m.def().unit, Unit::Count) && v.is_finite() => {
                let s = format!("{v:.3}");
                s.trim_end_matches('0').trim_end_matches('.').to_string()
            }
            Figure::Metric(m) => m.fmt(v),
            Figure::RssPerObjectKib => format!("{v:.1} KiB"),
        }
    }

    /// The median over the runs a group's medians use.
    pub fn median(self, g: &Group) -> Option<f64> {
        let v: Vec<f64> = g.used().iter().filter_map(|r| self.of(r)).collect();
        median(&v)
    }
}

/// One variant (at one scale) against one budget.
#[derive(Clone, Debug, PartialEq)]
pub struct Judged {
    pub scale: u64,
    pub variant: String,
    pub key: String,
    pub figure: String,
    /// The median over the repeats; None: unmeasured (no audit log, …).
    pub measured: Option<f64>,
    pub limit: f64,
    /// Shown as the figure's unit says.
    pub measured_cell: String,
    pub limit_cell: String,
}

impl Judged {
    /// Above the limit; an unmeasured figure exceeds nothing.
    pub fn exceeded(&self) -> bool {
        self.measured.is_some_and(|v| v > self.limit)
    }

    /// "within", "EXCEEDED" or "unmeasured".
    pub fn verdict(&self) -> &'static str {
        match self.measured {
            None => "unmeasured",
            Some(_) if self.exceeded() => "EXCEEDED",
            Some(_) => "within",
        }
    }
}

/// Every group against every budget, group by group in the experiment's
/// order. A budget whose figure this report does not know is judged
/// unmeasured rather than dropped, so that it is still seen.
pub fn judge(budgets: &[Budget], groups: &[Group]) -> Vec<Judged> {
    let mut out = Vec::new();
    for g in groups {
        for b in budgets {
            let figure = Figure::named(&b.figure);
            let measured = figure.and_then(|f| f.median(g));
            let fmt = |v: f64| figure.map_or_else(|| v.to_string(), |f| f.fmt(v));
            out.push(Judged {
                scale: g.scale,
                variant: g.variant.clone(),
                key: b.key.clone(),
                figure: b.figure.clone(),
                measured,
                limit: b.limit,
                measured_cell: measured.map_or("—".into(), fmt),
                limit_cell: fmt(b.limit),
            });
        }
    }
    out
}

/// The highest value of `figure` over every variant and repeat (the runs
/// the medians use), with the variant, scale and repeat it came from.
pub fn highest(groups: &[Group], figure: Figure) -> Option<(f64, &Group, u32)> {
    let mut best: Option<(f64, &Group, u32)> = None;
    for g in groups {
        for r in g.used() {
            if let Some(v) = figure.of(r).filter(|v| v.is_finite())
                && best.is_none_or(|b| v > b.0)
            {
                best = Some((v, g, r.repeat));
            }
        }
    }
    best
}

/// `v` rounded up to two significant digits (5.125 → 5.2, 123 → 130,
/// 0.01234 → 0.013), and its text with no more decimals than those two
/// digits need. Up, so that a limit made from a measurement admits it.
pub fn round_up_2(v: f64) -> (f64, String) {
    if !(v > 0.0 && v.is_finite()) {
        return (0.0, "0".into());
    }
    let e = v.log10().floor() as i32 - 1;
    let step = 10f64.powi(e);
    // The tolerance keeps a value already on two digits (5.2 = 52 × 0.1,
    // which binary floats make 52.000000000000007) from rounding up a step.
    let q = (v / step * (1.0 - 1e-12)).ceil();
    let decimals = (-e).max(0) as usize;
    let r = q * step;
    (r, format!("{r:.decimals$}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(variant: &str, scale: u64, runs: &[(Metric, f64)]) -> Group {
        Group {
            scale,
            variant: variant.into(),
            runs: runs
                .iter()
                .enumerate()
                .map(|(i, (m, v))| {
                    let mut r = RunFigures::empty(scale, variant, i as u32 + 1);
                    r.set(*m, Some(*v));
                    r
                })
                .collect(),
        }
    }

    fn budget(key: &str, figure: &str, limit: f64) -> Budget {
        Budget {
            key: key.into(),
            figure: figure.into(),
            limit,
        }
    }

    #[test]
    fn the_median_over_repeats_is_judged_and_only_above_the_limit_exceeds() {
        let rpo = Metric::RequestsPerObject;
        let groups = [
            // Median 4: at the limit is within.
            group("good", 100, &[(rpo, 3.0), (rpo, 4.0), (rpo, 9.0)]),
            // Median 5: above.
            group("bad", 100, &[(rpo, 5.0), (rpo, 5.0), (rpo, 2.0)]),
            group("bare", 100, &[(Metric::PeakRss, 1.0)]),
        ];
        let j = judge(
            &[budget("requests_per_object", "requests per object", 4.0)],
            &groups,
        );
        let got: Vec<(&str, Option<f64>, &str)> = j
            .iter()
            .map(|j| (j.variant.as_str(), j.measured, j.verdict()))
            .collect();
        assert_eq!(
            got,
            [
                ("good", Some(4.0), "within"),
                ("bad", Some(5.0), "EXCEEDED"),
                ("bare", None, "unmeasured"),
            ]
        );
        assert!(!j[2].exceeded());
    }

    #[test]
    fn rss_per_object_is_peak_rss_over_n_in_kib() {
        // 100 objects, 51 200 KiB (50 MiB) peak: 512 KiB per object.
        let g = group("a", 100, &[(Metric::PeakRss, 50.0 * 1024.0 * 1024.0)]);
        assert_eq!(Figure::RssPerObjectKib.median(&g), Some(512.0));
        let j = judge(&[budget("rss_per_object_kib", RSS_PER_OBJECT, 500.0)], &[g]);
        assert_eq!(
            (j[0].measured_cell.as_str(), j[0].limit_cell.as_str()),
            ("512.0 KiB", "500.0 KiB")
        );
        assert!(j[0].exceeded());
    }

    #[test]
    fn the_highest_value_names_its_variant_and_repeat() {
        let rpo = Metric::RequestsPerObject;
        let groups = [
            group("a", 10, &[(rpo, 3.0), (rpo, 4.5)]),
            group("b", 10, &[(rpo, 4.0)]),
        ];
        let (v, g, repeat) = highest(&groups, Figure::Metric(rpo)).unwrap();
        assert_eq!((v, g.variant.as_str(), repeat), (4.5, "a", 2));
        assert!(highest(&groups, Figure::Metric(Metric::T100)).is_none());
    }

    #[test]
    fn limits_round_up_to_two_significant_digits() {
        // By hand: 4.1 × 1.25 = 5.125 → 5.2; 98.4 × 1.25 = 123 → 130;
        // 0.01234 → 0.013; 5.2 stays 5.2; 7 → 7.0; 0 stays 0.
        let cases = [
            (4.1 * 1.25, "5.2"),
            (98.4 * 1.25, "130"),
            (0.01234, "0.013"),
            (5.2, "5.2"),
            (7.0, "7.0"),
            (1234.0, "1300"),
            (0.0, "0"),
        ];
        for (v, want) in cases {
            assert_eq!(round_up_2(v).1, want, "{v}");
        }
        assert_eq!(round_up_2(98.4 * 1.25).0, 130.0);
    }
}
