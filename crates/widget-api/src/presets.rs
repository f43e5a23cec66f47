//! The controller presets and the rules that turn a controller's flags into
//! its settings. The data lives in `deploy/presets.toml` (compiled in here);
//! this module owns reading it and the resolution rules documented there,
//! which the Rust controller applies through [`resolve`] and the Go
//! controller mirrors from its embedded copy of the same file. The harness
//! takes the list of valid preset names from [`names`].

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

/// `deploy/presets.toml`, as compiled into this crate.
pub const PRESETS_TOML: &str = include_str!("../../../deploy/presets.toml");

/// Event filter on the watch stream (`--predicate`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Predicate {
    /// Reconcile only when metadata.generation changes (spec writes).
    Generation,
    /// Reconcile on every watch event.
    None,
}

/// How a reconcile writes status (`--status-write`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
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

/// Where a reconcile reads its object (`read` in the table).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Read {
    /// The informer cache.
    Cache,
    /// A GET through the API reader on every reconcile.
    Api,
}

/// What the informer caches (`cache` in the table).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Cache {
    /// Widgets in the controller's namespace.
    Namespace,
    /// Widgets in all namespaces (needs cluster-wide list/watch).
    Cluster,
    /// Metadata only (PartialObjectMetadata) in the controller's namespace.
    Metadata,
}

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

/// `--log-level`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    Debug,
    Info,
    Error,
}

/// `--log-format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    Console,
    Json,
}

/// The client-side rate limit our flags apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RateLimit {
    /// --client-qps not given: the client library's own default stays.
    LibraryDefault,
    /// --client-qps ≤ 0: no client-side limiter.
    Unlimited,
    /// --client-qps > 0: a token bucket (client_qps, client_burst).
    TokenBucket,
}

/// The work queue between the watch and the workers (`--queue`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Queue {
    /// kube-runtime's scheduler: when every worker is busy, due keys wait in
    /// a hash set and a freed worker takes one in hash order (the Rust
    /// controller's default: what kube-rs users get).
    Kube,
    /// client-go's work queue: FIFO, a dirty and a processing set, a key
    /// re-added while processing goes to the back when done (the Go
    /// controller's only queue).
    Fifo,
}

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

macro_rules! names {
    ($t:ty { $($v:ident = $s:literal),* $(,)? }) => {
        impl $t {
            /// Every value as spelled on the command line and in the TOML.
            pub const NAMES: &'static [&'static str] = &[$($s),*];
            pub fn as_str(self) -> &'static str {
                match self { $(Self::$v => $s),* }
            }
        }
        impl std::str::FromStr for $t {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                match s {
                    $($s => Ok(Self::$v),)*
                    _ => Err(format!("invalid value {s:?} (want {})", Self::NAMES.join("|"))),
                }
            }
        }
    };
}
names!(Predicate { Generation = "generation", None = "none" });
names!(StatusWrite { Update = "update", Patch = "patch", Apply = "apply", Object = "object" });
names!(LogLevel { Debug = "debug", Info = "info", Error = "error" });
names!(LogFormat { Console = "console", Json = "json" });
names!(Queue { Kube = "kube", Fifo = "fifo" });
names!(Read { Cache = "cache", Api = "api" });
names!(Cache { Namespace = "namespace", Cluster = "cluster", Metadata = "metadata" });
names!(Question { Throughput = "throughput", Coverage = "coverage", SteadyState = "steady-state", Deletion = "deletion", Memory = "memory", Duplicates = "duplicates" });

/// `[defaults]`: the values a flag takes when it is not given.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Defaults {
    pub preset: String,
    pub work_ms: u64,
    /// Token-bucket burst when only --client-qps > 0 is given.
    pub client_burst: u32,
    pub metrics_bind_address: String,
    pub log_level: LogLevel,
    pub log_format: LogFormat,
}

/// One `[[preset]]` row.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Preset {
    pub name: String,
    pub description: String,
    /// What the preset's results answer (the report's grouping; no
    /// controller reads it).
    pub question: Question,
    /// The preset it is measured against in the report; "" for none.
    pub counterpart: String,
    pub workers: u16,
    pub predicate: Predicate,
    pub status_write: StatusWrite,
    pub annotate: bool,
    pub conflict_retry: bool,
    pub read: Read,
    pub list_in_reconcile: bool,
    pub requeue_after_ms: u64,
    pub status_if_changed: bool,
    pub finalizer: bool,
    pub cache: Cache,
    /// How many processes a variant with this preset runs (the harness's
    /// default for its `replicas` key; no controller reads it).
    pub replicas: u16,
    /// Leader election on a Lease; `--leader-elect` turns it on for any preset.
    pub leader_elect: bool,
}

/// The most replicas a preset or an experiment asks for.
pub const MAX_REPLICAS: u16 = 16;

impl Preset {
    /// Whether the controller needs cluster-wide list/watch on widgets
    /// (a ClusterRole besides its namespaced Role).
    pub fn cluster_scope(&self) -> bool {
        self.cache == Cache::Cluster
    }
}

/// The whole file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Table {
    pub defaults: Defaults,
    #[serde(rename = "preset")]
    pub presets: Vec<Preset>,
}

impl Table {
    /// Parses and checks a presets file (unique names, workers ≥ 1, the default preset exists).
    pub fn parse(text: &str) -> Result<Table, String> {
        let t: Table = toml::from_str(text).map_err(|e| e.to_string())?;
        for (i, p) in t.presets.iter().enumerate() {
            if t.presets[..i].iter().any(|q| q.name == p.name) {
                return Err(format!("preset {:?} is defined twice", p.name));
            }
            if p.workers == 0 {
                return Err(format!("preset {:?}: workers must be at least 1", p.name));
            }
            if !(1..=MAX_REPLICAS).contains(&p.replicas) {
                return Err(format!(
                    "preset {:?}: replicas must be 1 to {MAX_REPLICAS}",
                    p.name
                ));
            }
        }
        for p in &t.presets {
            if !p.counterpart.is_empty()
                && (p.counterpart == p.name || !t.presets.iter().any(|q| q.name == p.counterpart))
            {
                return Err(format!(
                    "preset {:?}: counterpart {:?} is not another preset",
                    p.name, p.counterpart
                ));
            }
        }
        if !t.presets.iter().any(|p| p.name == t.defaults.preset) {
            return Err(format!(
                "defaults.preset {:?} is not a preset",
                t.defaults.preset
            ));
        }
        if t.defaults.client_burst == 0 {
            return Err("defaults.client_burst must be at least 1".into());
        }
        check_bind_address(&t.defaults.metrics_bind_address).map_err(|e| e.message)?;
        Ok(t)
    }

    pub fn get(&self, name: &str) -> Option<&Preset> {
        self.presets.iter().find(|p| p.name == name)
    }
}

/// The compiled-in table (a test proves it parses).
pub fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        Table::parse(PRESETS_TOML)
            .unwrap_or_else(|e| panic!("deploy/presets.toml compiled into widget-api: {e}"))
    })
}

/// The preset names, in the file's order.
pub fn names() -> Vec<&'static str> {
    table().presets.iter().map(|p| p.name.as_str()).collect()
}

/// A preset by name.
pub fn get(name: &str) -> Option<&'static Preset> {
    table().get(name)
}

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
    /// Objects per page of the Rust controller's initial list (kube-rs
    /// `page_size`); None: kube-rs's 500.
    pub list_page_size: Option<i64>,
}

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
    /// The retry policy on reconcile errors ([`retry`]).
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

fn flag_err(flag: &'static str, message: String) -> FlagError {
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
    let list_page_size = match f.list_page_size {
        None => None,
        Some(n) => Some(u32::try_from(n).ok().filter(|n| *n >= 1).ok_or_else(|| {
            flag_err(
                "--list-page-size",
                format!("must be between 1 and {}, got {n}", u32::MAX),
            )
        })?),
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
        retry_backoff_base_ms: retry::BACKOFF_BASE_MS,
        retry_backoff_cap_s: retry::BACKOFF_CAP_S,
        retry_overall_qps: retry::OVERALL_QPS,
        retry_overall_burst: retry::OVERALL_BURST,
        // The Rust controller's lease crate renews every retry period
        // until the Lease expires; it has no renew deadline.
        http_version: f.http2.then(|| "h2".to_string()),
        list_semantic: f.list_any_version.then(|| "any".to_string()),
        list_page_size,
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
    fn the_compiled_in_table_parses_and_follows_design() {
        assert_eq!(
            names(),
            [
                "good",
                "good-single",
                "good-patch",
                "good-single-patch",
                "bad-fix",
                "bad-fix-single",
                "bad",
                "bad-concurrent",
                "uncached-read",
                "list-in-reconcile",
                "requeue-after",
                "unconditional-status",
                "conditional-status",
                "finalizer",
                "cache-cluster-wide",
                "metadata-only",
                "leader-election",
                "no-leader-election"
            ]
        );
        let row = |n: &str| {
            let p = get(n).unwrap();
            (
                p.workers,
                p.predicate,
                p.status_write,
                p.annotate,
                p.conflict_retry,
            )
        };
        use Predicate::{Generation, None};
        use StatusWrite::{Object, Patch, Update};
        assert_eq!(row("good"), (5, Generation, Update, false, true));
        assert_eq!(
            row("good-single-patch"),
            (1, Generation, Patch, false, true)
        );
        assert_eq!(row("bad-fix"), (5, None, Update, true, false));
        assert_eq!(row("bad"), (1, None, Object, true, false));
        assert_eq!(row("bad-concurrent"), (5, None, Object, true, false));
        for p in &table().presets {
            assert!(
                p.description.ends_with('.') && !p.description.contains('\n'),
                "{}: one sentence",
                p.name
            );
        }
        // Each anti-pattern preset differs from its good counterpart in
        // exactly its own setting.
        let good = get("good").unwrap();
        let same_as_good = |n: &str| {
            let p = get(n).unwrap();
            (p.workers, p.status_write, p.annotate, p.conflict_retry)
                == (
                    good.workers,
                    good.status_write,
                    good.annotate,
                    good.conflict_retry,
                )
        };
        for n in [
            "uncached-read",
            "list-in-reconcile",
            "requeue-after",
            "unconditional-status",
            "conditional-status",
            "finalizer",
            "cache-cluster-wide",
            "metadata-only",
        ] {
            assert!(same_as_good(n), "{n}");
        }
        assert_eq!(get("uncached-read").unwrap().read, Read::Api);
        assert!(get("list-in-reconcile").unwrap().list_in_reconcile);
        assert_eq!(get("requeue-after").unwrap().requeue_after_ms, 1000);
        let (u, c) = (
            get("unconditional-status").unwrap(),
            get("conditional-status").unwrap(),
        );
        assert_eq!((u.predicate, u.status_if_changed), (None, false));
        assert_eq!((c.predicate, c.status_if_changed), (None, true));
        assert!(get("finalizer").unwrap().finalizer);
        assert_eq!(get("cache-cluster-wide").unwrap().cache, Cache::Cluster);
        assert_eq!(get("metadata-only").unwrap().cache, Cache::Metadata);
        let cluster: Vec<&str> = table()
            .presets
            .iter()
            .filter(|p| p.cluster_scope())
            .map(|p| p.name.as_str())
            .collect();
        assert_eq!(cluster, ["cache-cluster-wide"]);
        for p in &table().presets[..8] {
            assert_eq!(
                (
                    p.read,
                    p.list_in_reconcile,
                    p.requeue_after_ms,
                    p.status_if_changed,
                    p.finalizer,
                    p.cache
                ),
                (Read::Cache, false, 0, false, false, Cache::Namespace),
                "{}: the write-up's presets keep the defaults",
                p.name
            );
        }
        let d = &table().defaults;
        assert_eq!(
            (d.work_ms, d.client_burst, d.metrics_bind_address.as_str()),
            (10, 10, "127.0.0.1:0")
        );
    }

    #[test]
    fn counterparts_name_other_presets_and_questions_are_known() {
        let base = PRESETS_TOML;
        for (what, text) in [
            (
                "unknown counterpart",
                base.replacen(r#"counterpart = "good""#, r#"counterpart = "great""#, 1),
            ),
            (
                "itself",
                base.replacen(
                    "name = \"good-single\"\ndescription = \"The good controller with a single worker.\"\nquestion = \"throughput\"\ncounterpart = \"good\"",
                    "name = \"good-single\"\ndescription = \"The good controller with a single worker.\"\nquestion = \"throughput\"\ncounterpart = \"good-single\"",
                    1,
                ),
            ),
            (
                "unknown question",
                base.replacen(r#"question = "memory""#, r#"question = "speed""#, 1),
            ),
        ] {
            assert_ne!(text, base, "{what}: the replacement did not apply");
            assert!(Table::parse(&text).is_err(), "{what}: accepted");
        }
        assert_eq!(get("uncached-read").unwrap().counterpart, "good");
        assert_eq!(
            get("unconditional-status").unwrap().counterpart,
            "conditional-status"
        );
        assert_eq!(get("metadata-only").unwrap().question, Question::Memory);
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
}
