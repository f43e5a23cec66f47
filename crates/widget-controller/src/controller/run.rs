//! The run loop: the watch (namespaced, cluster-wide or metadata-only,
//! optionally slimmed and generation-filtered) feeding either
//! kube-runtime's Controller (`--queue kube`) or our client-go-style FIFO
//! work queue and workers (`--queue fifo`), with the triggers' debounce and
//! the watch errors that end the process.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::{Stream, StreamExt, TryStreamExt};
use kube::api::Api;
use kube::core::PartialObjectMeta;
use kube::runtime::controller::{Config as ControllerConfig, Controller};
use kube::runtime::reflector::{self, ObjectRef};
use kube::runtime::{WatchStreamExt, predicates, watcher};
use tokio::sync::mpsc;
use widget_api::presets::{Cache, Predicate, Queue};
use widget_api::{Widget, WidgetSpec};

use super::reconcile::{Context, key, reconcile};
use super::requeue::{delayed_requeues, error_policy};
use crate::flags::Settings;
use crate::metrics::Metrics;

/// The controller's REST clients, each with its own token bucket as in
/// controller-runtime: the informer's (its LISTs), the client's (reads and
/// writes) and the API reader's (conflict re-reads that bypass the cache).
pub struct Clients {
    pub informer: kube::Client,
    pub client: kube::Client,
    pub api_reader: kube::Client,
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
    let t = &settings.tunables;
    if let Some(n) = t.list_page_size {
        wc = wc.page_size(n.get());
    }
    if let Some(s) = t.watch_timeout_s {
        wc = wc.timeout(s.get());
    }
    if t.watch_bookmarks == Some(false) {
        wc = wc.disable_bookmarks();
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
    // The controller's one log target, wherever in the module a line is written.
    tracing::warn!(target: "widget_controller::controller", error = %e, "watch failed; retrying with backoff");
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
}
