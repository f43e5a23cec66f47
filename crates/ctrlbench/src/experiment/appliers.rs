//! `[workload] field_managers = K`: every object is created carrying K
//! managedFields entries besides the loader's, as K server-side appliers
//! (GitOps tools, several controllers applying one object) would leave
//! them, so that managedFields outweigh the rest of the object — what a
//! cache that keeps managedFields pays for. The apiserver keeps the
//! managedFields a create carries. Each entry owns annotation keys of its
//! own that the object does not carry, so the create's own fields take
//! nothing from it (a create's fields are taken from every other manager).
//! Still one create per object: no request and no watch event besides it.
//! The bound and the entries live here; `Workload::render` puts them into
//! each object. Nothing here talks to a cluster.

use serde_json::{Map, Value, json};
use toml::Spanned;

use super::spec::errors::{Checked, Source};

/// The most entries a file may ask for (about 200 KiB of managedFields
/// per object).
pub const MAX_FIELD_MANAGERS: i64 = 256;

/// Annotation keys each applier owns: about 0.8 KiB of JSON per entry.
pub const FIELDS_PER_MANAGER: usize = 16;

/// The appliers' manager names begin so: our watch does not count them as
/// a controller's write (`run::measure::watch`).
pub const APPLIER_PREFIX: &str = "ctrlbench-applier-";

/// `[workload] field_managers` (0 when unset): a whole number from 0 to
/// [`MAX_FIELD_MANAGERS`].
pub fn count(src: &Source, field_managers: Option<&Spanned<i64>>) -> Checked<u32> {
    let Some(k) = field_managers else {
        return Ok(0);
    };
    let v = *k.get_ref();
    if !(0..=MAX_FIELD_MANAGERS).contains(&v) {
        return Err(src.at(
            "field_managers",
            k.span(),
            format!("must be a whole number from 0 to {MAX_FIELD_MANAGERS}, not {v}"),
        ));
    }
    Ok(v as u32)
}

/// The K entries for an object of `api_version`: `ctrlbench-applier-001`
/// … as Apply managers (never merged away, unlike Update managers past
/// ten), each owning [`FIELDS_PER_MANAGER`] annotation keys of its own.
pub fn entries(k: u32, api_version: &str) -> Vec<Value> {
    (1..=k)
        .map(|m| {
            let keys: Map<String, Value> = (1..=FIELDS_PER_MANAGER)
                .map(|f| {
                    (
                        format!("f:applier.ctrlbench.dev/m{m:03}-f{f:02}"),
                        json!({}),
                    )
                })
                .collect();
            json!({
                "manager": format!("{APPLIER_PREFIX}{m:03}"),
                "operation": "Apply",
                "apiVersion": api_version,
                "time": "2026-01-01T00:00:00Z",
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:metadata": {"f:annotations": keys}},
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize)]
    struct Spec {
        field_managers: Option<Spanned<i64>>,
    }

    fn spec(text: &str) -> Spec {
        toml::from_str(text).unwrap()
    }

    fn src(text: &str) -> Source<'_> {
        Source {
            file: "w.toml".into(),
            text,
        }
    }

    #[test]
    fn field_managers_are_bounded() {
        for (text, want) in [
            ("", 0),
            ("field_managers = 0", 0),
            ("field_managers = 256", 256),
        ] {
            let s = spec(text);
            assert_eq!(
                count(&src(text), s.field_managers.as_ref()).unwrap(),
                want,
                "{text}"
            );
        }
        for text in ["field_managers = -1", "\nfield_managers = 257"] {
            let e = count(&src(text), spec(text).field_managers.as_ref()).unwrap_err();
            assert_eq!(e.key, "field_managers", "{e}");
            assert_eq!(e.line, text.lines().count(), "{e}");
            assert!(e.message.contains("from 0 to 256"), "{e}");
        }
    }

    #[test]
    fn each_entry_is_an_applier_owning_sixteen_keys_of_its_own() {
        let es = entries(3, "g/v1");
        assert_eq!(es.len(), 3);
        assert_eq!(es[0]["manager"], "ctrlbench-applier-001");
        assert_eq!(es[2]["manager"], "ctrlbench-applier-003");
        assert_eq!(es[1]["operation"], "Apply");
        assert_eq!(es[1]["apiVersion"], "g/v1");
        let keys = es[1]["fieldsV1"]["f:metadata"]["f:annotations"]
            .as_object()
            .unwrap();
        assert_eq!(keys.len(), 16);
        assert!(keys.contains_key("f:applier.ctrlbench.dev/m002-f01"));
        assert!(keys.contains_key("f:applier.ctrlbench.dev/m002-f16"));
        // About 0.8 KiB each, as the key's doc says.
        let bytes = serde_json::to_vec(&es[0]).unwrap().len();
        assert!((700..900).contains(&bytes), "{bytes}");
        assert!(entries(0, "v1").is_empty());
    }
}
