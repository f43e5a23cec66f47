//! Writing and reading the records' files: JSON and CSV records read with an
//! error that names the file, and every file written whole or not at all (temp
//! file + rename), so a killed run never leaves a torn summary or report.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// Writes `path` whole or not at all: a temp file beside it, then rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, bytes).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
}

/// Reads a JSON record; the error names the file and what it should have held.
pub fn read_json<T: DeserializeOwned>(path: &Path, what: &str) -> Result<T> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{} is not a valid {what}", path.display()))
}

/// Writes a JSON record whole or not at all.
pub fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    write_atomic(path, serde_json::to_string_pretty(value)?.as_bytes())
}

/// Writes CSV records whole or not at all; `header` is written as well when
/// there are no rows (with rows, serde writes it from the first).
pub fn write_csv<T: Serialize>(path: &Path, rows: &[T], header: &[&str]) -> Result<()> {
    let mut w = csv::Writer::from_writer(Vec::new());
    if rows.is_empty() {
        w.write_record(header)?;
    }
    for r in rows {
        w.serialize(r)?;
    }
    let bytes = w
        .into_inner()
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    write_atomic(path, &bytes)
}

/// Reads CSV records; empty when the file does not exist (nothing of the kind ran).
pub fn read_csv<T: DeserializeOwned>(path: &Path) -> Result<Vec<T>> {
    if !path.is_file() {
        return Ok(Vec::new());
    }
    let mut r =
        csv::Reader::from_path(path).with_context(|| format!("cannot read {}", path.display()))?;
    r.deserialize()
        .map(|rec| rec.with_context(|| format!("malformed {}", path.display())))
        .collect()
}
