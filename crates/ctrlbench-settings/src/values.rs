//! The words of the settings: every enumerated setting's values as the
//! command line, `deploy/presets.toml` and the `--print-settings` JSON spell
//! them. Kept beside [`Settings`](crate::Settings) because the JSON is made
//! of them; the preset table and the flags parse the same spellings.

use serde::{Deserialize, Serialize};

/// Event filter on the watch stream (`--predicate`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Predicate {
    /// Reconcile only when metadata.generation changes (spec writes).
    #[default]
    Generation,
    /// Reconcile on every watch event.
    None,
}

/// How a reconcile writes status (`--status-write`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StatusWrite {
    /// PUT /status carrying resourceVersion (409 on a stale object).
    #[default]
    Update,
    /// JSON merge patch on /status without resourceVersion.
    Patch,
    /// Server-side apply on /status.
    Apply,
    /// PUT of the main resource with status filled in: the server drops it.
    Object,
}

/// Where a reconcile reads its object (`read` in the table). The default is
/// what every controller did before the setting existed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Read {
    /// The informer cache.
    #[default]
    Cache,
    /// A GET through the API reader on every reconcile.
    Api,
}

/// What the informer caches (`cache` in the table). The default is what
/// every controller did before the setting existed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Cache {
    /// Widgets in the controller's namespace.
    #[default]
    Namespace,
    /// Widgets in all namespaces (needs cluster-wide list/watch).
    Cluster,
    /// Metadata only (PartialObjectMetadata) in the controller's namespace.
    Metadata,
}

/// `--log-level`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    #[default]
    Debug,
    Info,
    Error,
}

/// `--log-format`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    #[default]
    Console,
    Json,
}

/// The client-side rate limit our flags apply.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RateLimit {
    /// --client-qps not given: the client library's own default stays.
    #[default]
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

/// `NAMES`, `as_str` and `FromStr` for an enum of words, from one list, so
/// that the command line, the table and the JSON cannot spell a value two
/// ways. Exported for the preset table's own words.
#[macro_export]
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
names!(RateLimit { LibraryDefault = "library-default", Unlimited = "unlimited", TokenBucket = "token-bucket" });
names!(Queue { Kube = "kube", Fifo = "fifo" });
names!(Read { Cache = "cache", Api = "api" });
names!(Cache { Namespace = "namespace", Cluster = "cluster", Metadata = "metadata" });
