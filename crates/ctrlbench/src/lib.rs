//! ctrlbench: measures what Kubernetes controller patterns really cost.
//!
//! The library behind the `ctrlbench` command, also used in-process by tests:
//! `experiment` (spec → plan), `run` (target, group, measure, summary) and
//! the `controllers` it builds. The local control plane (`ctrlbench_plane`),
//! the results contract (`ctrlbench_record`) and the report
//! (`ctrlbench_report`) are crates of their own, used under those names.

pub mod budget;
pub mod calibration;
pub mod cli;
pub mod commands;
pub mod controllers;
pub mod demo;
pub mod doctor;
pub mod entry;
pub mod experiment;
pub mod machine;
pub mod run;
