//! Writing a per-scrape CSV: the header once, then one row per scrape,
//! flushed at once so a killed run keeps every row it took.

use std::fs::File;
use std::path::Path;

use anyhow::{Context, Result};

use crate::columns::Catalogue;

/// One CSV file, flushed after every row.
pub struct Table {
    w: csv::Writer<File>,
    width: usize,
}

impl Table {
    pub fn create(path: &Path, header: Vec<String>) -> Result<Table> {
        let mut w = csv::Writer::from_path(path)
            .with_context(|| format!("cannot create {}", path.display()))?;
        w.write_record(&header)?;
        w.flush()?;
        Ok(Table {
            w,
            width: header.len(),
        })
    }

    /// A file with a source's header.
    pub fn for_source(path: &Path, c: &Catalogue) -> Result<Table> {
        Table::create(path, c.header())
    }

    /// Appends a row (padded to the header's width) and flushes it.
    pub fn row(&mut self, mut cells: Vec<String>) -> Result<()> {
        cells.resize(self.width, String::new());
        self.w.write_record(&cells)?;
        self.w.flush()?;
        Ok(())
    }
}
