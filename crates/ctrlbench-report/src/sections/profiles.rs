//! "Where the controller's CPU goes": for every variant profiled
//! (`profile = true`, a command's `pprof`), the folded stacks of all its
//! replicas and repeats (`profile-<k>.folded`) summed, the functions that
//! were on CPU themselves most often (self samples), and a flame graph
//! rendered offline by inferno. Each flame graph sits in an iframe of its
//! own in report.html, so that its script and element ids (inferno's
//! zoom and search) do not meet another's.

use ctrlbench_record::profile::{self, Folded};

use super::Section;
use crate::context::ReportCtx;
use crate::load::Run;
use crate::{Block, Table};

pub struct Profiles;

/// Functions listed per variant, by self samples.
const TOP: usize = 5;

/// Every replica's stacks of one run, summed; None when it was not profiled.
fn stacks_of(run: &Run) -> Option<Folded> {
    let mut files: Vec<_> = std::fs::read_dir(&run.dir.path)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("profile-") && n.ends_with(".folded"))
        })
        .collect();
    files.sort();
    let mut all: Option<Folded> = None;
    for f in files {
        // A torn file is left out; the others still count.
        let Ok(stacks) = profile::read(&f) else {
            continue;
        };
        let into = all.get_or_insert_with(Folded::new);
        for (stack, n) in stacks {
            *into.entry(stack).or_default() += n;
        }
    }
    all
}

/// The flame graph as an SVG document.
fn flame_graph(title: &str, stacks: &Folded) -> Option<String> {
    let lines: Vec<String> = stacks.iter().map(|(s, n)| format!("{s} {n}")).collect();
    let mut opts = inferno::flamegraph::Options::default();
    opts.title = title.to_string();
    opts.count_name = "samples".to_string();
    // Colours from the function names, so a rerun draws the same picture.
    opts.hash = true;
    opts.deterministic = true;
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut opts, lines.iter().map(String::as_str), &mut svg).ok()?;
    String::from_utf8(svg).ok()
}

/// The SVG inside an iframe of its own, as tall as the SVG says it is.
fn framed(svg: &str) -> String {
    let height = svg
        .split("height=\"")
        .nth(1)
        .and_then(|h| h.split('"').next())
        .and_then(|h| h.parse::<f64>().ok())
        .unwrap_or(600.0);
    let doc = svg
        .replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    format!(
        "<iframe style=\"width:100%;height:{:.0}px;border:0\" srcdoc=\"{doc}\"></iframe>",
        height + 8.0
    )
}

impl Section for Profiles {
    fn render(&self, ctx: &ReportCtx, out: &mut Vec<Block>) {
        let mut rows = Vec::new();
        let mut graphs = Vec::new();
        for g in &ctx.groups {
            let runs: Vec<&Run> = ctx
                .results
                .runs
                .iter()
                .filter(|r| r.scale == g.scale && r.variant == g.variant)
                .collect();
            let mut all = Folded::new();
            let mut profiled = 0;
            for run in &runs {
                let Some(stacks) = stacks_of(run) else {
                    continue;
                };
                profiled += 1;
                for (stack, n) in stacks {
                    *all.entry(stack).or_default() += n;
                }
            }
            if profiled == 0 {
                continue;
            }
            let total: u64 = all.values().sum();
            let top: Vec<String> = profile::self_time(&all)
                .into_iter()
                .take(TOP)
                .map(|(f, n)| format!("{f} {:.1} %", 100.0 * n as f64 / total.max(1) as f64))
                .collect();
            rows.push(vec![
                g.scale.to_string(),
                g.variant.clone(),
                format!("{profiled}/{}", runs.len()),
                total.to_string(),
                if top.is_empty() {
                    "—".into()
                } else {
                    top.join("; ")
                },
            ]);
            let title = format!(
                "N={} {}: {total} CPU samples over {profiled} runs",
                g.scale, g.variant
            );
            if total > 0
                && let Some(svg) = flame_graph(&title, &all)
            {
                graphs.push(Block::Plot {
                    title: format!("CPU flame graph, {title}"),
                    svg: framed(&svg),
                });
            }
        }
        if rows.is_empty() {
            return;
        }
        out.push(Block::Heading(
            2,
            "Where the controller's CPU goes (profiles)".into(),
        ));
        out.push(Block::Para(
            "CPU profiles of every replica over each run (profile = true; 99–100 samples a second, \
             fetched in 5 s profiles from the controller's /debug/pprof/profile), summed over the \
             replicas and repeats of a variant: profile-<k>.folded in each run directory. Self \
             samples are those where the function itself was on CPU (the leaf of the stack); \
             report.html draws each variant's flame graph (width = samples, callers below callees)."
                .into(),
        ));
        out.push(Block::Table(Table {
            head: [
                "N",
                "variant",
                "profiled runs",
                "samples",
                "most self samples",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        }));
        out.extend(graphs);
    }
}
