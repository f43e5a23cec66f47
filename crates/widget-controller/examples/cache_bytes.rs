//! Where a cached Widget's bytes go. dhat's heap profiler counts the bytes
//! live after N Widgets, decoded from the JSON the apiserver sends (a Widget
//! the loader created and a controller updated: two managedFields entries),
//! are held the way kube-runtime's reflector holds them — an `Arc<Widget>` per
//! `ObjectRef` in a `HashMap` — once with managedFields as k8s-openapi parses
//! them (`FieldsV1` as a `serde_json::Value` tree), once with each FieldsV1
//! kept as its JSON text (what client-go keeps: raw bytes), once without
//! managedFields; and the bare map of the same keys. Bytes per object, each
//! form measured alone from an empty heap:
//!
//!     cargo run --release -p widget-controller --example cache_bytes -- [N]

use std::collections::HashMap;
use std::sync::Arc;

use kube::runtime::reflector::ObjectRef;
use widget_api::Widget;

// The controller's own module: a binary crate has no library to import.
#[path = "../src/managed_fields.rs"]
mod managed_fields;

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// Widget `i` as the apiserver returns it after the loader's create and the
/// controller's status update (field layout as kube-apiserver 1.37 writes it).
fn apiserver_json(i: u64) -> String {
    let ns = "cb-rust-good-n5000-r1-1a2b";
    format!(
        r#"{{"apiVersion":"benchmark.example.com/v1alpha1","kind":"Widget","metadata":{{"creationTimestamp":"2026-12-01T21:38:28Z","generation":1,"labels":{{"ctrlbench.dev/run-id":"{ns}"}},"managedFields":[{{"apiVersion":"benchmark.example.com/v1alpha1","fieldsType":"FieldsV1","fieldsV1":{{"f:metadata":{{"f:labels":{{".":{{}},"f:ctrlbench.dev/run-id":{{}}}}}},"f:spec":{{".":{{}},"f:count":{{}},"f:message":{{}}}}}},"manager":"ctrlbench","operation":"Update","time":"2026-12-01T21:38:28Z"}},{{"apiVersion":"benchmark.example.com/v1alpha1","fieldsType":"FieldsV1","fieldsV1":{{"f:status":{{".":{{}},"f:lastUpdated":{{}},"f:phase":{{}},"f:processedCount":{{}}}}}},"manager":"widget-controller","operation":"Update","subresource":"status","time":"2026-12-01T21:38:29Z"}}],"name":"widget-{i:06}","namespace":"{ns}","resourceVersion":"{}","uid":"5f0c2a8e-3b1d-4c6e-9a7f-{i:012}"}},"spec":{{"count":{i},"message":"benchmark run {i}"}},"status":{{"lastUpdated":"2026-12-01T21:38:29.123456Z","phase":"Ready","processedCount":1}}}}"#,
        100_000 + i
    )
}

/// Bytes live on the heap now.
fn live() -> usize {
    dhat::HeapStats::get().curr_bytes
}

/// Bytes per object that `keep` holds for N objects, from an empty heap.
fn per_object(n: u64, texts: &[String], keep: fn(Widget) -> Widget) -> f64 {
    let before = live();
    let store: HashMap<ObjectRef<Widget>, Arc<Widget>> = texts
        .iter()
        .map(|t| {
            let w = keep(serde_json::from_str::<Widget>(t).expect("a Widget"));
            (ObjectRef::from_obj(&w), Arc::new(w))
        })
        .collect();
    let bytes = live() - before;
    drop(store);
    bytes as f64 / n as f64
}

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .map_or(5000, |a| a.parse().expect("N: a number of objects"));
    let _profiler = dhat::Profiler::builder().testing().build();
    let texts: Vec<String> = (1..=n).map(apiserver_json).collect();
    let wire = texts.iter().map(String::len).sum::<usize>() as f64 / n as f64;
    let tree = per_object(n, &texts, |w| w);
    let text = per_object(n, &texts, |mut w| {
        managed_fields::as_text(&mut w.metadata);
        w
    });
    let none = per_object(n, &texts, |mut w| {
        w.metadata.managed_fields = None;
        w
    });
    let keys = {
        let before = live();
        let map: HashMap<ObjectRef<Widget>, ()> = texts
            .iter()
            .map(|t| {
                (
                    ObjectRef::from_obj(&serde_json::from_str::<Widget>(t).unwrap()),
                    (),
                )
            })
            .collect();
        let b = live() - before;
        drop(map);
        b as f64 / n as f64
    };
    println!("N = {n} Widgets, bytes per object (heap live, dhat)");
    println!("  JSON as sent by the apiserver   {wire:8.0}");
    println!("  cached, managedFields as a tree {tree:8.0}");
    println!("  cached, FieldsV1 as JSON text   {text:8.0}");
    println!("  cached, managedFields stripped  {none:8.0}");
    println!("  the map's keys alone            {keys:8.0}");
    println!("  managedFields tree              {:8.0}", tree - none);
    println!("  managedFields as text           {:8.0}", text - none);
}
