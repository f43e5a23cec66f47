//! What each subcommand does, given its parsed arguments. `run` owns its
//! interrupt handling (it cleans up and keeps partial results); every other
//! command is simply dropped on Ctrl-C, which stops what it had started.

use std::process::ExitCode;

mod files;
use files::{emit, export, gate, gate_answers, init};

use anyhow::{Result, bail};

use crate::cli::{ClusterCmd, Command, ControllersCmd, RunArgs};
use ctrlbench_plane::{PlaneOptions, bench, binaries, supervisor};

/// An error as one line: each cause's first line, joined by ": " (some
/// parsers add multi-line code frames after their message).
pub fn one_line(e: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in e.chain() {
        let first = cause
            .to_string()
            .lines()
            .next()
            .unwrap_or_default()
            .trim()
            .to_string();
        // A context often repeats its cause's text; keep each piece once.
        if !first.is_empty() && !parts.last().is_some_and(|p| p.ends_with(&first)) {
            parts.push(first);
        }
    }
    parts.join(": ")
}

/// Resolves on Ctrl-C, SIGTERM or SIGHUP (a closed terminal).
pub async fn interrupted() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
    let mut hup = signal(SignalKind::hangup()).expect("SIGHUP handler");
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {},
        _ = term.recv() => {},
        _ = hup.recv() => {},
    }
}

/// Removes what killed runs left behind: temporary plane directories whose
/// owner is gone (named planes are checked by `cluster status`/`up`).
pub fn sweep() {
    for d in ctrlbench_plane::plane::sweep_orphans() {
        eprintln!("removed {} (its ctrlbench process was gone)", d.display());
    }
}

/// Every command but `run`. The commands that only read and write files
/// run on the blocking pool, so that the runtime's one thread stays free to
/// see a signal: a long scan (init --from on a large repository) or report
/// still ends at once on Ctrl-C or SIGTERM.
pub async fn dispatch(cmd: Command) -> Result<()> {
    match cmd {
        Command::Cluster(c) => cluster(c).await,
        Command::Run(_) => unreachable!("`run` is dispatched by `run`"),
        Command::Probe {
            objects,
            kubeconfig,
            context,
            plane,
            json,
        } => {
            sweep();
            if objects == 0 {
                bail!("--objects must be at least 1");
            }
            let popts = PlaneOptions::try_from(&plane)?;
            let cluster = crate::run::Cluster::connect(popts, kubeconfig, context).await?;
            let rows =
                crate::run::probe::run(&cluster.client, objects, cluster.no_namespace_controller)
                    .await;
            cluster.close().await?;
            let rows = rows?;
            if json {
                emit(&format!("{}\n", serde_json::to_string_pretty(&rows)?))?;
            } else {
                emit(&crate::run::probe::render(&rows))?;
            }
            Ok(())
        }
        Command::Controllers(ControllersCmd::Build) => {
            for (label, path) in
                tokio::task::spawn_blocking(crate::controllers::build_all).await??
            {
                emit(&format!("{label} {}\n", path.display()))?;
            }
            Ok(())
        }
        cmd => tokio::task::spawn_blocking(move || offline(cmd)).await?,
    }
}

/// The commands that touch no cluster: files in, files or lines out.
fn offline(cmd: Command) -> Result<()> {
    match cmd {
        Command::Cluster(_) | Command::Run(_) | Command::Probe { .. } | Command::Controllers(_) => {
            unreachable!("dispatched on the runtime")
        }
        Command::Crd => {
            emit(&widget_api::crd_yaml())?;
            Ok(())
        }
        Command::Report { dir, margin } => {
            let opts = ctrlbench_report::Options { margin };
            let w = ctrlbench_report::write_with(&dir, &opts)?;
            println!("report: {}", w.markdown.display());
            println!("report: {}", w.html.display());
            println!("verdicts: {}", w.verdicts.display());
            Ok(())
        }
        Command::Export {
            dir,
            format,
            out,
            margin,
        } => export(&dir, format, out.as_deref(), margin),
        Command::Compare {
            a,
            b: None,
            pair,
            fail_on_regression,
            margin,
            reference,
        } => {
            if fail_on_regression.is_some() {
                bail!("--fail-on-regression compares two results directories: give B too");
            }
            if reference.is_some() {
                bail!("--reference normalises two results directories: give B too");
            }
            let pairs = if pair.is_empty() {
                let p = ctrlbench_report::compare::default_variant_pairs(&a)?;
                if p.is_empty() {
                    bail!(
                        "{}: no rust-X/go-X variant pairs; give a second results directory or --pair X:Y",
                        a.display()
                    );
                }
                p
            } else {
                pair
            };
            let opts = ctrlbench_report::compare::Options {
                margin,
                reference: None,
            };
            emit(&ctrlbench_report::compare::compare_variants_with(
                &a, &pairs, &opts,
            )?)?;
            Ok(())
        }
        Command::Compare {
            a,
            b: Some(b),
            pair,
            fail_on_regression,
            margin,
            reference,
        } => {
            if !pair.is_empty() {
                bail!("--pair compares variants of one results directory: drop B or --pair");
            }
            let reference = reference
                .as_deref()
                .map(ctrlbench_report::normalise::Reference::parse);
            let opts = ctrlbench_report::compare::Options {
                margin,
                reference: reference.clone(),
            };
            emit(&ctrlbench_report::compare::compare_with(&a, &b, &opts)?)?;
            if let Some(t) = fail_on_regression {
                gate(&a, &b, t, reference.as_ref())?;
            }
            Ok(())
        }
        Command::Init {
            name,
            from,
            kind,
            cargo_profile,
        } => init(name, from, kind, &cargo_profile),
        Command::Gate {
            dir,
            fail_on_regression,
        } => gate_answers(&dir, fail_on_regression),
        Command::Budget { dir, headroom } => emit(&crate::budget::table(&dir, headroom)?),
        Command::Diagnose { rules: true, .. } => emit(&ctrlbench_report::diagnosis::markdown()),
        Command::Diagnose { dir, rules: false } => {
            let dir = dir.expect("clap requires DIR without --rules");
            emit(&ctrlbench_report::diagnose_text(&dir)?)
        }
        Command::Calibrate { dir } => {
            emit(&crate::calibration::calibrate(&dir)?)?;
            Ok(())
        }
        Command::Doctor { seconds, results } => {
            let over = std::time::Duration::from_secs_f64(seconds.clamp(0.2, 60.0));
            let lines = crate::doctor::check(over, &results);
            emit(&crate::doctor::render(&lines))?;
            if lines.iter().any(|l| l.disturbs) {
                bail!("something on this machine would disturb a measurement (✗ above)");
            }
            Ok(())
        }
        Command::Experiments { keys: true } => emit(&crate::experiment::spec::keys::markdown()),
        Command::Experiments { keys: false } => {
            emit(&crate::experiment::listing(&crate::experiment::list()))
        }
    }
}

/// `ctrlbench run`: signals cancel the run, which then cleans up and exits 130.
pub async fn run(a: RunArgs) -> ExitCode {
    match run_inner(a).await {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", one_line(&e));
            ExitCode::FAILURE
        }
    }
}

async fn run_inner(a: RunArgs) -> Result<ExitCode> {
    use crate::experiment::{self, grow, plan};
    // --grow's flags first: a wrong combination is said before anything is read.
    let overrides = a.overrides();
    let growing = grow::Request::of(&overrides)?;
    // A dry run writes nothing: what a run would do is said instead.
    if a.dry_run {
        for d in ctrlbench_plane::plane::orphans() {
            eprintln!(
                "would remove {} (its ctrlbench process is gone; not in a dry run)",
                d.display()
            );
        }
    } else {
        sweep();
    }
    let mut exp = experiment::load(&a.experiment)?;
    overrides.apply(&mut exp)?;
    confirm_target(&exp, &a)?;
    if let Some(r) = &a.baseline {
        for t in crate::run::baseline::add_twins(&mut exp, r, a.dry_run)? {
            let commit = &t.commit[..12.min(t.commit.len())];
            if t.exported {
                eprintln!(
                    "baseline: {} is {} built from {r} ({commit}, in {})",
                    t.twin,
                    t.variant,
                    t.tree.display()
                );
            } else {
                eprintln!(
                    "baseline: {} would be {} built from {r} ({commit}), exported from {} into {} (not in a dry run)",
                    t.twin,
                    t.variant,
                    t.repo.display(),
                    t.tree.display()
                );
            }
        }
    }
    // After the baseline's twins, which the estimate counts.
    if let Some(g) = &growing {
        grow::apply(&mut exp, g, crate::machine::meminfo("MemAvailable"))?;
    }
    if a.fail_on_budget && exp.budgets.is_empty() {
        bail!(
            "--fail-on-budget: {} sets no [budget] limit to check (add one: `ctrlbench budget RESULTS` measures a table)",
            exp.file.display()
        );
    }
    if a.fail_on_regression.is_some() && exp.compare.is_empty() {
        bail!(
            "--fail-on-regression: {} asks no [[compare]] question to gate on (give --baseline REF, or add [[compare]])",
            exp.file.display()
        );
    }
    let opts = crate::run::RunOptions {
        results_root: a.results.clone(),
        progress: !a.no_progress,
        kubeconfig: a.kubeconfig.clone(),
        context: a.context.clone(),
        dry_run: a.dry_run,
    };
    // Before any build: a wrong kubeconfig, version or path costs seconds.
    let notes = crate::run::preflight::check(&exp, &opts).await?;
    let runs = plan::expand(&exp);
    if a.dry_run {
        return dry_run(&exp, &runs, &opts, &notes.0);
    }
    for n in &notes.0 {
        eprintln!("note: {n}");
    }
    let cancel = tokio_util::sync::CancellationToken::new();
    let c = cancel.clone();
    tokio::spawn(async move {
        interrupted().await;
        eprintln!(
            "interrupted: stopping the loader and controllers, deleting namespaces … (again to skip that)"
        );
        c.cancel();
        // A second signal skips the graceful steps: every child dies with us
        // (parent-death signal); namespaces on an existing cluster stay.
        interrupted().await;
        eprintln!("interrupted again: exiting now");
        std::process::exit(130);
    });
    let outcome = match crate::run::execute(&exp, &opts, cancel.clone()).await {
        Ok(o) => o,
        Err(e) if cancel.is_cancelled() => {
            eprintln!("{}", one_line(&e));
            return Ok(ExitCode::from(130));
        }
        Err(e) => return Err(e),
    };
    println!("results: {}", outcome.dir.display());
    // A report failure must not fail a run whose results are on disk.
    match ctrlbench_report::write(&outcome.dir) {
        Ok(w) => println!(
            "report: {} and {} (answers as JSON: {})",
            w.markdown.display(),
            w.html.display(),
            w.verdicts.display()
        ),
        Err(e) => eprintln!("warning: no report: {e:#}"),
    }
    if cancel.is_cancelled() {
        eprintln!("the results are marked incomplete");
        return Ok(ExitCode::from(130));
    }
    if !outcome.complete {
        bail!(
            "some runs failed: see {}/manifest.json",
            outcome.dir.display()
        );
    }
    // Said before the regression gate, whose failure is an error (exit 1)
    // and ends the command: both verdicts are printed either way.
    let over = if a.fail_on_budget {
        let over = crate::budget::exceeded(&outcome.dir)?;
        for l in &over {
            emit(&format!("{l}\n"))?;
        }
        if over.is_empty() {
            emit("every variant within its [budget]\n")?;
        }
        over.len()
    } else {
        0
    };
    if let Some(t) = a.fail_on_regression {
        gate_answers(&outcome.dir, t)?;
    }
    if over > 0 {
        return Ok(ExitCode::from(crate::budget::EXCEEDED_EXIT));
    }
    Ok(ExitCode::SUCCESS)
}

/// `run --dry-run`'s output: the plan with the builds still to do, a grown
/// plan's scales and what it can decide, the power, the notes and where
/// results would go. Nothing is written.
fn dry_run(
    exp: &crate::experiment::Experiment,
    runs: &[crate::experiment::plan::Run],
    opts: &crate::run::RunOptions,
    notes: &[String],
) -> Result<ExitCode> {
    use crate::experiment::{grow, plan};
    use crate::run::first_builds;
    let local = crate::run::target::named(exp, opts) == (None, None);
    let first = first_builds::find(exp, local, &first_builds::Where::here()?)?;
    emit(&plan::render(exp, runs, &first.builds))?;
    if let Some(g) = &exp.grow {
        emit(&grow::render(g, exp.growth_margin))?;
    }
    emit(&plan::render_power(exp, &crate::calibration::for_run(exp)))?;
    for n in notes.iter().chain(&first.notes) {
        emit(&format!("note: {n}\n"))?;
    }
    emit(&format!(
        "results: a run writes them under {}/<UTC time>-{}/ (a dry run writes nothing)\n",
        opts.results_root.display(),
        exp.name
    ))?;
    Ok(ExitCode::SUCCESS)
}

/// A file received from someone else must not aim at a cluster silently:
/// when it names a kubeconfig or a context, the command line repeats it
/// (`--kubeconfig`/`--context` with the same value) or says `--yes`.
fn confirm_target(exp: &crate::experiment::Experiment, a: &RunArgs) -> Result<()> {
    let c = &exp.cluster;
    if a.yes {
        return Ok(());
    }
    let mut unconfirmed = Vec::new();
    if let Some(k) = &c.kubeconfig {
        let named = crate::run::target::expand_home(k);
        if a.kubeconfig.as_ref() != Some(&named) {
            unconfirmed.push(format!("--kubeconfig {}", named.display()));
        }
    }
    if let Some(ctx) = &c.context
        && a.context.as_ref() != Some(ctx)
    {
        unconfirmed.push(format!("--context {ctx}"));
    }
    if !unconfirmed.is_empty() {
        bail!(
            "{} aims at an existing cluster: confirm with {} (or --yes)",
            exp.file.display(),
            unconfirmed.join(" ")
        );
    }
    Ok(())
}

async fn cluster(cmd: ClusterCmd) -> Result<()> {
    match cmd {
        ClusterCmd::Install {
            k8s_version,
            controller_manager,
            nodes,
        } => {
            let opts = PlaneOptions {
                k8s_version: binaries::normalize_version(&k8s_version)?,
                controller_manager: controller_manager || nodes,
                // Any count asks for the binaries fake nodes need.
                nodes: usize::from(nodes),
                ..PlaneOptions::default()
            };
            let b = opts.binaries().await?;
            emit(&format!("etcd={}\n", b.etcd.display()))?;
            emit(&format!("kube-apiserver={}\n", b.kube_apiserver.display()))?;
            if let Some(kcm) = &b.kube_controller_manager {
                emit(&format!("kube-controller-manager={}\n", kcm.display()))?;
            }
            if let Some(ks) = &b.kube_scheduler {
                emit(&format!("kube-scheduler={}\n", ks.display()))?;
            }
            if let Some(k) = &b.kwok {
                emit(&format!("kwok={}\n", k.bin.display()))?;
            }
            Ok(())
        }
        ClusterCmd::Up(a) => {
            sweep();
            supervisor::up(&a.name, &PlaneOptions::try_from(&a.plane)?, a.foreground).await
        }
        ClusterCmd::Status { name } => {
            sweep();
            emit(&supervisor::status(name.as_deref())?)?;
            Ok(())
        }
        ClusterCmd::Kubeconfig { name } => {
            emit(&format!(
                "{}\n",
                supervisor::running(&name)?.kubeconfig.display()
            ))?;
            Ok(())
        }
        ClusterCmd::Down { name } => {
            if supervisor::down(&name).await? {
                println!("plane '{name}' stopped and its data removed");
            } else {
                println!("plane '{name}' was already stopped; its data was removed");
            }
            Ok(())
        }
        ClusterCmd::Demo { plane } => crate::demo::run(&PlaneOptions::try_from(&plane)?).await,
        ClusterCmd::Bench { times, plane } => {
            if times == 0 {
                bail!("--times must be at least 1");
            }
            let rows = bench::run(&PlaneOptions::try_from(&plane)?, times).await?;
            emit(&bench::render(&rows))?;
            Ok(())
        }
    }
}
