//! ctrlbench: measures what Kubernetes controller patterns really cost.
//!
//! The library behind the `ctrlbench` command, also used in-process by tests:
//! `cluster` owns the local control plane, `run` the per-run namespaces and
//! identities.

pub mod cluster;
pub mod demo;
pub mod progress;
pub mod run;
pub mod testing;
