//! Background objects (`background_objects = K`): K objects of the
//! experiment's workload (widgets by default) in a namespace of
//! their own, created once after the warm-up and before any controller
//! starts, removed at the end. A controller whose cache spans the cluster
//! holds them all; a namespaced or metadata-only cache does not — the
//! question the cache-scope presets answer is what that costs in memory and
//! start-up time.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Result, bail};
use tokio_util::sync::CancellationToken;

use kube::core::ApiResource;

use super::objects::Objects;
use super::{loader, namespace};
use crate::experiment::workload::Workload;

/// The namespace holding the background objects, while it exists.
pub struct Background {
    pub namespace: String,
    pub created: u64,
    /// Their kind (the experiment's workload), for emptying the namespace.
    resource: ApiResource,
}

/// Creates `k` widgets in a fresh namespace.
pub async fn create(
    client: &kube::Client,
    workload: &Arc<Workload>,
    experiment: &str,
    k: u64,
    concurrency: usize,
    cancel: &CancellationToken,
) -> Result<Background> {
    let ns = format!("cb-background-{:04x}", std::process::id() & 0xffff);
    namespace::create(client, &ns, experiment).await?;
    let bg = Background {
        namespace: ns.clone(),
        created: 0,
        resource: workload.resource.clone(),
    };
    eprintln!("creating {k} background objects in {ns} …");
    let stats = loader::create(
        client.clone(),
        workload.clone(),
        ns.clone(),
        ns,
        k,
        concurrency,
        Arc::new(Objects::default()),
        cancel.child_token(),
    )
    .await;
    if stats.errors > 0 || stats.created < k {
        let _ = remove(client, &bg, true).await;
        bail!(
            "only {} of {k} background objects were created{}",
            stats.created,
            stats
                .first_error
                .map(|e| format!(" (first error: {e})"))
                .unwrap_or_default()
        );
    }
    eprintln!(
        "{} background objects in {:.1} s",
        stats.created, stats.seconds
    );
    Ok(Background {
        created: stats.created,
        ..bg
    })
}

/// Deletes the background namespace and everything in it.
pub async fn remove(client: &kube::Client, bg: &Background, finalize: bool) -> Result<()> {
    namespace::delete(
        client,
        &bg.namespace,
        finalize,
        Duration::from_secs(20),
        Duration::from_secs(300),
        std::slice::from_ref(&bg.resource),
    )
    .await
}
