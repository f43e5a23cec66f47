//! The Widget custom resource (`widgets.benchmark.example.com`): the one object
//! type every ctrlbench experiment creates and every controller reconciles.
//!
//! Kept exactly as the write-up defined it (docs/architecture.md#the-widget-api) so that its users'
//! kubectl habits and queries still work.

pub mod presets;

use kube::CustomResource;
use kube::core::CustomResourceExt;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The phase a reconcile writes; "Ready" is what every experiment waits for.
pub const READY: &str = "Ready";

/// Annotation the looping variants stamp on every reconcile (Unix nanoseconds).
pub const LAST_SEEN_ANNOTATION: &str = "bad-controller/last-seen";

/// Desired state of a Widget.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "benchmark.example.com",
    version = "v1alpha1",
    kind = "Widget",
    plural = "widgets",
    namespaced,
    status = "WidgetStatus",
    printcolumn = r#"{"name":"Phase","type":"string","jsonPath":".status.phase"}"#,
    printcolumn = r#"{"name":"Count","type":"integer","jsonPath":".spec.count"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
pub struct WidgetSpec {
    pub count: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Observed state, written only through the status subresource.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WidgetStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processed_count: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "date-time"))]
    pub last_updated: Option<String>,
}

impl Widget {
    /// The i-th benchmark object: `widget-00000i`, count i, message "benchmark run i".
    pub fn numbered(i: u64) -> Widget {
        Widget::new(
            &object_name(i),
            WidgetSpec {
                count: i as i64,
                message: Some(format!("benchmark run {i}")),
            },
        )
    }

    /// True when the stored status says Ready.
    pub fn is_ready(&self) -> bool {
        self.status.as_ref().and_then(|s| s.phase.as_deref()) == Some(READY)
    }
}

/// Object name of the i-th widget, as the write-up's scripts named them.
pub fn object_name(i: u64) -> String {
    format!("widget-{i:06}")
}

/// The CRD as YAML, exactly what `ctrlbench crd` prints and `deploy/crd.yaml` holds.
pub fn crd_yaml() -> String {
    let crd = Widget::crd();
    serde_saphyr::to_string(&crd).expect("CRD serialises to YAML")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crd_matches_design() {
        let crd = Widget::crd();
        assert_eq!(
            crd.metadata.name.as_deref(),
            Some("widgets.benchmark.example.com")
        );
        assert_eq!(crd.spec.scope, "Namespaced");
        let v = &crd.spec.versions[0];
        assert_eq!(v.name, "v1alpha1");
        assert!(v.served && v.storage);
        assert!(v.subresources.as_ref().unwrap().status.is_some());
        let cols: Vec<_> = v
            .additional_printer_columns
            .as_ref()
            .unwrap()
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(cols, ["Phase", "Count", "Age"]);
        let schema = serde_json::to_value(v.schema.as_ref().unwrap()).unwrap();
        let props = &schema["openAPIV3Schema"]["properties"];
        assert_eq!(props["spec"]["required"], serde_json::json!(["count"]));
        assert_eq!(props["spec"]["properties"]["count"]["type"], "integer");
        let status = &props["status"]["properties"];
        assert_eq!(status["lastUpdated"]["format"], "date-time");
        assert_eq!(status["processedCount"]["type"], "integer");
        assert_eq!(status["phase"]["type"], "string");
    }

    #[test]
    fn numbered_objects_follow_the_write_up() {
        let w = Widget::numbered(7);
        assert_eq!(w.metadata.name.as_deref(), Some("widget-000007"));
        assert_eq!(w.spec.count, 7);
        assert_eq!(w.spec.message.as_deref(), Some("benchmark run 7"));
        assert!(!w.is_ready());
    }
}
