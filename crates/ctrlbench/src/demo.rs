//! `ctrlbench cluster demo`: the README's first command until experiments
//! land. Brings a plane up, shows it answering as Kubernetes with the Widget
//! CRD, and takes it down.

use std::time::Instant;

use anyhow::{Context, Result};
use k8s_openapi::api::core::v1::Namespace;
use kube::Resource;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;
use widget_api::Widget;

use ctrlbench_plane::{ControlPlane, PlaneOptions};

/// The server-side Table for widgets in `ns`: (column names, rows of cells).
pub async fn widget_table(
    client: &kube::Client,
    ns: &str,
) -> Result<(Vec<String>, Vec<Vec<String>>)> {
    let req = http::Request::get(format!(
        "/apis/{}/namespaces/{ns}/{}",
        Widget::api_version(&()),
        Widget::plural(&())
    ))
    .header("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
    .body(Vec::new())?;
    let table: serde_json::Value = serde_json::from_str(&client.request_text(req).await?)?;
    let cols = table["columnDefinitions"]
        .as_array()
        .context("no columnDefinitions in the Table answer")?
        .iter()
        .map(|c| c["name"].as_str().unwrap_or_default().to_string())
        .collect();
    let rows = table["rows"]
        .as_array()
        .map(|rows| {
            rows.iter()
                .map(|r| {
                    r["cells"]
                        .as_array()
                        .map(|cells| {
                            cells
                                .iter()
                                .map(|c| match c {
                                    serde_json::Value::String(s) => s.clone(),
                                    serde_json::Value::Null => "<none>".to_string(),
                                    other => other.to_string(),
                                })
                                .collect()
                        })
                        .unwrap_or_default()
                })
                .collect()
        })
        .unwrap_or_default();
    Ok((cols, rows))
}

/// Runs the demo against a fresh attached plane.
pub async fn run(opts: &PlaneOptions) -> Result<()> {
    let t0 = Instant::now();
    let plane = ControlPlane::start(opts).await?;
    println!(
        "plane up in {:.1} s (ready {:.2} s after start): {} {}",
        t0.elapsed().as_secs_f64(),
        plane.ready_after.as_secs_f64(),
        plane.url(),
        plane.version
    );
    let client = plane.client().await?;
    let ns = "ctrlbench-demo";
    let nss: Api<Namespace> = Api::all(client.clone());
    nss.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": ns}}))?,
    )
    .await?;
    let widgets: Api<Widget> = Api::namespaced(client.clone(), ns);
    for i in 1..=3 {
        widgets
            .create(&PostParams::default(), &Widget::numbered(i))
            .await?;
    }
    // What a controller does: write status through the subresource.
    widgets
        .patch_status(
            &widget_api::object_name(1),
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "Ready", "processedCount": 1}})),
        )
        .await?;
    let (cols, rows) = widget_table(&client, ns).await?;
    println!("\nkubectl get widgets -n {ns}  (the server's own Table)");
    println!(
        "{}",
        cols.iter().map(|c| format!("{c:<16}")).collect::<String>()
    );
    for r in rows {
        println!(
            "{}",
            r.iter().map(|c| format!("{c:<16}")).collect::<String>()
        );
    }
    let t1 = Instant::now();
    tokio::task::spawn_blocking(move || plane.stop()).await?;
    println!(
        "\nplane stopped in {:.1} s; its directory is removed",
        t1.elapsed().as_secs_f64()
    );
    Ok(())
}
