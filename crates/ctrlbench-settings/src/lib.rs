//! The `--print-settings` JSON, defined once: what a controller runs with
//! once its preset and flags are combined. The Rust controller resolves its
//! flags into [`Settings`] (through `widget_api::presets`) and prints it,
//! the Go controller prints the same shape (held equal by the parity test),
//! the harness records it in each run's summary.json (`ctrlbench-record`)
//! and the report reads it back. Serde only, so that the pure results
//! contract may depend on it.
//!
//! Two rules meet in one type. Printing: numbers are written as Go writes
//! them and only the Rust-only keys are left out when off, so that both
//! controllers print alike. Reading: every key may be absent (results
//! recorded before it existed): a missing key takes its default, or None
//! where the report must tell "not recorded" apart.

mod values;

use std::num::NonZeroU32;

use serde::{Deserialize, Serialize};

pub use values::{Cache, LogFormat, LogLevel, Predicate, Queue, RateLimit, Read, StatusWrite};

/// How a controller takes part in leader election (`--leader-elect`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LeaderElection {
    pub lease_name: String,
    pub lease_duration_s: u64,
    /// None: the implementation has no renew deadline of its own (the Rust
    /// controller's lease crate keeps renewing until the Lease expires).
    pub renew_deadline_s: Option<u64>,
    pub retry_period_s: u64,
}

/// The Rust controller's knobs that pass from a flag to the settings as
/// they are: each field is at once the flag (its doc is the flag's help,
/// its type the flag's check), the printed key (only when set, so that
/// Go's controller, which has none of them, prints alike) and a setting the
/// report shows and holds alike across a like-for-like comparison. A new
/// one is a field here, its experiment key and its use in the controller:
/// docs/architecture.md's how-to. clap is a feature, so that the results
/// contract stays serde only.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(default)]
pub struct Tunables {
    /// Objects per page of the initial list and relists (kube-rs's
    /// `page_size`), at least 1. Without it: kube-rs's 500.
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub list_page_size: Option<NonZeroU32>,
    /// The server-side timeout of each watch request, in seconds
    /// (kube-runtime's watcher `timeout`), at least 1. Without it: kube-rs's
    /// 290 (client-go picks a random one per watch).
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub watch_timeout_s: Option<NonZeroU32>,
    /// Ask for watch bookmarks, so that a watch reopened after its timeout
    /// resumes from a recent resourceVersion (kube-runtime's default, as
    /// client-go's); --watch-bookmarks=false turns them off
    /// (`disable_bookmarks()`).
    #[cfg_attr(
        feature = "clap",
        arg(long, num_args = 0..=1, default_missing_value = "true", require_equals = true)
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub watch_bookmarks: Option<bool>,
}

impl Tunables {
    /// The ones set, as `key value` ("watch_timeout_s 60") in key order:
    /// the report's settings cell, which needs no code per tunable.
    pub fn set(&self) -> Vec<String> {
        let v = serde_json::to_value(self).expect("tunables serialise");
        let mut set: Vec<String> = v
            .as_object()
            .map(|o| o.iter().map(|(k, v)| format!("{k} {v}")).collect())
            .unwrap_or_default();
        set.sort();
        set
    }
}

/// The resolved settings a controller runs with; serialised, this is the
/// `--print-settings` JSON both controllers print.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    /// The namespace watched. The harness records it once per run, beside
    /// the settings, and leaves it out of them (empty: not printed), so that
    /// two runs' settings compare equal; a controller never prints it empty.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    pub preset: String,
    pub workers: u16,
    pub predicate: Predicate,
    pub status_write: StatusWrite,
    pub annotate: bool,
    /// RetryOnConflict around the status Update (from the preset).
    pub conflict_retry: bool,
    /// The anti-pattern settings, from the preset only (deploy/presets.toml);
    /// absent in older results, whose controllers all did what the defaults
    /// say.
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
    pub strip_managed_fields: bool,
    /// `--managed-fields-text` (Rust): each managedFields entry's FieldsV1
    /// held as its JSON text, as client-go holds raw bytes; printed only
    /// when on (Go's cache always holds bytes).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub managed_fields_text: bool,
    /// The work queue's order when --queue is given; null: the runtime's own
    /// (kube-runtime's scheduler in Rust, client-go's FIFO queue in Go), so
    /// that both controllers print the same settings for the same flags.
    /// The harness always passes --queue, so recorded runs name it.
    pub queue: Option<Queue>,
    /// controller-runtime's priority queue when the Go controller is given
    /// --priority-queue; null: the runtime's default. The Rust controller has
    /// no priority queue and always prints null (the key exists for parity).
    pub priority_queue: Option<bool>,
    /// Debounce of triggers per object (0 = none): kube-runtime's
    /// `Config::debounce` with the kube queue, the same delay-and-reset
    /// before the FIFO queue.
    pub debounce_ms: u64,
    /// The limit each client actually runs with, library defaults included
    /// (null: no client-side limiter; both null and no `client_buckets`:
    /// results older than these keys).
    #[serde(serialize_with = "qps_as_go_writes_it")]
    pub effective_client_qps: Option<f64>,
    pub effective_client_burst: Option<u32>,
    /// The clients that each have a bucket of that size.
    pub client_buckets: Vec<String>,
    /// The retry policy on reconcile errors: per-item backoff base and cap,
    /// and the overall bucket, which Go leaves null with its priority queue
    /// (controller-runtime's limiter is then the backoff alone). None and
    /// not written: not printed (older results).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_backoff_base_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_backoff_cap_s: Option<u64>,
    #[serde(
        serialize_with = "qps_as_go_writes_it",
        skip_serializing_if = "Option::is_none"
    )]
    pub retry_overall_qps: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_overall_burst: Option<u32>,
    /// None: no leader election (every replica reconciles).
    pub leader_election: Option<LeaderElection>,
    /// "h2" with --http2 (HTTP/2, one connection per client shared by its
    /// requests and watches, as client-go); absent: HTTP/1.1, a connection
    /// per request in flight (kube-rs's default). Go's controller never
    /// prints it: client-go negotiates HTTP/2 by itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub http_version: Option<String>,
    /// "any" with --list-any-version: the Rust controller's initial list and
    /// relists ask for resourceVersion=0, which the apiserver answers from
    /// its watch cache whole, as client-go's reflector lists; absent:
    /// kube-rs's default (the most recent version, in pages of 500). Go's
    /// controller never prints it: its reflector always lists so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub list_semantic: Option<String>,
    /// The Rust controller's watcher knobs, printed at this level (flattened)
    /// and only when set.
    #[serde(flatten)]
    pub tunables: Tunables,
    /// `--pprof`: a CPU profile is served on the metrics address; printed
    /// only when on, so that defaults print alike.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub pprof: bool,
    /// The Rust controller's global allocator when it is not the system's
    /// ("mimalloc", "jemalloc": a build feature, not a flag); absent: the
    /// system allocator (Go's runtime has its own).
    #[serde(skip_serializing_if = "Option::is_none")]
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

    /// The client limit as a reader wants it: "20 qps / burst 30
    /// (library default)", "none", or "?" when not recorded.
    pub fn client_limit(&self) -> String {
        let how = match self.client_rate_limit {
            RateLimit::LibraryDefault => " (library default)",
            _ => "",
        };
        match (self.effective_client_qps, self.effective_client_burst) {
            (Some(q), Some(b)) => format!("{q} qps / burst {b}{how}"),
            _ if !self.client_buckets.is_empty() => format!("none{how}"),
            _ => match (self.client_qps, self.client_burst) {
                (Some(q), Some(b)) => format!("{q} qps / burst {b}"),
                _ => "?".to_string(),
            },
        }
    }

    /// "max(5 ms × 2^n ≤ 1000 s, 10 qps burst 100)", or "?" when not recorded.
    pub fn retry_policy(&self) -> String {
        match (
            self.retry_backoff_base_ms,
            self.retry_backoff_cap_s,
            self.retry_overall_qps,
            self.retry_overall_burst,
        ) {
            (Some(b), Some(c), Some(q), Some(n)) => {
                format!("max(per item {b} ms × 2^n ≤ {c} s, overall {q} qps burst {n})")
            }
            // controller-runtime's priority queue: the per-item backoff alone.
            (Some(b), Some(c), None, None) if self.priority_queue == Some(true) => {
                format!("per item {b} ms × 2^n ≤ {c} s")
            }
            _ => "?".to_string(),
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn older_results_read_with_defaults_and_nothing_recorded() {
        let old: Settings = serde_json::from_str(
            r#"{"annotate":true,"client_burst":null,"client_qps":null,"conflict_retry":false,
                "predicate":"none","preset":"bad-fix","status_write":"update",
                "watch_list":false,"work_ms":10,"workers":5,"unknown_later_key":1}"#,
        )
        .unwrap();
        assert_eq!((old.preset.as_str(), old.workers), ("bad-fix", 5));
        assert_eq!(
            (old.read, old.cache, old.finalizer),
            (Read::Cache, Cache::Namespace, false)
        );
        assert_eq!((old.queue, old.debounce_ms), (None, 0));
        assert_eq!(
            (old.client_limit(), old.retry_policy()),
            ("?".into(), "?".into())
        );
        let out = old.to_json();
        for absent in [
            "\"namespace\":",
            "retry_",
            "http_version",
            "pprof",
            "allocator",
        ] {
            assert!(!out.contains(absent), "{absent} in {out}");
        }
    }

    #[test]
    fn tunables_sit_flat_in_the_printed_settings_and_read_back() {
        let printed =
            r#"{"preset":"good","workers":5,"watch_timeout_s":60,"watch_bookmarks":false}"#;
        let s: Settings = serde_json::from_str(printed).unwrap();
        assert_eq!(s.tunables.watch_timeout_s.map(NonZeroU32::get), Some(60));
        assert_eq!(s.tunables.watch_bookmarks, Some(false));
        assert_eq!(s.tunables.list_page_size, None);
        assert_eq!(
            s.tunables.set(),
            ["watch_bookmarks false", "watch_timeout_s 60"]
        );
        let out = s.to_json();
        assert!(out.contains(r#""watch_timeout_s":60"#), "{out}");
        assert!(!out.contains("list_page_size"), "{out}");
        assert!(!out.contains("tunables"), "{out}");
        assert!(Tunables::default().set().is_empty());
    }

    #[test]
    fn the_anti_pattern_settings_read_as_printed() {
        let s: Settings = serde_json::from_str(
            r#"{"preset":"cache-cluster-wide","workers":5,"read":"api","list_in_reconcile":true,
                "requeue_after_ms":30000,"status_if_changed":true,"finalizer":true,"cache":"cluster"}"#,
        )
        .unwrap();
        assert_eq!(
            (s.read, s.cache, s.requeue_after_ms),
            (Read::Api, Cache::Cluster, 30000)
        );
        assert!(s.list_in_reconcile && s.status_if_changed && s.finalizer);
    }

    #[test]
    fn numbers_are_written_as_go_writes_them() {
        let s = Settings {
            namespace: "ns".into(),
            client_rate_limit: RateLimit::TokenBucket,
            client_qps: Some(5.0),
            client_burst: Some(10),
            effective_client_qps: Some(2.5),
            retry_overall_qps: Some(10.0),
            ..Settings::default()
        };
        let out = s.to_json();
        assert!(out.starts_with(r#"{"namespace":"ns","preset":"#), "{out}");
        for part in [
            r#""client_qps":5,"#,
            r#""effective_client_qps":2.5,"#,
            r#""retry_overall_qps":10,"#,
            r#""queue":null,"#,
            r#""leader_election":null"#,
        ] {
            assert!(out.contains(part), "{part} not in {out}");
        }
        assert_eq!(s.token_bucket(), Some((5.0, 10)));
        let back: Settings = serde_json::from_str(&out).unwrap();
        assert_eq!(back, s);
    }

    #[test]
    fn go_with_its_priority_queue_has_no_overall_bucket() {
        let s: Settings = serde_json::from_str(
            r#"{"priority_queue":true,"retry_backoff_base_ms":5,"retry_backoff_cap_s":1000,
                "retry_overall_qps":null,"retry_overall_burst":null}"#,
        )
        .unwrap();
        assert_eq!(s.retry_policy(), "per item 5 ms × 2^n ≤ 1000 s");
        assert!(!s.to_json().contains("retry_overall"));
    }
}
