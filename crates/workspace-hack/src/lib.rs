//! Empty: this crate exists for its Cargo.toml, which gives every shared
//! dependency one feature set across the workspace's builds (see there).
