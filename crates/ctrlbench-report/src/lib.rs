//! `ctrlbench report` and `ctrlbench compare`: reads a results directory
//! back through the record types (nothing else: no kube, no tokio) and
//! writes `report.md` and one self-contained `report.html` (tables, inline
//! SVG plots) into it. The figures come from the metric catalogue
//! (`metrics`) per run (`figures`); the document is a list of sections
//! (`sections`) over one shared context (`context`), built once as blocks and
//! rendered twice (`Block::markdown`, `html`).
//!
//! Ratios and verdicts: `interval` (paired over the repeats of one results
//! directory, Student t on the log ratios — `student`; unpaired bootstrap for
//! two directories) and `verdict` (higher, lower, equivalent within the
//! margin, undecided with the minimum detectable effect).
//!
//! **Questions.** [`questions::questions`]`(dir: &Path, margin: f64) ->
//! Result<Vec<Answer>>` answers every question of a results directory — each
//! preset against its counterpart, each rust-X / go-X pair on Ready/s, peak
//! RSS and CPU per reconcile, and each manifest `[[compare]]` pair (`a`, `b`,
//! `figure`: a label or column heading of the metric catalogue, any ASCII
//! case, e.g. "Ready/s", "peak RSS", "reconcile p99", "T100", "controller
//! CPU") — per scale, as an [`questions::Answer`] `{ label, a, b, figure,
//! ratio, lo, hi, pairs, verdict, mde, … }` with [`verdict::Verdict`]`::{Higher,
//! Lower, Equivalent, Undecided}`. A runner calls it after each repeat and
//! stops when [`questions::all_decided`] says so; `margin` is a fraction
//! (0.05 = ±5 %). The report opens with the same answers and their forest
//! plot (`forest`); `compare` prints them before its table.
//!
//! **Noise.** [`noise::noise`]`(dir: &Path) -> Result<Vec<NoiseRow>>` gives
//! this machine's noise from an A/A run: for every `[[compare]]` pair whose
//! two variants ran with identical settings (same implementation, flags,
//! preset and recorded settings, start mode, workload, Kubernetes version),
//! per scale and figure of [`noise::FIGURES`] (Ready/s, T50, T100, reconcile
//! p50 / p99 / mean, controller CPU, CPU per reconcile, peak RSS), a
//! [`noise::NoiseRow`] `{ scale, a, b, figure, pairs, log_sd, spread, ratio,
//! lo, hi, half_width, projections, margin }`: s, the standard deviation of
//! the per-repeat log ratios ln(B_k/A_k) over the pairs the answers use;
//! `spread` = e^s − 1; the paired 95 % interval now; and
//! [`noise::Projection`]s `{ repeats, half_width, within_margin }` at K = 3,
//! 6 and 10, half-width e^(t(0.975, K − 1)·s/√K) − 1. The margin is the
//! manifest's, else ±5 %; [`noise::repeats_to_decide`] turns s into the
//! repeats a difference of the margin takes. Empty without an A/A pair. The
//! report shows it as "Machine noise (A/A)", after the answers.

pub mod attribution;
pub mod budget;
pub mod compare;
pub mod context;
mod counterparts;
pub mod diagnosis;
pub mod direction;
pub mod evidence;
pub mod export;
pub mod faults;
pub mod figures;
pub mod footprint;
pub mod forest;
pub mod gate;
mod goals;
pub mod growth;
pub mod html;
pub mod interval;
pub mod load;
pub mod metrics;
pub mod noise;
pub mod normalise;
pub mod plots;
pub mod pods;
pub mod quantile;
pub mod questions;
pub mod sections;
pub mod stats;
pub mod student;
pub mod verdict;

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

/// How a report is rendered: the equivalence margin, when the command line
/// gives one (else the manifest's, else ±5 %).
#[derive(Clone, Debug, Default)]
pub struct Options {
    pub margin: Option<f64>,
}

/// The paths `write` produced.
pub struct Written {
    pub markdown: PathBuf,
    pub html: PathBuf,
    pub verdicts: PathBuf,
}

/// (report.md, report.html) of a results directory, not written.
pub fn render(dir: &Path) -> Result<(String, String)> {
    render_with(dir, &Options::default())
}

/// `render` with options.
pub fn render_with(dir: &Path, opts: &Options) -> Result<(String, String)> {
    let ctx = context::ReportCtx::load(dir, opts)?;
    Ok(render_ctx(&ctx))
}

/// The report's "What to fix" of a results directory, as Markdown text:
/// what `ctrlbench diagnose` prints.
pub fn diagnose_text(dir: &Path) -> Result<String> {
    let ctx = context::ReportCtx::load(dir, &Options::default())?;
    let mut out = Vec::new();
    sections::what_to_fix(&ctx, &mut out);
    Ok(out.iter().map(Block::markdown).collect())
}

fn render_ctx(ctx: &context::ReportCtx) -> (String, String) {
    let blocks = sections::document(ctx);
    let md: String = blocks.iter().map(Block::markdown).collect();
    let title = format!("ctrlbench report: {}", ctx.results.experiment());
    (md, html::document(&title, &blocks))
}

/// Writes report.md, report.html and verdicts.json into `dir`, each whole
/// or not at all.
pub fn write(dir: &Path) -> Result<Written> {
    write_with(dir, &Options::default())
}

/// `write` with options.
pub fn write_with(dir: &Path, opts: &Options) -> Result<Written> {
    let ctx = context::ReportCtx::load(dir, opts)?;
    let (md, html) = render_ctx(&ctx);
    let verdicts = export::verdicts(&ctx.results, &ctx.groups, &ctx.answers, ctx.margin);
    let rd = ResultsDir::at(dir);
    let w = Written {
        markdown: rd.report_md(),
        html: rd.report_html(),
        verdicts: rd.verdicts_json(),
    };
    write_atomic(&w.markdown, md.as_bytes())?;
    write_atomic(&w.html, html.as_bytes())?;
    let json = serde_json::to_string_pretty(&verdicts)? + "\n";
    write_atomic(&w.verdicts, json.as_bytes())?;
    Ok(w)
}
