//! A file of one serde record per CSV row, as audit.csv and footprint.csv
//! are: written whole (a header even with no row, so an empty run is told
//! from a missing file), read back as None when the file does not exist.

use std::path::Path;

use anyhow::{Context, Result};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// Writes `rows` to `path`, with `header` when there is no row to name the columns.
pub fn write<T: Serialize>(path: &Path, header: &[&str], rows: &[T]) -> Result<()> {
    let mut w = csv::Writer::from_path(path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    if rows.is_empty() {
        w.write_record(header)?;
    }
    for r in rows {
        w.serialize(r)?;
    }
    w.flush()?;
    Ok(())
}

/// The rows of `path`; None when the file does not exist.
pub fn read<T: DeserializeOwned>(path: &Path) -> Result<Option<Vec<T>>> {
    if !path.is_file() {
        return Ok(None);
    }
    let mut r =
        csv::Reader::from_path(path).with_context(|| format!("cannot read {}", path.display()))?;
    r.deserialize()
        .map(|rec| rec.with_context(|| format!("malformed {}", path.display())))
        .collect::<Result<Vec<_>>>()
        .map(Some)
}
