//! One reconcile: the write-up's steps (read the object, honour a deletion
//! and the finalizer, list, work, annotate, write status) wrapped in the
//! work-queue and controller-runtime metrics, and the context every
//! reconcile shares. The status write itself is `status.rs`'s.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kube::api::{Api, ListParams, PostParams};
use kube::runtime::controller::Action;
use kube::runtime::reflector::ObjectRef;
use tokio::sync::mpsc;
use widget_api::presets::{Cache, FINALIZER, Read, StatusWrite};
use widget_api::{LAST_SEEN_ANNOTATION, Widget};

use super::status::{self, unix_nanos};
use crate::flags::Settings;
use crate::metrics::{Metrics, Outcome};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Kube(#[from] kube::Error),
}

/// What every reconcile shares.
pub struct Context {
    pub client: kube::Client,
    /// Reads straight from the API server (controller-runtime's API reader).
    pub api_reader: kube::Client,
    pub settings: Settings,
    pub metrics: Arc<Metrics>,
    /// Failures per key since its last success (for the backoff).
    pub(super) failures: Mutex<HashMap<String, u32>>,
    pub(super) requeue: mpsc::UnboundedSender<Requeue>,
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

pub(super) fn key(w: &Widget) -> String {
    format!(
        "{}/{}",
        w.metadata.namespace.as_deref().unwrap_or_default(),
        w.metadata.name.as_deref().unwrap_or_default()
    )
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
    status::write(s, &api, &reader, name, current).await?;
    Ok(())
}
