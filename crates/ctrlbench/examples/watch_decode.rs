//! What our watch spends decoding one object: a written Widget (the
//! loader's create and a controller's status update, two managedFields
//! entries, about 1 KB as sent) decoded as kube's `DynamicObject` and as
//! `run::watched::Watched`, which skips the field sets. Prints the CPU
//! microseconds per object of each, over three rounds of 200 000 decodes:
//! `cargo run --release -p ctrlbench --example watch_decode`.

use std::hint::black_box;

use ctrlbench::run::watched::Watched;
use kube::api::DynamicObject;

const WIDGET: &str = r#"{"apiVersion":"bench.ctrlbench.dev/v1","kind":"Widget","metadata":{"name":"w-000123","namespace":"ctrlbench-r1","uid":"8d7c2f0e-6a55-4c1a-9d0b-1f2e3d4c5b6a","resourceVersion":"1234567","generation":1,"creationTimestamp":"2026-12-02T10:00:00Z","labels":{"ctrlbench.dev/run-id":"r1"},"managedFields":[{"manager":"ctrlbench-loader","operation":"Update","apiVersion":"bench.ctrlbench.dev/v1","time":"2026-12-02T10:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:ctrlbench.dev/run-id":{}}},"f:spec":{".":{},"f:color":{},"f:size":{},"f:replicas":{}}}},{"manager":"widget-controller","operation":"Update","apiVersion":"bench.ctrlbench.dev/v1","time":"2026-12-02T10:00:01Z","fieldsType":"FieldsV1","fieldsV1":{"f:status":{".":{},"f:conditions":{},"f:observedGeneration":{},"f:phase":{}}},"subresource":"status"}]},"spec":{"color":"blue","size":3,"replicas":1},"status":{"conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-12-02T10:00:01Z","reason":"Reconciled","message":""}],"observedGeneration":1,"phase":"Ready"}}"#;

const DECODES: u32 = 200_000;

/// CPU microseconds per decode of `WIDGET` as `T`.
fn per_decode<T: serde::de::DeserializeOwned>() -> f64 {
    let start = ctrlbench_plane::process::own_cpu_seconds();
    for _ in 0..DECODES {
        black_box(serde_json::from_str::<T>(black_box(WIDGET)).expect("the fixture decodes"));
    }
    (ctrlbench_plane::process::own_cpu_seconds() - start) / f64::from(DECODES) * 1e6
}

fn main() {
    println!("{} bytes per object as sent", WIDGET.len());
    for round in 1..=3 {
        let dynamic = per_decode::<DynamicObject>();
        let watched = per_decode::<Watched>();
        println!(
            "round {round}: DynamicObject {dynamic:.2} µs, Watched {watched:.2} µs ({:.2}×)",
            watched / dynamic
        );
    }
}
