//! The variant key table: every key a `[[variant]]` may have, defined once.
//! One entry gives the key's TOML name and type, which implementations
//! accept it, the controller flag it becomes (and how that flag is
//! written), the flag's default when the harness always passes one, and how
//! it feeds `widget_api::presets` (whose rules judge its value). From the
//! table come the serde type [`VariantSpec`], its plain form
//! [`VariantKeys`], the "impl X does not take key Y" errors, the flags our
//! controllers get, and the key list of docs/experiments.md
//! (`ctrlbench experiments --keys`; a test holds the two together).

use std::collections::BTreeMap;
use std::num::NonZeroU32;
use std::ops::Range;

use serde::{Deserialize, Serialize};
use toml::Spanned;
use widget_api::presets;

use super::values::{
    ConflictReread, Framework, LogLevel, Predicate, Preset, Queue, RbacRule, StartMode, StatusWrite,
};
use crate::controllers::Impl;

/// Which implementations take a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accepts {
    /// Every implementation.
    All,
    /// Everything ctrlbench starts: rust, go@…, command.
    Started,
    /// ctrlbench's own controllers: rust and go@….
    Own,
    /// The Rust controller only.
    Rust,
    /// The Go controller's builds only.
    Go,
    /// Go builds whose controller-runtime has a priority queue.
    GoPriorityQueue,
    /// A user's controller: command or external.
    Foreign,
    Command,
    External,
}

/// How a key's value is written as a controller flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// `--flag=value`.
    Value,
    /// `--flag value` (two words).
    Separate,
    /// `--flag` when true, nothing when false.
    Switch,
}

/// One row of the table.
#[derive(Debug)]
pub struct Key {
    /// As written in the TOML.
    pub name: &'static str,
    /// The controller flag it becomes (our own controllers), if any.
    pub flag: Option<&'static str>,
    pub style: Style,
    pub accepts: Accepts,
    /// What it does (the docs' key list).
    pub doc: &'static str,
}

/// A value written as a flag's value.
pub trait FlagText {
    fn flag_text(&self) -> String;
}

macro_rules! flag_text_display {
    ($($t:ty),*) => { $(impl FlagText for $t { fn flag_text(&self) -> String { self.to_string() } })* };
}
flag_text_display!(u32, NonZeroU32, u64, i64, f64, bool);

macro_rules! flag_text_as_str {
    ($($t:ty),*) => { $(impl FlagText for $t { fn flag_text(&self) -> String { self.as_str().to_string() } })* };
}
flag_text_as_str!(Predicate, StatusWrite, LogLevel, Queue, ConflictReread);

impl FlagText for Preset {
    fn flag_text(&self) -> String {
        self.as_str().to_string()
    }
}

macro_rules! or_none {
    () => {
        None
    };
    ($e:expr) => {
        Some($e)
    };
}

macro_rules! or_value {
    () => {
        Style::Value
    };
    ($s:ident) => {
        Style::$s
    };
}

macro_rules! key_name {
    ($f:ident) => {
        stringify!($f)
    };
    ($f:ident, $t:literal) => {
        $t
    };
}

/// The whole table; see the file's paragraph. An entry:
/// `/// doc` `field [as "toml"]: Type, accepts A [, flag "--f" [(Style)] [default fn]] [, resolve fn];`
macro_rules! variant_keys {
    ($(
        $(#[doc = $doc:literal])*
        $field:ident $(as $toml:literal)? : $ty:ty, accepts $acc:ident
        $(, flag $flag:literal $(($style:ident))? $(default $default:expr)?)?
        $(, resolve $resolve:expr)?
        ;
    )*) => {
        /// `[[variant]]` as written (serde, with each value's place).
        #[derive(Debug, Clone, Deserialize, Serialize)]
        #[serde(deny_unknown_fields)]
        pub struct VariantSpec {
            /// The variant's name (lowercase letters, digits, '-'; ≤ 40).
            pub name: Spanned<String>,
            $(
                $(#[doc = $doc])*
                $(#[serde(rename = $toml)])?
                #[serde(default)]
                pub $field: Option<Spanned<$ty>>,
            )*
        }

        /// Every key of a variant as a plain value (None: not given).
        #[derive(Debug, Clone, Serialize)]
        pub struct VariantKeys {
            pub name: String,
            $( $(#[doc = $doc])* pub $field: Option<$ty>, )*
        }

        /// The table, in the order flags are passed.
        pub static KEYS: &[Key] = &[
            Key {
                name: "name",
                flag: None,
                style: Style::Value,
                accepts: Accepts::All,
                doc: "The variant's name (required): lowercase letters, digits and `-`, ≤ 40, unique. Names the run directory and `metrics-<name>.csv`.",
            },
            $(
                Key {
                    name: key_name!($field $(, $toml)?),
                    flag: or_none!($($flag)?),
                    style: or_value!($($($style)?)?),
                    accepts: Accepts::$acc,
                    doc: concat!($($doc, "\n"),*),
                },
            )*
        ];

        impl VariantSpec {
            /// The keys this variant gives, each with the place of its value.
            pub fn given(&self) -> Vec<(&'static Key, Range<usize>)> {
                let mut out = vec![(key("name"), self.name.span())];
                $(
                    if let Some(v) = &self.$field {
                        out.push((key(key_name!($field $(, $toml)?)), v.span()));
                    }
                )*
                out
            }

            /// The values without their places.
            pub fn values(&self) -> VariantKeys {
                VariantKeys {
                    name: self.name.get_ref().clone(),
                    $( $field: self.$field.as_ref().map(|v| v.get_ref().clone()), )*
                }
            }
        }

        impl VariantKeys {
            /// The flags of ctrlbench's own controller `imp` for these
            /// values, in table order: each given key with a flag, and the
            /// defaults the harness always passes (so every run records them).
            pub fn flags(&self, imp: &Impl) -> Vec<String> {
                let mut out = Vec::new();
                $($(
                    let default: Option<fn(&Impl) -> Option<String>> = or_none!($($default)?);
                    let text = self
                        .$field
                        .as_ref()
                        .map(FlagText::flag_text)
                        .or_else(|| default.and_then(|d| d(imp)));
                    write_flag(&mut out, $flag, or_value!($($style)?), text);
                )?)*
                out
            }

            /// The flags as `widget_api::presets` reads them, to judge the
            /// values by the same rules the controllers apply.
            pub fn preset_flags(&self) -> presets::Flags {
                let mut f = presets::Flags {
                    namespace: "ns".into(),
                    ..presets::Flags::default()
                };
                $($(
                    if let Some(v) = &self.$field {
                        let set: fn(&mut presets::Flags, &$ty) = $resolve;
                        set(&mut f, v);
                    }
                )?)*
                f
            }
        }
    };
}

variant_keys! {
    /// Who runs the controller: `rust` (default), `go@v0.18.4`, `go@v0.22`, `go@v0.25`, `command`
    /// or `external`.
    implementation as "impl": String, accepts All;
    /// A row of `deploy/presets.toml` (`good`, `bad-fix`, the anti-patterns …: `ctrlbench run --dry-run`
    /// lists a file's flags); required for rust and go@….
    preset: Preset, accepts Own, flag "--preset" (Separate),
        resolve |f, v| f.preset = Some(v.as_str().to_string());
    /// Concurrent reconciles; ≥ 1. Default: the preset's.
    workers: u32, accepts Own, flag "--workers",
        resolve |f, v| f.workers = Some(i64::from(*v));
    /// `generation` (reconcile on spec changes only) or `none`. Default: the preset's.
    predicate: Predicate, accepts Own, flag "--predicate",
        resolve |f, v| f.predicate = Some(*v);
    /// `update` (PUT /status), `patch` (merge patch, no resourceVersion), `apply` (server-side
    /// apply on /status) or `object` (one Update of the main resource, whose status the server
    /// drops). Default: the preset's.
    status_write: StatusWrite, accepts Own, flag "--status-write",
        resolve |f, v| f.status_write = Some(*v);
    /// Stamp the annotation `bad-controller/last-seen` with an object Update before the status
    /// write. Default: the preset's.
    annotate: bool, accepts Own, flag "--annotate",
        resolve |f, v| f.annotate = Some(*v);
    /// Simulated work per reconcile in milliseconds; default 10; 0 does not sleep.
    work_ms: u64, accepts Own, flag "--work-ms",
        resolve |f, v| f.work_ms = Some(i64::try_from(*v).unwrap_or(i64::MAX));
    /// Client-side token bucket. Unset: the library's default stays (none for kube-rs and
    /// controller-runtime v0.22/v0.25, 20 qps / burst 30 for v0.18.4); ≤ 0: no limiter; > 0: a
    /// bucket of this rate.
    client_qps: f64, accepts Own, flag "--client-qps",
        resolve |f, v| f.client_qps = Some(*v);
    /// The bucket's burst, ≥ 1; needs `client_qps` > 0. Default 10 (client-go's) when only
    /// `client_qps` is set.
    client_burst: i64, accepts Own, flag "--client-burst",
        resolve |f, v| f.client_burst = Some(*v);
    /// Streaming initial list (kube-rs `streaming_lists()`, client-go's `WatchListClient`). Default
    /// `false`.
    watch_list: bool, accepts Own, flag "--watch-list" (Switch),
        resolve |f, v| f.watch_list = Some(*v);
    /// Drop managedFields before objects enter the cache (kube-rs in the watch stream,
    /// controller-runtime with `cache.TransformStripManagedFields`). Default `false`.
    strip_managed_fields: bool, accepts Own, flag "--strip-managed-fields" (Switch),
        resolve |f, v| f.strip_managed_fields = *v;
    /// Hold each managedFields entry's `FieldsV1` as its JSON text instead of k8s-openapi's
    /// `serde_json::Value` tree: the same information, at the size it came in (client-go holds the
    /// raw bytes). Default `false`. Rust only; with `strip_managed_fields` there is nothing to hold.
    managed_fields_text: bool, accepts Rust, flag "--managed-fields-text" (Switch),
        resolve |f, v| f.managed_fields_text = *v;
    /// HTTP/2 to the apiserver (ALPN h2 over rustls): one connection per client, requests and
    /// watches multiplexed, as client-go does. Default `false`: HTTP/1.1 (kube-rs's default).
    http2: bool, accepts Rust, flag "--http2" (Switch),
        resolve |f, v| f.http2 = *v;
    /// The Rust controller's initial list (and relists) with resourceVersion=0, kube-rs's
    /// `any_semantic()`: the apiserver answers it from its watch cache in one response, as it does
    /// client-go's reflector. Default `false`: kube-rs's default, the most recent version in pages
    /// of 500.
    list_any_version: bool, accepts Rust, flag "--list-any-version" (Switch),
        resolve |f, v| f.list_any_version = *v;
    /// Objects per page of the Rust controller's initial list and relists (kube-rs's
    /// `page_size`), ≥ 1: fewer round trips to the apiserver for a large cache. Default: kube-rs's
    /// 500.
    list_page_size: NonZeroU32, accepts Rust, flag "--list-page-size",
        resolve |f, v| f.tunables.list_page_size = Some(*v);
    /// The server-side timeout of each of the Rust controller's watch requests, in seconds
    /// (kube-runtime's watcher `timeout`), ≥ 1: when it ends the watch is reopened from the last
    /// resourceVersion seen. Default: kube-rs's 290.
    watch_timeout_s: NonZeroU32, accepts Rust, flag "--watch-timeout-s",
        resolve |f, v| f.tunables.watch_timeout_s = Some(*v);
    /// `false`: the Rust controller's watches ask for no bookmarks (kube-runtime's
    /// `disable_bookmarks()`), so a watch reopened after its timeout resumes from the last object
    /// event it saw, which may be older than the watch cache keeps (410 Gone, then a relist).
    /// Default `true`, as kube-runtime and client-go.
    watch_bookmarks: bool, accepts Rust, flag "--watch-bookmarks",
        resolve |f, v| f.tunables.watch_bookmarks = Some(*v);
    /// The Rust controller's global allocator: `system` (default), `mimalloc` or `jemalloc` (a build
    /// feature: ctrlbench builds that controller once, in `target/allocator-<name>`). The settings
    /// table names it.
    allocator: String, accepts Rust;
    /// Delay and coalesce re-triggers per object (kube-runtime's debounce, or the same before the
    /// FIFO queue).
    debounce_ms: u64, accepts Rust, flag "--debounce-ms",
        resolve |f, v| f.debounce_ms = Some(i64::try_from(*v).unwrap_or(i64::MAX));
    /// `debug` (default, as the write-up's controllers logged), `info` or `error`.
    log_level: LogLevel, accepts Own, flag "--log-level" default |_| Some("debug".to_string()),
        resolve |f, v| f.log_level = Some(*v);
    /// How a conflict retry re-reads the object: `api` (default, through the API reader) or
    /// `cache`.
    conflict_reread: ConflictReread, accepts Go, flag "--conflict-reread";
    /// Work-queue order: `kube` (kube-runtime's scheduler; Rust only, its default) or `fifo`
    /// (client-go's work queue; Go's only queue). Always passed, so every run records its queue.
    queue: Queue, accepts Own, flag "--queue" default |imp| Some(imp.default_queue().as_str().to_string()),
        resolve |f, v| f.queue = Some(*v);
    /// controller-runtime's priority queue, `go@v0.22` and `go@v0.25` only. Unset: the build's
    /// default (off in v0.22, on in v0.25), always passed.
    priority_queue: bool, accepts GoPriorityQueue,
        flag "--priority-queue" default |imp| imp.priority_queue_default().map(|b| b.to_string());
    /// `before-load` (default: the controller runs while the loader creates) or `after-load` (all N
    /// objects exist first, then the controller starts). `external` accepts only `before-load`;
    /// with `schedule = "concurrent"` every variant must start alike.
    start: StartMode, accepts All;
    /// Environment variables for the controller process, e.g. `{ LOG_LEVEL = "info" }`. Variables
    /// that would redirect or alter it are refused (see below).
    env: BTreeMap<String, String>, accepts Started;
    /// This variant's runs use a local plane of this Kubernetes version; the plane restarts between
    /// runs that need another. Needs the local plane, `schedule = "isolated"`, no `[cluster]
    /// k8s_version`, no `probe`, no `background_objects` and no `[workload] decoys`.
    k8s_version: String, accepts All;
    /// This variant's runs use a local plane whose kube-apiserver has these feature gates (e.g.
    /// `["WatchList=false"]`, each `Name=true|false`), over `[cluster] feature_gates`: a gate on and
    /// off in one experiment. The plane restarts between runs that need other gates. Needs what
    /// `k8s_version` needs, except that `[cluster] k8s_version` may be set.
    feature_gates: Vec<String>, accepts All;
    /// This variant's runs use a local plane with the audit log on or off, over `[cluster]
    /// audit_log`: the log's own cost as an A/A (`experiments/lab/measure/aa-audit.toml`). Without
    /// the log the run has no footprint.csv. Needs what `feature_gates` needs.
    audit_log: bool, accepts All;
    /// Runs this build of our controller instead of the one ctrlbench builds (a path relative to the
    /// experiment file): two builds of one controller interleaved in one experiment, the decisive
    /// way to judge a change.
    binary: String, accepts Own;
    /// Pins the controller to this many CPUs (of `[cluster] cpus`'s controller set, else of the
    /// machine): the CPU limit an operator is deployed with. Both sides of a compared pair must
    /// match.
    controller_cpus: u32, accepts Started;
    /// Limits the controller to this much CPU time, as a Pod's CPU limit does (`"500m"`, `"1.5"`):
    /// a cgroup of its own with a CFS quota per 100 ms period, throttled when it asks for more
    /// (each replica its own). Refused where no cgroup cpu controller is writable. Both sides of a
    /// compared pair must match.
    cpu_limit: String, accepts Started;
    /// How many processes of this controller run, 1 to 32 (default 1): the same identity and
    /// flags, each with its own metrics port (a command's `{port}` differs per replica). Counts and
    /// CPU are summed over the replicas; each replica's peak RSS and CPU are kept too.
    replicas: u32, accepts Started;
    /// Leader election on a Lease in the run's namespace (controller-runtime's; in Rust the
    /// kube-lease-manager crate), client-go's durations: lease 15 s, renew deadline 10 s, retry
    /// 2 s. Only the leader reconciles. Default `false`.
    leader_election: bool, accepts Own, flag "--leader-elect" (Switch),
        resolve |f, v| f.leader_elect = *v;
    /// A CPU profile of every replica over the run, kept as folded stacks (`profile-<k>.folded`)
    /// and drawn as a flame graph in report.html: ours serve it at `/debug/pprof/profile` on
    /// their metrics address (`--pprof`: Go's net/http/pprof, Rust's pprof-rs). Default `false`.
    profile: bool, accepts Own, flag "--pprof" (Switch),
        resolve |f, v| f.pprof = *v;
    /// A command's CPU profile endpoint in Go's pprof format (`{port}` as in the command), e.g.
    /// `http://127.0.0.1:{port}/debug/pprof/profile`: fetched and kept as `profile = true` does.
    pprof: String, accepts Command;
    /// The framework the controller is written with: `controller-runtime`, `client-go`,
    /// `kube-rs` or `kopf`. The report's "What to fix" gives its fixes in that framework's words
    /// (recorded in summary.json); `init --from` writes it. Default: every framework's fix.
    framework: Framework, accepts Foreign;
    /// The Lease a command's replicas elect their leader on (in `{namespace}`): the harness watches
    /// it for `controller:leader` faults and the "new leader after" figure.
    lease: String, accepts Command;
    /// `false`: this variant's runs skip the `[[fault]]` schedule — the fault-free baseline the
    /// report counts objects lost against. Needs a `[[fault]]` schedule and `schedule =
    /// "isolated"`.
    faults: bool, accepts All;
    /// Required there: the program and its arguments. `{port}`, `{namespace}`, `{kubeconfig}` and
    /// `{dir}` (this file's directory, for a path in an argument) are replaced.
    command: Vec<String>, accepts Command;
    /// A command that builds the command's program, run before anything starts, e.g. `["go",
    /// "build", "-o", "bin/manager", "./cmd"]` or `["cargo", "build", "--release"]`; once per
    /// distinct build and `build_dir`. Skipped while the files under `build_dir` (but `bin/`,
    /// `target/` and hidden ones) are as at its last success and the program exists. Its output
    /// is shown; a failure is one line with the build's last lines. The program's path and
    /// SHA-256 go into the manifest.
    build: Vec<String>, accepts Command;
    /// Where `build` runs, relative to this file. Default: the file's directory.
    build_dir: String, accepts Command;
    /// The controller's metrics URL, plain HTTP on a loopback address (`{port}` as in the command).
    /// Without it the controller is not scraped.
    metrics: String, accepts Foreign;
    /// The rules of the controller's namespaced Role: `[{ api_groups = [...], resources = [...],
    /// verbs = [...] }]`.
    rbac: Vec<RbacRule>, accepts Command;
    /// Cluster-wide read rules (a ClusterRole + ClusterRoleBinding): `get`, `list`, `watch` only,
    /// named groups and resources, no secrets.
    cluster_rbac: Vec<RbacRule>, accepts Command;
    /// The namespace the running controller watches (a DNS label, not `default` or `kube-*`), used
    /// as is: created, and later deleted, only when missing. Default: a fresh namespace per run.
    namespace: String, accepts External;
}

/// The row of `name` (every name the table's macro passes exists).
pub fn key(name: &str) -> &'static Key {
    KEYS.iter()
        .find(|k| k.name == name)
        .unwrap_or_else(|| unreachable!("{name} is a key of the table"))
}

fn write_flag(out: &mut Vec<String>, flag: &str, style: Style, text: Option<String>) {
    let Some(text) = text else { return };
    match style {
        Style::Value => out.push(format!("{flag}={text}")),
        Style::Separate => out.extend([flag.to_string(), text]),
        Style::Switch => {
            if text == "true" {
                out.push(flag.to_string());
            }
        }
    }
}

/// `message` with every controller flag of the table written as its key
/// (a preset rule speaks of flags; the file's reader knows keys).
pub fn flags_as_keys(message: &str) -> String {
    let mut m = message.to_string();
    // Longest first: --client-qps must not eat the start of a longer flag.
    let mut keys: Vec<&Key> = KEYS.iter().filter(|k| k.flag.is_some()).collect();
    keys.sort_by_key(|k| std::cmp::Reverse(k.flag.map_or(0, str::len)));
    for k in keys {
        m = m.replace(k.flag.unwrap_or_default(), k.name);
    }
    m
}

impl Accepts {
    /// Why `imp` does not take key `key` (with its flag), if it does not.
    pub fn check(self, key: &str, flag: Option<&str>, imp: &Impl) -> Result<(), String> {
        let own = matches!(imp, Impl::Rust | Impl::Go(_));
        let not_own = || {
            Err(format!(
                "`{key}` is a setting of ctrlbench's own controllers (rust, go@…), not of impl = \"{imp}\""
            ))
        };
        let flag = flag.unwrap_or(key);
        match self {
            Accepts::All => Ok(()),
            Accepts::Started if *imp == Impl::External => {
                Err(format!("impl = \"external\" starts nothing: no {key}"))
            }
            Accepts::Started => Ok(()),
            Accepts::Own | Accepts::Rust | Accepts::Go | Accepts::GoPriorityQueue if !own => {
                not_own()
            }
            Accepts::Own => Ok(()),
            Accepts::Rust if *imp != Impl::Rust => Err(format!(
                "only the Rust controller (kube-runtime) has {flag}"
            )),
            Accepts::Go if *imp == Impl::Rust => Err(format!("only the Go controller has {flag}")),
            Accepts::GoPriorityQueue if imp.priority_queue_default().is_none() => Err(format!(
                "{imp} has no priority queue: it is controller-runtime's (v0.20 and later), in {}",
                priority_queue_builds().join(" and ")
            )),
            Accepts::Rust | Accepts::Go | Accepts::GoPriorityQueue => Ok(()),
            Accepts::Foreign if own => Err(format!(
                "only impl = \"command\" or \"external\" takes `{key}`"
            )),
            Accepts::Foreign => Ok(()),
            Accepts::Command if own => Err(format!("only impl = \"command\" takes `{key}`")),
            Accepts::Command if *imp == Impl::External => Err(format!(
                "impl = \"external\" starts nothing and grants nothing: `{key}` belongs to impl = \"command\""
            )),
            Accepts::Command => Ok(()),
            Accepts::External if *imp != Impl::External => {
                Err(format!("only impl = \"external\" takes `{key}`"))
            }
            Accepts::External => Ok(()),
        }
    }

    /// Who takes it, for the docs.
    pub fn doc(self) -> String {
        match self {
            Accepts::All => "all".into(),
            Accepts::Started => "rust, go, command".into(),
            Accepts::Own => "rust, go".into(),
            Accepts::Rust => "rust".into(),
            Accepts::Go => "go".into(),
            Accepts::GoPriorityQueue => priority_queue_builds().join(", "),
            Accepts::Foreign => "command, external".into(),
            Accepts::Command => "command".into(),
            Accepts::External => "external".into(),
        }
    }
}

/// The Go builds that have a priority queue, as `impl` names them.
fn priority_queue_builds() -> Vec<String> {
    crate::controllers::GO_BUILDS
        .iter()
        .filter(|b| b.priority_queue_default.is_some())
        .map(|b| format!("go@{}", b.label))
        .collect()
}

/// The docs' table of variant keys (docs/experiments.md, "Variant keys").
pub fn markdown() -> String {
    let mut s =
        String::from("| key | controller flag | accepted by | meaning |\n|---|---|---|---|\n");
    for k in KEYS {
        let doc: Vec<&str> = k
            .doc
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        s.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            k.name,
            k.flag.map_or("—".to_string(), |f| format!("`{f}`")),
            k.accepts.doc(),
            doc.join(" ").replace('|', "\\|")
        ));
    }
    s
}
