//! The loader: creates N objects of the run's workload (widgets by default;
//! any kind through kube's dynamic API) with bounded concurrency and records
//! when each create returned.

use std::sync::Arc;
use std::time::Instant;

use futures::StreamExt;
use kube::api::PostParams;
use tokio_util::sync::CancellationToken;

use crate::experiment::workload::Workload;

use super::objects::{LOADER_MANAGER, Objects};

/// What the loader did.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct LoadStats {
    pub created: u64,
    pub errors: u64,
    pub seconds: f64,
    pub first_error: Option<String>,
}

impl LoadStats {
    pub fn rate(&self) -> f64 {
        if self.seconds > 0.0 {
            self.created as f64 / self.seconds
        } else {
            0.0
        }
    }
}

/// Creates the workload's objects 1 … N (`widget-000001` …) in `ns`,
/// labelled with run id `run`; stops early when cancelled.
#[allow(clippy::too_many_arguments)]
pub async fn create(
    client: kube::Client,
    workload: Arc<Workload>,
    ns: String,
    run: String,
    n: u64,
    concurrency: usize,
    objects: Arc<Objects>,
    cancel: CancellationToken,
) -> LoadStats {
    // The request is built from the rendered JSON and its answer read but
    // not decoded: each create costs this process what the probe's does
    // (on 2 cores the harness's CPU is the apiserver's loss).
    let request = kube::core::Request::new(
        super::workload::api(&client, &ns, &workload)
            .resource_url()
            .to_string(),
    );
    let pp = PostParams {
        field_manager: Some(LOADER_MANAGER.to_string()),
        ..Default::default()
    };
    let t0 = Instant::now();
    let results: Vec<Result<(), String>> = futures::stream::iter(1..=n)
        .take_until(cancel.cancelled())
        .map(|i| {
            let (client, objects) = (client.clone(), objects.clone());
            let (request, pp) = (&request, &pp);
            let (workload, ns, run) = (workload.clone(), ns.clone(), run.clone());
            async move {
                let body = super::workload::object_json(&workload, i, &ns, &run)
                    .and_then(|o| Ok(serde_json::to_vec(&o)?))
                    .map_err(|e| format!("{e:#}"))?;
                let req = request.create(pp, body).map_err(|e| e.to_string())?;
                match client.request_text(req).await {
                    Ok(_) => {
                        objects.created(&workload.object_name(i));
                        Ok(())
                    }
                    Err(e) => Err(e.to_string()),
                }
            }
        })
        .buffer_unordered(concurrency.max(1))
        .collect()
        .await;
    let mut s = LoadStats {
        seconds: t0.elapsed().as_secs_f64(),
        ..Default::default()
    };
    for r in results {
        match r {
            Ok(()) => s.created += 1,
            Err(e) => {
                s.errors += 1;
                s.first_error.get_or_insert(e);
            }
        }
    }
    // The run's end waits on what exists, not on objects never made.
    objects.creates_failed(s.errors);
    s
}
