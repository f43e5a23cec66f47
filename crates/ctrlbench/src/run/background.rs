//! Objects outside every run's namespace, created once after the warm-up
//! and before any controller starts, removed at the end: the background
//! objects (`background_objects = K`: K objects of the experiment's
//! workload, widgets by default) and the decoys (`[workload] decoys = K`:
//! K objects of the workload's kind plus K Secrets and K ConfigMaps of
//! about 1 KiB, `experiment::decoys`), each in a namespace of their own
//! that no controller's Role covers. A controller whose cache spans the
//! cluster lists and holds them all; a namespaced or metadata-only cache
//! does not — what that costs in memory and start-up time is the question
//! the cache-scope presets and the cluster-wide-cache rule answer. They
//! carry their namespace's name as run id, so no run's watch counts them.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Result, bail};
use tokio_util::sync::CancellationToken;

use kube::core::ApiResource;

use super::objects::Objects;
use super::{loader, namespace};
use crate::experiment::decoys;
use crate::experiment::workload::Workload;

/// A namespace of objects made before the runs, while it exists.
pub struct Background {
    pub namespace: String,
    /// Objects of the first kind created (the workload's).
    pub created: u64,
    /// Their kinds, for emptying the namespace.
    resources: Vec<ApiResource>,
}

/// Creates `k` objects of the workload in a fresh namespace.
pub async fn create(
    client: &kube::Client,
    workload: &Arc<Workload>,
    experiment: &str,
    k: u64,
    concurrency: usize,
    cancel: &CancellationToken,
) -> Result<Background> {
    let ns = format!("cb-background-{:04x}", std::process::id() & 0xffff);
    let what = "background objects";
    fill(
        client,
        ns,
        what,
        vec![workload.clone()],
        experiment,
        k,
        concurrency,
        cancel,
    )
    .await
}

/// Creates `k` decoys in a fresh namespace: `k` objects of the workload's
/// kind (its own template, so they are valid), `k` ConfigMaps and `k`
/// Secrets.
pub async fn create_decoys(
    client: &kube::Client,
    workload: &Arc<Workload>,
    experiment: &str,
    k: u64,
    concurrency: usize,
    cancel: &CancellationToken,
) -> Result<Background> {
    let ns = format!("cb-decoys-{:04x}", std::process::id() & 0xffff);
    let mut kinds = vec![workload.clone()];
    kinds.extend(decoys::side_kinds().into_iter().map(Arc::new));
    fill(
        client,
        ns,
        "decoys",
        kinds,
        experiment,
        k,
        concurrency,
        cancel,
    )
    .await
}

/// Creates namespace `ns` and `k` objects of each kind in it; on any
/// failure removes it again.
#[allow(clippy::too_many_arguments)]
async fn fill(
    client: &kube::Client,
    ns: String,
    what: &str,
    kinds: Vec<Arc<Workload>>,
    experiment: &str,
    k: u64,
    concurrency: usize,
    cancel: &CancellationToken,
) -> Result<Background> {
    namespace::create(client, &ns, experiment).await?;
    let mut bg = Background {
        namespace: ns.clone(),
        created: 0,
        resources: kinds.iter().map(|w| w.resource.clone()).collect(),
    };
    let names: Vec<String> = kinds.iter().map(|w| w.resource.kind.clone()).collect();
    eprintln!("creating {k} {what} ({}) in {ns} …", names.join(", "));
    let t0 = std::time::Instant::now();
    for (i, kind) in kinds.into_iter().enumerate() {
        let stats = loader::create(
            client.clone(),
            kind,
            ns.clone(),
            ns.clone(),
            k,
            concurrency,
            Arc::new(Objects::default()),
            cancel.child_token(),
        )
        .await;
        if stats.errors > 0 || stats.created < k {
            let _ = remove(client, &bg, true).await;
            bail!(
                "only {} of {k} {what} ({}) were created{}",
                stats.created,
                names[i],
                stats
                    .first_error
                    .map(|e| format!(" (first error: {e})"))
                    .unwrap_or_default()
            );
        }
        if i == 0 {
            bg.created = stats.created;
        }
    }
    eprintln!(
        "{k} {what} of each kind in {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    Ok(bg)
}

/// Deletes the namespace and everything in it.
pub async fn remove(client: &kube::Client, bg: &Background, finalize: bool) -> Result<()> {
    namespace::delete(
        client,
        &bg.namespace,
        finalize,
        Duration::from_secs(20),
        Duration::from_secs(300),
        &bg.resources,
    )
    .await
}
