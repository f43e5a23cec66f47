//! ctrlbench: measures what Kubernetes controller patterns really cost.
//!
//! The library behind the `ctrlbench` command, also used in-process by tests:
//! `cluster` owns the local control plane, `run` the per-run namespaces and
//! identities.

pub mod cluster;
pub mod controllers;
pub mod demo;
pub mod experiment;
pub mod progress;
pub mod report;
pub mod run;
pub mod samples;
pub mod testing;
