//! The commands that read and write files only: `export`, `init`, the
//! regression gates over results directories, and how every command prints
//! (a closed pipe is not an error).

use anyhow::{Result, bail};

/// The regression gate: every undecided figure and every decided
/// regression printed, and an error (exit 1) only for the regressions.
pub(super) fn gate(
    a: &std::path::Path,
    b: &std::path::Path,
    threshold: f64,
    reference: Option<&ctrlbench_report::normalise::Reference>,
) -> Result<()> {
    let g = ctrlbench_report::compare::gate(a, b, threshold, reference)?;
    let pct = ctrlbench_report::verdict::percent(threshold);
    emit(&format!("\nRegression gate (±{pct}, {}):\n", g.normalised))?;
    for u in &g.undecided {
        emit(&format!("UNDECIDED {u}\n"))?;
    }
    for w in &g.regressions {
        emit(&format!("REGRESSION {w}\n"))?;
    }
    if !g.regressions.is_empty() {
        bail!(
            "{} headline figure(s) decidedly worse by more than {pct}",
            g.regressions.len()
        );
    }
    Ok(())
}

/// `run --fail-on-regression` and `ctrlbench gate`: a run's own
/// `[[compare]]` answers, gated; an error (exit 1) only for a decided
/// regression, or for a directory with nothing to gate.
pub(super) fn gate_answers(dir: &std::path::Path, threshold: f64) -> Result<()> {
    use ctrlbench_report::questions::{self, Source};
    use ctrlbench_report::verdict;
    let answers = questions::questions(dir, verdict::DEFAULT_MARGIN)?;
    if !answers.iter().any(|a| a.source == Source::Compare) {
        bail!(
            "{}: no [[compare]] answer to gate on (run with --baseline REF, or add [[compare]])",
            dir.display()
        );
    }
    let g = ctrlbench_report::gate::of_answers(&answers, threshold);
    let pct = verdict::percent(threshold);
    emit(&format!("\nRegression gate (±{pct}, {}):\n", g.normalised))?;
    for u in &g.undecided {
        emit(&format!("UNDECIDED {u}\n"))?;
    }
    for w in &g.regressions {
        emit(&format!("REGRESSION {w}\n"))?;
    }
    if g.regressions.is_empty() {
        emit("no decided regression\n")?;
        return Ok(());
    }
    bail!(
        "{} question(s) decidedly worse by more than {pct}: see {}",
        g.regressions.len(),
        dir.join("verdicts.json").display()
    )
}

/// `ctrlbench export`: verdicts.json, as is or for a dashboard, on standard
/// output or into `out`; github-action-benchmark as two files, one per
/// better side, each named with the `tool:` it is for.
pub(super) fn export(
    dir: &std::path::Path,
    format: crate::cli::ExportFormat,
    out: Option<&std::path::Path>,
    margin: Option<f64>,
) -> Result<()> {
    use crate::cli::ExportFormat;
    use ctrlbench_report::export::{self as dash, Format};
    let verdicts = dash::verdicts_of(dir, margin)?;
    let json =
        |v: &serde_json::Value| -> Result<String> { Ok(serde_json::to_string_pretty(v)? + "\n") };
    let one = match format {
        ExportFormat::Verdicts => verdicts,
        ExportFormat::Dashboard(Format::Bmf) => dash::bmf(&verdicts),
        ExportFormat::Dashboard(Format::GithubActionBenchmark) => {
            let split = dash::github_action_benchmark(&verdicts);
            let prefix = out.map_or_else(|| dir.join("github-action-benchmark"), Into::into);
            for (side, entries, tool) in [
                ("bigger", split.bigger, dash::BIGGER_TOOL),
                ("smaller", split.smaller, dash::SMALLER_TOOL),
            ] {
                let mut name = prefix.clone().into_os_string();
                name.push(format!("-{side}.json"));
                let path = std::path::PathBuf::from(name);
                let n = entries.len();
                let text = json(&serde_json::Value::Array(entries))?;
                ctrlbench_record::files::write_atomic(&path, text.as_bytes())?;
                emit(&format!("{}: tool: {tool} ({n} entries)\n", path.display()))?;
            }
            if !split.sideless.is_empty() {
                emit(&format!(
                    "left out {} ratio(s) of figures without a better side: {}\n",
                    split.sideless.len(),
                    split.sideless.join(", ")
                ))?;
            }
            return Ok(());
        }
    };
    match out {
        Some(path) => ctrlbench_record::files::write_atomic(path, json(&one)?.as_bytes()),
        None => emit(&json(&one)?),
    }
}

/// `ctrlbench init`: the commented template, or a file read off a project.
pub(super) fn init(
    name: Option<String>,
    from: Option<std::path::PathBuf>,
    kind: Option<String>,
    cargo_profile: &str,
) -> Result<()> {
    let here = std::path::Path::new(".");
    let Some(project) = from else {
        let path = crate::experiment::init::write(&name.unwrap_or_default(), here)?;
        println!(
            "wrote {}: fill in the paths marked TODO, then `ctrlbench run {} --dry-run`",
            path.display(),
            path.display()
        );
        return Ok(());
    };
    let (path, warnings) = crate::experiment::init::write_from(
        &project,
        kind.as_deref(),
        name.as_deref(),
        cargo_profile,
        here,
    )?;
    for w in &warnings {
        eprintln!("warning: {w}");
    }
    println!(
        "wrote {}: check it, then `ctrlbench run {} --dry-run`",
        path.display(),
        path.display()
    );
    Ok(())
}

/// Writes to stdout; a reader that went away (`| head`, `grep -q`) is not
/// an error and must not panic.
pub(super) fn emit(text: &str) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => Ok(r?),
    }
}
