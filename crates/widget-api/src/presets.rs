//! The controller presets and the rules that turn a controller's flags into
//! its settings. The data lives in `deploy/presets.toml` (compiled in here);
//! this module owns reading it and the resolution rules documented there,
//! which the Rust controller applies through [`resolve`] and the Go
//! controller mirrors from its embedded copy of the same file. The harness
//! takes the list of valid preset names from [`names`].
//!
//! One file per idea, each public item re-exported here so that users name
//! only `widget_api::presets::…`: `values` (the table's own words and shared
//! constants), `table` (the file and its rows) and `flags` (the command
//! line and the resolution rules). What a controller runs with, and its
//! `--print-settings` JSON, is `ctrlbench_settings`, re-exported here with
//! its words: the harness's record reads the same type.

mod flags;
mod table;
mod values;

pub use ctrlbench_settings::{
    Cache, LeaderElection, LogFormat, LogLevel, Predicate, Queue, RateLimit, Read, Settings,
    StatusWrite, Tunables,
};
pub use flags::{Flags, resolve, resolve_with};
pub use table::{Defaults, MAX_REPLICAS, PRESETS_TOML, Preset, Table, get, names, table};
pub use values::{
    CLIENT_BUCKETS, FINALIZER, FlagError, Question, check_bind_address, leader_election, retry,
};
