//! The flags as a command line gives them, and the resolution rules of
//! `deploy/presets.toml` that turn them and a preset row into [`Settings`]:
//! the one place the Rust controller applies them (the Go controller mirrors
//! them in `controllers/go/flags.go`).

use ctrlbench_settings::{
    LeaderElection, LogFormat, LogLevel, Predicate, Queue, RateLimit, Settings, StatusWrite,
    Tunables,
};

use super::table::{Table, table};
use super::values::{
    CLIENT_BUCKETS, FlagError, check_bind_address, flag_err, leader_election, retry,
};

/// The flags as given on a command line: `None` = not given.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Flags {
    pub namespace: String,
    pub preset: Option<String>,
    pub workers: Option<i64>,
    pub predicate: Option<Predicate>,
    pub status_write: Option<StatusWrite>,
    pub annotate: Option<bool>,
    pub work_ms: Option<i64>,
    pub client_qps: Option<f64>,
    pub client_burst: Option<i64>,
    pub metrics_bind_address: Option<String>,
    pub log_level: Option<LogLevel>,
    pub log_format: Option<LogFormat>,
    pub watch_list: Option<bool>,
    pub strip_managed_fields: bool,
    /// FieldsV1 kept as JSON text in the Rust controller's cache.
    pub managed_fields_text: bool,
    pub queue: Option<Queue>,
    pub debounce_ms: Option<i64>,
    pub leader_elect: bool,
    /// A CPU profile served at /debug/pprof/profile on the metrics address.
    pub pprof: bool,
    /// HTTP/2 for the Rust controller's clients (ALPN h2); Go's client-go
    /// always negotiates it.
    pub http2: bool,
    /// The Rust controller's initial list with resourceVersion=0 (kube-rs
    /// `any_semantic()`), as client-go's reflector lists.
    pub list_any_version: bool,
    /// The watcher's knobs that pass to the settings as they are.
    pub tunables: Tunables,
}

/// Applies the rules of `deploy/presets.toml` to a command line's flags.
pub fn resolve(f: &Flags) -> Result<Settings, FlagError> {
    resolve_with(table(), f)
}

/// [`resolve`] against a given table (tests use altered tables).
pub fn resolve_with(t: &Table, f: &Flags) -> Result<Settings, FlagError> {
    let d = &t.defaults;
    if f.namespace.trim().is_empty() {
        return Err(flag_err("--namespace", "is required".into()));
    }
    let name = f.preset.as_deref().unwrap_or(&d.preset);
    let Some(p) = t.get(name) else {
        let names: Vec<&str> = t.presets.iter().map(|p| p.name.as_str()).collect();
        return Err(flag_err(
            "--preset",
            format!("unknown preset {name:?} (want {})", names.join("|")),
        ));
    };
    let workers = match f.workers {
        None => p.workers,
        Some(w) if (1..=i64::from(u16::MAX)).contains(&w) => w as u16,
        Some(w) => {
            return Err(flag_err(
                "--workers",
                format!("must be between 1 and {}, got {w}", u16::MAX),
            ));
        }
    };
    let work_ms = match f.work_ms {
        None => d.work_ms,
        Some(w) if w >= 0 => w as u64,
        Some(w) => return Err(flag_err("--work-ms", format!("must be >= 0, got {w}"))),
    };
    if let Some(q) = f.client_qps
        && !(q.is_finite() && q <= f64::from(f32::MAX))
    {
        return Err(flag_err(
            "--client-qps",
            format!("must be a finite number, got {q}"),
        ));
    }
    if let Some(b) = f.client_burst {
        if !f.client_qps.is_some_and(|q| q > 0.0) {
            return Err(flag_err(
                "--client-burst",
                "needs --client-qps > 0 (without it no token bucket is configured)".into(),
            ));
        }
        if !(1..=i64::from(i32::MAX)).contains(&b) {
            return Err(flag_err(
                "--client-burst",
                format!("must be between 1 and {}, got {b}", i32::MAX),
            ));
        }
    }
    let (client_rate_limit, client_qps, client_burst) = match f.client_qps {
        None => (RateLimit::LibraryDefault, None, None),
        Some(q) if q <= 0.0 => (RateLimit::Unlimited, None, None),
        Some(q) => (
            RateLimit::TokenBucket,
            Some(q),
            Some(f.client_burst.map(|b| b as u32).unwrap_or(d.client_burst)),
        ),
    };
    let queue = f.queue;
    let debounce_ms = match f.debounce_ms {
        None => 0,
        Some(d) if d < 0 => {
            return Err(flag_err("--debounce-ms", format!("must be >= 0, got {d}")));
        }
        Some(d) => d as u64,
    };
    let metrics_bind_address = f
        .metrics_bind_address
        .clone()
        .unwrap_or_else(|| d.metrics_bind_address.clone());
    check_bind_address(&metrics_bind_address)?;
    if f.pprof && metrics_bind_address == "0" {
        return Err(flag_err(
            "--pprof",
            "needs a metrics server (--metrics-bind-address is 0)".into(),
        ));
    }
    Ok(Settings {
        namespace: f.namespace.clone(),
        preset: p.name.clone(),
        workers,
        predicate: f.predicate.unwrap_or(p.predicate),
        status_write: f.status_write.unwrap_or(p.status_write),
        annotate: f.annotate.unwrap_or(p.annotate),
        conflict_retry: p.conflict_retry,
        read: p.read,
        list_in_reconcile: p.list_in_reconcile,
        requeue_after_ms: p.requeue_after_ms,
        status_if_changed: p.status_if_changed,
        finalizer: p.finalizer,
        cache: p.cache,
        work_ms,
        client_rate_limit,
        client_qps,
        client_burst,
        metrics_bind_address,
        log_level: f.log_level.unwrap_or(d.log_level),
        log_format: f.log_format.unwrap_or(d.log_format),
        watch_list: f.watch_list.unwrap_or(false),
        strip_managed_fields: f.strip_managed_fields,
        managed_fields_text: f.managed_fields_text,
        queue,
        priority_queue: None,
        debounce_ms,
        // kube-rs has no client-side limiter of its own: the library default is none.
        effective_client_qps: client_qps,
        effective_client_burst: client_burst,
        client_buckets: CLIENT_BUCKETS.map(String::from).to_vec(),
        retry_backoff_base_ms: Some(retry::BACKOFF_BASE_MS),
        retry_backoff_cap_s: Some(retry::BACKOFF_CAP_S),
        retry_overall_qps: Some(retry::OVERALL_QPS),
        retry_overall_burst: Some(retry::OVERALL_BURST),
        // The Rust controller's lease crate renews every retry period
        // until the Lease expires; it has no renew deadline.
        http_version: f.http2.then(|| "h2".to_string()),
        list_semantic: f.list_any_version.then(|| "any".to_string()),
        tunables: f.tunables.clone(),
        pprof: f.pprof,
        allocator: None,
        leader_election: (f.leader_elect || p.leader_elect).then(|| LeaderElection {
            lease_name: leader_election::LEASE_NAME.to_string(),
            lease_duration_s: leader_election::LEASE_DURATION_S,
            renew_deadline_s: None,
            retry_period_s: leader_election::RETRY_PERIOD_S,
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(preset: &str) -> Flags {
        Flags {
            namespace: "ns".into(),
            preset: Some(preset.into()),
            ..Flags::default()
        }
    }

    #[test]
    fn defaults_and_overrides() {
        let s = resolve(&Flags {
            namespace: "ns".into(),
            ..Flags::default()
        })
        .unwrap();
        assert_eq!(s.preset, "good");
        assert_eq!(s.client_rate_limit, RateLimit::LibraryDefault);
        assert_eq!((s.client_qps, s.client_burst), (Option::None, Option::None));
        assert_eq!(s.metrics_bind_address, "127.0.0.1:0");
        let s = resolve(&Flags {
            workers: Some(3),
            predicate: Some(Predicate::None),
            annotate: Some(true),
            ..flags("good")
        })
        .unwrap();
        assert_eq!(
            (s.workers, s.predicate, s.annotate, s.conflict_retry),
            (3, Predicate::None, true, true)
        );
    }

    #[test]
    fn conflict_retry_comes_from_the_preset_only() {
        let s = resolve(&Flags {
            annotate: Some(false),
            ..flags("bad-fix")
        })
        .unwrap();
        assert!(!s.conflict_retry);
        let s = resolve(&Flags {
            status_write: Some(StatusWrite::Update),
            ..flags("good-patch")
        })
        .unwrap();
        assert!(s.conflict_retry);
    }

    #[test]
    fn rate_limit_rule() {
        let rl = |qps: Option<f64>, burst: Option<i64>| {
            resolve(&Flags {
                client_qps: qps,
                client_burst: burst,
                ..flags("good")
            })
            .map(|s| (s.client_rate_limit, s.token_bucket()))
        };
        assert_eq!(
            rl(Some(5.0), Option::None),
            Ok((RateLimit::TokenBucket, Some((5.0, 10))))
        );
        assert_eq!(
            rl(Some(20.0), Some(30)),
            Ok((RateLimit::TokenBucket, Some((20.0, 30))))
        );
        assert_eq!(
            rl(Some(-1.0), Option::None),
            Ok((RateLimit::Unlimited, Option::None))
        );
        assert_eq!(
            rl(Some(0.0), Option::None),
            Ok((RateLimit::Unlimited, Option::None))
        );
        for (q, b) in [
            (Option::None, 5),
            (Some(0.0), 5),
            (Some(-1.0), 5),
            (Some(5.0), 0),
        ] {
            assert_eq!(rl(q, Some(b)).unwrap_err().flag, "--client-burst");
        }
        assert_eq!(
            rl(Some(f64::NAN), Option::None).unwrap_err().flag,
            "--client-qps"
        );
    }

    #[test]
    fn invalid_values_name_the_flag() {
        for (f, flag) in [
            (flags("great"), "--preset"),
            (
                Flags {
                    workers: Some(0),
                    ..flags("good")
                },
                "--workers",
            ),
            (
                Flags {
                    work_ms: Some(-1),
                    ..flags("good")
                },
                "--work-ms",
            ),
            (
                Flags {
                    metrics_bind_address: Some("nowhere".into()),
                    ..flags("good")
                },
                "--metrics-bind-address",
            ),
            (
                Flags {
                    metrics_bind_address: Some("127.0.0.1:99999".into()),
                    ..flags("good")
                },
                "--metrics-bind-address",
            ),
            (
                Flags {
                    namespace: "".into(),
                    ..flags("good")
                },
                "--namespace",
            ),
        ] {
            assert_eq!(resolve(&f).unwrap_err().flag, flag, "{f:?}");
        }
        for ok in ["0", "127.0.0.1:0", "localhost:8080", "[::1]:0", ":9090"] {
            check_bind_address(ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
        }
    }

    #[test]
    fn an_altered_table_changes_the_result() {
        let mut t = table().clone();
        t.defaults.client_burst = 3;
        t.presets[0].conflict_retry = false;
        let s = resolve_with(
            &t,
            &Flags {
                client_qps: Some(1.0),
                ..flags("good")
            },
        )
        .unwrap();
        assert_eq!((s.client_burst, s.conflict_retry), (Some(3), false));
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
