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

use crate::figures::{Group, RunFigures};
use crate::metrics::Metric;

mod fit;
pub mod plot;
pub use fit::*;

/// The margin δ of a results directory's growth verdicts: the experiment's
/// `growth_margin` as its manifest records it, else [`DEFAULT_DELTA`].
pub fn delta_of(m: &ctrlbench_record::Manifest) -> f64 {
    m.growth_margin
        .filter(|d| *d > 0.0 && *d < MAX_DELTA)
        .unwrap_or(DEFAULT_DELTA)
}

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
    /// Why a run may lack the figure, added to "not measured at N = …".
    pub unmeasured: &'static str,
    /// Where the value comes from when it is not the catalogue's `metric`
    /// (which then gives only its unit): the plane's processes, the pods.
    pub read: Option<fn(&RunFigures) -> Option<f64>>,
}

/// Every figure the growth verdicts cover, in the report's order: the one
/// table to extend when a new per-object figure joins the catalogue.
pub static FIGURES: &[GrowthFigure] = &[
    GrowthFigure {
        name: "reconciles per object",
        metric: Metric::ReconcilesPerObject,
        per: Per::Object,
        budget: None,
        unmeasured: "",
        read: None,
    },
    GrowthFigure {
        name: "writes per object",
        metric: Metric::WritesPerObject,
        per: Per::Object,
        budget: None,
        unmeasured: "",
        read: None,
    },
    GrowthFigure {
        name: "requests per object",
        metric: Metric::RequestsPerObject,
        per: Per::Object,
        budget: None,
        unmeasured: "",
        read: None,
    },
    GrowthFigure {
        name: "GETs per object",
        metric: Metric::GetsPerObject,
        per: Per::Object,
        budget: None,
        unmeasured: "",
        read: None,
    },
    GrowthFigure {
        name: "LISTs per object",
        metric: Metric::ListsPerObject,
        per: Per::Object,
        budget: None,
        unmeasured: "",
        read: None,
    },
    GrowthFigure {
        name: "objects returned by LISTs per object",
        metric: Metric::ListReturnedPerObject,
        per: Per::Object,
        budget: None,
        unmeasured: "",
        read: None,
    },
    GrowthFigure {
        name: "controller CPU / N",
        metric: Metric::Cpu,
        per: Per::DivideByN,
        budget: None,
        unmeasured: "",
        read: None,
    },
    GrowthFigure {
        name: "peak RSS / N",
        metric: Metric::PeakRss,
        per: Per::DivideByN,
        budget: None,
        unmeasured: "",
        read: None,
    },
    // The Kubernetes pod-startup SLO (p99 ≤ 5 s) as a soft reference: the
    // one published latency budget a controller's objects are held to.
    GrowthFigure {
        name: "time-to-Ready p99",
        metric: Metric::TtrP99,
        per: Per::Level,
        budget: Some((5.0, "5 s (the pod-startup SLO's p99, a soft reference)")),
        unmeasured: "",
        read: None,
    },
    GrowthFigure {
        name: "apiserver CPU / N",
        metric: Metric::ApiserverCpu,
        per: Per::DivideByN,
        budget: None,
        unmeasured: "",
        read: None,
    },
    GrowthFigure {
        name: "etcd bytes / N",
        metric: Metric::EtcdBytesAdded,
        per: Per::DivideByN,
        budget: None,
        unmeasured: " (a run in which etcd compacted has none: the apiserver compacts every 5 minutes, freeing history that earlier runs left)",
        read: None,
    },
    // The plane's own controllers and the pods they start, where the run
    // recorded them (plane.csv, pods.csv: a local plane with fake nodes).
    // Per object of the run: a Deployment of R replicas is R pods.
    GrowthFigure {
        name: "kube-controller-manager CPU / N",
        metric: Metric::Cpu,
        per: Per::DivideByN,
        budget: None,
        unmeasured: PLANE_UNMEASURED,
        read: Some(controller_manager_cpu),
    },
    GrowthFigure {
        name: "kube-controller-manager peak RSS / N",
        metric: Metric::PeakRss,
        per: Per::DivideByN,
        budget: None,
        unmeasured: PLANE_UNMEASURED,
        read: Some(controller_manager_rss),
    },
    GrowthFigure {
        name: "kube-scheduler CPU / N",
        metric: Metric::Cpu,
        per: Per::DivideByN,
        budget: None,
        unmeasured: PLANE_UNMEASURED,
        read: Some(scheduler_cpu),
    },
    GrowthFigure {
        name: "kube-scheduler peak RSS / N",
        metric: Metric::PeakRss,
        per: Per::DivideByN,
        budget: None,
        unmeasured: PLANE_UNMEASURED,
        read: Some(scheduler_rss),
    },
    GrowthFigure {
        name: "pod start p99 (created → Ready)",
        metric: Metric::TtrP99,
        per: Per::Level,
        budget: Some((5.0, "5 s (the pod-startup SLO's p99)")),
        unmeasured: " (a pod that never became Ready leaves the p99 unbounded)",
        read: Some(pod_start_p99),
    },
];

const PLANE_UNMEASURED: &str = " (plane.csv has it on a local plane that runs it)";

/// A plane process's (CPU seconds, peak RSS bytes) in the run.
fn plane(r: &RunFigures, name: &str) -> (Option<f64>, Option<f64>) {
    r.plane_processes
        .iter()
        .find(|p| p.0 == name)
        .map_or((None, None), |p| (p.1, p.2))
}

fn controller_manager_cpu(r: &RunFigures) -> Option<f64> {
    plane(r, "kube-controller-manager").0
}

fn controller_manager_rss(r: &RunFigures) -> Option<f64> {
    plane(r, "kube-controller-manager").1
}

fn scheduler_cpu(r: &RunFigures) -> Option<f64> {
    plane(r, "kube-scheduler").0
}

fn scheduler_rss(r: &RunFigures) -> Option<f64> {
    plane(r, "kube-scheduler").1
}

/// Created → Ready p99 over the run's pods; None when a pod never was
/// (an unbounded quantile has no logarithm to fit).
fn pod_start_p99(r: &RunFigures) -> Option<f64> {
    let p = r.pods.as_ref()?;
    crate::pods::quantiles(&p.stages[2])
        .map(|q| q[2])
        .filter(|v| v.is_finite())
}

impl GrowthFigure {
    /// The value fitted for one run, as measured (None: not measured).
    pub fn value(&self, r: &RunFigures) -> Option<f64> {
        let v = match self.read {
            Some(read) => read(r)?,
            None => r.get(self.metric)?,
        };
        Some(match self.per {
            Per::Object | Per::Level => v,
            Per::DivideByN => v / r.scale as f64,
        })
    }
}

/// One figure of one variant: its per-scale medians and its fit (or why not).
pub struct Growth {
    pub variant: String,
    pub figure: &'static GrowthFigure,
    /// (N, median value over the rounds) per scale, ascending.
    pub by_scale: Vec<(u64, Option<f64>)>,
    pub fit: Result<Fit, NotEstimable>,
    pub crossing: Option<Crossing>,
    /// Every run's value (N, round, value per object), as fitted.
    pub points: Vec<Point>,
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
        if gs.len() < MIN_SCALES || lo <= 0.0 || hi / lo < MIN_SPAN * SPAN_ROUNDING {
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
                Some(n) => Err(format!(
                    "not measured at N = {}{}",
                    fmt_n(n as f64),
                    f.unmeasured
                )),
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
                points,
            }
        })
        .collect()
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
    fn the_manifests_growth_margin_is_the_verdicts_delta() {
        let mut m = ctrlbench_record::Manifest::default();
        assert_eq!(delta_of(&m), DEFAULT_DELTA, "older results: the default");
        m.growth_margin = Some(0.25);
        assert_eq!(delta_of(&m), 0.25);
        m.growth_margin = Some(0.5);
        assert_eq!(delta_of(&m), DEFAULT_DELTA, "out of bounds: the default");
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
