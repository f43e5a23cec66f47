//! Workloads: what a run creates and when an object counts as ready. An
//! experiment's `[workload]` names a CRD file (or none: the template's kind
//! is one the cluster serves already, such as apps/v1 Deployment, found by
//! discovery before the first run), an object template and a readiness
//! rule; without one, the built-in Widget workload (the Widget CRD,
//! `widget-000001` …, ready when `{.status.phase}` is "Ready"). This file
//! owns the spec as written ([`WorkloadSpec`], [`ReadySpec`]), its validated
//! form ([`Workload`], [`ReadyRule`]) and the pure parts every phase reuses:
//! rendering the template and evaluating the rule on an object's JSON (the
//! rule's paths are `super::jsonpath`'s). Nothing here talks to a cluster
//! (see `run::workload`).

use std::path::{Path, PathBuf};

use kube::core::{ApiResource, GroupVersionKind};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use toml::Spanned;

pub use super::jsonpath::JsonPath;
pub use super::pads::{MAX_OBJECT_BYTES, expand_pads};
pub use super::ready::{ReadyRule, ReadySpec, object_view};
use super::spec::errors::{Checked, Source, SpecError};

/// `[workload]` as written; paths are relative to the experiment file.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    /// None: the template names a kind the cluster serves without a CRD.
    pub crd: Option<Spanned<String>>,
    /// None (and no `ready`, `crd` or `extra_crds`): the built-in Widgets.
    pub object: Option<Spanned<String>>,
    pub ready: Option<Spanned<ReadySpec>>,
    /// CRDs of the other kinds the controller watches (a multi-kind
    /// manager waits for every kind's cache): installed when missing,
    /// removed afterwards only if ctrlbench installed them.
    #[serde(default)]
    pub extra_crds: Vec<Spanned<String>>,
    /// Decoys in a namespace no controller reconciles (decoys.rs).
    pub decoys: Option<Spanned<i64>>,
    /// managedFields entries each object is created with (appliers.rs).
    pub field_managers: Option<Spanned<i64>>,
    /// The operator's source directory (`init --from` writes it): the
    /// findings' likely lines are looked for there (`run::likely`).
    pub source: Option<Spanned<String>>,
}

/// The placeholders a template may use (and `{{pad N}}`: N letters `x`,
/// to give objects a size).
pub const PLACEHOLDERS: [&str; 4] = ["{{name}}", "{{index}}", "{{namespace}}", "{{run}}"];

/// A validated workload: the CRD (as JSON), the object template and the rule.
#[derive(Debug, Clone)]
pub struct Workload {
    /// The CRD file (None: built in).
    pub crd_file: Option<PathBuf>,
    pub crd: Value,
    /// The template file (None: built in).
    pub object_file: Option<PathBuf>,
    pub template: String,
    pub ready: ReadyRule,
    /// The kind as the template names it, with the CRD's plural.
    pub resource: ApiResource,
    /// Object names: `<prefix>-000001` …
    pub name_prefix: String,
    /// The other CRDs `[workload] extra_crds` names.
    pub extra_crds: Vec<ExtraCrd>,
    /// `[workload] field_managers`: appliers' managedFields entries each
    /// object is created with (0: none).
    pub field_managers: u32,
}

/// A CRD of another kind the controller watches.
#[derive(Debug, Clone)]
pub struct ExtraCrd {
    pub file: PathBuf,
    pub crd: Value,
    /// `<plural>.<group>`.
    pub name: String,
    /// Its kind at its first served version: to see whether objects remain.
    pub resource: ApiResource,
}

impl ExtraCrd {
    pub fn new(file: PathBuf, crd: Value) -> Result<ExtraCrd, String> {
        if crd.get("kind").and_then(Value::as_str) != Some("CustomResourceDefinition") {
            return Err("is not a CustomResourceDefinition (kind)".into());
        }
        let s = |p: &str| crd.pointer(p).and_then(Value::as_str).unwrap_or_default();
        let (group, kind, plural) = (
            s("/spec/group"),
            s("/spec/names/kind"),
            s("/spec/names/plural"),
        );
        if group.is_empty() || kind.is_empty() || plural.is_empty() {
            return Err("needs spec.group, spec.names.kind and spec.names.plural".into());
        }
        let version = crd
            .pointer("/spec/versions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|v| v.get("served").and_then(Value::as_bool) != Some(false))
            .and_then(|v| v.get("name").and_then(Value::as_str))
            .unwrap_or("v1");
        Ok(ExtraCrd {
            file,
            name: format!("{plural}.{group}"),
            resource: ApiResource::from_gvk_with_plural(
                &GroupVersionKind::gvk(group, version, kind),
                plural,
            ),
            crd,
        })
    }
}

impl Workload {
    /// The Widget workload, as today.
    pub fn widgets() -> Workload {
        Workload::widgets_of(0)
    }

    /// Widgets of about `bytes` bytes each (JSON, as created): the message
    /// is padded with `x` to that size; 0 or anything under a bare Widget's
    /// size: no padding.
    pub fn widgets_of(bytes: u64) -> Workload {
        let w = Workload::widgets_from("");
        let bare = w.object_bytes();
        if bytes <= bare {
            return w;
        }
        Workload::widgets_from(&format!(" {{{{pad {}}}}}", bytes - bare - 1))
    }

    fn widgets_from(pad: &str) -> Workload {
        use kube::CustomResourceExt;
        let crd = serde_json::to_value(widget_api::Widget::crd()).expect("CRD serialises");
        let template = format!(
            "apiVersion: benchmark.example.com/v1alpha1\nkind: Widget\nmetadata:\n  name: \"{{{{name}}}}\"\nspec:\n  count: {{{{index}}}}\n  message: benchmark run {{{{index}}}}{pad}\n"
        );
        Workload::new(
            None,
            crd,
            None,
            template,
            ReadyRule::Equals(
                JsonPath::parse("{.status.phase}").expect("valid"),
                widget_api::READY.to_string(),
            ),
        )
        .expect("the built-in Widget workload is valid")
    }

    /// Checks that the CRD is a namespaced CustomResourceDefinition and that
    /// the template renders to an object of one of its served versions.
    pub fn new(
        crd_file: Option<PathBuf>,
        crd: Value,
        object_file: Option<PathBuf>,
        template: String,
        ready: ReadyRule,
    ) -> Result<Workload, WorkloadError> {
        let crd_err = |m: String| WorkloadError::Crd(m);
        if crd.get("kind").and_then(Value::as_str) != Some("CustomResourceDefinition") {
            return Err(crd_err("is not a CustomResourceDefinition (kind)".into()));
        }
        let spec = crd
            .get("spec")
            .ok_or_else(|| crd_err("has no spec".into()))?;
        let s = |p: &str| spec.pointer(p).and_then(Value::as_str).unwrap_or_default();
        let (group, kind, plural, singular) = (
            s("/group"),
            s("/names/kind"),
            s("/names/plural"),
            s("/names/singular"),
        );
        if group.is_empty() || kind.is_empty() || plural.is_empty() {
            return Err(crd_err(
                "needs spec.group, spec.names.kind and spec.names.plural".into(),
            ));
        }
        if s("/scope") != "Namespaced" {
            return Err(crd_err(format!(
                "{plural}.{group} is {}: ctrlbench creates the objects in a fresh namespace per run, so the kind must be Namespaced",
                if s("/scope").is_empty() {
                    "without a scope"
                } else {
                    s("/scope")
                }
            )));
        }
        let served: Vec<&str> = spec
            .get("versions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|v| v.get("served").and_then(Value::as_bool) != Some(false))
            .filter_map(|v| v.get("name").and_then(Value::as_str))
            .collect();
        let w = Workload {
            crd_file,
            crd: crd.clone(),
            object_file,
            template,
            ready,
            resource: ApiResource::from_gvk_with_plural(
                &GroupVersionKind::gvk(group, served.first().copied().unwrap_or("v1"), kind),
                plural,
            ),
            name_prefix: if singular.is_empty() {
                kind.to_ascii_lowercase()
            } else {
                singular.to_string()
            },
            extra_crds: Vec::new(),
            field_managers: 0,
        };
        // A sample rendering: valid YAML, a mapping, the CRD's kind and a served version.
        let sample = w
            .render(1, "ns", "run")
            .map_err(|e| WorkloadError::Template(e.to_string()))?;
        let api_version = sample
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let t_kind = sample
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let (t_group, t_version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        if t_group != group || t_kind != kind || !served.contains(&t_version) {
            return Err(WorkloadError::Template(format!(
                "is a {api_version:?} {t_kind:?}, but the CRD serves {kind} in {}",
                served
                    .iter()
                    .map(|v| format!("{group}/{v}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        let resource = ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk(group, t_version, kind),
            plural,
        );
        Ok(Workload { resource, ..w })
    }

    /// A kind the cluster serves without a CRD (apps/v1 Deployment …), as
    /// the template names it; the plural is kube's, checked by discovery.
    pub fn of_kind(
        object_file: Option<PathBuf>,
        template: String,
        ready: ReadyRule,
    ) -> Result<Workload, WorkloadError> {
        let probe = Workload {
            crd_file: None,
            crd: Value::Null,
            object_file,
            template,
            ready,
            resource: ApiResource::from_gvk(&GroupVersionKind::gvk("", "v1", "Unknown")),
            name_prefix: String::new(),
            extra_crds: Vec::new(),
            field_managers: 0,
        };
        let sample = probe
            .render(1, "ns", "run")
            .map_err(|e| WorkloadError::Template(e.to_string()))?;
        let field = |k: &str| sample.get(k).and_then(Value::as_str).unwrap_or_default();
        let (api_version, kind) = (field("apiVersion"), field("kind"));
        if api_version.is_empty() || kind.is_empty() {
            return Err(WorkloadError::Template(
                "needs apiVersion and kind (without a crd, a kind the cluster serves, e.g. apps/v1 Deployment)".into(),
            ));
        }
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        let resource = ApiResource::from_gvk(&GroupVersionKind::gvk(group, version, kind));
        Ok(Workload {
            name_prefix: kind.to_ascii_lowercase(),
            extra_crds: Vec::new(),
            resource,
            ..probe
        })
    }

    /// Whether the kind comes with the workload's own CRD (the Widget's or a file's).
    pub fn has_crd(&self) -> bool {
        !self.crd.is_null()
    }

    /// The template's apiVersion and kind, as written (`apps/v1 Deployment`).
    pub fn kind_name(&self) -> String {
        format!("{} {}", self.resource.api_version, self.resource.kind)
    }

    /// Whether the rule reads what only pods make: replicas available or
    /// ready, a Job's succeeded, or a Deployment's Available or a Job's
    /// Complete condition (a kind the cluster serves). A custom kind's
    /// Available condition is its operator's to set: no pod is implied.
    pub fn ready_needs_pods(&self) -> bool {
        const POD_FIELDS: [&str; 4] = [
            "availableReplicas",
            "readyReplicas",
            "updatedReplicas",
            "succeeded",
        ];
        let reads_pods = |p: &JsonPath| POD_FIELDS.iter().any(|f| p.to_string().contains(f));
        match &self.ready {
            ReadyRule::Condition(c) => !self.has_crd() && (c == "Available" || c == "Complete"),
            ReadyRule::Equals(p, _) | ReadyRule::Exists(p) => reads_pods(p),
            ReadyRule::EqualsPath(a, b) => reads_pods(a) || reads_pods(b),
            ReadyRule::ObservedGeneration => false,
        }
    }

    /// The CRD's name (`<plural>.<group>`).
    pub fn crd_name(&self) -> String {
        format!("{}.{}", self.resource.plural, self.resource.group)
    }

    /// The size of object 0 as created (JSON, in the run's namespace
    /// `ctrlbench-run`): what `object_bytes` and `{{pad N}}` aim at.
    pub fn object_bytes(&self) -> u64 {
        self.render(0, "ctrlbench-run", "run")
            .ok()
            .and_then(|v| serde_json::to_vec(&v).ok())
            .map_or(0, |b| b.len() as u64)
    }

    /// Whether the template sizes its objects with `{{pad N}}`.
    pub fn is_padded(&self) -> bool {
        self.template.contains("\u{7b}\u{7b}pad ")
    }

    /// Whether this is the built-in Widget workload.
    pub fn is_builtin(&self) -> bool {
        self.object_file.is_none()
    }

    /// Name of the i-th object (`widget-000001` for widgets, as the write-up's scripts).
    pub fn object_name(&self, i: u64) -> String {
        format!("{}-{i:06}", self.name_prefix)
    }

    /// The i-th object: placeholders replaced, parsed as YAML. The name is
    /// always ours (set even when the template leaves it out), the namespace
    /// the run's; with `field_managers`, the appliers' managedFields.
    pub fn render(&self, i: u64, namespace: &str, run: &str) -> Result<Value, String> {
        let name = self.object_name(i);
        let text = self
            .template
            .replace("{{name}}", &name)
            .replace("{{index}}", &i.to_string())
            .replace("{{namespace}}", namespace)
            .replace("{{run}}", run);
        let text = expand_pads(&text)?;
        let mut v: Value = super::yaml::one(&text)?;
        if let Some(m) = v.as_object_mut() {
            let meta = m
                .entry("metadata")
                .or_insert_with(|| Value::Object(Default::default()));
            if let Some(meta) = meta.as_object_mut() {
                meta.insert("name".into(), Value::String(name));
                meta.insert("namespace".into(), Value::String(namespace.to_string()));
            }
            if self.field_managers > 0 {
                let api_version = m
                    .get("apiVersion")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                let entries = super::appliers::entries(self.field_managers, &api_version);
                if let Some(meta) = m.get_mut("metadata").and_then(Value::as_object_mut) {
                    meta.insert("managedFields".into(), Value::Array(entries));
                }
            }
        } else {
            return Err(
                "the template is not a YAML mapping (an object with apiVersion, kind, metadata, spec)"
                    .into(),
            );
        }
        Ok(v)
    }

    /// One line for plans and reports.
    pub fn describe(&self) -> String {
        format!(
            "{} ({}/{}{}), ready when {}",
            self.resource.kind,
            self.resource.group,
            self.resource.version,
            match &self.crd_file {
                Some(f) => format!(", CRD {}", f.display()),
                None if self.is_builtin() => ", built in".to_string(),
                None => ", served by the cluster".to_string(),
            },
            self.ready
        )
    }
}

/// What is wrong with a workload's files.
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    #[error("the CRD {0}")]
    Crd(String),
    #[error("the object template {0}")]
    Template(String),
}

/// Checks `[workload]` of experiment `file` (its paths relative to it;
/// files read with `read`): the CRD, the template `object` and the rule
/// `ready` (both as decoys.rs's `template` found them).
pub fn check(
    src: &Source,
    file: &Path,
    w: &WorkloadSpec,
    (object, ready): (&Spanned<String>, &Spanned<ReadySpec>),
    read: &dyn Fn(&Path) -> std::io::Result<String>,
) -> Checked<Workload> {
    let ready =
        ReadyRule::from_spec(ready.get_ref()).map_err(|m| src.at("ready", ready.span(), m))?;
    let load = |key: &str, spec: &Spanned<String>| {
        let path = relative_to(file, spec.get_ref());
        let text = read(&path).map_err(|e| {
            src.at(
                key,
                spec.span(),
                format!("cannot read {}: {e}", path.display()),
            )
        })?;
        Ok::<_, SpecError>((path, text))
    };
    let mut extra = Vec::new();
    for spec in &w.extra_crds {
        let (path, text) = load("extra_crds", spec)?;
        let e = read_crd(&text)
            .and_then(|crd| ExtraCrd::new(path.clone(), crd))
            .map_err(|m| {
                src.at(
                    "extra_crds",
                    spec.span(),
                    format!("{}: {m}", path.display()),
                )
            })?;
        extra.push(e);
    }
    let with_extra = |mut wl: Workload| {
        wl.extra_crds = extra.clone();
        wl
    };
    let Some(crd_spec) = &w.crd else {
        let (obj_path, template) = load("object", object)?;
        return Workload::of_kind(Some(obj_path.clone()), template, ready)
            .map(with_extra)
            .map_err(|e| {
                src.at(
                    "object",
                    object.span(),
                    format!("{}: {e}", obj_path.display()),
                )
            });
    };
    let (crd_path, crd_text) = load("crd", crd_spec)?;
    let crd = read_crd(&crd_text).map_err(|m| {
        src.at(
            "crd",
            crd_spec.span(),
            format!("{}: {m}", crd_path.display()),
        )
    })?;
    let (obj_path, template) = load("object", object)?;
    Workload::new(
        Some(crd_path.clone()),
        crd,
        Some(obj_path.clone()),
        template,
        ready,
    )
    .map(with_extra)
    .map_err(|e| {
        let (key, span, path) = match e {
            WorkloadError::Crd(_) => ("crd", crd_spec.span(), &crd_path),
            WorkloadError::Template(_) => ("object", object.span(), &obj_path),
        };
        src.at(key, span, format!("{}: {e}", path.display()))
    })
}

/// Reads a CRD file (YAML; the first document that is a CRD).
pub fn read_crd(text: &str) -> Result<Value, String> {
    super::yaml::documents(text)?
        .into_iter()
        .find(|v| v.get("kind").and_then(Value::as_str) == Some("CustomResourceDefinition"))
        .ok_or_else(|| "holds no CustomResourceDefinition".into())
}

/// `rel` relative to the experiment file's directory.
pub fn relative_to(exp_file: &Path, rel: &str) -> PathBuf {
    let p = Path::new(rel);
    if p.is_absolute() {
        return p.to_path_buf();
    }
    exp_file.parent().unwrap_or(Path::new(".")).join(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::core::DynamicObject;
    use serde_json::json;

    fn path(p: &str) -> JsonPath {
        JsonPath::parse(p).unwrap()
    }

    #[test]
    fn rules() {
        let ready = |rule: &ReadyRule, v: Value| rule.holds(&v);
        let cond = ReadyRule::Condition("Ready".into());
        assert!(ready(
            &cond,
            json!({"status": {"conditions": [{"type": "Synced", "status": "True"}, {"type": "Ready", "status": "True"}]}})
        ));
        assert!(!ready(
            &cond,
            json!({"status": {"conditions": [{"type": "Ready", "status": "False"}]}})
        ));
        assert!(!ready(&cond, json!({"status": {}})));
        let eq = ReadyRule::Equals(path("{.status.phase}"), "Ready".into());
        assert!(ready(&eq, json!({"status": {"phase": "Ready"}})));
        assert!(!ready(&eq, json!({"status": {"phase": "Pending"}})));
        let zero = ReadyRule::Equals(path("{.status.availableReplicas}"), "0".into());
        assert!(ready(&zero, json!({"status": {"availableReplicas": 0}})));
        assert!(!ready(&zero, json!({"status": {}})));
        let ex = ReadyRule::Exists(path("{.status.availableReplicas}"));
        assert!(ready(&ex, json!({"status": {"availableReplicas": 0}})));
        assert!(!ready(&ex, json!({"status": {"availableReplicas": null}})));
        assert!(!ready(&ex, json!({"spec": {}})));
        let og = ReadyRule::ObservedGeneration;
        assert!(ready(
            &og,
            json!({"metadata": {"generation": 2}, "status": {"observedGeneration": 2}})
        ));
        assert!(!ready(
            &og,
            json!({"metadata": {"generation": 3}, "status": {"observedGeneration": 2}})
        ));
        assert!(!ready(&og, json!({"metadata": {"generation": 1}})));
    }

    #[test]
    fn a_rule_comparing_two_paths_needs_both_present_and_equal() {
        let spec: ReadySpec = toml::from_str(
            "jsonpath = \"{.status.availableReplicas}\"\nequals_path = \"{.spec.replicas}\"",
        )
        .unwrap();
        let rule = ReadyRule::from_spec(&spec).unwrap();
        assert_eq!(
            rule,
            ReadyRule::EqualsPath(
                path("{.status.availableReplicas}"),
                path("{.spec.replicas}")
            )
        );
        let holds = |v: Value| rule.holds(&v);
        assert!(holds(
            json!({"spec": {"replicas": 3}, "status": {"availableReplicas": 3}})
        ));
        assert!(!holds(
            json!({"spec": {"replicas": 3}, "status": {"availableReplicas": 2}})
        ));
        assert!(!holds(json!({"spec": {"replicas": 3}, "status": {}})));
        assert!(!holds(
            json!({"spec": {}, "status": {"availableReplicas": null}})
        ));
        assert!(!holds(json!({"status": {"availableReplicas": 0}})));
        // Text comparison: a string "1" equals the number 1, as kubectl wait reads it.
        assert!(holds(
            json!({"spec": {"replicas": 1}, "status": {"availableReplicas": "1"}})
        ));
        for bad in [
            "equals_path = \"{.spec.replicas}\"",
            "jsonpath = \"{.a}\"\nequals_path = \"{.b}\"\nequals = 1",
            "jsonpath = \"{.a}\"\nequals_path = \"{.b}\"\nexists = true",
            "jsonpath = \"{.a}\"\nequals_path = \"no braces\"",
        ] {
            let spec: ReadySpec = toml::from_str(bad).unwrap();
            assert!(ReadyRule::from_spec(&spec).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_custom_kinds_available_condition_implies_no_pod_and_a_todo_is_refused() {
        let mut w = Workload::widgets();
        w.ready = ReadyRule::Condition("Available".into());
        assert!(w.has_crd() && !w.ready_needs_pods());
        let spec: ReadySpec = toml::from_str("todo = \"choose one\"").unwrap();
        assert_eq!(
            ReadyRule::from_spec(&spec).unwrap_err(),
            "the readiness rule is still a TODO: choose one"
        );
    }

    #[test]
    fn a_kind_without_a_crd_comes_from_the_template() {
        let t =
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\nspec:\n  replicas: 2\n";
        let ready = ReadyRule::Condition("Available".into());
        let w = Workload::of_kind(Some("d.yaml".into()), t.into(), ready).unwrap();
        assert_eq!(
            (w.resource.group.as_str(), w.resource.version.as_str()),
            ("apps", "v1")
        );
        assert_eq!(
            (w.resource.kind.as_str(), w.resource.plural.as_str()),
            ("Deployment", "deployments")
        );
        assert_eq!(w.object_name(3), "deployment-000003");
        assert!(!w.has_crd() && !w.is_builtin() && w.ready_needs_pods());
        let core = "apiVersion: v1\nkind: ConfigMap\ndata:\n  a: b\n";
        let w = Workload::of_kind(None, core.into(), ReadyRule::Exists(path("{.data.a}"))).unwrap();
        assert_eq!(
            (w.resource.group.as_str(), w.resource.plural.as_str()),
            ("", "configmaps")
        );
        assert!(!w.ready_needs_pods());
        assert!(
            Workload::of_kind(None, "spec: {}\n".into(), ReadyRule::ObservedGeneration).is_err()
        );
        assert!(Workload::widgets().has_crd() && !Workload::widgets().ready_needs_pods());
    }

    /// The watch's view gives the answer the whole object's JSON gives, for
    /// every rule shape and every top-level field a path can start with.
    #[test]
    fn a_rule_on_the_watchs_view_agrees_with_the_whole_object() {
        let objs = [
            json!({"apiVersion": "benchmark.example.com/v1alpha1", "kind": "Widget",
                "metadata": {"name": "w", "generation": 2, "labels": {"a.b/c": "y"},
                    "managedFields": [{"manager": "m", "operation": "Update", "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {}}}]},
                "spec": {"count": 3},
                "status": {"phase": "Ready", "observedGeneration": 2, "n": 3,
                    "conditions": [{"type": "Ready", "status": "True"}]}}),
            json!({"apiVersion": "v1", "kind": "Thing",
                "metadata": {"name": "w", "generation": 3},
                "spec": {"count": 0},
                "status": {"phase": "Pending", "observedGeneration": 2,
                    "conditions": [{"type": "Ready", "status": "False"}]}}),
            json!({"apiVersion": "v1", "kind": "Thing", "metadata": {"name": "w"}}),
        ];
        let rules = [
            ReadyRule::Condition("Ready".into()),
            ReadyRule::Equals(path("{.status.phase}"), "Ready".into()),
            ReadyRule::Equals(path("{.status.n}"), "3".into()),
            ReadyRule::Equals(path("{.spec.count}"), "0".into()),
            ReadyRule::Equals(path("{.metadata.labels['a.b/c']}"), "y".into()),
            ReadyRule::Equals(path("{.kind}"), "Widget".into()),
            ReadyRule::Equals(path("{.apiVersion}"), "v1".into()),
            ReadyRule::Exists(path("{.status.conditions[0].type}")),
            ReadyRule::Exists(path("{.metadata.generation}")),
            ReadyRule::ObservedGeneration,
        ];
        let mut held = 0;
        for o in &objs {
            let d: DynamicObject = serde_json::from_value(o.clone()).unwrap();
            let whole = serde_json::to_value(&d).unwrap();
            for r in &rules {
                assert_eq!(r.holds_object(&d), r.holds(&whole), "{r} on {o}");
                held += usize::from(r.holds(&whole));
            }
        }
        // Neither always true nor always false across the cases.
        assert!(held > 5 && held < 25, "{held}");
    }

    #[test]
    fn rule_shapes() {
        let spec = |t: &str| -> ReadySpec { toml::from_str(t).unwrap() };
        assert_eq!(
            ReadyRule::from_spec(&spec("condition = \"Ready\"")),
            Ok(ReadyRule::Condition("Ready".into()))
        );
        assert_eq!(
            ReadyRule::from_spec(&spec("jsonpath = \"{.status.n}\"\nequals = 3")),
            Ok(ReadyRule::Equals(path("{.status.n}"), "3".into()))
        );
        assert!(ReadyRule::from_spec(&spec("observed_generation = true")).is_ok());
        assert!(ReadyRule::from_spec(&spec("jsonpath = \"{.a}\"\nexists = true")).is_ok());
        for bad in [
            "",
            "condition = \"Ready\"\njsonpath = \"{.a}\"",
            "jsonpath = \"{.a}\"",
            "equals = \"x\"",
            "jsonpath = \"{.a}\"\nexists = false",
            "observed_generation = false",
            "jsonpath = \"{.a[?(@.x)]}\"\nexists = true",
        ] {
            assert!(ReadyRule::from_spec(&spec(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn pads_give_objects_their_size() {
        assert_eq!(expand_pads("a{{pad 3}}b{{pad 0}}").unwrap(), "axxxb");
        assert!(expand_pads("{{pad x}}").is_err());
        assert!(expand_pads("{{pad 3").is_err());
        assert!(expand_pads(&format!("{{{{pad {}}}}}", MAX_OBJECT_BYTES + 1)).is_err());
        // Sized widgets: object 0 serialises to exactly the size asked.
        for want in [4096u64, 100_000, 512 * 1024] {
            let w = Workload::widgets_of(want);
            let o = w.render(0, "ctrlbench-run", "run").unwrap();
            assert_eq!(serde_json::to_vec(&o).unwrap().len() as u64, want);
        }
        // Below a bare widget's size: no padding.
        assert_eq!(
            Workload::widgets_of(10).template,
            Workload::widgets().template
        );
    }

    #[test]
    fn the_builtin_workload_is_the_widget_one() {
        let w = Workload::widgets();
        assert_eq!(w.crd_name(), "widgets.benchmark.example.com");
        assert_eq!(w.object_name(7), widget_api::object_name(7));
        let o = w.render(7, "ns1", "r").unwrap();
        let typed: widget_api::Widget = serde_json::from_value(o).unwrap();
        let want = widget_api::Widget::numbered(7);
        assert_eq!(typed.spec, want.spec);
        assert_eq!(typed.metadata.name, want.metadata.name);
        assert_eq!(typed.metadata.namespace.as_deref(), Some("ns1"));
    }

    #[test]
    fn a_template_of_another_kind_is_refused() {
        let crd =
            serde_json::to_value(<widget_api::Widget as kube::CustomResourceExt>::crd()).unwrap();
        let e = Workload::new(
            None,
            crd,
            None,
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n".into(),
            ReadyRule::ObservedGeneration,
        )
        .unwrap_err();
        assert!(e.to_string().contains("the CRD serves Widget"), "{e}");
    }
}
