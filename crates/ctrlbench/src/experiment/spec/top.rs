//! The top-level keys: their bounds (shared with the command-line flags
//! that override them, `run --scales --window --repeats
//! --background-objects`) and the check of the file's own values.

use super::errors::{Checked, Source};
use super::policy;
use super::schema::Spec;

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

/// `repeats` (also `--repeats`).
pub fn check_repeats(v: u32) -> Result<(), String> {
    if v == 0 {
        return Err("must be at least 1".into());
    }
    Ok(())
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
    check_repeats(*spec.repeats.get_ref())
        .map_err(|m| src.at("repeats", spec.repeats.span(), m))?;
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
