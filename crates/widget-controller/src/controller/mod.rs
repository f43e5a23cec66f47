//! The controller: the write-up's reconcile, the status writes it makes,
//! controller-runtime's retry policy on errors and the run loop that feeds
//! reconciles from a watch. One file per idea (`reconcile`, `status`,
//! `requeue`, `run`); what `main` and the fixtures use is re-exported here,
//! so they name only `controller::…`.

mod reconcile;
mod requeue;
mod run;
mod status;

pub use run::{Clients, effective_queue, run};

// The fixtures drive single reconciles against a scripted API server.
#[cfg(test)]
pub use reconcile::{Context, Requeue, reconcile};
