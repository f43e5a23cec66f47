//! The words of the preset table and the flags beyond the settings' own
//! (those, with the settings, are `ctrlbench_settings`, re-exported by
//! `presets`): a preset's question, the constants both controllers share
//! (finalizer, retry policy, leader election, client buckets), and the flag
//! error with the one check that the table's defaults and the flags both
//! need (the metrics bind address). The floor the rest of `presets` stands
//! on: it names no other file of the crate.

use serde::{Deserialize, Serialize};

/// What a preset's results answer (`question` in the table): the report
/// groups variants by it and compares each with its counterpart on the
/// question's headline figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Question {
    /// Ready/s.
    Throughput,
    /// Ready at the window's end.
    Coverage,
    /// The controller's requests/s in an idle phase, else its writes/s.
    SteadyState,
    /// The length of a delete phase (until every object is gone).
    Deletion,
    /// Peak RSS.
    Memory,
    /// Reconciles per object, summed over the replicas.
    Duplicates,
}

/// The finalizer the `finalizer` setting adds and removes.
pub const FINALIZER: &str = "benchmark.example.com/cleanup";

/// The controller-level retry policy on reconcile errors, identical in both
/// controllers: controller-runtime's default rate limiter, the larger of a
/// per-item exponential backoff and one overall token bucket.
pub mod retry {
    /// Per-item backoff: BASE_MS × 2^failures …
    pub const BACKOFF_BASE_MS: u64 = 5;
    /// … capped at CAP_S.
    pub const BACKOFF_CAP_S: u64 = 1000;
    /// The overall bucket every retry draws from.
    pub const OVERALL_QPS: f64 = 10.0;
    pub const OVERALL_BURST: u32 = 100;
}

/// Leader election, client-go's defaults as controller-runtime's manager
/// takes them: the Lease lasts LEASE_DURATION_S after its last renewal, the
/// leader renews every RETRY_PERIOD_S and gives up after RENEW_DEADLINE_S
/// without a renewal; a candidate retries every RETRY_PERIOD_S.
pub mod leader_election {
    pub const LEASE_DURATION_S: u64 = 15;
    pub const RENEW_DEADLINE_S: u64 = 10;
    pub const RETRY_PERIOD_S: u64 = 2;
    /// The Lease both controllers hold, in the namespace they watch.
    pub const LEASE_NAME: &str = "widget-controller-leader";
}

/// The REST clients that each have their own token bucket, as in
/// controller-runtime (one per REST client; watches never throttled).
pub const CLIENT_BUCKETS: [&str; 3] = ["informer", "client", "api-reader"];

ctrlbench_settings::names!(Question { Throughput = "throughput", Coverage = "coverage", SteadyState = "steady-state", Deletion = "deletion", Memory = "memory", Duplicates = "duplicates" });

/// A flag error: one line naming the flag (exit code 2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlagError {
    /// The flag, spelled `--name`.
    pub flag: &'static str,
    pub message: String,
}

impl std::fmt::Display for FlagError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.flag, self.message)
    }
}

impl std::error::Error for FlagError {}

pub(super) fn flag_err(flag: &'static str, message: String) -> FlagError {
    FlagError { flag, message }
}

/// `--metrics-bind-address`: "0" (off) or HOST:PORT with a port in 0..=65535.
pub fn check_bind_address(addr: &str) -> Result<(), FlagError> {
    if addr == "0" {
        return Ok(());
    }
    let bad = || {
        flag_err(
            "--metrics-bind-address",
            format!("{addr:?} is not HOST:PORT (or 0 to turn metrics off)"),
        )
    };
    let (host, port) = addr.rsplit_once(':').ok_or_else(bad)?;
    if host.contains(':') && !(host.starts_with('[') && host.ends_with(']')) {
        return Err(bad());
    }
    if port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) || port.parse::<u16>().is_err()
    {
        return Err(flag_err(
            "--metrics-bind-address",
            format!("invalid port {port:?} in {addr:?}"),
        ));
    }
    Ok(())
}
