//! The scrapes as a measurement: a baseline scrape of every controller
//! before the load, a row every scrape interval during the window (with the
//! progress display and a check that each controller still runs), the last
//! row while the controllers still run, and which controllers stopped by
//! themselves. The scraping itself is the [`Sampler`]'s.

use std::time::{Duration, Instant};

use anyhow::Result;
use ctrlbench_record::Summary;
use ctrlbench_record::summary::ReplicaFigures;
use futures::future::BoxFuture;

use super::sampler::Sampler;
use super::{Measurement, Run};
use ctrlbench_plane::progress::Progress;

/// How long every controller's metrics get to answer a first scrape.
const BASELINE_WAIT: Duration = Duration::from_secs(15);

pub struct Scrapes {
    interval: Duration,
    next: Instant,
    bars: Option<Progress>,
    /// Controllers that stopped by themselves during the window.
    exited_early: Vec<bool>,
    /// A controller the fault schedule kills or restarts exits on purpose.
    controller_faults: bool,
}

impl Scrapes {
    pub fn new(run: &Run<'_>) -> Scrapes {
        let exp = run.ctx.exp;
        let interval = Duration::from_secs_f64(exp.scrape_interval_s);
        // Faulted and fault-free variants never share a run (spec validation).
        let faults = run
            .members
            .first()
            .map_or(&[][..], |m| exp.faults_for(m.variant));
        Scrapes {
            interval,
            next: Instant::now() + interval,
            bars: None,
            exited_early: vec![false; run.members.len()],
            controller_faults: faults.iter().any(|f| f.target.is_controller()),
        }
    }

    /// One row, the progress display, and whether each controller still runs.
    async fn scrape(&mut self, run: &mut Run<'_>) -> Result<()> {
        run.sampler.scrape_once().await?;
        let elapsed = run.load_start.elapsed().as_secs_f64();
        let window = run.ctx.exp.window_s;
        for (i, m) in run.members.iter_mut().enumerate() {
            let started = m.replicas.iter().any(|r| r.process.is_some());
            let alive = started
                && m.replicas
                    .iter_mut()
                    .all(|r| r.process.as_mut().is_none_or(|p| p.running()));
            if started && !alive && !self.controller_faults && !self.exited_early[i] {
                self.exited_early[i] = true;
                let log = std::fs::read_to_string(m.dir.controller_log()).unwrap_or_default();
                if let Some(hint) = crate::run::controller::cache_sync_hint(&log) {
                    eprintln!("{}: {hint}", m.dir.controller_log().display());
                }
            }
            let msg = format!(
                "{:>7.1} reconciles/s  {:>5.0}/{window:.0} s{}",
                run.sampler.controllers[i].rate,
                elapsed,
                // An external controller has no process of ours to watch.
                if alive || !started {
                    ""
                } else {
                    "  controller exited!"
                }
            );
            if let Some(b) = &self.bars {
                b.set(i, m.objects.ready(), Some(msg));
            }
        }
        Ok(())
    }
}

/// A first successful scrape of every controller that has metrics.
async fn baseline(sampler: &mut Sampler) -> Result<()> {
    let t0 = Instant::now();
    loop {
        sampler.scrape_once().await?;
        if sampler
            .controllers
            .iter()
            .all(|c| c.urls.iter().all(Option::is_none) || c.baseline.is_some())
        {
            return Ok(());
        }
        if t0.elapsed() >= BASELINE_WAIT {
            let silent: Vec<String> = sampler
                .controllers
                .iter()
                .filter(|c| c.urls.iter().any(Option::is_some) && c.baseline.is_none())
                .map(|c| {
                    let urls: Vec<&str> = c.urls.iter().flatten().map(String::as_str).collect();
                    format!("{} ({})", c.variant, urls.join(", "))
                })
                .collect();
            anyhow::bail!(
                "no answer from the controller metrics of {} within {} s",
                silent.join(", "),
                BASELINE_WAIT.as_secs()
            );
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

impl Measurement for Scrapes {
    fn start<'a>(&'a mut self, run: &'a mut Run<'_>) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            baseline(&mut run.sampler).await?;
            let exp = run.ctx.exp;
            let names: Vec<String> = run
                .members
                .iter()
                .map(|m| exp.variants[m.variant].name.clone())
                .collect();
            self.bars = Some(Progress::new(
                &names,
                run.plan.scale,
                "Ready",
                Duration::from_secs(5),
                run.ctx.opts.progress,
            ));
            self.next = Instant::now() + self.interval;
            Ok(())
        })
    }

    fn tick<'a>(&'a mut self, run: &'a mut Run<'_>) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            if Instant::now() >= self.next {
                self.next += self.interval;
                self.scrape(run).await?;
            }
            Ok(())
        })
    }

    fn after_window<'a>(&'a mut self, run: &'a mut Run<'_>) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            if let Some(b) = self.bars.take() {
                b.finish();
            }
            // The last row is taken while the controllers still run.
            if run.ctx.cancel.is_cancelled() {
                // The user is waiting: the last row only if it comes quickly.
                let _ =
                    tokio::time::timeout(Duration::from_secs(1), run.sampler.scrape_once()).await;
            } else {
                run.sampler.scrape_once().await?;
            }
            if let Some(last) = run.create_last.take() {
                for (c, l) in run.sampler.controllers.iter_mut().zip(last) {
                    c.last = l;
                }
            }
            Ok(())
        })
    }

    fn finish<'a>(
        &'a mut self,
        run: &'a mut Run<'_>,
        summaries: &'a mut [Summary],
    ) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            for (s, e) in summaries.iter_mut().zip(&self.exited_early) {
                s.controller_exited_early = *e;
            }
            for (s, c) in summaries.iter_mut().zip(&run.sampler.controllers) {
                if let Some(f) = &c.fleet {
                    s.replicas = (0..f.peak_rss.len())
                        .map(|k| ReplicaFigures {
                            replica: k,
                            peak_rss_bytes: f.peak_rss[k],
                            cpu_seconds: f.cpu_s[k],
                            initial_list_s: (f.initial_list_s[k] > 0.0)
                                .then_some(f.initial_list_s[k]),
                        })
                        .collect();
                }
            }
            Ok(())
        })
    }
}
