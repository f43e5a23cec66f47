//! Leader election on a Lease in the watched namespace, through the
//! kube-lease-manager crate, with client-go's durations as
//! `widget_api::presets::leader_election` states them: the Lease lasts 15 s
//! after its last renewal and the leader renews it every 2 s (the crate's
//! "grace" is the time before expiry at which it renews: 15 − 2 = 13 s).
//! A candidate takes the Lease once it has expired. Only the leader
//! reconciles; a leader that loses the Lease stops, as controller-runtime's
//! manager does, so two replicas never reconcile at once.

use anyhow::{Context as _, Result};
use kube_lease_manager::{LeaseManagerBuilder, LeaseParams};
use tokio::sync::watch;
use widget_api::presets::leader_election::{LEASE_DURATION_S, LEASE_NAME, RETRY_PERIOD_S};

/// This replica's part in the election: true while it holds the Lease.
pub struct Candidate {
    leading: watch::Receiver<bool>,
}

/// The crate's "grace": renew this long before the Lease would expire, so
/// that renewals come every retry period.
const GRACE_S: u64 = LEASE_DURATION_S - RETRY_PERIOD_S;

/// A random identity, as controller-runtime's hostname_uuid is unique per
/// process: a restarted replica is a new candidate.
fn identity() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "widget-controller".into());
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("{host}_{}_{t:x}", std::process::id())
}

impl Candidate {
    /// Joins the election for the Lease in `namespace` (created when missing).
    pub async fn join(client: kube::Client, namespace: &str) -> Result<Candidate> {
        let params = LeaseParams::new(identity(), LEASE_DURATION_S, GRACE_S);
        let manager = LeaseManagerBuilder::new(client, LEASE_NAME)
            .with_namespace(namespace)
            .with_parameters(params)
            .build()
            .await
            .with_context(|| {
                format!("leader election: cannot use Lease {namespace}/{LEASE_NAME}")
            })?;
        let (leading, _task) = manager.watch().await;
        Ok(Candidate { leading })
    }

    /// Waits until this replica leads.
    pub async fn elected(&mut self) -> Result<()> {
        self.leading
            .wait_for(|l| *l)
            .await
            .context("leader election stopped before this replica led")?;
        Ok(())
    }

    /// Waits until this replica no longer leads (or the election ends).
    pub async fn lost(&mut self) {
        let _ = self.leading.wait_for(|l| !*l).await;
    }
}
