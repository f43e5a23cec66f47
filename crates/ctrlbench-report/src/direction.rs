//! Which figures have a better side, stated once: the regression gate's
//! figures and the others that have one. Below the gate, the questions and
//! the counterparts, which all read it, so none of them imports another
//! for it.

use crate::metrics::Metric;

/// The figures the regression gate watches, and whether higher is better:
/// the one place their direction is stated (`compare`, both gates, the
/// questions' words and `export` read it through [`better`]). Writes per
/// object, not writes/s: a build that converges sooner sends the same
/// writes in less time, which raises writes/s without costing anything.
pub const GATE: &[(Metric, bool)] = &[
    (Metric::T100, false),
    (Metric::ReadyPerS, true),
    (Metric::P99, false),
    (Metric::WritesPerObject, false),
    (Metric::RequestsPerObject, false),
    (Metric::PeakRss, false),
];

/// Figures with a better side that the gate does not watch, and whether
/// higher is better: what the rust-X / go-X questions and the dashboards'
/// export need beyond [`GATE`]. No figure is in both tables.
pub const UNGATED: &[(Metric, bool)] = &[
    (Metric::TtrP99, false),
    (Metric::CpuPerReconcile, false),
    (Metric::StartInitialList, false),
];

/// Whether higher is better on `m`, for the figures that have a better
/// side; None for the others (409s, writes/s, …), whose change is neither.
pub fn better(m: Metric) -> Option<bool> {
    GATE.iter().chain(UNGATED).find(|g| g.0 == m).map(|g| g.1)
}
