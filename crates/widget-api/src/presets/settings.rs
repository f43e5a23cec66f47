//! The resolved settings: what a controller runs with once the preset and
//! its flags are combined, and their `--print-settings` JSON, which both
//! controllers must print alike (so numbers are written as Go writes them).

use serde::{Deserialize, Serialize};

use super::values::{Cache, LogFormat, LogLevel, Predicate, Queue, RateLimit, Read, StatusWrite};

/// How a controller takes part in leader election (`--leader-elect`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LeaderElection {
    pub lease_name: String,
    pub lease_duration_s: u64,
    /// None: the implementation has no renew deadline of its own (the Rust
    /// controller's lease crate keeps renewing until the Lease expires).
    pub renew_deadline_s: Option<u64>,
    pub retry_period_s: u64,
}

/// The resolved settings a controller runs with; serialised, this is the
/// `--print-settings` JSON both controllers print.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    pub namespace: String,
    pub preset: String,
    pub workers: u16,
    pub predicate: Predicate,
    pub status_write: StatusWrite,
    pub annotate: bool,
    /// RetryOnConflict around the status Update (from the preset).
    pub conflict_retry: bool,
    /// The anti-pattern settings, from the preset only (deploy/presets.toml).
    pub read: Read,
    pub list_in_reconcile: bool,
    pub requeue_after_ms: u64,
    pub status_if_changed: bool,
    pub finalizer: bool,
    pub cache: Cache,
    pub work_ms: u64,
    pub client_rate_limit: RateLimit,
    /// Token-bucket rate; null unless client_rate_limit is token-bucket.
    /// Whole numbers are written without a fraction (`5`, not `5.0`), as Go's
    /// encoding/json writes a float64.
    #[serde(serialize_with = "qps_as_go_writes_it")]
    pub client_qps: Option<f64>,
    /// Token-bucket size; null unless client_rate_limit is token-bucket.
    pub client_burst: Option<u32>,
    /// HOST:PORT, or "0" for no metrics server.
    pub metrics_bind_address: String,
    pub log_level: LogLevel,
    pub log_format: LogFormat,
    pub watch_list: bool,
    /// managedFields dropped before objects enter the cache (kube-rs:
    /// `managed_fields` cleared in the watch stream; controller-runtime:
    /// `cache.TransformStripManagedFields`): what the cache costs per object.
    #[serde(default)]
    pub strip_managed_fields: bool,
    /// `--managed-fields-text` (Rust): each managedFields entry's FieldsV1
    /// held as its JSON text, as client-go holds raw bytes; printed only
    /// when on (Go's cache always holds bytes).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub managed_fields_text: bool,
    /// The work queue's order when --queue is given; null: the runtime's own
    /// (kube-runtime's scheduler in Rust, client-go's FIFO queue in Go), so
    /// that both controllers print the same settings for the same flags.
    /// The harness always passes --queue, so recorded runs name it.
    pub queue: Option<Queue>,
    /// controller-runtime's priority queue when the Go controller is given
    /// --priority-queue; null: the runtime's default. The Rust controller has
    /// no priority queue and always prints null (the key exists for parity).
    #[serde(default)]
    pub priority_queue: Option<bool>,
    /// Debounce of triggers per object (0 = none): kube-runtime's
    /// `Config::debounce` with the kube queue, the same delay-and-reset
    /// before the FIFO queue.
    pub debounce_ms: u64,
    /// The limit each client actually runs with, library defaults included
    /// (null: no client-side limiter).
    #[serde(serialize_with = "qps_as_go_writes_it")]
    pub effective_client_qps: Option<f64>,
    pub effective_client_burst: Option<u32>,
    /// The clients that each have a bucket of that size.
    pub client_buckets: Vec<String>,
    /// The retry policy on reconcile errors ([`retry`](super::values::retry)).
    pub retry_backoff_base_ms: u64,
    pub retry_backoff_cap_s: u64,
    #[serde(serialize_with = "qps_as_go_writes_it_f64")]
    pub retry_overall_qps: f64,
    pub retry_overall_burst: u32,
    /// None: no leader election (every replica reconciles).
    #[serde(default)]
    pub leader_election: Option<LeaderElection>,
    /// "h2" with --http2 (HTTP/2, one connection per client shared by its
    /// requests and watches, as client-go); absent: HTTP/1.1, a connection
    /// per request in flight (kube-rs's default). Go's controller never
    /// prints it: client-go negotiates HTTP/2 by itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_version: Option<String>,
    /// "any" with --list-any-version: the Rust controller's initial list and
    /// relists ask for resourceVersion=0, which the apiserver answers from
    /// its watch cache whole, as client-go's reflector lists; absent:
    /// kube-rs's default (the most recent version, in pages of 500). Go's
    /// controller never prints it: its reflector always lists so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_semantic: Option<String>,
    /// With --list-page-size: objects per page of the Rust controller's
    /// initial list and relists; absent: kube-rs's 500. Go's controller
    /// never prints it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_page_size: Option<u32>,
    /// `--pprof`: a CPU profile is served on the metrics address; printed
    /// only when on, so that defaults print alike.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pprof: bool,
    /// The Rust controller's global allocator when it is not the system's
    /// ("mimalloc", "jemalloc": a build feature, not a flag); absent: the
    /// system allocator (Go's runtime has its own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocator: Option<String>,
}

impl Settings {
    /// (qps, burst) of the token bucket our flags ask for, if any.
    pub fn token_bucket(&self) -> Option<(f64, u32)> {
        match (self.client_rate_limit, self.client_qps, self.client_burst) {
            (RateLimit::TokenBucket, Some(q), Some(b)) => Some((q, b)),
            _ => None,
        }
    }

    /// The `--print-settings` line: one JSON object.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("settings serialise")
    }
}

/// Writes a whole-number f64 as a JSON integer, like Go's encoding/json.
fn qps_as_go_writes_it<S: serde::Serializer>(q: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match q {
        Some(q) if q.fract() == 0.0 && q.abs() < 9.007_199_254_740_992e15 => {
            s.serialize_i64(*q as i64)
        }
        Some(q) => s.serialize_f64(*q),
        None => s.serialize_none(),
    }
}

fn qps_as_go_writes_it_f64<S: serde::Serializer>(q: &f64, s: S) -> Result<S::Ok, S::Error> {
    qps_as_go_writes_it(&Some(*q), s)
}

#[cfg(test)]
mod tests {
    use super::super::flags::{Flags, resolve};

    fn flags(preset: &str) -> Flags {
        Flags {
            namespace: "ns".into(),
            preset: Some(preset.into()),
            ..Flags::default()
        }
    }

    #[test]
    fn settings_json_has_the_documented_keys() {
        let v: serde_json::Value = serde_json::from_str(
            &resolve(&Flags {
                client_qps: Some(5.0),
                ..flags("bad")
            })
            .unwrap()
            .to_json(),
        )
        .unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
        for k in [
            "namespace",
            "preset",
            "workers",
            "predicate",
            "status_write",
            "annotate",
            "conflict_retry",
            "work_ms",
            "client_rate_limit",
            "client_qps",
            "client_burst",
            "metrics_bind_address",
            "log_level",
            "log_format",
            "watch_list",
            "strip_managed_fields",
            "read",
            "list_in_reconcile",
            "requeue_after_ms",
            "status_if_changed",
            "finalizer",
            "cache",
        ] {
            assert!(keys.contains(&k), "{k} missing from {v}");
        }
        assert_eq!(v["client_rate_limit"], "token-bucket");
        assert_eq!(v["client_burst"], 10);
        assert_eq!(v.to_string().matches("\"client_qps\":5,").count(), 1, "{v}");
        assert_eq!(v["status_write"], "object");
        assert_eq!(v["read"], "cache");
        assert_eq!(v["cache"], "namespace");
        assert_eq!(v["requeue_after_ms"], 0);
    }
}
