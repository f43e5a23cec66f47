//! The reconcile loop: a (optionally generation-filtered) watch stream
//! feeding either kube-runtime's Controller (`--queue kube`) or our
//! client-go-style FIFO work queue and workers (`--queue fifo`), with the
//! write-up's reconcile and controller-runtime's default retry policy on errors:
//! the larger of a per-item exponential backoff and one overall token bucket.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use futures::{Stream, StreamExt, TryStreamExt};
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube::core::PartialObjectMeta;
use kube::runtime::controller::{Action, Config as ControllerConfig, Controller};
use kube::runtime::reflector::{self, ObjectRef};
use kube::runtime::{WatchStreamExt, predicates, watcher};
use serde_json::json;
use tokio::sync::mpsc;
use widget_api::{LAST_SEEN_ANNOTATION, READY, Widget, WidgetSpec, WidgetStatus};

use governor::DefaultDirectRateLimiter;
use widget_api::presets::{Cache, FINALIZER, Predicate, Queue, Read, StatusWrite, retry};

use crate::client::token_bucket;
use crate::flags::Settings;
use crate::metrics::{Metrics, Outcome};

/// client-go's default per-item backoff: 5 ms doubling per failure, capped at 1000 s.
const BACKOFF_BASE: Duration = Duration::from_millis(retry::BACKOFF_BASE_MS);
const BACKOFF_CAP: Duration = Duration::from_secs(retry::BACKOFF_CAP_S);
/// RetryOnConflict as the write-up used it: 5 tries, 10 ms apart.
const CONFLICT_TRIES: u32 = 5;
const CONFLICT_WAIT: Duration = Duration::from_millis(10);

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Kube(#[from] kube::Error),
}

/// The controller's REST clients, each with its own token bucket as in
/// controller-runtime: the informer's (its LISTs), the client's (reads and
/// writes) and the API reader's (conflict re-reads that bypass the cache).
pub struct Clients {
    pub informer: kube::Client,
    pub client: kube::Client,
    pub api_reader: kube::Client,
}

/// What every reconcile shares.
pub struct Context {
    pub client: kube::Client,
    /// Reads straight from the API server (controller-runtime's API reader).
    pub api_reader: kube::Client,
    pub settings: Settings,
    pub metrics: Arc<Metrics>,
    /// Failures per key since its last success (for the backoff).
    failures: Mutex<HashMap<String, u32>>,
    requeue: mpsc::UnboundedSender<Requeue>,
}

/// A requeue: the object, its delay, and whether it also waits for the
/// overall retry bucket (error retries do; requeue_after_ms does not, as
/// controller-runtime's AddAfter bypasses the rate limiter).
pub type Requeue = (ObjectRef<Widget>, Duration, bool);

impl Context {
    /// A context for `client`; the receiver yields the requeues `error_policy` asks for.
    pub fn new(
        client: kube::Client,
        api_reader: kube::Client,
        settings: Settings,
        metrics: Arc<Metrics>,
    ) -> (Context, mpsc::UnboundedReceiver<Requeue>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let ctx = Context {
            client,
            api_reader,
            settings,
            metrics,
            failures: Mutex::new(HashMap::new()),
            requeue: tx,
        };
        (ctx, rx)
    }
}

fn key(w: &Widget) -> String {
    format!(
        "{}/{}",
        w.metadata.namespace.as_deref().unwrap_or_default(),
        w.metadata.name.as_deref().unwrap_or_default()
    )
}

fn unix_nanos() -> String {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
        .to_string()
}

fn ready_status(w: &Widget) -> WidgetStatus {
    WidgetStatus {
        phase: Some(READY.to_string()),
        processed_count: Some(w.spec.count),
        last_updated: Some(
            k8s_openapi::jiff::Timestamp::now()
                .round(k8s_openapi::jiff::Unit::Second)
                .unwrap_or_else(|_| k8s_openapi::jiff::Timestamp::now())
                .to_string(),
        ),
    }
}

fn is_conflict(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 409)
}

/// One reconcile, wrapped in the work-queue and controller-runtime metrics.
pub async fn reconcile(obj: Arc<Widget>, ctx: Arc<Context>) -> Result<Action, Error> {
    let k = key(&obj);
    if let Some(waited) = ctx.metrics.queue.start(&k) {
        ctx.metrics.queue_duration.observe(waited);
    }
    ctx.metrics.record_start();
    let t0 = Instant::now();
    crate::logging::reconciling(
        &ctx.settings.namespace,
        obj.metadata.name.as_deref().unwrap_or_default(),
    );
    let res = reconcile_inner(&obj, &ctx).await;
    let requeue_after = Duration::from_millis(ctx.settings.requeue_after_ms);
    let outcome = match &res {
        Ok(()) if !requeue_after.is_zero() => Outcome::RequeueAfter,
        Ok(()) => Outcome::Success,
        Err(_) => Outcome::Error,
    };
    ctx.metrics.record_end(outcome, t0.elapsed().as_secs_f64());
    ctx.metrics.queue.done(&k);
    if res.is_ok() {
        ctx.failures.lock().expect("failures lock").remove(&k);
        if !requeue_after.is_zero() {
            // Through our own trigger (not Action::requeue) so that the
            // queue metrics count the add in both queues.
            let _ = ctx
                .requeue
                .send((ObjectRef::from(obj.as_ref()), requeue_after, false));
        }
    }
    res.map(|_| Action::await_change())
}

fn has_finalizer(w: &Widget) -> bool {
    w.metadata
        .finalizers
        .as_ref()
        .is_some_and(|f| f.iter().any(|f| f == FINALIZER))
}

/// status_if_changed: the stored status already says what we would write
/// (lastUpdated ignored).
fn status_unchanged(w: &Widget) -> bool {
    w.status.as_ref().is_some_and(|st| {
        st.phase.as_deref() == Some(READY) && st.processed_count == Some(w.spec.count)
    })
}

async fn reconcile_inner(obj: &Widget, ctx: &Context) -> Result<(), Error> {
    let s = &ctx.settings;
    let name = obj.metadata.name.as_deref().unwrap_or_default();
    let api: Api<Widget> = Api::namespaced(ctx.client.clone(), &s.namespace);
    let reader: Api<Widget> = Api::namespaced(ctx.api_reader.clone(), &s.namespace);
    // read = "api", or a metadata-only cache: the object comes from a GET.
    let fetched;
    let obj = if s.read == Read::Api || s.cache == Cache::Metadata {
        match reader.get_opt(name).await? {
            Some(w) => {
                fetched = w;
                &fetched
            }
            None => return Ok(()),
        }
    } else {
        obj
    };
    if obj.metadata.deletion_timestamp.is_some() {
        if s.finalizer && has_finalizer(obj) {
            let mut w = obj.clone();
            if let Some(f) = w.metadata.finalizers.as_mut() {
                f.retain(|f| f != FINALIZER);
            }
            api.replace(name, &PostParams::default(), &w).await?;
        }
        return Ok(());
    }
    if s.list_in_reconcile {
        reader.list(&ListParams::default()).await?;
    }
    // Go's time.Sleep(0) returns at once; tokio's sleep(0) waits for the
    // timer's next 1 ms tick, so zero work must not sleep at all.
    if s.work_ms > 0 {
        tokio::time::sleep(Duration::from_millis(s.work_ms)).await;
    }
    let mut current = obj.clone();
    if s.finalizer && !has_finalizer(&current) {
        current
            .metadata
            .finalizers
            .get_or_insert_with(Default::default)
            .push(FINALIZER.to_string());
        current = api.replace(name, &PostParams::default(), &current).await?;
    }
    if s.annotate && s.status_write != StatusWrite::Object {
        current
            .metadata
            .annotations
            .get_or_insert_with(Default::default)
            .insert(LAST_SEEN_ANNOTATION.to_string(), unix_nanos());
        current = api.replace(name, &PostParams::default(), &current).await?;
    }
    match s.status_write {
        StatusWrite::Update => {
            let mut attempt = 1;
            loop {
                if s.status_if_changed && status_unchanged(&current) {
                    return Ok(());
                }
                current.status = Some(ready_status(&current));
                match api
                    .replace_status(name, &PostParams::default(), &current)
                    .await
                {
                    Ok(_) => return Ok(()),
                    Err(e) if s.conflict_retry && is_conflict(&e) && attempt < CONFLICT_TRIES => {
                        attempt += 1;
                        tokio::time::sleep(CONFLICT_WAIT).await;
                        // Re-read from the API, not the cache: the cache may still be stale.
                        current = reader.get(name).await?;
                    }
                    Err(e) => return Err(e.into()),
                }
            }
        }
        StatusWrite::Patch | StatusWrite::Apply
            if s.status_if_changed && status_unchanged(&current) => {}
        StatusWrite::Patch => {
            let status = ready_status(&current);
            api.patch_status(
                name,
                &PatchParams::default(),
                &Patch::Merge(json!({ "status": status })),
            )
            .await?;
        }
        StatusWrite::Apply => {
            let status = ready_status(&current);
            let body = json!({
                "apiVersion": "benchmark.example.com/v1alpha1",
                "kind": "Widget",
                "status": status,
            });
            api.patch_status(
                name,
                &PatchParams::apply("widget-controller").force(),
                &Patch::Apply(body),
            )
            .await?;
        }
        StatusWrite::Object => {
            if s.annotate {
                current
                    .metadata
                    .annotations
                    .get_or_insert_with(Default::default)
                    .insert(LAST_SEEN_ANNOTATION.to_string(), unix_nanos());
            }
            current.status = Some(ready_status(&current));
            // The server keeps the stored status: this write never makes anything Ready.
            api.replace(name, &PostParams::default(), &current).await?;
        }
    }
    Ok(())
}

/// controller-runtime's error path: requeue after the per-item exponential
/// backoff (through our own trigger so the queue metrics see it, the retry
/// included); the requeue also waits for the overall retry bucket.
fn error_policy(obj: Arc<Widget>, err: &Error, ctx: Arc<Context>) -> Action {
    let k = key(&obj);
    let failures = {
        let mut f = ctx.failures.lock().expect("failures lock");
        let n = f.entry(k.clone()).or_insert(0);
        let current = *n;
        *n += 1;
        current
    };
    let delay = backoff(failures);
    tracing::debug!(controller = "widget", key = %k, error = %err, ?delay, "Reconciler error");
    let _ = ctx
        .requeue
        .send((ObjectRef::from(obj.as_ref()), delay, true));
    Action::await_change()
}

/// 5 ms × 2^failures, capped at 1000 s.
pub fn backoff(failures: u32) -> Duration {
    let factor = 2f64.powi(failures.min(40) as i32);
    BACKOFF_BASE.mul_f64(factor).min(BACKOFF_CAP)
}

/// A cache entry of the metadata-only watch: the metadata, an empty spec.
fn from_metadata(m: PartialObjectMeta<Widget>) -> Widget {
    Widget {
        metadata: m.metadata,
        spec: WidgetSpec {
            count: 0,
            message: None,
        },
        status: None,
    }
}

/// Reports a fatal watch problem (e.g. a server refusing WatchList).
pub type Fatal = mpsc::UnboundedSender<String>;

/// Delays each requeue by the larger of its per-item backoff and the wait
/// for a token of the one overall bucket (client-go's MaxOfRateLimiter over
/// ItemExponentialFailureRateLimiter and BucketRateLimiter), then triggers it.
/// Every requeue counts as a retry when it is asked for, as client-go's
/// delaying queue counts one on every AddAfter: error retries and
/// requeue-after alike.
fn delayed_requeues(
    rx: mpsc::UnboundedReceiver<Requeue>,
    metrics: Arc<Metrics>,
) -> impl Stream<Item = ObjectRef<Widget>> + Send {
    let overall: Arc<DefaultDirectRateLimiter> =
        Arc::new(token_bucket(retry::OVERALL_QPS, retry::OVERALL_BURST));
    tokio_stream::wrappers::UnboundedReceiverStream::new(rx)
        .map(move |(obj, delay, rate_limited)| {
            let m = metrics.clone();
            m.record_retry();
            let overall = overall.clone();
            async move {
                if rate_limited {
                    tokio::join!(tokio::time::sleep(delay), overall.until_ready());
                } else {
                    tokio::time::sleep(delay).await;
                }
                let k = format!(
                    "{}/{}",
                    obj.namespace.as_deref().unwrap_or_default(),
                    obj.name
                );
                let counted = m.queue.add(&k);
                m.record_add(counted);
                obj
            }
        })
        .buffer_unordered(usize::MAX)
}

/// The queue a controller runs with: --queue, else kube-runtime's scheduler
/// (what kube-rs users get).
pub fn effective_queue(settings: &Settings) -> Queue {
    settings.queue.unwrap_or(Queue::Kube)
}

/// Delays each object's trigger by `delay`, restarting the delay when the
/// object triggers again meanwhile (kube-runtime's debounce), then adds it
/// to the work queue.
struct Debouncer {
    delay: Duration,
    metrics: Arc<Metrics>,
    /// The latest trigger of each waiting key.
    latest: Mutex<HashMap<String, u64>>,
}

impl Debouncer {
    fn new(delay: Duration, metrics: Arc<Metrics>) -> Debouncer {
        Debouncer {
            delay,
            metrics,
            latest: Mutex::new(HashMap::new()),
        }
    }

    fn trigger(self: &Arc<Self>, key: String) {
        let n = {
            let mut l = self.latest.lock().expect("debounce lock");
            let n = l.get(&key).map_or(0, |n| n + 1);
            l.insert(key.clone(), n);
            n
        };
        let me = self.clone();
        tokio::spawn(async move {
            tokio::time::sleep(me.delay).await;
            let due = {
                let mut l = me.latest.lock().expect("debounce lock");
                let due = l.get(&key) == Some(&n);
                if due {
                    l.remove(&key);
                }
                due
            };
            if due {
                let counted = me.metrics.queue.add(&key);
                me.metrics.record_add(counted);
            }
        });
    }
}

fn without_managed_fields(mut w: Widget) -> Widget {
    w.metadata.managed_fields = None;
    w
}

fn managed_fields_as_text(mut w: Widget) -> Widget {
    crate::managed_fields::as_text(&mut w.metadata);
    w
}

/// Runs the controller until `shutdown` resolves; in-flight reconciles finish.
pub async fn run(
    clients: Clients,
    settings: Settings,
    metrics: Arc<Metrics>,
    fatal: Fatal,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) {
    let mut wc = watcher::Config::default();
    if settings.watch_list {
        wc = wc.streaming_lists();
    }
    if settings.list_semantic.as_deref() == Some("any") {
        wc = wc.any_semantic();
    }
    if let Some(n) = settings.list_page_size {
        wc = wc.page_size(n);
    }
    let (reader, writer) = reflector::store();
    let watch_list = settings.watch_list;
    type Events = std::pin::Pin<
        Box<dyn Stream<Item = Result<watcher::Event<Widget>, watcher::Error>> + Send>,
    >;
    let events: Events = match settings.cache {
        // The watch carries PartialObjectMetadata only; the store holds
        // widgets with that metadata and an empty spec, and reconcile reads
        // the full object with a GET.
        Cache::Metadata => watcher(
            Api::<PartialObjectMeta<Widget>>::namespaced(clients.informer, &settings.namespace),
            wc,
        )
        .map_ok(|e| match e {
            watcher::Event::Apply(m) => watcher::Event::Apply(from_metadata(m)),
            watcher::Event::Delete(m) => watcher::Event::Delete(from_metadata(m)),
            watcher::Event::InitApply(m) => watcher::Event::InitApply(from_metadata(m)),
            watcher::Event::Init => watcher::Event::Init,
            watcher::Event::InitDone => watcher::Event::InitDone,
        })
        .boxed(),
        Cache::Namespace => watcher(
            Api::<Widget>::namespaced(clients.informer, &settings.namespace),
            wc,
        )
        .boxed(),
        // Every namespace's widgets are listed, watched and cached; only
        // our namespace's are reconciled (below).
        Cache::Cluster => watcher(Api::<Widget>::all(clients.informer), wc).boxed(),
    };
    // managedFields are never read here: dropped, or held as text, the
    // cache holds less.
    let slim: Option<fn(Widget) -> Widget> = if settings.strip_managed_fields {
        Some(without_managed_fields)
    } else if settings.managed_fields_text {
        Some(managed_fields_as_text)
    } else {
        None
    };
    let events: Events = match slim {
        Some(slim) => events
            .map_ok(move |e| match e {
                watcher::Event::Apply(w) => watcher::Event::Apply(slim(w)),
                watcher::Event::InitApply(w) => watcher::Event::InitApply(slim(w)),
                other => other,
            })
            .boxed(),
        None => events,
    };
    let ns = settings.namespace.clone();
    let m = metrics.clone();
    let objects = events
        .inspect_ok(move |e| {
            if matches!(e, watcher::Event::InitDone) {
                m.record_initial_list();
            }
        })
        .default_backoff()
        .reflect(writer)
        .inspect_err(move |e| report_watch_error(e, watch_list, &fatal))
        .applied_objects()
        .try_filter(move |w| std::future::ready(w.metadata.namespace.as_deref() == Some(&ns)));
    let objects: std::pin::Pin<Box<dyn Stream<Item = Result<Widget, watcher::Error>> + Send>> =
        match settings.predicate {
            Predicate::Generation => objects
                .predicate_filter(predicates::generation, Default::default())
                .boxed(),
            Predicate::None => objects.boxed(),
        };
    let queue = effective_queue(&settings);
    let debounce = Duration::from_millis(settings.debounce_ms);
    // kube-runtime debounces inside its scheduler; before our FIFO queue the
    // same delay-and-reset happens here.
    let debouncer = (queue == Queue::Fifo && !debounce.is_zero())
        .then(|| Arc::new(Debouncer::new(debounce, metrics.clone())));
    let m = metrics.clone();
    let objects = objects.inspect_ok(move |w| match &debouncer {
        Some(d) => d.trigger(key(w)),
        None => {
            let counted = m.queue.add(&key(w));
            m.record_add(counted);
        }
    });

    let (ctx, rx) = Context::new(
        clients.client,
        clients.api_reader,
        settings.clone(),
        metrics.clone(),
    );
    let ctx = Arc::new(ctx);
    let requeues = delayed_requeues(rx, metrics);

    match queue {
        Queue::Kube => {
            let config = ControllerConfig::default()
                .concurrency(settings.workers)
                .debounce(Duration::from_millis(settings.debounce_ms));
            Controller::for_stream(objects, reader)
                .with_config(config)
                .reconcile_on(requeues)
                .graceful_shutdown_on(shutdown)
                .run(reconcile, error_policy, ctx)
                .for_each(|_| std::future::ready(()))
                .await;
        }
        Queue::Fifo => run_fifo(objects, requeues, reader, ctx, shutdown).await,
    }
}

/// client-go's model: the watch and the requeues only add keys (the adds in
/// the streams above enqueue them in FIFO order); `workers` tasks take keys
/// from the queue, reconcile the cached object and mark them done.
async fn run_fifo(
    objects: impl Stream<Item = Result<Widget, watcher::Error>> + Send,
    requeues: impl Stream<Item = ObjectRef<Widget>> + Send,
    reader: reflector::Store<Widget>,
    ctx: Arc<Context>,
    shutdown: impl Future<Output = ()> + Send,
) {
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let workers: Vec<_> = (0..ctx.settings.workers)
        .map(|_| {
            let (ctx, reader, mut stop) = (ctx.clone(), reader.clone(), stop_rx.clone());
            tokio::spawn(async move {
                let queue = ctx.metrics.queue.clone();
                loop {
                    let key = tokio::select! {
                        k = queue.next() => k,
                        _ = stop.wait_for(|s| *s) => return,
                    };
                    let (ns, name) = key.split_once('/').unwrap_or(("", &key));
                    match reader.get(&ObjectRef::new(name).within(ns)) {
                        Some(obj) => {
                            if let Err(e) = reconcile(obj.clone(), ctx.clone()).await {
                                error_policy(obj, &e, ctx.clone());
                            }
                        }
                        // Deleted before its turn: nothing to reconcile.
                        None => {
                            queue.start(&key);
                            queue.done(&key);
                        }
                    }
                }
            })
        })
        .collect();
    let feed = async {
        futures::join!(
            objects.for_each(|_| std::future::ready(())),
            requeues.for_each(|_| std::future::ready(()))
        );
    };
    tokio::select! {
        _ = feed => {}
        _ = shutdown => {}
    }
    let _ = stop_tx.send(true);
    futures::future::join_all(workers).await;
}

fn report_watch_error(e: &watcher::Error, watch_list: bool, fatal: &Fatal) {
    tracing::warn!(error = %e, "watch failed; retrying with backoff");
    let code = match e {
        watcher::Error::InitialListFailed(kube::Error::Api(s))
        | watcher::Error::WatchStartFailed(kube::Error::Api(s))
        | watcher::Error::WatchFailed(kube::Error::Api(s)) => Some((s.code, s.message.clone())),
        watcher::Error::WatchError(s) => Some((s.code, s.message.clone())),
        _ => None,
    };
    match code {
        Some((code @ (400 | 422), msg)) if watch_list => {
            let _ = fatal.send(format!(
                "the API server refused the streaming initial list (--watch-list): HTTP {code}: {msg}; enable the WatchList feature gate on kube-apiserver or drop --watch-list"
            ));
        }
        Some((code @ (401 | 403), msg)) => {
            let _ = fatal.send(format!(
                "the API server denies watching widgets: HTTP {code}: {msg}"
            ));
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A key re-triggered within the delay is added once, a delay after its
    /// last trigger.
    #[tokio::test(start_paused = true)]
    async fn debounce_restarts_on_each_trigger() {
        let metrics = Arc::new(Metrics::with_queue(1, crate::queue::Queue::fifo(), false));
        let d = Arc::new(Debouncer::new(Duration::from_millis(50), metrics.clone()));
        d.trigger("ns/a".into());
        tokio::time::sleep(Duration::from_millis(30)).await;
        d.trigger("ns/a".into());
        tokio::time::sleep(Duration::from_millis(30)).await;
        assert_eq!(
            metrics.queue.depth(),
            0,
            "the second trigger restarted the delay"
        );
        tokio::time::sleep(Duration::from_millis(30)).await;
        assert_eq!(metrics.queue.depth(), 1);
        assert_eq!(metrics.queue.next().await, "ns/a");
    }

    /// The overall bucket lets 100 retries through at once, then 10 per second
    /// (real time: governor keeps its own clock).
    #[tokio::test]
    async fn requeues_wait_for_the_overall_bucket() {
        let metrics = Arc::new(Metrics::new(1));
        let (tx, rx) = mpsc::unbounded_channel();
        for i in 0..110 {
            tx.send((
                ObjectRef::new(&format!("w{i}")).within("ns"),
                backoff(0),
                true,
            ))
            .unwrap();
        }
        drop(tx);
        let t0 = Instant::now();
        let times: Vec<Duration> = delayed_requeues(rx, metrics)
            .map(|_| t0.elapsed())
            .collect()
            .await;
        assert_eq!(times.len(), 110);
        let mut sorted = times.clone();
        sorted.sort();
        // Lower bounds only (a noisy machine can delay, never hasten): the
        // 101st waits for the first refill (100 ms), the 110th for the tenth.
        assert!(sorted[100] >= Duration::from_millis(90), "{sorted:?}");
        assert!(sorted[109] >= Duration::from_millis(990), "{sorted:?}");
    }

    /// client-go's delaying queue counts a retry on every AddAfter: a
    /// requeue-after (not rate limited) counts like an error retry.
    #[tokio::test]
    async fn every_requeue_counts_a_retry_as_client_go_does() {
        let metrics = Arc::new(Metrics::new(1));
        let (tx, rx) = mpsc::unbounded_channel();
        for (i, rate_limited) in [false, false, true].into_iter().enumerate() {
            tx.send((
                ObjectRef::new(&format!("w{i}")).within("ns"),
                Duration::from_millis(1),
                rate_limited,
            ))
            .unwrap();
        }
        drop(tx);
        let n = delayed_requeues(rx, metrics.clone()).count().await;
        assert_eq!(n, 3);
        let page = metrics.encode();
        let retries = page
            .lines()
            .find(|l| l.starts_with("workqueue_retries_total"))
            .unwrap_or_else(|| panic!("{page}"));
        assert!(retries.ends_with(" 3"), "{retries}");
    }

    #[test]
    fn backoff_matches_client_go() {
        assert_eq!(backoff(0), Duration::from_millis(5));
        assert_eq!(backoff(1), Duration::from_millis(10));
        assert_eq!(backoff(10), Duration::from_millis(5 * 1024));
        assert_eq!(backoff(40), BACKOFF_CAP);
    }
}
