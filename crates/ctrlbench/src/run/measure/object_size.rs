//! What the run's objects weigh as the apiserver sends them: at the end of
//! the window, while the controllers still run, one LIST of a few of each
//! member's objects, measured as JSON whole and their managedFields alone
//! (medians, in summary.json's `object_sample`). A cache that keeps whole
//! objects holds at least this much of each; the diagnosis's
//! managedFields-in-cache rule weighs the controller's memory against it.
//! A LIST that fails or takes over 10 s records nothing: the rule then
//! does not judge the run.

use anyhow::Result;
use ctrlbench_record::Summary;
use ctrlbench_record::summary::ObjectSample;
use futures::future::BoxFuture;
use kube::api::{DynamicObject, ListParams};

use super::{Measurement, Run};
use crate::run::workload::{RUN_LABEL, api};

/// Objects in the sample: the size of a kind's objects varies little
/// within a run, and one small page costs the apiserver nothing.
const SAMPLE: u32 = 20;

/// How long the LIST may take (an apiserver a fault left down answers
/// nothing): the run's end does not wait on it.
const LIST_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

#[derive(Default)]
pub struct ObjectSize {
    /// Per member, in order.
    samples: Vec<Option<ObjectSample>>,
}

impl ObjectSize {
    pub fn new() -> ObjectSize {
        ObjectSize::default()
    }
}

/// The median of `v` (the upper of two), 0 for none.
fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

/// The sample of `objects`; None for none.
pub fn sample(objects: &[DynamicObject]) -> Option<ObjectSample> {
    if objects.is_empty() {
        return None;
    }
    let whole: Vec<u64> = objects.iter().map(json_len).collect();
    let fields: Vec<u64> = objects
        .iter()
        .map(|o| match &o.metadata.managed_fields {
            Some(m) if !m.is_empty() => json_len(m),
            _ => 0,
        })
        .collect();
    Some(ObjectSample {
        objects: objects.len() as u64,
        bytes: median(whole),
        managed_fields_bytes: median(fields),
    })
}

/// The length of `v` as JSON.
fn json_len<T: serde::Serialize>(v: &T) -> u64 {
    serde_json::to_vec(v).map_or(0, |b| b.len() as u64)
}

impl Measurement for ObjectSize {
    fn after_window<'a>(&'a mut self, run: &'a mut Run<'_>) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let client = &run.ctx.cluster.client;
            for m in run.members.iter() {
                let lp = ListParams::default()
                    .labels(&format!("{RUN_LABEL}={}", m.run_id))
                    .limit(SAMPLE);
                let objects = api(client, &m.ns, &run.ctx.exp.workload);
                let listed = tokio::time::timeout(LIST_WAIT, objects.list(&lp)).await;
                self.samples.push(
                    listed
                        .ok()
                        .and_then(Result::ok)
                        .and_then(|l| sample(&l.items)),
                );
            }
            Ok(())
        })
    }

    fn finish<'a>(
        &'a mut self,
        _run: &'a mut Run<'_>,
        summaries: &'a mut [Summary],
    ) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            for (s, o) in summaries.iter_mut().zip(self.samples.drain(..)) {
                s.object_sample = o;
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(managers: usize) -> DynamicObject {
        let entries: Vec<serde_json::Value> = (0..managers)
            .map(|i| serde_json::json!({"manager": format!("m{i}"), "operation": "Apply"}))
            .collect();
        serde_json::from_value(serde_json::json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "managedFields": entries},
            "data": {"k": "v"},
        }))
        .unwrap()
    }

    #[test]
    fn the_sample_is_the_median_object_and_its_managed_fields() {
        assert_eq!(sample(&[]), None);
        // The median object is the one with two entries, written out by
        // hand as k8s-openapi orders its fields (alphabetically).
        let entries =
            r#"[{"manager":"m0","operation":"Apply"},{"manager":"m1","operation":"Apply"}]"#;
        let whole = format!(
            r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"managedFields":{entries},"name":"a"}},"data":{{"k":"v"}}}}"#
        );
        let s = sample(&[object(5), object(0), object(2)]).unwrap();
        assert_eq!(s.objects, 3);
        assert_eq!(s.managed_fields_bytes, entries.len() as u64);
        assert_eq!(s.bytes, whole.len() as u64);
        // Without entries, managedFields weigh nothing.
        assert_eq!(sample(&[object(0)]).unwrap().managed_fields_bytes, 0);
    }
}
