//! The results contract of ctrlbench. A run writes these types and the
//! report reads them back; no other crate spells a file name, a JSON key or a
//! CSV column. Pure on purpose (no kube, no tokio, no HTTP), so the report
//! built on it stays pure too.
//!
//! - [`layout`]: where everything lives in a results directory.
//! - [`manifest`], [`summary`], [`objects`], [`pods`], [`audit`], [`faults`], [`likely`]: the JSON and CSV records.
//! - [`columns`]: one catalogue per scraped source (controller, apiserver,
//!   etcd), each column's name next to how its value is taken from a page.
//! - [`prom`]: Prometheus text → [`prom::Page`]; [`table`] writes CSV rows,
//!   [`series`] reads them back; [`files`] writes every file atomically.

pub mod audit;
pub mod columns;
pub mod faults;
pub mod files;
pub mod footprint;
pub mod layout;
pub mod likely;
pub mod manifest;
pub mod objects;
pub mod phases;
pub mod plane;
pub mod pods;
pub mod profile;
pub mod prom;
pub mod rows;
pub mod series;
pub mod summary;
pub mod table;
pub mod time;

pub use layout::{ResultsDir, RunDir};
pub use manifest::Manifest;
pub use objects::ObjectRecord;
pub use summary::{Settings, StopReason, Summary};
