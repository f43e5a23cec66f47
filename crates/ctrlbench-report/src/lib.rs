//! `ctrlbench report` and `ctrlbench compare`: reads a results directory
//! back through the record types (nothing else: no kube, no tokio) and
//! writes `report.md` and one self-contained `report.html` (tables, inline
//! SVG plots) into it. The figures come from the metric catalogue
//! (`metrics`) per run (`figures`); the document is a list of sections
//! (`sections`) over one shared context (`context`), built once as blocks and
//! rendered twice (`Block::markdown`, `html`).

pub mod attribution;
pub mod compare;
pub mod context;
pub mod faults;
pub mod figures;
pub mod html;
pub mod interval;
pub mod load;
pub mod metrics;
pub mod plots;
pub mod quantile;
pub mod sections;
pub mod stats;

use std::path::{Path, PathBuf};

use anyhow::Result;
use ctrlbench_record::ResultsDir;
use ctrlbench_record::files::write_atomic;

/// A piece of the report.
#[derive(Clone)]
pub enum Block {
    Heading(u8, String),
    Para(String),
    List(Vec<String>),
    /// Shown prominently (runs left out of medians, incomplete experiments).
    Warning(Vec<String>),
    Table(Table),
    /// An inline SVG document; Markdown only names it.
    Plot {
        title: String,
        svg: String,
    },
}

#[derive(Clone)]
pub struct Table {
    pub head: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// Markdown, `|` in cells escaped.
    pub fn markdown(&self) -> String {
        let line = |cells: &[String]| {
            let c: Vec<String> = cells.iter().map(|c| c.replace('|', "\\|")).collect();
            format!("| {} |\n", c.join(" | "))
        };
        let mut s = line(&self.head);
        s.push_str(&format!("|{}\n", "---|".repeat(self.head.len())));
        for r in &self.rows {
            s.push_str(&line(r));
        }
        s
    }
}

impl Block {
    pub fn markdown(&self) -> String {
        match self {
            Block::Heading(l, t) => format!("{} {t}\n\n", "#".repeat(*l as usize)),
            Block::Para(t) => format!("{t}\n\n"),
            Block::List(items) => {
                let mut s: String = items.iter().map(|i| format!("- {i}\n")).collect();
                s.push('\n');
                s
            }
            Block::Warning(items) => {
                let mut s: String = items.iter().map(|i| format!("> ⚠ {i}\n>\n")).collect();
                s.push('\n');
                s
            }
            Block::Table(t) => format!("{}\n", t.markdown()),
            Block::Plot { title, .. } => format!("*Plot: {title} (inline SVG in report.html)*\n\n"),
        }
    }
}

/// The paths `write` produced.
pub struct Written {
    pub markdown: PathBuf,
    pub html: PathBuf,
}

/// (report.md, report.html) of a results directory, not written.
pub fn render(dir: &Path) -> Result<(String, String)> {
    let ctx = context::ReportCtx::load(dir)?;
    let blocks = sections::document(&ctx);
    let md: String = blocks.iter().map(Block::markdown).collect();
    let title = format!("ctrlbench report: {}", ctx.results.experiment());
    Ok((md, html::document(&title, &blocks)))
}

/// Writes report.md and report.html into `dir`, each whole or not at all.
pub fn write(dir: &Path) -> Result<Written> {
    let (md, html) = render(dir)?;
    let rd = ResultsDir::at(dir);
    let w = Written {
        markdown: rd.report_md(),
        html: rd.report_html(),
    };
    write_atomic(&w.markdown, md.as_bytes())?;
    write_atomic(&w.html, html.as_bytes())?;
    Ok(w)
}
