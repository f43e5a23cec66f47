//! The flags every widget controller accepts (docs/architecture.md#controller-presets-and-flags). Parsing only: the
//! presets, the defaults and the rules that resolve flags into settings are
//! `deploy/presets.toml`, applied by `widget_api::presets` (the Go controller
//! applies the same file the same way).

use clap::Parser;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use widget_api::presets::{self, LogFormat, LogLevel, Predicate, Queue, StatusWrite, Tunables};

pub use widget_api::presets::{FlagError, Settings};

fn one_of(names: &[&'static str]) -> PossibleValuesParser {
    PossibleValuesParser::new(names.iter().copied())
}

/// One of `T::NAMES`, parsed into `T`.
fn enum_of<T>(names: &[&'static str]) -> impl TypedValueParser<Value = T>
where
    T: std::str::FromStr + Clone + Send + Sync + 'static,
{
    one_of(names).map(|s| {
        s.parse::<T>()
            .unwrap_or_else(|_| unreachable!("{s} is one of the listed names"))
    })
}

/// Reconciles Widgets in one namespace the way one of the write-up's controller variants does.
#[derive(Parser, Debug)]
#[command(name = "widget-controller", version)]
pub struct Flags {
    /// Namespace to watch (only that namespace).
    #[arg(long)]
    pub namespace: String,
    /// Controller variant (deploy/presets.toml; default: the table's default); the flags below override its settings.
    #[arg(long, value_parser = one_of(&presets::names()))]
    pub preset: Option<String>,
    /// Concurrent reconciles (workers, ≥ 1).
    #[arg(long, allow_negative_numbers = true)]
    pub workers: Option<i64>,
    /// Event filter on the watch stream.
    #[arg(long, value_parser = enum_of::<Predicate>(Predicate::NAMES))]
    pub predicate: Option<Predicate>,
    /// How status is written.
    #[arg(long, value_parser = enum_of::<StatusWrite>(StatusWrite::NAMES))]
    pub status_write: Option<StatusWrite>,
    /// Stamp annotation bad-controller/last-seen (Unix nanoseconds) with an object update on every reconcile.
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub annotate: Option<bool>,
    /// Simulated work per reconcile, in milliseconds (default: the table's, 10).
    #[arg(long, allow_negative_numbers = true)]
    pub work_ms: Option<i64>,
    /// Client-side rate limit in requests per second (unset: none, kube-rs's default; ≤ 0: unlimited).
    #[arg(long, allow_negative_numbers = true)]
    pub client_qps: Option<f64>,
    /// Client-side burst (token bucket size); needs --client-qps > 0; defaults to 10, as in client-go.
    #[arg(long, allow_negative_numbers = true)]
    pub client_burst: Option<i64>,
    /// Where /metrics is served (default 127.0.0.1:0); port 0 picks a free one, reported as
    /// `metrics-address=HOST:PORT` on stdout; 0 = no metrics server.
    #[arg(long)]
    pub metrics_bind_address: Option<String>,
    #[arg(long, value_parser = enum_of::<LogLevel>(LogLevel::NAMES))]
    pub log_level: Option<LogLevel>,
    #[arg(long, value_parser = enum_of::<LogFormat>(LogFormat::NAMES))]
    pub log_format: Option<LogFormat>,
    /// Initial list as a watch stream (the WatchList protocol); --watch-list=false turns it off.
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub watch_list: Option<bool>,
    /// Drop managedFields from every object before it enters the cache
    /// (what a kube-rs user does with `.modify()` on the watch stream).
    #[arg(long)]
    pub strip_managed_fields: bool,
    /// Keep each managedFields entry's FieldsV1 as its JSON text instead of
    /// k8s-openapi's Value tree (client-go keeps the raw bytes): the same
    /// information in the cache, at the size it came in.
    #[arg(long)]
    pub managed_fields_text: bool,
    /// Work-queue order: kube (kube-runtime's scheduler, hash order when workers are busy;
    /// the default) or fifo (client-go's work queue, as controller-runtime has).
    #[arg(long, value_parser = enum_of::<Queue>(Queue::NAMES))]
    pub queue: Option<Queue>,
    /// Debounce of triggers per object in milliseconds (0 = none): kube-runtime's
    /// Config::debounce, or the same delay-and-reset before the fifo queue.
    #[arg(long, allow_negative_numbers = true)]
    pub debounce_ms: Option<i64>,
    /// Take part in leader election on a Lease in --namespace (client-go's
    /// durations: lease 15 s, renewed every 2 s): only the leader reconciles;
    /// a replica that loses the Lease exits, as controller-runtime's does.
    #[arg(long)]
    pub leader_elect: bool,
    /// Speak HTTP/2 to the apiserver (ALPN h2 over rustls), as client-go
    /// does: one connection per client, its requests and watches
    /// multiplexed on it. Without it: HTTP/1.1, a connection per request in
    /// flight (kube-rs's default).
    #[arg(long)]
    pub http2: bool,
    /// Ask for resourceVersion=0 in the initial list and relists (kube-rs's
    /// `any_semantic()`): the apiserver answers from its watch cache, as for
    /// client-go's reflector. Without it: kube-rs's default, the most recent
    /// version in pages of 500.
    #[arg(long)]
    pub list_any_version: bool,
    #[command(flatten)]
    pub tunables: Tunables,
    /// Serve a CPU profile of this process at /debug/pprof/profile?seconds=N
    /// on the metrics address (pprof's protobuf format, as Go's
    /// net/http/pprof serves it).
    #[arg(long)]
    pub pprof: bool,
    /// Print the resolved settings as one JSON object and exit (no cluster needed).
    #[arg(long)]
    pub print_settings: bool,
}

impl Flags {
    /// Applies the preset table's rules; the result is validated.
    pub fn resolve(&self) -> Result<Settings, FlagError> {
        presets::resolve(&presets::Flags {
            namespace: self.namespace.clone(),
            preset: self.preset.clone(),
            workers: self.workers,
            predicate: self.predicate,
            status_write: self.status_write,
            annotate: self.annotate,
            work_ms: self.work_ms,
            client_qps: self.client_qps,
            client_burst: self.client_burst,
            metrics_bind_address: self.metrics_bind_address.clone(),
            log_level: self.log_level,
            log_format: self.log_format,
            watch_list: self.watch_list,
            strip_managed_fields: self.strip_managed_fields,
            managed_fields_text: self.managed_fields_text,
            queue: self.queue,
            debounce_ms: self.debounce_ms,
            leader_elect: self.leader_elect,
            http2: self.http2,
            list_any_version: self.list_any_version,
            tunables: self.tunables.clone(),
            pprof: self.pprof,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use widget_api::presets::RateLimit;

    fn parse(args: &[&str]) -> Result<Settings, String> {
        let mut v = vec!["widget-controller", "--namespace", "ns"];
        v.extend_from_slice(args);
        Flags::try_parse_from(v)
            .map_err(|e| e.to_string())?
            .resolve()
            .map_err(|e| e.to_string())
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
            (5, Predicate::Generation, StatusWrite::Update, false, true)
        );
        let s = parse(&["--preset", "good-single-patch"]).unwrap();
        assert_eq!((s.workers, s.status_write), (1, StatusWrite::Patch));
        let s = parse(&["--preset", "bad-fix"]).unwrap();
        assert_eq!(
            (
                s.workers,
                s.predicate,
                s.status_write,
                s.annotate,
                s.conflict_retry
            ),
            (5, Predicate::None, StatusWrite::Update, true, false)
        );
        let s = parse(&["--preset", "bad"]).unwrap();
        assert_eq!(
            (s.workers, s.status_write, s.annotate),
            (1, StatusWrite::Object, true)
        );
        let s = parse(&["--preset", "bad-concurrent"]).unwrap();
        assert_eq!(s.workers, 5);
        let s = parse(&[]).unwrap();
        assert_eq!(
            (
                s.preset.as_str(),
                s.work_ms,
                s.metrics_bind_address.as_str()
            ),
            ("good", 10, "127.0.0.1:0")
        );
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
            "--watch-list",
        ])
        .unwrap();
        assert_eq!(
            (s.workers, s.predicate, s.annotate, s.watch_list),
            (3, Predicate::None, true, true)
        );
        let s = parse(&[
            "--preset",
            "bad-fix",
            "--annotate=false",
            "--watch-list=false",
        ])
        .unwrap();
        assert!(!s.annotate && !s.watch_list);
    }

    #[test]
    fn rate_limit_follows_client_go() {
        let s = parse(&[]).unwrap();
        assert_eq!(
            (s.client_rate_limit, s.token_bucket()),
            (RateLimit::LibraryDefault, None)
        );
        assert_eq!(
            parse(&["--client-qps", "5"]).unwrap().token_bucket(),
            Some((5.0, 10))
        );
        assert_eq!(
            parse(&["--client-qps", "20", "--client-burst", "30"])
                .unwrap()
                .token_bucket(),
            Some((20.0, 30))
        );
        let s = parse(&["--client-qps", "-1"]).unwrap();
        assert_eq!(
            (s.client_rate_limit, s.token_bucket()),
            (RateLimit::Unlimited, None)
        );
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
                &["--client-qps", "-1", "--client-burst", "5"][..],
                "--client-burst",
            ),
            (
                &["--metrics-bind-address", "nowhere"][..],
                "--metrics-bind-address",
            ),
            (&["--preset", "great"][..], "--preset"),
            (&["--status-write", "put"][..], "--status-write"),
            (&["--work-ms", "-1"][..], "--work-ms"),
            (&["--watch-timeout-s", "0"][..], "--watch-timeout-s"),
            (&["--watch-timeout-s=-5"][..], "--watch-timeout-s"),
            (
                &["--watch-timeout-s", "4294967296"][..],
                "--watch-timeout-s",
            ),
            (&["--list-page-size", "0"][..], "--list-page-size"),
            (&["--watch-bookmarks=maybe"][..], "--watch-bookmarks"),
        ] {
            let e = parse(args).unwrap_err();
            assert!(e.contains(flag), "{args:?}: {e}");
        }
    }

    #[test]
    fn the_tunables_reach_the_printed_settings_only_when_set() {
        // Unset, kube-rs keeps its own defaults and nothing is printed, so
        // that the defaults print as Go's do.
        let s = parse(&[]).unwrap();
        assert_eq!(s.tunables, Tunables::default());
        for (args, printed) in [
            (&["--list-page-size", "100"][..], r#""list_page_size":100"#),
            (&["--watch-timeout-s", "60"][..], r#""watch_timeout_s":60"#),
            (
                &["--watch-bookmarks=false"][..],
                r#""watch_bookmarks":false"#,
            ),
            (&["--watch-bookmarks"][..], r#""watch_bookmarks":true"#),
        ] {
            let key = printed.split('"').nth(1).unwrap();
            assert!(!parse(&[]).unwrap().to_json().contains(key));
            let json = parse(args).unwrap().to_json();
            assert!(json.contains(printed), "{args:?}: {json}");
            let s: Settings = serde_json::from_str(&json).unwrap();
            assert_eq!(s.tunables.set().len(), 1, "{args:?}: {json}");
        }
        let s = parse(&["--watch-timeout-s", "60", "--watch-bookmarks=false"]).unwrap();
        assert_eq!(s.tunables.watch_timeout_s.map(|n| n.get()), Some(60));
        assert_eq!(s.tunables.watch_bookmarks, Some(false));
    }
}
