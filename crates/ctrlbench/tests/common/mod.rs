//! What the CLI-driven test binaries share: the `ctrlbench` command with the
//! Rust widget-controller that `cargo test --workspace` built beside it.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The widget-controller binary next to this test's ctrlbench.
pub fn widget_controller() -> PathBuf {
    let p = Path::new(env!("CARGO_BIN_EXE_ctrlbench")).with_file_name("widget-controller");
    assert!(
        p.is_file(),
        "{} is missing: run the tests with `cargo test --workspace`",
        p.display()
    );
    p
}

/// `ctrlbench`, running that widget-controller for `impl = "rust"`.
pub fn ctrlbench() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ctrlbench"));
    c.env("CTRLBENCH_WIDGET_CONTROLLER", widget_controller());
    c
}
