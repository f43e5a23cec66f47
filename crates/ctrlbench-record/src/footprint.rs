//! `footprint.csv`: every request a run's controller sent to the apiserver,
//! counted by phase × verb × resource × subresource × response code, with
//! whether a list or watch was namespaced and whether it had a selector.
//! It comes from the apiserver's audit log (local plane with the log on),
//! the one source that names each request's caller, so the counts are this
//! run's controller's alone: its ServiceAccount sends them, whatever else
//! runs beside it. A watch is counted when it starts (the audit log's
//! ResponseStarted stage), every other request when it completes.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Result;
use serde::{Deserialize, Serialize};

pub const FILE_NAME: &str = "footprint.csv";

/// The phase of a request: "start" until the controller's first write of
/// one of the run's objects (its start-up: informers' lists and watches,
/// leader election), "create" from then until every object was first
/// ready, "settled" after that within the create phase, "phase-K" during
/// the experiment's K-th `[[phase]]`.
pub const START: &str = "start";
pub const CREATE: &str = "create";
pub const SETTLED: &str = "settled";

/// One kind of request and how many there were.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FootprintRow {
    pub phase: String,
    /// The audit log's verb: get, list, watch, create, update, patch,
    /// delete, deletecollection.
    pub verb: String,
    /// The API group ("" for the core group).
    pub group: String,
    pub resource: String,
    /// "status", "finalize" … or empty for the object itself.
    pub subresource: String,
    pub code: u16,
    /// The request named a namespace (a list or watch without one reads
    /// every namespace).
    pub namespaced: bool,
    /// "label", "field", "label+field", or empty: the list or watch's selectors.
    pub selector: String,
    /// The request named the workload's own kind (the objects the run
    /// creates), not a child object or anything else.
    #[serde(default)]
    pub workload: bool,
    pub count: u64,
    /// The apiserver's time for them, summed (0 for watches).
    pub latency_s_sum: f64,
    /// A watch that asked to start from a resourceVersion the client had
    /// already seen: an informer's watch after its list, or its watch
    /// re-opened after the apiserver closed the last one. False for a watch
    /// from now (no version, or "0"), a streaming list
    /// (sendInitialEvents), and every other verb.
    #[serde(default)]
    pub from_version: bool,
}

impl FootprintRow {
    pub fn is_write(&self) -> bool {
        matches!(
            self.verb.as_str(),
            "create" | "update" | "patch" | "delete" | "deletecollection"
        )
    }

    /// `group/resource[/subresource]`, as a reader names it ("widgets/status",
    /// "apps/deployments").
    pub fn target(&self) -> String {
        let mut s = if self.group.is_empty() {
            self.resource.clone()
        } else {
            format!("{}/{}", self.group, self.resource)
        };
        if !self.subresource.is_empty() {
            s.push('/');
            s.push_str(&self.subresource);
        }
        s
    }
}

/// One request of the audit log, before it is given a phase.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    pub user: String,
    /// requestReceivedTimestamp, microseconds since the epoch.
    pub received_us: i64,
    pub row: FootprintRow,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Event {
    stage: String,
    verb: String,
    #[serde(default)]
    request_u_r_i: String,
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
    subresource: String,
}

#[derive(Deserialize)]
struct Status {
    #[serde(default)]
    code: u16,
}

/// The request one audit log line records, if its caller's name starts
/// with `user_prefix`: a watch at its start, anything else when complete;
/// `kind` is the workload's (API group, plural resource). None for other
/// callers, other stages and torn lines.
pub fn from_log_line(line: &str, user_prefix: &str, kind: (&str, &str)) -> Option<Request> {
    // Most lines are someone else's: look before parsing.
    if !line.contains(user_prefix) {
        return None;
    }
    let e: Event = serde_json::from_str(line).ok()?;
    if !e.user.username.starts_with(user_prefix) {
        return None;
    }
    let counted = match e.verb.as_str() {
        "watch" => e.stage == "ResponseStarted",
        _ => e.stage == "ResponseComplete",
    };
    if !counted {
        return None;
    }
    let t = |s: &str| {
        s.parse::<jiff::Timestamp>()
            .ok()
            .map(|t| t.as_microsecond())
    };
    let received = t(&e.request_received_timestamp)?;
    let latency = if e.verb == "watch" {
        0.0
    } else {
        ((t(&e.stage_timestamp)? - received) as f64 / 1e6).max(0.0)
    };
    let o = e.object_ref?;
    let query = e.request_u_r_i.split_once('?').map_or("", |q| q.1);
    let has = |key: &str| {
        query
            .split('&')
            .any(|p| p.starts_with(key) && p.len() > key.len())
    };
    let selector = match (has("labelSelector="), has("fieldSelector=")) {
        (true, true) => "label+field",
        (true, false) => "label",
        (false, true) => "field",
        (false, false) => "",
    };
    let workload = (o.api_group.as_str(), o.resource.as_str()) == kind;
    let from_version = e.verb == "watch"
        && !query.split('&').any(|p| p == "sendInitialEvents=true")
        && query
            .split('&')
            .filter_map(|p| p.strip_prefix("resourceVersion="))
            .any(|v| !v.is_empty() && v != "0");
    Some(Request {
        user: e.user.username,
        received_us: received,
        row: FootprintRow {
            phase: String::new(),
            verb: e.verb,
            group: o.api_group,
            resource: o.resource,
            subresource: o.subresource,
            code: e.response_status.map_or(0, |s| s.code),
            namespaced: !o.namespace.is_empty(),
            selector: selector.into(),
            workload,
            count: 1,
            latency_s_sum: latency,
            from_version,
        },
    })
}

/// A row's identity: phase, verb, group, resource, subresource, code,
/// namespaced, selector, from_version (the workload flag follows from group
/// and resource).
type Key = (
    String,
    String,
    String,
    String,
    String,
    u16,
    bool,
    String,
    bool,
);

/// Adds up requests into one row per phase and kind of request.
#[derive(Default)]
pub struct Tally {
    rows: BTreeMap<Key, FootprintRow>,
}

impl Tally {
    pub fn add(&mut self, phase: &str, r: &FootprintRow) {
        let key = (
            phase.to_string(),
            r.verb.clone(),
            r.group.clone(),
            r.resource.clone(),
            r.subresource.clone(),
            r.code,
            r.namespaced,
            r.selector.clone(),
            r.from_version,
        );
        let e = self.rows.entry(key).or_insert_with(|| FootprintRow {
            phase: phase.to_string(),
            count: 0,
            latency_s_sum: 0.0,
            ..r.clone()
        });
        e.count += r.count;
        e.latency_s_sum += r.latency_s_sum;
    }

    pub fn rows(self) -> Vec<FootprintRow> {
        self.rows.into_values().collect()
    }
}

pub fn write(path: &Path, rows: &[FootprintRow]) -> Result<()> {
    crate::rows::write(
        path,
        &[
            "phase",
            "verb",
            "group",
            "resource",
            "subresource",
            "code",
            "namespaced",
            "selector",
            "workload",
            "count",
            "latency_s_sum",
            "from_version",
        ],
        rows,
    )
}

/// None when the file does not exist (no audit log for this run).
pub fn read(path: &Path) -> Result<Option<Vec<FootprintRow>>> {
    crate::rows::read(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SA: &str = "system:serviceaccount:ns1:";
    const W: (&str, &str) = ("benchmark.example.com", "widgets");

    fn line(stage: &str, verb: &str, uri: &str, object_ref: &str, code: u16) -> String {
        format!(
            r#"{{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","stage":"{stage}","requestURI":"{uri}","verb":"{verb}","user":{{"username":"system:serviceaccount:ns1:ctl"}},"objectRef":{object_ref},"responseStatus":{{"code":{code}}},"requestReceivedTimestamp":"2026-11-30T08:00:00.100000Z","stageTimestamp":"2026-11-30T08:00:00.112500Z"}}"#
        )
    }

    #[test]
    fn requests_of_the_callers_identity_become_rows() {
        let get = line(
            "ResponseComplete",
            "get",
            "/apis/benchmark.example.com/v1alpha1/namespaces/ns1/widgets/w-1",
            r#"{"resource":"widgets","namespace":"ns1","name":"w-1","apiGroup":"benchmark.example.com"}"#,
            200,
        );
        let r = from_log_line(&get, SA, W).unwrap();
        assert_eq!(r.row.target(), "benchmark.example.com/widgets");
        assert!(r.row.workload);
        assert!(r.row.namespaced && r.row.selector.is_empty());
        assert!((r.row.latency_s_sum - 0.0125).abs() < 1e-9);
        assert_eq!(from_log_line(&get, "system:serviceaccount:ns2:", W), None);
        // A cluster-wide watch with a label selector, counted at its start only.
        let watch = |stage| {
            line(
                stage,
                "watch",
                "/api/v1/secrets?labelSelector=a%3Db&watch=true",
                r#"{"resource":"secrets","apiVersion":"v1"}"#,
                200,
            )
        };
        let w = from_log_line(&watch("ResponseStarted"), SA, W).unwrap();
        assert_eq!(
            (
                w.row.target().as_str(),
                w.row.namespaced,
                w.row.selector.as_str()
            ),
            ("secrets", false, "label")
        );
        assert!(!w.row.workload);
        assert_eq!(w.row.latency_s_sum, 0.0);
        assert!(!w.row.from_version);
        assert_eq!(from_log_line(&watch("ResponseComplete"), SA, W), None);
        // Which watches start from a version the client had seen: client-go's
        // and kube-rs's informers after a list or a closed watch, not a watch
        // from now or a streaming list.
        for (query, from_version) in [
            ("watch=true&resourceVersion=2284&timeoutSeconds=429", true),
            ("&watch=true&timeoutSeconds=290&resourceVersion=1829", true),
            ("watch=true&resourceVersion=0", false),
            ("watch=true&resourceVersion=", false),
            (
                "resourceVersion=12&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&watch=true",
                false,
            ),
        ] {
            let l = line(
                "ResponseStarted",
                "watch",
                &format!("/apis/x/v1/widgets?{query}"),
                r#"{"resource":"widgets","apiGroup":"x"}"#,
                200,
            );
            let w = from_log_line(&l, SA, W).unwrap();
            assert_eq!(w.row.from_version, from_version, "{query}");
        }
        let list = line(
            "ResponseComplete",
            "list",
            "/apis/x/v1/widgets?resourceVersion=5",
            r#"{"resource":"widgets","apiGroup":"x"}"#,
            200,
        );
        assert!(!from_log_line(&list, SA, W).unwrap().row.from_version);
        // A conflict on a status update.
        let conflict = line(
            "ResponseComplete",
            "update",
            "/apis/x/v1/namespaces/ns1/widgets/w-1/status",
            r#"{"resource":"widgets","namespace":"ns1","apiGroup":"x","subresource":"status"}"#,
            409,
        );
        let c = from_log_line(&conflict, SA, W).unwrap();
        assert_eq!(
            (c.row.target().as_str(), c.row.code),
            ("x/widgets/status", 409)
        );
        assert!(c.row.is_write());
    }

    #[test]
    fn a_tally_adds_up_by_phase_and_kind_and_round_trips() {
        let row = |verb: &str, n: u64| FootprintRow {
            verb: verb.into(),
            resource: "widgets".into(),
            code: 200,
            namespaced: true,
            count: n,
            latency_s_sum: 0.5 * n as f64,
            ..Default::default()
        };
        let mut t = Tally::default();
        t.add(CREATE, &row("get", 1));
        t.add(CREATE, &row("get", 2));
        t.add(SETTLED, &row("get", 1));
        t.add(CREATE, &row("list", 1));
        let rows = t.rows();
        assert_eq!(rows.len(), 3);
        let get = rows
            .iter()
            .find(|r| r.phase == CREATE && r.verb == "get")
            .unwrap();
        assert_eq!((get.count, get.latency_s_sum), (3, 1.5));
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(FILE_NAME);
        assert_eq!(read(&p).unwrap(), None);
        write(&p, &rows).unwrap();
        assert_eq!(read(&p).unwrap(), Some(rows));
        write(&p, &[]).unwrap();
        assert_eq!(read(&p).unwrap(), Some(vec![]));
    }
}
