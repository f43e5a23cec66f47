//! ctrlbench: measures what Kubernetes controller patterns really cost.
//!
//! The library behind the `ctrlbench` command, also used in-process by tests:
//! `experiment` (spec → plan), `run` (target, group, measure, summary) and
//! the `controllers` it builds. The local control plane (`cluster`), the
//! results contract (`record`) and the report (`report`) are crates of their
//! own, re-exported here under the names the data path uses.

pub use ctrlbench_plane as cluster;
pub use ctrlbench_plane::{progress, testing};
pub use ctrlbench_record as record;
pub use ctrlbench_report as report;

pub mod cli;
pub mod commands;
pub mod controllers;
pub mod demo;
pub mod experiment;
pub mod run;
