//! The run's objects as our watch decodes them: kube's `DynamicObject`
//! without the field sets of its managedFields. Those sets are most of an
//! object's bytes once anyone has written it, and the watch never reads them
//! (it reads each entry's manager, and the ready rule reads status, spec or
//! metadata); skipping them while decoding, rather than building a JSON tree
//! per entry and dropping it, is most of the harness's CPU at N = 100 000.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    ManagedFieldsEntry, ObjectMeta, OwnerReference, Time,
};
use kube::api::{ApiResource, DynamicObject};
use kube::core::{DynamicResourceScope, Resource, TypeMeta};
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};

/// One watched object; `.0` is what a `DynamicObject` would hold, each
/// managedFields entry with `fields_v1: None`.
#[derive(Clone, Debug)]
pub struct Watched(pub DynamicObject);

impl Resource for Watched {
    type DynamicType = ApiResource;
    type Scope = DynamicResourceScope;

    fn group(dt: &ApiResource) -> Cow<'_, str> {
        DynamicObject::group(dt)
    }
    fn version(dt: &ApiResource) -> Cow<'_, str> {
        DynamicObject::version(dt)
    }
    fn kind(dt: &ApiResource) -> Cow<'_, str> {
        DynamicObject::kind(dt)
    }
    fn api_version(dt: &ApiResource) -> Cow<'_, str> {
        DynamicObject::api_version(dt)
    }
    fn plural(dt: &ApiResource) -> Cow<'_, str> {
        DynamicObject::plural(dt)
    }
    fn meta(&self) -> &ObjectMeta {
        &self.0.metadata
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.0.metadata
    }
}

/// ObjectMeta as sent, but for each managedFields entry's field set, which
/// serde skips without building it.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Meta {
    annotations: Option<BTreeMap<String, String>>,
    creation_timestamp: Option<Time>,
    deletion_grace_period_seconds: Option<i64>,
    deletion_timestamp: Option<Time>,
    finalizers: Option<Vec<String>>,
    generate_name: Option<String>,
    generation: Option<i64>,
    labels: Option<BTreeMap<String, String>>,
    managed_fields: Option<Vec<Entry>>,
    name: Option<String>,
    namespace: Option<String>,
    owner_references: Option<Vec<OwnerReference>>,
    resource_version: Option<String>,
    self_link: Option<String>,
    uid: Option<String>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Entry {
    api_version: Option<String>,
    fields_type: Option<String>,
    manager: Option<String>,
    operation: Option<String>,
    subresource: Option<String>,
    time: Option<Time>,
}

impl From<Meta> for ObjectMeta {
    fn from(m: Meta) -> ObjectMeta {
        // No `..Default::default()`: a field k8s-openapi adds is a compile error here.
        ObjectMeta {
            annotations: m.annotations,
            creation_timestamp: m.creation_timestamp,
            deletion_grace_period_seconds: m.deletion_grace_period_seconds,
            deletion_timestamp: m.deletion_timestamp,
            finalizers: m.finalizers,
            generate_name: m.generate_name,
            generation: m.generation,
            labels: m.labels,
            managed_fields: m.managed_fields.map(|es| {
                es.into_iter()
                    .map(|e| ManagedFieldsEntry {
                        api_version: e.api_version,
                        fields_type: e.fields_type,
                        fields_v1: None,
                        manager: e.manager,
                        operation: e.operation,
                        subresource: e.subresource,
                        time: e.time,
                    })
                    .collect()
            }),
            name: m.name,
            namespace: m.namespace,
            owner_references: m.owner_references,
            resource_version: m.resource_version,
            self_link: m.self_link,
            uid: m.uid,
        }
    }
}

impl<'de> Deserialize<'de> for Watched {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Watched, D::Error> {
        d.deserialize_map(ObjectVisitor)
    }
}

/// One pass over the object's top-level keys: apiVersion and kind as
/// `DynamicObject`'s `types`, metadata as [`Meta`], the rest as JSON (a
/// flattened struct would first buffer the whole object).
struct ObjectVisitor;

impl<'de> Visitor<'de> for ObjectVisitor {
    type Value = Watched;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a Kubernetes object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Watched, A::Error> {
        let (mut api_version, mut kind) = (None, None);
        let mut metadata = ObjectMeta::default();
        let mut data = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "apiVersion" => api_version = Some(map.next_value::<String>()?),
                "kind" => kind = Some(map.next_value::<String>()?),
                "metadata" => metadata = map.next_value::<Meta>()?.into(),
                _ => {
                    data.insert(key, map.next_value()?);
                }
            }
        }
        let types = match (api_version, kind) {
            (Some(api_version), Some(kind)) => Some(TypeMeta { api_version, kind }),
            _ => None,
        };
        Ok(Watched(DynamicObject {
            types,
            metadata,
            data: serde_json::Value::Object(data),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A widget as the apiserver sends it after the loader's create and a
    /// controller's status update.
    fn written_widget() -> serde_json::Value {
        json!({
            "apiVersion": "bench.ctrlbench.dev/v1",
            "kind": "Widget",
            "metadata": {
                "name": "w-1", "namespace": "ns", "uid": "u-1", "resourceVersion": "42",
                "generation": 1, "creationTimestamp": "2026-12-02T10:00:00Z",
                "labels": { "ctrlbench.dev/run-id": "r1" },
                "annotations": { "a": "b" },
                "finalizers": ["f"],
                "ownerReferences": [{ "apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "u-o" }],
                "managedFields": [
                    { "manager": "ctrlbench-loader", "operation": "Update", "apiVersion": "bench.ctrlbench.dev/v1",
                      "time": "2026-12-02T10:00:00Z", "fieldsType": "FieldsV1",
                      "fieldsV1": { "f:metadata": { "f:labels": { ".": {}, "f:ctrlbench.dev/run-id": {} } },
                                    "f:spec": { ".": {}, "f:size": {} } } },
                    { "manager": "widget-controller", "operation": "Update", "subresource": "status",
                      "apiVersion": "bench.ctrlbench.dev/v1", "time": "2026-12-02T10:00:01Z",
                      "fieldsType": "FieldsV1",
                      "fieldsV1": { "f:status": { ".": {}, "f:conditions": {} } } }
                ]
            },
            "spec": { "size": 3 },
            "status": { "conditions": [{ "type": "Ready", "status": "True" }] }
        })
    }

    #[test]
    fn decodes_what_a_dynamic_object_holds_but_the_field_sets() {
        let text = written_widget().to_string();
        let mut expected: DynamicObject = serde_json::from_str(&text).unwrap();
        for e in expected.metadata.managed_fields.iter_mut().flatten() {
            assert!(e.fields_v1.is_some(), "the fixture carries field sets");
            e.fields_v1 = None;
        }
        let got: Watched = serde_json::from_str(&text).unwrap();
        assert_eq!(
            serde_json::to_value(&got.0).unwrap(),
            serde_json::to_value(&expected).unwrap()
        );
        assert_eq!(got.0.metadata.managed_fields.as_ref().unwrap().len(), 2);
    }

    #[test]
    fn an_object_without_types_or_metadata_decodes_as_a_dynamic_object_does() {
        for text in [r#"{"spec":{"x":1}}"#, r#"{"kind":"Widget","metadata":{}}"#] {
            let expected: DynamicObject = serde_json::from_str(text).unwrap();
            let got: Watched = serde_json::from_str(text).unwrap();
            assert_eq!(
                serde_json::to_value(&got.0).unwrap(),
                serde_json::to_value(&expected).unwrap(),
                "{text}"
            );
        }
    }

    #[test]
    fn a_watch_event_of_watched_objects_decodes() {
        let line = json!({ "type": "MODIFIED", "object": written_widget() }).to_string();
        let ev: kube::core::WatchEvent<Watched> = serde_json::from_str(&line).unwrap();
        let kube::core::WatchEvent::Modified(w) = ev else {
            panic!("not a MODIFIED event")
        };
        assert_eq!(w.meta().resource_version.as_deref(), Some("42"));
    }
}
