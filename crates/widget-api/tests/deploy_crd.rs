//! deploy/crd.yaml is generated from the Rust types (`ctrlbench crd > deploy/crd.yaml`).

#[test]
fn deploy_crd_yaml_matches_the_types() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../deploy/crd.yaml");
    let on_disk = std::fs::read_to_string(path).expect("deploy/crd.yaml exists");
    assert!(
        on_disk == widget_api::crd_yaml(),
        "deploy/crd.yaml drifted from the Widget types: run `cargo run -p ctrlbench -- crd > deploy/crd.yaml`"
    );
}
