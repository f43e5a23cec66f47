//! Who leads: for each variant whose replicas elect a leader (ours with
//! `leader_election = true`, a command's `lease`), our own watch of that
//! Lease records every change of its holder with the moment we saw it, in
//! leases.csv, and summary.json's `leader_changes`. The report's Faults
//! table reads "new leader after" from it: the first change of holder after
//! a fault.

use std::sync::{Arc, Mutex};

use anyhow::Result;
use ctrlbench_record::Summary;
use ctrlbench_record::summary::LeaderChange;
use ctrlbench_record::table::Table;
use ctrlbench_record::time::{now_rfc3339, now_unix};
use futures::future::BoxFuture;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::coordination::v1::Lease;
use kube::runtime::{WatchStreamExt, watcher};
use tokio::task::JoinHandle;

use super::{Measurement, Run};

/// The columns of leases.csv.
const HEADER: [&str; 4] = ["timestamp", "unix_s", "lease", "holder"];

#[derive(Default)]
pub struct Leases {
    /// Per member: its Lease's changes so far (None: no election).
    seen: Vec<Option<Arc<Mutex<Vec<LeaderChange>>>>>,
    tasks: Vec<JoinHandle<()>>,
}

impl Leases {
    pub fn new() -> Leases {
        Leases::default()
    }
}

/// Watches `name` in `ns` until aborted, pushing each new holder.
fn watch(
    client: kube::Client,
    ns: &str,
    name: &str,
    out: Arc<Mutex<Vec<LeaderChange>>>,
) -> JoinHandle<()> {
    let api = kube::Api::<Lease>::namespaced(client, ns);
    let cfg = watcher::Config::default().fields(&format!("metadata.name={name}"));
    let name = name.to_string();
    tokio::spawn(async move {
        let mut last: Option<String> = None;
        let mut stream = watcher::watcher(api, cfg).applied_objects().boxed();
        loop {
            match stream.try_next().await {
                Ok(Some(lease)) => {
                    let holder = lease
                        .spec
                        .and_then(|s| s.holder_identity)
                        .filter(|h| !h.is_empty());
                    if holder.is_some() && holder != last {
                        last.clone_from(&holder);
                        if let Ok(mut v) = out.lock() {
                            v.push(LeaderChange {
                                at: now_rfc3339(),
                                unix_s: now_unix(),
                                lease: name.clone(),
                                holder: holder.unwrap_or_default(),
                            });
                        }
                    }
                }
                Ok(None) => return,
                // The watcher retries on its own; a pause keeps a broken
                // apiserver from being asked in a tight loop.
                Err(_) => tokio::time::sleep(std::time::Duration::from_millis(200)).await,
            }
        }
    })
}

impl Measurement for Leases {
    fn start<'a>(&'a mut self, run: &'a mut Run<'_>) -> BoxFuture<'a, Result<()>> {
        for m in run.members.iter() {
            let v = &run.ctx.exp.variants[m.variant];
            let seen = v.lease().map(|name| {
                let out = Arc::new(Mutex::new(Vec::new()));
                self.tasks.push(watch(
                    run.ctx.cluster.client.clone(),
                    &m.ns,
                    name,
                    out.clone(),
                ));
                out
            });
            self.seen.push(seen);
        }
        Box::pin(async { Ok(()) })
    }

    fn finish<'a>(
        &'a mut self,
        run: &'a mut Run<'_>,
        summaries: &'a mut [Summary],
    ) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            for t in self.tasks.drain(..) {
                t.abort();
            }
            for ((m, s), seen) in run.members.iter().zip(summaries.iter_mut()).zip(&self.seen) {
                let Some(seen) = seen else { continue };
                let changes = seen.lock().map(|v| v.clone()).unwrap_or_default();
                let mut t = Table::create(&m.dir.leases(), HEADER.map(String::from).to_vec())?;
                for c in &changes {
                    t.row(vec![
                        c.at.clone(),
                        format!("{:.3}", c.unix_s),
                        c.lease.clone(),
                        c.holder.clone(),
                    ])?;
                }
                s.leader_changes = changes;
            }
            Ok(())
        })
    }
}
