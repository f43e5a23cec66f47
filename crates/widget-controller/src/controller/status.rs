//! The status writes of a reconcile, one per `--status-write`: a PUT of
//! /status (with RetryOnConflict when the preset asks), a merge patch, a
//! server-side apply, or a PUT of the whole object whose status the server
//! drops. Apart from the reconcile's other steps because it is the part the
//! presets vary most, and the part whose requests the benchmark counts.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;
use widget_api::presets::StatusWrite;
use widget_api::{LAST_SEEN_ANNOTATION, READY, Widget, WidgetStatus};

use crate::flags::Settings;

/// RetryOnConflict as the write-up used it: 5 tries, 10 ms apart.
const CONFLICT_TRIES: u32 = 5;
const CONFLICT_WAIT: Duration = Duration::from_millis(10);

/// Now in Unix nanoseconds: the last-seen annotation's value.
pub(super) fn unix_nanos() -> String {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
        .to_string()
}

fn ready_status(w: &Widget) -> WidgetStatus {
    WidgetStatus {
        phase: Some(READY.to_string()),
        processed_count: Some(w.spec.count),
        last_updated: Some(
            k8s_openapi::jiff::Timestamp::now()
                .round(k8s_openapi::jiff::Unit::Second)
                .unwrap_or_else(|_| k8s_openapi::jiff::Timestamp::now())
                .to_string(),
        ),
    }
}

fn is_conflict(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 409)
}

/// status_if_changed: the stored status already says what we would write
/// (lastUpdated ignored).
fn status_unchanged(w: &Widget) -> bool {
    w.status.as_ref().is_some_and(|st| {
        st.phase.as_deref() == Some(READY) && st.processed_count == Some(w.spec.count)
    })
}

/// Writes `current`'s Ready status as `s.status_write` says (re-reading it
/// through `reader` between conflict retries); `current` is the object as
/// the reconcile left it, annotations included.
pub(super) async fn write(
    s: &Settings,
    api: &Api<Widget>,
    reader: &Api<Widget>,
    name: &str,
    mut current: Widget,
) -> Result<(), kube::Error> {
    match s.status_write {
        StatusWrite::Update => {
            let mut attempt = 1;
            loop {
                if s.status_if_changed && status_unchanged(&current) {
                    return Ok(());
                }
                current.status = Some(ready_status(&current));
                match api
                    .replace_status(name, &PostParams::default(), &current)
                    .await
                {
                    Ok(_) => return Ok(()),
                    Err(e) if s.conflict_retry && is_conflict(&e) && attempt < CONFLICT_TRIES => {
                        attempt += 1;
                        tokio::time::sleep(CONFLICT_WAIT).await;
                        // Re-read from the API, not the cache: the cache may still be stale.
                        current = reader.get(name).await?;
                    }
                    Err(e) => return Err(e),
                }
            }
        }
        StatusWrite::Patch | StatusWrite::Apply
            if s.status_if_changed && status_unchanged(&current) => {}
        StatusWrite::Patch => {
            let status = ready_status(&current);
            api.patch_status(
                name,
                &PatchParams::default(),
                &Patch::Merge(json!({ "status": status })),
            )
            .await?;
        }
        StatusWrite::Apply => {
            let status = ready_status(&current);
            let body = json!({
                "apiVersion": "benchmark.example.com/v1alpha1",
                "kind": "Widget",
                "status": status,
            });
            api.patch_status(
                name,
                &PatchParams::apply("widget-controller").force(),
                &Patch::Apply(body),
            )
            .await?;
        }
        StatusWrite::Object => {
            if s.annotate {
                current
                    .metadata
                    .annotations
                    .get_or_insert_with(Default::default)
                    .insert(LAST_SEEN_ANNOTATION.to_string(), unix_nanos());
            }
            current.status = Some(ready_status(&current));
            // The server keeps the stored status: this write never makes anything Ready.
            api.replace(name, &PostParams::default(), &current).await?;
        }
    }
    Ok(())
}
