//! CPU profiles (`profile = true` for ours, a command's `pprof` URL): every
//! replica is asked for back-to-back CHUNK_S-second CPU profiles — Go's
//! `/debug/pprof/profile?seconds=N` protocol, which our Rust controller
//! serves too — from its start until the window ends. Each profile is
//! folded into the replica's stacks (`ctrlbench_record::profile`), written
//! to `profile-<k>.folded` once the window is over; the report draws them
//! as flame graphs. The profile in flight at the window's end is waited
//! for (at most CHUNK_S seconds more, the controllers still running), so
//! the whole window is profiled. A profile is a sample, not a trace: the
//! cost to the controller is about 100 signals a second.

use std::time::Duration;

use anyhow::Result;
use ctrlbench_record::profile::{self, Folded};
use futures::future::BoxFuture;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::{Measurement, Run};

/// Seconds per profile request.
const CHUNK_S: u64 = 5;

/// What one replica's profiling gathered.
struct Gathered {
    stacks: Folded,
    samples: u64,
    last_error: Option<String>,
}

struct Target {
    member: usize,
    replica: usize,
    url: String,
    task: JoinHandle<Gathered>,
}

#[derive(Default)]
pub struct Profiles {
    targets: Vec<Target>,
    stop: CancellationToken,
    http: reqwest::Client,
}

impl Profiles {
    pub fn new() -> Profiles {
        Profiles::default()
    }

    /// Starts profiling every replica that runs and is not profiled yet at
    /// its current URL (after-load controllers start late; a restarted
    /// replica listens on a new port).
    fn start_new(&mut self, run: &Run<'_>) {
        for (i, m) in run.members.iter().enumerate() {
            let own = run.ctx.exp.variants[m.variant].keys.profile == Some(true);
            for (k, r) in m.replicas.iter().enumerate() {
                let Some(url) = r.pprof_url(own).filter(|_| r.process.is_some()) else {
                    continue;
                };
                let seen = self
                    .targets
                    .iter()
                    .any(|t| (t.member, t.replica) == (i, k) && t.url == url);
                if !seen {
                    let task =
                        tokio::spawn(gather(self.http.clone(), url.clone(), self.stop.clone()));
                    self.targets.push(Target {
                        member: i,
                        replica: k,
                        url,
                        task,
                    });
                }
            }
        }
    }
}

/// Profiles `url` chunk after chunk until `stop`.
async fn gather(http: reqwest::Client, url: String, stop: CancellationToken) -> Gathered {
    let mut g = Gathered {
        stacks: Folded::new(),
        samples: 0,
        last_error: None,
    };
    let sep = if url.contains('?') { '&' } else { '?' };
    let chunk = format!("{url}{sep}seconds={CHUNK_S}");
    while !stop.is_cancelled() {
        let fetch = async {
            let resp = http
                .get(&chunk)
                .timeout(Duration::from_secs(CHUNK_S + 15))
                .send()
                .await?
                .error_for_status()?;
            resp.bytes().await
        };
        // A profile in flight when the window ends is waited for: the
        // window's last seconds are the ones a short run cannot spare.
        let body = fetch.await;
        let added = body
            .map_err(anyhow::Error::from)
            .and_then(|b| profile::fold(&b, &mut g.stacks));
        match added {
            Ok(n) => g.samples += n,
            Err(e) => {
                g.last_error = Some(format!("{e:#}"));
                // Not up yet, or gone: ask again shortly.
                tokio::select! {
                    _ = stop.cancelled() => break,
                    _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                }
            }
        }
    }
    g
}

impl Measurement for Profiles {
    fn start<'a>(&'a mut self, run: &'a mut Run<'_>) -> BoxFuture<'a, Result<()>> {
        self.start_new(run);
        Box::pin(async { Ok(()) })
    }

    fn tick<'a>(&'a mut self, run: &'a mut Run<'_>) -> BoxFuture<'a, Result<()>> {
        self.start_new(run);
        Box::pin(async { Ok(()) })
    }

    fn after_window<'a>(&'a mut self, run: &'a mut Run<'_>) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            self.stop.cancel();
            // Per replica, every URL it was profiled at, summed.
            let mut by: Vec<((usize, usize), Gathered)> = Vec::new();
            for t in self.targets.drain(..) {
                let g = t.task.await?;
                match by.iter_mut().find(|(key, _)| *key == (t.member, t.replica)) {
                    Some((_, all)) => {
                        for (stack, n) in g.stacks {
                            *all.stacks.entry(stack).or_default() += n;
                        }
                        all.samples += g.samples;
                        all.last_error = g.last_error.or(all.last_error.take());
                    }
                    None => by.push(((t.member, t.replica), g)),
                }
            }
            for ((i, k), g) in by {
                let m = &run.members[i];
                profile::write(&m.dir.profile(k), &g.stacks)?;
                if g.samples == 0 {
                    let v = &run.ctx.exp.variants[m.variant].name;
                    let why = g
                        .last_error
                        .unwrap_or_else(|| "the window ended first".into());
                    eprintln!("warning: {v} replica {k}: no CPU profile samples ({why})");
                }
            }
            Ok(())
        })
    }
}
