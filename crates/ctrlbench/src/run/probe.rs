//! `ctrlbench probe`: the cluster's raw write capacity with no controller —
//! creates, then JSON merge patches on /status, with 1, 4, 16 and 64
//! concurrent writers. Reports compare controller throughput against it.
//!
//! A third pass repeats the patches with one watch on the namespace open and
//! every event decoded, as a controller's informer would: the write path's
//! cost of the one watch no controller can do without, apart from the
//! runtime's own.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use anyhow::Result;
use futures::StreamExt;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;
use widget_api::Widget;

use super::namespace;

pub const CONCURRENCIES: [usize; 4] = [1, 4, 16, 64];

pub use ctrlbench_record::manifest::ProbeRow;

async fn timed<F, Fut>(n: u64, writers: usize, f: F) -> (f64, u64)
where
    F: Fn(u64) -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let t0 = Instant::now();
    let oks: Vec<bool> = futures::stream::iter(1..=n)
        .map(f)
        .buffer_unordered(writers)
        .collect()
        .await;
    let secs = t0.elapsed().as_secs_f64();
    let ok = oks.iter().filter(|b| **b).count() as u64;
    (ok as f64 / secs.max(1e-9), n - ok)
}

/// Runs the probe with `objects` widgets per level, in throw-away namespaces.
pub async fn run(client: &kube::Client, objects: u64, finalize: bool) -> Result<Vec<ProbeRow>> {
    // An experiment probes once per repeat: a fresh name each time, so a
    // namespace still terminating can never be in the way.
    static SEQ: AtomicU32 = AtomicU32::new(0);
    let seq = SEQ.fetch_add(1, Ordering::Relaxed);
    let mut rows = Vec::new();
    for writers in CONCURRENCIES {
        let ns = format!(
            "cb-probe-{writers}-{:04x}-{seq}",
            std::process::id() & 0xffff
        );
        namespace::create(client, &ns, "probe").await?;
        let api: Api<Widget> = Api::namespaced(client.clone(), &ns);
        let measured = async {
            let (create, e1) = timed(objects, writers, |i| {
                let api = api.clone();
                async move {
                    api.create(&PostParams::default(), &Widget::numbered(i))
                        .await
                        .is_ok()
                }
            })
            .await;
            let (patch, e2) = patches(&api, objects, writers, 0).await;
            // Other counts than the first pass: every patch changes the object.
            let (watched, e3) = with_watch(&api, || patches(&api, objects, writers, objects)).await;
            ProbeRow {
                writers,
                objects,
                create_per_s: create,
                status_patch_per_s: patch,
                watched_status_patch_per_s: Some(watched),
                errors: e1 + e2 + e3,
                scale: None,
                repeat: None,
            }
        }
        .await;
        eprintln!(
            "probe: {writers:>2} writers: {:.0} creates/s, {:.0} status patches/s, {:.0} with a watch open",
            measured.create_per_s,
            measured.status_patch_per_s,
            measured.watched_status_patch_per_s.unwrap_or_default()
        );
        rows.push(measured);
        namespace::delete(
            client,
            &ns,
            finalize,
            Duration::from_secs(20),
            Duration::from_secs(300),
            &[],
        )
        .await?;
    }
    Ok(rows)
}

/// Status merge patches on widgets 1..=objects (`processedCount` = i + `offset`)
/// by `writers` concurrent writers: (patches/s, failed patches).
async fn patches(api: &Api<Widget>, objects: u64, writers: usize, offset: u64) -> (f64, u64) {
    timed(objects, writers, |i| {
        let api = api.clone();
        async move {
            let p = json!({"status": {"phase": "Ready", "processedCount": i + offset}});
            api.patch_status(
                &widget_api::object_name(i),
                &PatchParams::default(),
                &Patch::Merge(p),
            )
            .await
            .is_ok()
        }
    })
    .await
}

/// Runs `measure` while a watch on `api`'s namespace decodes every event;
/// the watch has listed (and so is open) before the first write.
async fn with_watch<F, Fut>(api: &Api<Widget>, measure: F) -> (f64, u64)
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = (f64, u64)>,
{
    use kube::runtime::{WatchStreamExt, watcher};
    let (listed_tx, listed) = tokio::sync::oneshot::channel();
    let mut listed_tx = Some(listed_tx);
    // Backoff: a watch that keeps failing must not spin beside the writers.
    let events = watcher(api.clone(), watcher::Config::default())
        .default_backoff()
        .for_each(move |e| {
            if matches!(e, Ok(watcher::Event::InitDone))
                && let Some(tx) = listed_tx.take()
            {
                let _ = tx.send(());
            }
            std::future::ready(())
        });
    tokio::select! {
        // A watcher's stream does not end (it retries); this arm only keeps it polled.
        _ = events => (0.0, 0),
        r = async {
            // A watch that cannot list in 30 s is not holding the measurement up.
            let _ = tokio::time::timeout(Duration::from_secs(30), listed).await;
            measure().await
        } => r,
    }
}

/// The probe table as Markdown.
pub fn render(rows: &[ProbeRow]) -> String {
    let mut s = String::from(
        "| writers | objects | creates/s | status patches/s | with a watch open | errors |\n|---|---|---|---|---|---|\n",
    );
    for r in rows {
        s.push_str(&format!(
            "| {} | {} | {:.0} | {:.0} | {} | {} |\n",
            r.writers,
            r.objects,
            r.create_per_s,
            r.status_patch_per_s,
            r.watched_status_patch_per_s
                .map(|w| format!("{w:.0}"))
                .unwrap_or("—".into()),
            r.errors
        ));
    }
    s
}
