//! The experiments that ship with ctrlbench (`experiments/*.toml`), runnable by name.

/// (name, file text).
pub const BUILTIN: &[(&str, &str)] = &[
    ("quick", include_str!("../../../../experiments/quick.toml")),
    (
        "seed-exp1",
        include_str!("../../../../experiments/seed-exp1.toml"),
    ),
    (
        "seed-exp2",
        include_str!("../../../../experiments/seed-exp2.toml"),
    ),
    (
        "seed-exp3",
        include_str!("../../../../experiments/seed-exp3.toml"),
    ),
    (
        "seed-exp4",
        include_str!("../../../../experiments/seed-exp4.toml"),
    ),
    ("qps", include_str!("../../../../experiments/qps.toml")),
    (
        "rust-vs-go",
        include_str!("../../../../experiments/rust-vs-go.toml"),
    ),
    (
        "antipatterns",
        include_str!("../../../../experiments/antipatterns.toml"),
    ),
    (
        "queues",
        include_str!("../../../../experiments/queues.toml"),
    ),
    (
        "versions",
        include_str!("../../../../experiments/versions.toml"),
    ),
    (
        "sample-controller",
        include_str!("../../../../experiments/sample-controller.toml"),
    ),
    ("perf", include_str!("../../../../experiments/perf.toml")),
    ("noise", include_str!("../../../../experiments/noise.toml")),
    ("http2", include_str!("../../../../experiments/http2.toml")),
    ("scale", include_str!("../../../../experiments/scale.toml")),
    (
        "memory",
        include_str!("../../../../experiments/memory.toml"),
    ),
    (
        "seed-ha",
        include_str!("../../../../experiments/seed-ha.toml"),
    ),
    (
        "seed-ha-single",
        include_str!("../../../../experiments/seed-ha-single.toml"),
    ),
    (
        "failover",
        include_str!("../../../../experiments/failover.toml"),
    ),
    (
        "failover-hung",
        include_str!("../../../../experiments/failover-hung.toml"),
    ),
    (
        "no-leader-election",
        include_str!("../../../../experiments/no-leader-election.toml"),
    ),
    (
        "restart-storm",
        include_str!("../../../../experiments/restart-storm.toml"),
    ),
    (
        "apiserver-restart",
        include_str!("../../../../experiments/apiserver-restart.toml"),
    ),
    (
        "faults",
        include_str!("../../../../experiments/faults.toml"),
    ),
    (
        "allocators",
        include_str!("../../../../experiments/allocators.toml"),
    ),
    (
        "log-level",
        include_str!("../../../../experiments/log-level.toml"),
    ),
];

/// The files built-in experiments' `[workload]` names, by path as the
/// experiment (`experiments/<name>.toml`) resolves it.
pub const FILES: &[(&str, &str)] = &[
    (
        "experiments/sample-controller/crd.yaml",
        include_str!("../../../../experiments/sample-controller/crd.yaml"),
    ),
    (
        "experiments/sample-controller/foo.yaml",
        include_str!("../../../../experiments/sample-controller/foo.yaml"),
    ),
];

/// Parses built-in experiment `name` (its workload files from [`FILES`]).
pub fn parse(name: &str, text: &str) -> Result<super::spec::Experiment, super::spec::SpecError> {
    let path = std::path::PathBuf::from(format!("experiments/{name}.toml"));
    super::spec::parse_with(&path, text, &|p: &std::path::Path| {
        let key = p.to_string_lossy().replace('\\', "/");
        FILES
            .iter()
            .find(|(n, _)| *n == key)
            .map(|(_, t)| t.to_string())
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "not a built-in file"))
    })
}

pub fn get(name: &str) -> Option<&'static str> {
    BUILTIN.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}
