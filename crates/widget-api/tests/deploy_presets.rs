//! deploy/presets.toml is the one preset table; controllers/go/presets.toml is
//! its byte-identical copy for go:embed. This test fails when they drift (the
//! Go test TestPresetsCopyMatchesDeploy checks the same from the other side).

#[test]
fn go_copy_of_presets_toml_matches_deploy() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let deploy = std::fs::read(format!("{root}/deploy/presets.toml")).expect("deploy/presets.toml");
    let go = std::fs::read(format!("{root}/controllers/go/presets.toml"))
        .expect("controllers/go/presets.toml");
    assert!(
        deploy == go,
        "controllers/go/presets.toml drifted from deploy/presets.toml: run `cp deploy/presets.toml controllers/go/presets.toml`"
    );
    assert_eq!(
        deploy,
        widget_api::presets::PRESETS_TOML.as_bytes(),
        "the compiled-in table is stale"
    );
}
