//! Unit tests of `reconcile` against a mocked API server: a kube `Client`
//! over `tower_test::mock::pair()`, and a scripted server that checks every
//! HTTP request a reconcile makes (method, path, query, body) and answers it.
//! Each scenario pins the exact request sequence of one preset's write path.

use std::sync::Arc;
use std::time::Duration;

use http::{Method, Request, Response, StatusCode};
use kube::client::Body;
use serde_json::{Value, json};
use widget_api::presets::{self, Flags};
use widget_api::{LAST_SEEN_ANNOTATION, Widget};

use crate::controller::{Context, Requeue, reconcile};
use crate::metrics::Metrics;

type Handle = tower_test::mock::Handle<Request<Body>, Response<Body>>;

const NS: &str = "default";
const OBJ: &str = "/apis/benchmark.example.com/v1alpha1/namespaces/default/widgets/widget-000001";

/// The widget as the cache holds it, at `resource_version`.
fn widget(resource_version: &str) -> Widget {
    let mut w = Widget::numbered(1);
    w.metadata.namespace = Some(NS.into());
    w.metadata.resource_version = Some(resource_version.into());
    w.metadata.generation = Some(1);
    w
}

fn ok(v: &Value) -> Response<Body> {
    Response::builder()
        .status(StatusCode::OK)
        .header("content-type", "application/json")
        .body(Body::from(serde_json::to_vec(v).unwrap()))
        .unwrap()
}

fn conflict() -> Response<Body> {
    let status = json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "Operation cannot be fulfilled on widgets.benchmark.example.com \"widget-000001\": the object has been modified",
        "reason": "Conflict", "code": 409
    });
    Response::builder()
        .status(StatusCode::CONFLICT)
        .header("content-type", "application/json")
        .body(Body::from(serde_json::to_vec(&status).unwrap()))
        .unwrap()
}

/// A request as the server saw it.
struct Seen {
    method: Method,
    path: String,
    query: String,
    content_type: String,
    accept: String,
    body: Value,
}

/// Settings for a preset (and overrides), with no simulated work.
fn settings(preset: &str, f: Flags) -> presets::Settings {
    presets::resolve(&Flags {
        namespace: NS.into(),
        preset: Some(preset.into()),
        work_ms: Some(0),
        ..f
    })
    .unwrap()
}

/// A scripted API server: takes the next request, records it, answers with `reply(&seen)`.
struct Server {
    handle: Handle,
}

impl Server {
    async fn exchange(&mut self, reply: impl FnOnce(&Seen) -> Response<Body>) -> Seen {
        let (req, send) = tokio::time::timeout(Duration::from_secs(5), self.handle.next_request())
            .await
            .expect("the reconcile made no further request")
            .expect("the client is gone");
        let (parts, body) = req.into_parts();
        let bytes = body.collect_bytes().await.unwrap();
        let seen = Seen {
            method: parts.method,
            path: parts.uri.path().to_string(),
            query: parts.uri.query().unwrap_or_default().to_string(),
            content_type: parts
                .headers
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_string(),
            accept: parts
                .headers
                .get("accept")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_string(),
            body: if bytes.is_empty() {
                Value::Null
            } else {
                serde_json::from_slice(&bytes).unwrap()
            },
        };
        send.send_response(reply(&seen));
        seen
    }

    /// Fails if the reconcile sends anything more.
    async fn expect_no_more(&mut self) {
        let more =
            tokio::time::timeout(Duration::from_millis(100), self.handle.next_request()).await;
        if let Ok(Some((req, _))) = more {
            panic!("unexpected request {} {}", req.method(), req.uri());
        }
    }
}

/// Runs one reconcile of `obj` under `settings` while `script` plays the API server.
async fn run<F, Fut>(settings: presets::Settings, obj: Widget, script: F) -> Result<(), String>
where
    F: FnOnce(Server) -> Fut,
    Fut: Future<Output = Server> + Send + 'static,
{
    run_with_requeues(settings, obj, script).await.0
}

/// [`run`], also returning the requeues the reconcile asked for.
async fn run_with_requeues<F, Fut>(
    settings: presets::Settings,
    obj: Widget,
    script: F,
) -> (Result<(), String>, Vec<Requeue>)
where
    F: FnOnce(Server) -> Fut,
    Fut: Future<Output = Server> + Send + 'static,
{
    let (service, handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    let client = kube::Client::new(service, NS);
    let metrics = Arc::new(Metrics::new(settings.workers));
    let (ctx, mut requeues) = Context::new(client.clone(), client, settings, metrics);
    let server = tokio::spawn(script(Server { handle }));
    let res = tokio::time::timeout(
        Duration::from_secs(10),
        reconcile(Arc::new(obj), Arc::new(ctx)),
    )
    .await
    .expect("reconcile hung");
    let mut server = server.await.expect("the scripted server failed");
    server.expect_no_more().await;
    let mut asked = Vec::new();
    while let Ok(r) = requeues.try_recv() {
        asked.push(r);
    }
    (res.map(|_| ()).map_err(|e| e.to_string()), asked)
}

#[tokio::test]
async fn good_puts_status_once_with_resource_version() {
    let res = run(
        settings("good", Flags::default()),
        widget("7"),
        |mut s| async move {
            let put = s.exchange(|seen| ok(&seen.body)).await;
            assert_eq!(
                (put.method, put.path.as_str()),
                (Method::PUT, &*format!("{OBJ}/status"))
            );
            assert_eq!(put.body["metadata"]["resourceVersion"], "7");
            assert_eq!(put.body["status"]["phase"], "Ready");
            assert_eq!(put.body["status"]["processedCount"], 1);
            assert!(put.body["metadata"]["annotations"][LAST_SEEN_ANNOTATION].is_null());
            s
        },
    )
    .await;
    assert_eq!(res, Ok(()));
}

#[tokio::test]
async fn good_patch_merges_status_without_resource_version() {
    let res = run(
        settings("good-patch", Flags::default()),
        widget("7"),
        |mut s| async move {
            let patch = s
                .exchange(|_| ok(&serde_json::to_value(widget("8")).unwrap()))
                .await;
            assert_eq!(
                (patch.method, patch.path.as_str()),
                (Method::PATCH, &*format!("{OBJ}/status"))
            );
            assert_eq!(patch.content_type, "application/merge-patch+json");
            assert_eq!(patch.body["status"]["phase"], "Ready");
            assert!(patch.body.get("metadata").is_none(), "{}", patch.body);
            s
        },
    )
    .await;
    assert_eq!(res, Ok(()));
}

#[tokio::test]
async fn good_retries_a_conflict_after_rereading_from_the_api() {
    let res = run(
        settings("good", Flags::default()),
        widget("7"),
        |mut s| async move {
            let first = s.exchange(|_| conflict()).await;
            assert_eq!(
                (first.method, first.path.as_str()),
                (Method::PUT, &*format!("{OBJ}/status"))
            );
            assert_eq!(first.body["metadata"]["resourceVersion"], "7");
            let get = s
                .exchange(|_| ok(&serde_json::to_value(widget("9")).unwrap()))
                .await;
            assert_eq!((get.method, get.path.as_str()), (Method::GET, OBJ));
            let second = s.exchange(|seen| ok(&seen.body)).await;
            assert_eq!(
                (second.method, second.path.as_str()),
                (Method::PUT, &*format!("{OBJ}/status"))
            );
            assert_eq!(second.body["metadata"]["resourceVersion"], "9");
            assert_eq!(second.body["status"]["phase"], "Ready");
            s
        },
    )
    .await;
    assert_eq!(res, Ok(()));
}

#[tokio::test]
async fn bad_fix_returns_a_conflict_without_retrying() {
    // bad-fix with --annotate=false: the table's conflict_retry (false) still rules.
    let s = settings(
        "bad-fix",
        Flags {
            annotate: Some(false),
            ..Flags::default()
        },
    );
    assert!(!s.conflict_retry);
    let res = run(s, widget("7"), |mut s| async move {
        let put = s.exchange(|_| conflict()).await;
        assert_eq!(
            (put.method, put.path.as_str()),
            (Method::PUT, &*format!("{OBJ}/status"))
        );
        s
    })
    .await;
    assert!(res.unwrap_err().contains("modified"));
}

#[tokio::test]
async fn bad_fix_stamps_the_annotation_then_updates_status() {
    let res = run(
        settings("bad-fix", Flags::default()),
        widget("7"),
        |mut s| async move {
            let stamp = s
                .exchange(|seen| {
                    let mut v = seen.body.clone();
                    v["metadata"]["resourceVersion"] = json!("8");
                    ok(&v)
                })
                .await;
            assert_eq!((stamp.method, stamp.path.as_str()), (Method::PUT, OBJ));
            assert_eq!(stamp.body["metadata"]["resourceVersion"], "7");
            assert!(stamp.body["metadata"]["annotations"][LAST_SEEN_ANNOTATION].is_string());
            let status = s.exchange(|seen| ok(&seen.body)).await;
            assert_eq!(
                (status.method, status.path.as_str()),
                (Method::PUT, &*format!("{OBJ}/status"))
            );
            assert_eq!(status.body["metadata"]["resourceVersion"], "8");
            s
        },
    )
    .await;
    assert_eq!(res, Ok(()));
}

#[tokio::test]
async fn bad_puts_the_main_resource_with_annotation_and_status() {
    let res = run(
        settings("bad", Flags::default()),
        widget("7"),
        |mut s| async move {
            let put = s.exchange(|seen| ok(&seen.body)).await;
            assert_eq!((put.method, put.path.as_str()), (Method::PUT, OBJ));
            assert_eq!(put.body["metadata"]["resourceVersion"], "7");
            let stamp = put.body["metadata"]["annotations"][LAST_SEEN_ANNOTATION]
                .as_str()
                .expect("annotation stamped");
            assert!(stamp.parse::<u128>().is_ok(), "unix nanos: {stamp}");
            assert_eq!(put.body["status"]["phase"], "Ready");
            s
        },
    )
    .await;
    assert_eq!(res, Ok(()));
}

#[tokio::test]
async fn apply_patches_status_server_side_with_force() {
    let s = settings(
        "good",
        Flags {
            status_write: Some(presets::StatusWrite::Apply),
            ..Flags::default()
        },
    );
    let res = run(s, widget("7"), |mut s| async move {
        let apply = s
            .exchange(|_| ok(&serde_json::to_value(widget("8")).unwrap()))
            .await;
        assert_eq!(
            (apply.method, apply.path.as_str()),
            (Method::PATCH, &*format!("{OBJ}/status"))
        );
        assert_eq!(apply.content_type, "application/apply-patch+yaml");
        assert!(
            apply.query.contains("fieldManager=widget-controller"),
            "{}",
            apply.query
        );
        assert!(apply.query.contains("force=true"), "{}", apply.query);
        assert_eq!(apply.body["kind"], "Widget");
        assert!(apply.body.get("spec").is_none());
        s
    })
    .await;
    assert_eq!(res, Ok(()));
}

#[tokio::test]
async fn deleted_objects_make_no_request() {
    let mut w = widget("7");
    w.metadata.deletion_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
        k8s_openapi::jiff::Timestamp::now(),
    ));
    let res = run(settings("good", Flags::default()), w, |s| async move { s }).await;
    assert_eq!(res, Ok(()));
}

/// The widget as a Ready status write left it.
fn ready_widget(resource_version: &str) -> Widget {
    let mut w = widget(resource_version);
    w.status = Some(widget_api::WidgetStatus {
        phase: Some(widget_api::READY.into()),
        processed_count: Some(w.spec.count),
        last_updated: Some("2026-01-01T00:00:00Z".into()),
    });
    w
}

fn put_status_ok(seen: &Seen, rv: &str) {
    assert_eq!(
        (&seen.method, seen.path.as_str()),
        (&Method::PUT, &*format!("{OBJ}/status"))
    );
    assert_eq!(seen.body["metadata"]["resourceVersion"], rv);
    assert_eq!(seen.body["status"]["phase"], "Ready");
}

#[tokio::test]
async fn uncached_read_gets_the_object_before_writing() {
    let res = run(
        settings("uncached-read", Flags::default()),
        widget("7"),
        |mut s| async move {
            let get = s
                .exchange(|_| ok(&serde_json::to_value(widget("9")).unwrap()))
                .await;
            assert_eq!((get.method, get.path.as_str()), (Method::GET, OBJ));
            let put = s.exchange(|seen| ok(&seen.body)).await;
            // The write uses what the GET returned, not the cached object.
            put_status_ok(&put, "9");
            s
        },
    )
    .await;
    assert_eq!(res, Ok(()));
}

#[tokio::test]
async fn metadata_only_gets_the_full_object() {
    // The cache holds metadata and an empty spec; the GET brings the spec.
    let mut cached = widget("7");
    cached.spec.count = 0;
    let res = run(
        settings("metadata-only", Flags::default()),
        cached,
        |mut s| async move {
            let get = s
                .exchange(|_| ok(&serde_json::to_value(widget("7")).unwrap()))
                .await;
            assert_eq!((get.method, get.path.as_str()), (Method::GET, OBJ));
            let put = s.exchange(|seen| ok(&seen.body)).await;
            put_status_ok(&put, "7");
            assert_eq!(put.body["status"]["processedCount"], 1);
            s
        },
    )
    .await;
    assert_eq!(res, Ok(()));
}

#[tokio::test]
async fn list_in_reconcile_lists_the_namespace() {
    let res = run(
        settings("list-in-reconcile", Flags::default()),
        widget("7"),
        |mut s| async move {
            let list = s
                .exchange(|_| {
                    ok(&json!({
                        "apiVersion": "benchmark.example.com/v1alpha1", "kind": "WidgetList",
                        "metadata": {"resourceVersion": "7"},
                        "items": [serde_json::to_value(widget("7")).unwrap()],
                    }))
                })
                .await;
            assert_eq!(
                (list.method, list.path.as_str()),
                (
                    Method::GET,
                    "/apis/benchmark.example.com/v1alpha1/namespaces/default/widgets"
                )
            );
            let put = s.exchange(|seen| ok(&seen.body)).await;
            put_status_ok(&put, "7");
            s
        },
    )
    .await;
    assert_eq!(res, Ok(()));
}

#[tokio::test]
async fn requeue_after_asks_for_a_requeue_in_a_second() {
    let (res, requeues) = run_with_requeues(
        settings("requeue-after", Flags::default()),
        ready_widget("7"),
        |mut s| async move {
            let put = s.exchange(|seen| ok(&seen.body)).await;
            put_status_ok(&put, "7");
            s
        },
    )
    .await;
    assert_eq!(res, Ok(()));
    assert_eq!(requeues.len(), 1);
    let (obj, delay, rate_limited) = &requeues[0];
    assert_eq!(obj.name, "widget-000001");
    assert_eq!(*delay, Duration::from_secs(1));
    assert!(
        !rate_limited,
        "RequeueAfter bypasses the retry rate limiter"
    );
    // The good preset asks for none.
    let (_, requeues) = run_with_requeues(
        settings("good", Flags::default()),
        widget("7"),
        |mut s| async move {
            s.exchange(|seen| ok(&seen.body)).await;
            s
        },
    )
    .await;
    assert!(requeues.is_empty());
}

#[tokio::test]
async fn unconditional_status_writes_an_unchanged_status() {
    let res = run(
        settings("unconditional-status", Flags::default()),
        ready_widget("7"),
        |mut s| async move {
            let put = s.exchange(|seen| ok(&seen.body)).await;
            put_status_ok(&put, "7");
            assert_ne!(put.body["status"]["lastUpdated"], "2026-01-01T00:00:00Z");
            s
        },
    )
    .await;
    assert_eq!(res, Ok(()));
}

#[tokio::test]
async fn conditional_status_skips_an_unchanged_status() {
    let res = run(
        settings("conditional-status", Flags::default()),
        ready_widget("7"),
        |s| async move { s },
    )
    .await;
    assert_eq!(res, Ok(()));
    // A changed spec is still written.
    let mut w = ready_widget("7");
    w.spec.count = 5;
    let res = run(
        settings("conditional-status", Flags::default()),
        w,
        |mut s| async move {
            let put = s.exchange(|seen| ok(&seen.body)).await;
            put_status_ok(&put, "7");
            assert_eq!(put.body["status"]["processedCount"], 5);
            s
        },
    )
    .await;
    assert_eq!(res, Ok(()));
}

#[tokio::test]
async fn finalizer_is_added_then_removed_on_deletion() {
    let res = run(
        settings("finalizer", Flags::default()),
        widget("7"),
        |mut s| async move {
            let add = s
                .exchange(|seen| {
                    let mut v = seen.body.clone();
                    v["metadata"]["resourceVersion"] = json!("8");
                    ok(&v)
                })
                .await;
            assert_eq!((add.method, add.path.as_str()), (Method::PUT, OBJ));
            assert_eq!(add.body["metadata"]["resourceVersion"], "7");
            assert_eq!(
                add.body["metadata"]["finalizers"],
                json!([presets::FINALIZER])
            );
            let put = s.exchange(|seen| ok(&seen.body)).await;
            put_status_ok(&put, "8");
            s
        },
    )
    .await;
    assert_eq!(res, Ok(()));

    // Already carrying it: no second add.
    let mut w = widget("8");
    w.metadata.finalizers = Some(vec![presets::FINALIZER.into()]);
    let res = run(
        settings("finalizer", Flags::default()),
        w.clone(),
        |mut s| async move {
            let put = s.exchange(|seen| ok(&seen.body)).await;
            put_status_ok(&put, "8");
            s
        },
    )
    .await;
    assert_eq!(res, Ok(()));

    // Being deleted: one object Update that drops it, no status write.
    w.metadata.finalizers = Some(vec!["other/keep".into(), presets::FINALIZER.into()]);
    w.metadata.deletion_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
        k8s_openapi::jiff::Timestamp::now(),
    ));
    let res = run(
        settings("finalizer", Flags::default()),
        w,
        |mut s| async move {
            let rm = s.exchange(|seen| ok(&seen.body)).await;
            assert_eq!((rm.method, rm.path.as_str()), (Method::PUT, OBJ));
            assert_eq!(rm.body["metadata"]["finalizers"], json!(["other/keep"]));
            s
        },
    )
    .await;
    assert_eq!(res, Ok(()));
}

/// The informer's first request: the LIST (or metadata LIST) of what it caches.
async fn first_informer_request(preset: &str) -> Seen {
    let (service, handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    let client = kube::Client::new(service, NS);
    let s = settings(preset, Flags::default());
    let metrics = Arc::new(Metrics::new(s.workers));
    let (fatal, _fatal_rx) = tokio::sync::mpsc::unbounded_channel();
    let clients = crate::controller::Clients {
        informer: client.clone(),
        client: client.clone(),
        api_reader: client,
    };
    let ctl = tokio::spawn(crate::controller::run(
        clients,
        s,
        metrics,
        fatal,
        std::future::pending(),
    ));
    let mut server = Server { handle };
    let seen = server
        .exchange(|_| {
            Response::builder()
                .status(StatusCode::SERVICE_UNAVAILABLE)
                .body(Body::empty())
                .unwrap()
        })
        .await;
    ctl.abort();
    seen
}

#[tokio::test]
async fn the_informer_watches_what_the_cache_setting_says() {
    let ns = first_informer_request("good").await;
    assert_eq!(
        ns.path,
        "/apis/benchmark.example.com/v1alpha1/namespaces/default/widgets"
    );
    assert!(
        !ns.accept.contains("PartialObjectMetadata"),
        "{}",
        ns.accept
    );
    let all = first_informer_request("cache-cluster-wide").await;
    assert_eq!(all.path, "/apis/benchmark.example.com/v1alpha1/widgets");
    let meta = first_informer_request("metadata-only").await;
    assert_eq!(
        meta.path,
        "/apis/benchmark.example.com/v1alpha1/namespaces/default/widgets"
    );
    assert!(
        meta.accept.contains("as=PartialObjectMetadataList"),
        "{}",
        meta.accept
    );
}
