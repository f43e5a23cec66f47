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
use std::ops::Range;

use serde::{Deserialize, Serialize};
use toml::Spanned;
use widget_api::presets;

use super::schema::StartMode;
use super::schema::{ConflictReread, LogLevel, Predicate, Preset, Queue, RbacRule, StatusWrite};
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
flag_text_display!(u32, u64, i64, f64, bool);

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
                doc: "The variant's name: lowercase letters, digits and '-' (≤ 40); it names the run's directory and namespace.",
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
    /// Which controller runs the variant: rust, go@v0.18.4, go@v0.22, go@v0.25,
    /// command (a program of yours) or external (already running). Default: rust.
    implementation as "impl": String, accepts All;
    /// A row of deploy/presets.toml; required for rust and go@….
    preset: Preset, accepts Own, flag "--preset" (Separate),
        resolve |f, v| f.preset = Some(v.as_str().to_string());
    /// Concurrent reconciles (≥ 1); default: the preset's.
    workers: u32, accepts Own, flag "--workers",
        resolve |f, v| f.workers = Some(i64::from(*v));
    /// Event filter on the watch stream: generation or none.
    predicate: Predicate, accepts Own, flag "--predicate",
        resolve |f, v| f.predicate = Some(*v);
    /// How status is written: update, patch, apply or object.
    status_write: StatusWrite, accepts Own, flag "--status-write",
        resolve |f, v| f.status_write = Some(*v);
    /// Stamp an annotation with an object update on every reconcile.
    annotate: bool, accepts Own, flag "--annotate",
        resolve |f, v| f.annotate = Some(*v);
    /// Simulated work per reconcile, in milliseconds (default 10).
    work_ms: u64, accepts Own, flag "--work-ms",
        resolve |f, v| f.work_ms = Some(i64::try_from(*v).unwrap_or(i64::MAX));
    /// Client-side rate limit in requests/s: unset = the library's default,
    /// ≤ 0 = none, > 0 = a token bucket.
    client_qps: f64, accepts Own, flag "--client-qps",
        resolve |f, v| f.client_qps = Some(*v);
    /// The token bucket's size; needs client_qps > 0.
    client_burst: i64, accepts Own, flag "--client-burst",
        resolve |f, v| f.client_burst = Some(*v);
    /// The initial list as a watch stream (the WatchList protocol).
    watch_list: bool, accepts Own, flag "--watch-list" (Switch),
        resolve |f, v| f.watch_list = Some(*v);
    /// Drop managedFields before objects enter the controller's cache (kube-rs's
    /// `.modify()` on the watch stream, controller-runtime's TransformStripManagedFields).
    strip_managed_fields: bool, accepts Own, flag "--strip-managed-fields" (Switch),
        resolve |f, v| f.strip_managed_fields = *v;
    /// Debounce of triggers per object in milliseconds: kube-runtime's, or the same
    /// delay-and-reset before the fifo queue.
    debounce_ms: u64, accepts Rust, flag "--debounce-ms",
        resolve |f, v| f.debounce_ms = Some(i64::try_from(*v).unwrap_or(i64::MAX));
    /// debug, info or error (default debug, the write-up's level).
    log_level: LogLevel, accepts Own, flag "--log-level" default |_| Some("debug".to_string()),
        resolve |f, v| f.log_level = Some(*v);
    /// On a conflict retry, re-read through the API reader (api) or the cache (cache).
    conflict_reread: ConflictReread, accepts Go, flag "--conflict-reread";
    /// Work-queue order: kube (kube-runtime's scheduler; Rust's default) or fifo
    /// (client-go's work queue; Go's only one).
    queue: Queue, accepts Own, flag "--queue" default |imp| Some(imp.default_queue().as_str().to_string()),
        resolve |f, v| f.queue = Some(*v);
    /// controller-runtime's priority queue; default: the build's (off in v0.22, on in v0.25).
    priority_queue: bool, accepts GoPriorityQueue,
        flag "--priority-queue" default |imp| imp.priority_queue_default().map(|b| b.to_string());
    /// before-load (default: the controller runs while the loader creates) or
    /// after-load (all N objects first, then the controller).
    start: StartMode, accepts All;
    /// Environment variables for the controller (nothing that redirects it).
    env: BTreeMap<String, String>, accepts Started;
    /// This variant's runs on a local plane of this Kubernetes version.
    k8s_version: String, accepts All;
    /// false: this variant's runs skip the [[fault]] schedule (the fault-free baseline).
    faults: bool, accepts All;
    /// The program and its arguments; {port}, {namespace} and {kubeconfig} are replaced.
    command: Vec<String>, accepts Command;
    /// The controller's metrics URL (plain HTTP on loopback; {port} as in the command).
    metrics: String, accepts Foreign;
    /// The rules of the controller's namespaced Role.
    rbac: Vec<RbacRule>, accepts Command;
    /// Read-only cluster-wide rules (a ClusterRole).
    cluster_rbac: Vec<RbacRule>, accepts Command;
    /// The namespace the running controller watches (created and deleted only if missing).
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
