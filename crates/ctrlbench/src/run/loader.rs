//! The loader: creates N widgets with bounded concurrency through kube-rs and
//! records when each create returned.

use std::sync::Arc;
use std::time::Instant;

use futures::StreamExt;
use kube::api::{Api, PostParams};
use tokio_util::sync::CancellationToken;
use widget_api::Widget;

use super::watch::{LOADER_MANAGER, Objects};

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

/// Creates widget-000001 … widget-N in `ns`; stops early when cancelled.
pub async fn create(
    client: kube::Client,
    ns: String,
    n: u64,
    concurrency: usize,
    objects: Arc<Objects>,
    cancel: CancellationToken,
) -> LoadStats {
    let api: Api<Widget> = Api::namespaced(client, &ns);
    let t0 = Instant::now();
    let results: Vec<Result<(), String>> = futures::stream::iter(1..=n)
        .take_until(cancel.cancelled())
        .map(|i| {
            let api = api.clone();
            let objects = objects.clone();
            async move {
                let w = Widget::numbered(i);
                let pp = PostParams {
                    field_manager: Some(LOADER_MANAGER.to_string()),
                    ..Default::default()
                };
                match api.create(&pp, &w).await {
                    Ok(_) => {
                        objects.created(&widget_api::object_name(i));
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
    s
}
