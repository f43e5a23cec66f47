//! `audit.csv`: the apiserver's own record of every write of the workload's
//! kind (Widgets unless a `[workload]` names another) in a run's namespace,
//! from its audit log (local plane with the audit log on). The
//! apiserver's metrics name no caller; each audit event names the
//! ServiceAccount that sent the request and when the apiserver received and
//! completed it, so server-side latency and write counts become per variant
//! even when variants share the apiserver.

use std::path::Path;

use anyhow::Result;
use serde::{Deserialize, Serialize};

pub const FILE_NAME: &str = "audit.csv";

/// One completed write of the workload's kind.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AuditRecord {
    /// requestReceivedTimestamp (RFC 3339, microseconds).
    pub received_at: String,
    /// create, update or patch.
    pub verb: String,
    /// "status" for the status subresource, empty for the object.
    pub subresource: String,
    pub name: String,
    /// The caller, e.g. system:serviceaccount:<ns>:<sa>.
    pub user: String,
    pub code: u16,
    /// stageTimestamp − requestReceivedTimestamp: the apiserver's time.
    pub latency_s: f64,
}

impl AuditRecord {
    /// Writes to existing objects (what controllers send; creates are the loader's).
    pub fn is_update(&self) -> bool {
        matches!(self.verb.as_str(), "update" | "patch")
    }
}

/// The parts of an audit event (audit.k8s.io/v1 Event, JSON lines) we keep.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Event {
    stage: String,
    verb: String,
    #[serde(default)]
    user: User,
    object_ref: Option<ObjectRef>,
    response_status: Option<Status>,
    request_received_timestamp: String,
    stage_timestamp: String,
}

#[derive(Default, Deserialize)]
struct User {
    #[serde(default)]
    username: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ObjectRef {
    #[serde(default)]
    api_group: String,
    #[serde(default)]
    resource: String,
    #[serde(default)]
    namespace: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    subresource: String,
}

#[derive(Deserialize)]
struct Status {
    #[serde(default)]
    code: u16,
}

/// The namespace and record of one audit log line when it is a completed
/// request on a namespaced object of `kind` (API group, plural resource);
/// None for anything else (other kinds, other stages, a torn line).
pub fn from_log_line(line: &str, kind: (&str, &str)) -> Option<(String, AuditRecord)> {
    let e: Event = serde_json::from_str(line).ok()?;
    let o = e.object_ref?;
    if e.stage != "ResponseComplete"
        || o.namespace.is_empty()
        || (o.api_group.as_str(), o.resource.as_str()) != kind
    {
        return None;
    }
    // Microsecond timestamps: subtract at full precision.
    let t = |s: &str| s.parse::<jiff::Timestamp>().ok();
    let latency = (t(&e.stage_timestamp)?.as_microsecond()
        - t(&e.request_received_timestamp)?.as_microsecond()) as f64
        / 1e6;
    Some((
        o.namespace,
        AuditRecord {
            received_at: e.request_received_timestamp,
            verb: e.verb,
            subresource: o.subresource,
            name: o.name,
            user: e.user.username,
            code: e.response_status.map_or(0, |s| s.code),
            latency_s: latency.max(0.0),
        },
    ))
}

pub fn write(path: &Path, rows: &[AuditRecord]) -> Result<()> {
    crate::rows::write(
        path,
        &[
            "received_at",
            "verb",
            "subresource",
            "name",
            "user",
            "code",
            "latency_s",
        ],
        rows,
    )
}

/// None when the file does not exist (no audit log for this run).
pub fn read(path: &Path) -> Result<Option<Vec<AuditRecord>>> {
    crate::rows::read(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = r#"{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a","stage":"ResponseComplete","requestURI":"/apis/benchmark.example.com/v1alpha1/namespaces/ns1/widgets/widget-000001/status","verb":"update","user":{"username":"system:serviceaccount:ns1:widget-controller","groups":["system:serviceaccounts"]},"sourceIPs":["127.0.0.1"],"userAgent":"kube-rs","objectRef":{"resource":"widgets","namespace":"ns1","name":"widget-000001","apiGroup":"benchmark.example.com","apiVersion":"v1alpha1","subresource":"status"},"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"2026-11-30T08:00:00.100000Z","stageTimestamp":"2026-11-30T08:00:00.112500Z"}"#;

    const WIDGETS: (&str, &str) = ("benchmark.example.com", "widgets");

    #[test]
    fn a_completed_write_becomes_a_record() {
        let (ns, r) = from_log_line(LINE, WIDGETS).unwrap();
        assert_eq!(ns, "ns1");
        assert_eq!(
            (r.verb.as_str(), r.subresource.as_str(), r.code),
            ("update", "status", 200)
        );
        assert_eq!(r.user, "system:serviceaccount:ns1:widget-controller");
        assert!((r.latency_s - 0.0125).abs() < 1e-9, "{}", r.latency_s);
        assert!(r.is_update());
        let other_stage = LINE.replace("ResponseComplete", "ResponseStarted");
        assert_eq!(from_log_line(&other_stage, WIDGETS), None);
        assert_eq!(from_log_line(&LINE[..LINE.len() / 2], WIDGETS), None);
    }

    #[test]
    fn only_the_workloads_kind_is_kept() {
        let configmap = LINE
            .replace(r#""apiGroup":"benchmark.example.com","#, "")
            .replace(r#""resource":"widgets""#, r#""resource":"configmaps""#);
        assert_eq!(from_log_line(&configmap, WIDGETS), None);
        let (ns, r) = from_log_line(&configmap, ("", "configmaps")).unwrap();
        assert_eq!((ns.as_str(), r.name.as_str()), ("ns1", "widget-000001"));
        assert_eq!(from_log_line(LINE, ("", "configmaps")), None);
    }

    #[test]
    fn round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(FILE_NAME);
        assert_eq!(read(&p).unwrap(), None);
        let rows = vec![from_log_line(LINE, WIDGETS).unwrap().1];
        write(&p, &rows).unwrap();
        assert_eq!(read(&p).unwrap(), Some(rows));
        write(&p, &[]).unwrap();
        assert_eq!(read(&p).unwrap(), Some(vec![]));
    }
}
