//! The harness's own CPU (from the process CPU clock) while the loader
//! creates, then while it only watches and samples: what ctrlbench itself
//! costs the machine it measures. With start = "after-load" the load phase
//! is the loader's time alone, before our watch and the controllers.

use anyhow::Result;
use ctrlbench_plane::process::own_cpu_seconds;
use ctrlbench_record::Summary;
use ctrlbench_record::summary::HarnessCpu as Figures;
use futures::future::BoxFuture;

use super::{Measurement, Run};

pub struct HarnessCpu {
    created: f64,
    /// After-load: the CPU while the loader ran alone.
    alone: Option<f64>,
    at_start: f64,
    figures: Option<Figures>,
}

impl HarnessCpu {
    /// Made before anything of the run is measured.
    pub fn starting() -> HarnessCpu {
        HarnessCpu {
            created: own_cpu_seconds(),
            alone: None,
            at_start: 0.0,
            figures: None,
        }
    }

    /// The loader has finished on its own (start = "after-load").
    pub fn loaded_alone(&mut self) {
        self.alone = Some(own_cpu_seconds() - self.created);
    }
}

impl Measurement for HarnessCpu {
    fn start<'a>(&'a mut self, _run: &'a mut Run<'_>) -> BoxFuture<'a, Result<()>> {
        self.at_start = own_cpu_seconds();
        Box::pin(async { Ok(()) })
    }

    fn after_window<'a>(&'a mut self, run: &'a mut Run<'_>) -> BoxFuture<'a, Result<()>> {
        let end = own_cpu_seconds();
        self.figures = Some(match run.loaded_at {
            Some((t, cpu)) => {
                let wall = t.elapsed().as_secs_f64();
                Figures {
                    load_phase_s: self.alone.unwrap_or(cpu - self.at_start),
                    after_load_s: Some(end - cpu),
                    after_load_wall_s: Some(wall),
                    after_load_core_fraction: Some(if wall > 0.0 {
                        (end - cpu) / wall
                    } else {
                        0.0
                    }),
                }
            }
            None => Figures {
                load_phase_s: end - self.at_start,
                ..Figures::default()
            },
        });
        Box::pin(async { Ok(()) })
    }

    fn finish<'a>(
        &'a mut self,
        _run: &'a mut Run<'_>,
        summaries: &'a mut [Summary],
    ) -> BoxFuture<'a, Result<()>> {
        for s in summaries.iter_mut() {
            s.harness_cpu = self.figures.clone();
        }
        Box::pin(async { Ok(()) })
    }
}
