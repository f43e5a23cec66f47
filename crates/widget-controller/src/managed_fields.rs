//! managedFields in the cache. k8s-openapi parses each entry's `FieldsV1`
//! into a `serde_json::Value` tree — an allocation per key and a map per
//! level — which is most of a cached Widget's bytes (docs/performance.md,
//! "Memory per cached object"). client-go keeps the same field set as the raw
//! bytes it came in; `as_text` does the same here: each `FieldsV1` becomes one
//! JSON string of its compact text, every other field of the entry kept. The
//! controller never reads managedFields; a reader that does gets the tree back
//! with `serde_json::from_str`.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{FieldsV1, ObjectMeta};
use serde_json::Value;

/// Replaces every managedFields entry's FieldsV1 tree with its JSON text.
pub fn as_text(meta: &mut ObjectMeta) {
    for entry in meta.managed_fields.iter_mut().flatten() {
        if let Some(FieldsV1(v)) = &mut entry.fields_v1
            && !v.is_string()
        {
            let mut text = v.to_string();
            text.shrink_to_fit();
            *v = Value::String(text);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry;

    #[test]
    fn the_text_parses_back_to_the_same_tree_and_the_rest_is_kept() {
        let tree = serde_json::json!({"f:spec": {".": {}, "f:count": {}}, "f:metadata": {"f:labels": {".": {}}}});
        let entry = ManagedFieldsEntry {
            manager: Some("ctrlbench".into()),
            operation: Some("Update".into()),
            fields_type: Some("FieldsV1".into()),
            fields_v1: Some(FieldsV1(tree.clone())),
            ..ManagedFieldsEntry::default()
        };
        let mut meta = ObjectMeta {
            managed_fields: Some(vec![entry.clone(), ManagedFieldsEntry::default()]),
            ..ObjectMeta::default()
        };
        as_text(&mut meta);
        let got = meta.managed_fields.unwrap();
        let Some(FieldsV1(Value::String(text))) = &got[0].fields_v1 else {
            panic!("not text: {:?}", got[0].fields_v1)
        };
        assert_eq!(serde_json::from_str::<Value>(text).unwrap(), tree);
        assert_eq!(
            (got[0].manager.as_deref(), got[0].operation.as_deref()),
            (Some("ctrlbench"), Some("Update"))
        );
        // An entry without FieldsV1 stays as it was.
        assert_eq!(got[1], ManagedFieldsEntry::default());
    }
}
