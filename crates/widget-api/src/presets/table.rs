//! The preset table: `deploy/presets.toml` compiled in, its rows and
//! defaults as types, the checks a table must pass, and the look-ups by
//! name that the controllers and the harness use.

use std::sync::OnceLock;

use serde::Deserialize;

use ctrlbench_settings::{Cache, LogFormat, LogLevel, Predicate, Read, StatusWrite};

use super::values::{Question, check_bind_address};

/// `deploy/presets.toml`, as compiled into this crate.
pub const PRESETS_TOML: &str = include_str!("../../../../deploy/presets.toml");

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
