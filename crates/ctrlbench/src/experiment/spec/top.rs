//! The top-level keys: their bounds (shared with the command-line flags
//! that override them, `run --scales --window --repeats
//! --background-objects`) and the check of the file's own values.

use super::errors::{Checked, Source};
use super::policy;
use super::schema::{RepeatsSpec, Spec};

/// The most widgets one run may create.
pub const MAX_SCALE: u64 = 1_000_000;
/// Upper bound of `probe_objects`.
pub const MAX_PROBE_OBJECTS: u64 = 100_000;
/// Upper bound of `background_objects`.
pub const MAX_BACKGROUND: u64 = 1_000_000;
/// The most creates the loader keeps in flight.
pub const MAX_CONCURRENCY: u32 = 1024;
/// Bounds of `window_s` (and `--window`): up to a week.
pub const WINDOW_S: (f64, f64) = (0.001, 7.0 * 86_400.0);
/// Bounds of `quiet_s`.
pub const QUIET_S: (f64, f64) = (0.001, 3_600.0);
/// Bounds of `scrape_interval_s`.
pub const SCRAPE_INTERVAL_S: (f64, f64) = (0.1, 60.0);

/// `scales`: at least one, each within bounds (also for `--scales`).
pub fn check_scales(v: &[u64]) -> Result<(), String> {
    if v.is_empty() || v.iter().any(|n| !(1..=MAX_SCALE).contains(n)) {
        return Err(format!(
            "needs at least one scale, each from 1 to {MAX_SCALE}"
        ));
    }
    Ok(())
}

/// A duration in seconds (`window_s`, `quiet_s`, `scrape_interval_s`, `--window`).
pub fn check_seconds(v: f64, (min, max): (f64, f64)) -> Result<(), String> {
    if !(v > 0.0 && v.is_finite()) {
        return Err(format!("must be a positive number of seconds, not {v}"));
    }
    if !(min..=max).contains(&v) {
        return Err(format!("must be from {min} to {max} seconds, not {v}"));
    }
    Ok(())
}

/// `background_objects` (also `--background-objects`).
pub fn check_background(k: u64) -> Result<(), String> {
    if k > MAX_BACKGROUND {
        return Err(format!("must be at most {MAX_BACKGROUND}"));
    }
    Ok(())
}

/// The most repeats an experiment may ask for.
pub const MAX_REPEATS: u32 = 100;
/// `min_repeats` and `max_repeats` when `repeats = "auto"` leaves them unset.
pub const AUTO_REPEATS: (u32, u32) = (3, 10);
/// `margin` when unset: equivalent within ±5 %.
pub const DEFAULT_MARGIN: f64 = 0.05;

/// How many interleaved repeats run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repeats {
    Fixed(u32),
    /// Until every question is decided, at least `min`, at most `max`.
    Auto {
        min: u32,
        max: u32,
    },
}

impl Repeats {
    /// The most repeats the plan may run.
    pub fn max(self) -> u32 {
        match self {
            Repeats::Fixed(n) => n,
            Repeats::Auto { max, .. } => max,
        }
    }
}

/// `repeats` (also `--repeats`).
pub fn check_repeats(v: u32) -> Result<(), String> {
    if v == 0 {
        return Err("must be at least 1".into());
    }
    if v > MAX_REPEATS {
        return Err(format!("must be at most {MAX_REPEATS}"));
    }
    Ok(())
}

/// `repeats`, `min_repeats` and `max_repeats` together.
pub fn repeats(src: &Source, spec: &Spec) -> Checked<Repeats> {
    let count = |key: &str, v: &Option<toml::Spanned<u32>>, default: u32| match v {
        Some(v) => check_repeats(*v.get_ref())
            .map(|()| *v.get_ref())
            .map_err(|m| src.at(key, v.span(), m)),
        None => Ok(default),
    };
    match *spec.repeats.get_ref() {
        RepeatsSpec::Count(n) => {
            check_repeats(n).map_err(|m| src.at("repeats", spec.repeats.span(), m))?;
            if let Some((key, v)) = [
                ("min_repeats", &spec.min_repeats),
                ("max_repeats", &spec.max_repeats),
            ]
            .into_iter()
            .find_map(|(k, v)| v.as_ref().map(|v| (k, v)))
            {
                return Err(src.at(
                    key,
                    v.span(),
                    "needs repeats = \"auto\" (with a number of repeats, that number runs)",
                ));
            }
            Ok(Repeats::Fixed(n))
        }
        RepeatsSpec::Auto => {
            let min = count("min_repeats", &spec.min_repeats, AUTO_REPEATS.0)?;
            let max = count("max_repeats", &spec.max_repeats, AUTO_REPEATS.1.max(min))?;
            if min > max {
                let span = spec
                    .max_repeats
                    .as_ref()
                    .map_or(spec.repeats.span(), |v| v.span());
                return Err(src.at(
                    "max_repeats",
                    span,
                    format!("is {max}, fewer than min_repeats ({min})"),
                ));
            }
            Ok(Repeats::Auto { min, max })
        }
    }
}

/// A fraction strictly between 0 and `max`: 1 for `margin`, 0.5 for
/// `growth_margin`, 64 (a share of a core) for `busy_threshold`.
pub fn fraction(
    src: &Source,
    key: &str,
    v: &Option<toml::Spanned<f64>>,
    max: f64,
    default: f64,
) -> Checked<f64> {
    match v {
        None => Ok(default),
        Some(v) => {
            let x = *v.get_ref();
            if x > 0.0 && x < max && x.is_finite() {
                Ok(x)
            } else {
                Err(src.at(
                    key,
                    v.span(),
                    format!("must be more than 0 and less than {max}, not {x}"),
                ))
            }
        }
    }
}

/// The top-level values, each against its bounds.
pub fn check(src: &Source, spec: &Spec) -> Checked<()> {
    policy::check_name(spec.name.get_ref()).map_err(|m| src.at("name", spec.name.span(), m))?;
    check_scales(spec.scales.get_ref()).map_err(|m| src.at("scales", spec.scales.span(), m))?;
    for (key, v, bounds) in [
        ("window_s", &spec.window_s, WINDOW_S),
        (
            "scrape_interval_s",
            &spec.scrape_interval_s,
            SCRAPE_INTERVAL_S,
        ),
        ("quiet_s", &spec.quiet_s, QUIET_S),
    ] {
        check_seconds(*v.get_ref(), bounds).map_err(|m| src.at(key, v.span(), m))?;
    }
    if !(1..=MAX_CONCURRENCY).contains(spec.concurrency.get_ref()) {
        return Err(src.at(
            "concurrency",
            spec.concurrency.span(),
            format!("must be from 1 to {MAX_CONCURRENCY}"),
        ));
    }
    if !(1..=MAX_PROBE_OBJECTS).contains(spec.probe_objects.get_ref()) {
        return Err(src.at(
            "probe_objects",
            spec.probe_objects.span(),
            format!("must be from 1 to {MAX_PROBE_OBJECTS}"),
        ));
    }
    check_background(*spec.background_objects.get_ref())
        .map_err(|m| src.at("background_objects", spec.background_objects.span(), m))?;
    if spec.variants.get_ref().is_empty() {
        return Err(src.at(
            "variant",
            spec.variants.span(),
            "at least one [[variant]] is needed",
        ));
    }
    Ok(())
}
