//! The experiments that ship with ctrlbench (`experiments/*.toml`), runnable by name.

/// (name, file text).
pub const BUILTIN: [(&str, &str); 12] = [
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
        "seed-ha",
        include_str!("../../../../experiments/seed-ha.toml"),
    ),
    (
        "seed-ha-single",
        include_str!("../../../../experiments/seed-ha-single.toml"),
    ),
    (
        "faults",
        include_str!("../../../../experiments/faults.toml"),
    ),
];

pub fn get(name: &str) -> Option<&'static str> {
    BUILTIN.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}
