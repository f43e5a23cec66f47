//! The flags every widget controller accepts (DESIGN §3), the presets that set
//! them, and their validation. An explicit flag wins over the preset.

use std::net::SocketAddr;

use clap::{Parser, ValueEnum};

/// Which variant of the seed's controller to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Preset {
    Good,
    GoodSingle,
    GoodPatch,
    GoodSinglePatch,
    BadFix,
    BadFixSingle,
    Bad,
    BadConcurrent,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PredicateKind {
    /// Reconcile only when metadata.generation changes (spec writes).
    Generation,
    /// Reconcile on every watch event.
    None,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum StatusWrite {
    /// PUT /status carrying resourceVersion (409 on a stale object).
    Update,
    /// JSON merge patch on /status without resourceVersion.
    Patch,
    /// Server-side apply on /status.
    Apply,
    /// PUT of the main resource with status filled in: the server drops it.
    Object,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Console,
    Json,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LogLevel {
    Debug,
    Info,
    Error,
}

/// Reconciles Widgets in one namespace the way one of the seed's controller variants does.
#[derive(Parser, Debug)]
#[command(name = "widget-controller", version)]
pub struct Flags {
    /// Namespace to watch (only that namespace).
    #[arg(long)]
    pub namespace: String,
    /// Controller variant; the flags below override its settings.
    #[arg(long, value_enum, default_value = "good")]
    pub preset: Preset,
    /// Concurrent reconciles (workers).
    #[arg(long)]
    pub workers: Option<u16>,
    /// Event filter on the watch stream.
    #[arg(long, value_enum)]
    pub predicate: Option<PredicateKind>,
    /// How status is written.
    #[arg(long, value_enum)]
    pub status_write: Option<StatusWrite>,
    /// Stamp annotation bad-controller/last-seen (Unix nanoseconds) with an object update on every reconcile.
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub annotate: Option<bool>,
    /// Simulated work per reconcile, in milliseconds.
    #[arg(long, default_value_t = 10)]
    pub work_ms: u64,
    /// Client-side rate limit in requests per second (unset: none, kube-rs's default; ≤ 0: unlimited).
    #[arg(long, allow_negative_numbers = true)]
    pub client_qps: Option<f64>,
    /// Client-side burst (token bucket size); defaults to 10 when --client-qps is set, as in client-go.
    #[arg(long, allow_negative_numbers = true)]
    pub client_burst: Option<i64>,
    /// Where /metrics is served; port 0 picks a free one, reported as `metrics-address=HOST:PORT` on stdout.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub metrics_bind_address: String,
    #[arg(long, value_enum, default_value = "debug")]
    pub log_level: LogLevel,
    #[arg(long, value_enum, default_value = "console")]
    pub log_format: LogFormat,
    /// Initial list as a watch stream (the WatchList protocol).
    #[arg(long)]
    pub watch_list: bool,
}

/// The resolved configuration a controller runs with.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    pub namespace: String,
    pub workers: u16,
    pub predicate: PredicateKind,
    pub status_write: StatusWrite,
    pub annotate: bool,
    /// RetryOnConflict around the status Update (the `good` presets only, as in the seed).
    pub conflict_retry: bool,
    pub work_ms: u64,
    /// (qps, burst) of the client token bucket; None = no limiter.
    pub rate_limit: Option<(f64, u32)>,
    pub metrics_bind_address: SocketAddr,
    pub log_level: LogLevel,
    pub log_format: LogFormat,
    pub watch_list: bool,
}

/// A flag error: one line naming the flag (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct FlagError(pub String);

struct PresetValues {
    workers: u16,
    predicate: PredicateKind,
    status_write: StatusWrite,
    annotate: bool,
}

fn preset(p: Preset) -> PresetValues {
    use PredicateKind::{Generation, None};
    use StatusWrite::{Object, Patch, Update};
    let (workers, predicate, status_write, annotate) = match p {
        Preset::Good => (5, Generation, Update, false),
        Preset::GoodSingle => (1, Generation, Update, false),
        Preset::GoodPatch => (5, Generation, Patch, false),
        Preset::GoodSinglePatch => (1, Generation, Patch, false),
        Preset::BadFix => (5, None, Update, true),
        Preset::BadFixSingle => (1, None, Update, true),
        Preset::Bad => (1, None, Object, true),
        Preset::BadConcurrent => (5, None, Object, true),
    };
    PresetValues {
        workers,
        predicate,
        status_write,
        annotate,
    }
}

impl Flags {
    /// Applies the preset, then the overrides, and validates the result.
    pub fn resolve(&self) -> Result<Settings, FlagError> {
        let p = preset(self.preset);
        let workers = self.workers.unwrap_or(p.workers);
        if workers == 0 {
            return Err(FlagError("--workers must be at least 1".into()));
        }
        if self.namespace.trim().is_empty() {
            return Err(FlagError("--namespace must name a namespace".into()));
        }
        let status_write = self.status_write.unwrap_or(p.status_write);
        let annotate = self.annotate.unwrap_or(p.annotate);
        let rate_limit = match (self.client_qps, self.client_burst) {
            (Some(q), _) if !q.is_finite() => {
                return Err(FlagError(format!("--client-qps {q} is not a number")));
            }
            (Some(q), _) if q <= 0.0 => None,
            (Some(q), Some(b)) if b < 1 => {
                return Err(FlagError(format!(
                    "--client-burst {b} must be at least 1 when --client-qps is {q} (> 0)"
                )));
            }
            (Some(q), b) => Some((q, b.unwrap_or(10).min(u32::MAX as i64) as u32)),
            (None, Some(_)) => return Err(FlagError("--client-burst needs --client-qps".into())),
            (None, None) => None,
        };
        let metrics_bind_address: SocketAddr = self.metrics_bind_address.parse().map_err(|_| {
            FlagError(format!(
                "--metrics-bind-address {:?} is not HOST:PORT (for example 127.0.0.1:0)",
                self.metrics_bind_address
            ))
        })?;
        Ok(Settings {
            namespace: self.namespace.clone(),
            workers,
            predicate: self.predicate.unwrap_or(p.predicate),
            status_write,
            annotate,
            conflict_retry: status_write == StatusWrite::Update && !annotate,
            work_ms: self.work_ms,
            rate_limit,
            metrics_bind_address,
            log_level: self.log_level,
            log_format: self.log_format,
            watch_list: self.watch_list,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Settings, String> {
        let mut v = vec!["widget-controller", "--namespace", "ns"];
        v.extend_from_slice(args);
        Flags::try_parse_from(v)
            .map_err(|e| e.to_string())?
            .resolve()
            .map_err(|e| e.0)
    }

    #[test]
    fn presets_follow_the_design_table() {
        let s = parse(&["--preset", "good"]).unwrap();
        assert_eq!(
            (
                s.workers,
                s.predicate,
                s.status_write,
                s.annotate,
                s.conflict_retry
            ),
            (
                5,
                PredicateKind::Generation,
                StatusWrite::Update,
                false,
                true
            )
        );
        let s = parse(&["--preset", "good-single-patch"]).unwrap();
        assert_eq!(
            (s.workers, s.status_write, s.conflict_retry),
            (1, StatusWrite::Patch, false)
        );
        let s = parse(&["--preset", "bad-fix"]).unwrap();
        assert_eq!(
            (
                s.workers,
                s.predicate,
                s.status_write,
                s.annotate,
                s.conflict_retry
            ),
            (5, PredicateKind::None, StatusWrite::Update, true, false)
        );
        let s = parse(&["--preset", "bad"]).unwrap();
        assert_eq!(
            (s.workers, s.status_write, s.annotate),
            (1, StatusWrite::Object, true)
        );
        let s = parse(&["--preset", "bad-concurrent"]).unwrap();
        assert_eq!(s.workers, 5);
    }

    #[test]
    fn overrides_win_over_presets() {
        let s = parse(&[
            "--preset",
            "good",
            "--workers",
            "3",
            "--predicate",
            "none",
            "--annotate",
        ])
        .unwrap();
        assert_eq!(
            (s.workers, s.predicate, s.annotate),
            (3, PredicateKind::None, true)
        );
        let s = parse(&["--preset", "bad-fix", "--annotate=false"]).unwrap();
        assert!(!s.annotate);
    }

    #[test]
    fn rate_limit_follows_client_go() {
        assert_eq!(parse(&[]).unwrap().rate_limit, None);
        assert_eq!(
            parse(&["--client-qps", "5"]).unwrap().rate_limit,
            Some((5.0, 10))
        );
        assert_eq!(
            parse(&["--client-qps", "20", "--client-burst", "30"])
                .unwrap()
                .rate_limit,
            Some((20.0, 30))
        );
        assert_eq!(parse(&["--client-qps", "-1"]).unwrap().rate_limit, None);
    }

    #[test]
    fn invalid_values_name_the_flag() {
        for (args, flag) in [
            (&["--workers", "0"][..], "--workers"),
            (
                &["--client-qps", "5", "--client-burst", "0"][..],
                "--client-burst",
            ),
            (&["--client-burst", "5"][..], "--client-burst"),
            (
                &["--metrics-bind-address", "nowhere"][..],
                "--metrics-bind-address",
            ),
            (&["--preset", "great"][..], "--preset"),
            (&["--status-write", "put"][..], "--status-write"),
        ] {
            let e = parse(args).unwrap_err();
            assert!(e.contains(flag), "{args:?}: {e}");
        }
    }
}
