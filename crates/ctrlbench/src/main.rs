//! The `ctrlbench` command line.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::{Args, Parser, Subcommand, ValueEnum};

use ctrlbench::cluster::plane::install_blocking;
use ctrlbench::cluster::state::{self, PlaneState};
use ctrlbench::cluster::{ControlPlane, DEFAULT_K8S_VERSION, PlaneOptions, bench, binaries};

/// Measures what Kubernetes controller patterns really cost.
///
/// ctrlbench starts a real control plane (etcd + kube-apiserver, built from
/// upstream Go modules) on 127.0.0.1, runs controller variants against it
/// under identical load, and reports where the time went.
#[derive(Parser)]
#[command(name = "ctrlbench", version, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Build, start, inspect and stop local control planes.
    #[command(subcommand)]
    Cluster(ClusterCmd),
    /// Print the Widget CustomResourceDefinition as YAML (deploy/crd.yaml is generated from it).
    Crd,
    /// Run an experiment: a built-in name (see `ctrlbench experiments`) or a TOML file.
    ///
    /// Results go to results/<UTC timestamp>-<experiment>/ (manifest.json, then
    /// N<scale>/<variant>/rep<k>/ with metrics-<variant>.csv, apiserver.csv,
    /// etcd.csv, objects.csv, controller.log and summary.json). Ctrl-C stops the
    /// loader and controllers, deletes the namespaces and marks the results incomplete.
    Run(RunArgs),
    /// Write report.md and report.html (tables, percentiles, inline SVG plots) into a results directory.
    Report {
        /// A results directory (results/<UTC timestamp>-<experiment>).
        dir: PathBuf,
    },
    /// Print the headline figures of two results directories side by side, with ratios B/A.
    Compare {
        /// The baseline results directory (A).
        a: PathBuf,
        /// The results directory compared with it (B).
        b: PathBuf,
    },
    /// List the built-in experiments.
    Experiments,
    /// Measure the cluster's raw write capacity: creates and status merge patches
    /// with 1, 4, 16 and 64 concurrent writers, no controller.
    Probe {
        /// Widgets per concurrency level.
        #[arg(long, default_value_t = 500)]
        objects: u64,
        /// Probe this cluster instead of a fresh local plane.
        #[arg(long)]
        kubeconfig: Option<PathBuf>,
        #[arg(long)]
        context: Option<String>,
        /// etcd fsync of the local plane.
        #[arg(long, value_enum, default_value_t = OnOff::On)]
        etcd_fsync: OnOff,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Build the controllers (Rust, and Go for each controller-runtime build) and print their paths.
    #[command(subcommand)]
    Controllers(ControllersCmd),
}

#[derive(Subcommand)]
enum ControllersCmd {
    /// Build (or find cached) controller binaries and print `IMPL PATH` per line.
    Build,
}

#[derive(Args)]
struct RunArgs {
    /// Built-in experiment name or path to an experiment file.
    experiment: String,
    /// Print the plan and an estimated duration, run nothing.
    #[arg(long)]
    dry_run: bool,
    /// Override the scales, e.g. --scales 50,200.
    #[arg(long, value_delimiter = ',')]
    scales: Vec<u64>,
    /// Override the observation window in seconds.
    #[arg(long)]
    window: Option<f64>,
    /// Override the number of repeats.
    #[arg(long)]
    repeats: Option<u32>,
    /// Run only these variants (comma-separated names).
    #[arg(long, value_delimiter = ',')]
    variants: Vec<String>,
    /// Plain progress lines instead of bars.
    #[arg(long)]
    no_progress: bool,
    /// Use this cluster instead of a local plane.
    #[arg(long)]
    kubeconfig: Option<PathBuf>,
    /// Kubeconfig context to use (implies an existing cluster).
    #[arg(long)]
    context: Option<String>,
    /// Where results directories are created.
    #[arg(long, default_value = "results")]
    results: PathBuf,
}

#[derive(Subcommand)]
enum ClusterCmd {
    /// Find or build etcd and kube-apiserver for a Kubernetes version.
    ///
    /// Lookup order: TEST_ASSET_ETCD / TEST_ASSET_KUBE_APISERVER, then
    /// $KUBEBUILDER_ASSETS, then ~/.cache/ctrlbench/k8s/<version>/; otherwise
    /// both are built with Go from the module proxy (10–20 minutes cold on 2 cores).
    Install {
        /// Kubernetes version to build (MAJOR.MINOR.PATCH).
        #[arg(long, default_value = DEFAULT_K8S_VERSION)]
        k8s_version: String,
    },
    /// Start a named plane on free 127.0.0.1 ports and print `export KUBECONFIG=...`.
    ///
    /// The plane keeps running after the command returns (unless --foreground);
    /// stop it with `ctrlbench cluster down --name NAME`.
    Up(UpArgs),
    /// Show running planes (pids, URL, version, kubeconfig); stale ones are cleaned up.
    Status {
        /// Only this plane.
        #[arg(long)]
        name: Option<String>,
    },
    /// Print the path of a plane's admin kubeconfig.
    Kubeconfig {
        #[arg(long, default_value = "default")]
        name: String,
    },
    /// Stop a plane (SIGTERM, SIGKILL after 10 s) and remove its data directory.
    Down {
        #[arg(long, default_value = "default")]
        name: String,
    },
    /// Bring a throw-away plane up, show it answering with the Widget CRD, take it down.
    Demo {
        #[arg(long, default_value = DEFAULT_K8S_VERSION)]
        k8s_version: String,
    },
    /// Start and stop a plane several times; print seconds to /readyz with fsync on and off.
    Bench {
        /// Start/stop cycles per fsync setting.
        #[arg(long, default_value_t = 5)]
        times: usize,
        #[arg(long, default_value = DEFAULT_K8S_VERSION)]
        k8s_version: String,
    },
}

#[derive(Args)]
struct UpArgs {
    /// Name of the plane (its state lives in ~/.local/state/ctrlbench/planes/NAME).
    #[arg(long, default_value = "default")]
    name: String,
    /// Kubernetes version (binaries are built on first use).
    #[arg(long, default_value = DEFAULT_K8S_VERSION)]
    k8s_version: String,
    /// kube-apiserver feature gates, e.g. ConcurrentWatchObjectDecode=true,WatchList=true.
    #[arg(long, value_delimiter = ',')]
    feature_gates: Vec<String>,
    /// Extra kube-apiserver flag (repeatable), e.g. --apiserver-arg=--max-requests-inflight=800.
    #[arg(long = "apiserver-arg", allow_hyphen_values = true)]
    apiserver_args: Vec<String>,
    /// Extra etcd flag (repeatable).
    #[arg(long = "etcd-arg", allow_hyphen_values = true)]
    etcd_args: Vec<String>,
    /// etcd fsync. On by default: the disk is part of what a benchmark measures.
    #[arg(long, value_enum, default_value_t = OnOff::On)]
    etcd_fsync: OnOff,
    /// Stay in the foreground and stop the plane on Ctrl-C or SIGTERM.
    #[arg(long)]
    foreground: bool,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum OnOff {
    On,
    Off,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "warn,kube_client::client::builder=off".into()),
        )
        .init();
    let rt = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Command::Run(args) = cli.command {
        return rt.block_on(run(args));
    }
    let outcome = rt.block_on(async {
        tokio::select! {
            r = dispatch(cli) => Some(r),
            _ = interrupted() => None,
        }
    });
    // Dropping the command's future above already stopped what it had started.
    match outcome {
        Some(Ok(())) => ExitCode::SUCCESS,
        Some(Err(e)) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
        None => {
            let sup = SUPERVISOR.load(std::sync::atomic::Ordering::SeqCst);
            if sup != 0 {
                // SAFETY: kill(2) has no memory-safety preconditions.
                unsafe { libc::kill(sup as libc::pid_t, libc::SIGTERM) };
            }
            eprintln!("interrupted");
            // Do not wait for a blocking thread still reading the supervisor.
            std::process::exit(130)
        }
    }
}

/// Resolves on Ctrl-C or SIGTERM.
async fn interrupted() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {},
        _ = term.recv() => {},
    }
}

async fn dispatch(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Crd => {
            print!("{}", widget_api::crd_yaml());
            Ok(())
        }
        Command::Cluster(c) => cluster(c).await,
        Command::Run(_) => unreachable!("handled in main"),
        Command::Report { dir } => {
            let w = ctrlbench::report::write(&dir)?;
            println!("report: {}", w.markdown.display());
            println!("report: {}", w.html.display());
            Ok(())
        }
        Command::Compare { a, b } => {
            print!("{}", ctrlbench::report::compare::compare(&a, &b)?);
            Ok(())
        }
        Command::Experiments => {
            for (name, desc) in ctrlbench::experiment::list() {
                println!("{name:<12} {desc}");
            }
            Ok(())
        }
        Command::Probe {
            objects,
            kubeconfig,
            context,
            etcd_fsync,
            json,
        } => {
            if objects == 0 {
                bail!("--objects must be at least 1");
            }
            let popts = PlaneOptions {
                etcd_fsync: etcd_fsync == OnOff::On,
                ..PlaneOptions::default()
            };
            let cluster = ctrlbench::run::Cluster::connect(popts, kubeconfig, context).await?;
            let rows = ctrlbench::run::probe::run(
                &cluster.client,
                objects,
                cluster.no_namespace_controller,
            )
            .await;
            cluster.close().await?;
            let rows = rows?;
            if json {
                println!("{}", serde_json::to_string_pretty(&rows)?);
            } else {
                print!("{}", ctrlbench::run::probe::render(&rows));
            }
            Ok(())
        }
        Command::Controllers(ControllersCmd::Build) => {
            for (label, path) in
                tokio::task::spawn_blocking(ctrlbench::controllers::build_all).await??
            {
                println!("{label} {}", path.display());
            }
            Ok(())
        }
    }
}

/// `ctrlbench run`: signals cancel the run, which then cleans up and exits 130.
async fn run(a: RunArgs) -> ExitCode {
    match run_inner(a).await {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run_inner(a: RunArgs) -> Result<ExitCode> {
    use ctrlbench::experiment::{self, plan};
    let mut exp = experiment::load(&a.experiment)?;
    if !a.scales.is_empty() {
        if a.scales.contains(&0) {
            bail!("--scales: each scale must be at least 1");
        }
        exp.spec.scales = toml::Spanned::new(0..0, a.scales.clone());
    }
    if let Some(w) = a.window {
        if !(w > 0.0 && w.is_finite()) {
            bail!("--window must be a positive number of seconds");
        }
        exp.spec.window_s = toml::Spanned::new(0..0, w);
    }
    if let Some(r) = a.repeats {
        if r == 0 {
            bail!("--repeats must be at least 1");
        }
        exp.spec.repeats = toml::Spanned::new(0..0, r);
    }
    if !a.variants.is_empty() {
        for v in &a.variants {
            if !exp.variants.iter().any(|x| &x.name == v) {
                bail!(
                    "--variants: no variant {v:?} in {} (it has {})",
                    exp.name(),
                    exp.variants
                        .iter()
                        .map(|x| x.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
        }
        exp.variants.retain(|x| a.variants.contains(&x.name));
    }
    let runs = plan::expand(&exp);
    if a.dry_run {
        print!("{}", plan::render(&exp, &runs));
        return Ok(ExitCode::SUCCESS);
    }
    let cancel = tokio_util::sync::CancellationToken::new();
    let c = cancel.clone();
    tokio::spawn(async move {
        interrupted().await;
        eprintln!("interrupted: stopping the loader and controllers, deleting namespaces …");
        c.cancel();
    });
    let opts = ctrlbench::run::RunOptions {
        results_root: a.results.clone(),
        progress: !a.no_progress,
        kubeconfig: a.kubeconfig.clone(),
        context: a.context.clone(),
    };
    let outcome = ctrlbench::run::execute(&exp, &opts, cancel.clone()).await?;
    println!("results: {}", outcome.dir.display());
    // A report failure must not fail a run whose results are on disk.
    match ctrlbench::report::write(&outcome.dir) {
        Ok(w) => println!("report: {} and {}", w.markdown.display(), w.html.display()),
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
    Ok(ExitCode::SUCCESS)
}

async fn cluster(cmd: ClusterCmd) -> Result<()> {
    match cmd {
        ClusterCmd::Install { k8s_version } => {
            let b = install_blocking(&binaries::normalize_version(&k8s_version)?).await?;
            println!("etcd={}", b.etcd.display());
            println!("kube-apiserver={}", b.kube_apiserver.display());
            Ok(())
        }
        ClusterCmd::Up(a) => up(a).await,
        ClusterCmd::Status { name } => status(name),
        ClusterCmd::Kubeconfig { name } => {
            let s = running_plane(&name)?;
            println!("{}", s.kubeconfig.display());
            Ok(())
        }
        ClusterCmd::Down { name } => {
            let Some(s) = PlaneState::load(&name)? else {
                bail!("no plane named '{name}' ('ctrlbench cluster status' lists them)");
            };
            let (a, e) = s.running();
            tokio::task::spawn_blocking(move || {
                s.stop_and_remove(ctrlbench::cluster::process::STOP_TIMEOUT)
            })
            .await??;
            if a || e {
                println!("plane '{name}' stopped and its data removed");
            } else {
                println!("plane '{name}' was already stopped; its data was removed");
            }
            Ok(())
        }
        ClusterCmd::Demo { k8s_version } => {
            let opts = PlaneOptions {
                k8s_version: binaries::normalize_version(&k8s_version)?,
                ..PlaneOptions::default()
            };
            ctrlbench::demo::run(&opts).await
        }
        ClusterCmd::Bench { times, k8s_version } => {
            if times == 0 {
                bail!("--times must be at least 1");
            }
            let opts = PlaneOptions {
                k8s_version: binaries::normalize_version(&k8s_version)?,
                ..PlaneOptions::default()
            };
            let rows = bench::run(&opts, times).await?;
            print!("{}", bench::render(&rows));
            Ok(())
        }
    }
}

async fn up(a: UpArgs) -> Result<()> {
    state::check_name(&a.name)?;
    let version = binaries::normalize_version(&a.k8s_version)?;
    if std::env::var_os(SUPERVISED).is_none()
        && let Some(msg) = state::prepare(&a.name)?
    {
        eprintln!("{msg}");
    }
    let bins = install_blocking(&version).await?;
    if !a.foreground {
        // The plane's processes need a living parent to reap them when they
        // exit: a detached `cluster up --foreground` supervises them.
        let name = a.name.clone();
        return tokio::task::spawn_blocking(move || supervise(&name)).await?;
    }
    let opts = PlaneOptions {
        k8s_version: version,
        feature_gates: a.feature_gates.clone(),
        apiserver_args: a.apiserver_args.clone(),
        etcd_args: a.etcd_args.clone(),
        etcd_fsync: a.etcd_fsync == OnOff::On,
        ..PlaneOptions::default()
    };
    let dir = state::plane_dir(&a.name)?;
    let plane = ControlPlane::start_in(&opts, &bins, dir.clone(), false).await?;
    let st = PlaneState::of(&a.name, &plane, opts.etcd_fsync, &opts.feature_gates);
    st.save()?;
    println!(
        "plane '{}' ready in {:.2} s: {} ({}), etcd fsync {}",
        a.name,
        plane.ready_after.as_secs_f64(),
        plane.url(),
        plane.version,
        bench::on_off(opts.etcd_fsync)
    );
    println!("pid={} etcd", st.etcd.pid);
    println!("pid={} kube-apiserver", st.apiserver.pid);
    println!("export KUBECONFIG={}", st.kubeconfig.display());
    std::io::stdout().flush()?;
    if std::env::var_os(SUPERVISED).is_some() {
        // The front process has gone: keep our own output in the plane directory.
        redirect_output(&dir.join("supervisor.log"))?;
    } else {
        eprintln!("running in the foreground; Ctrl-C stops the plane");
    }
    // Ctrl-C or SIGTERM (main) drops this future, and with it the plane.
    std::future::pending::<()>().await;
    drop(plane);
    Ok(())
}

/// Set in the environment of the detached `cluster up --foreground` process.
const SUPERVISED: &str = "CTRLBENCH_SUPERVISED";

/// Starts this command again as a detached supervisor (`--foreground` in a
/// new session), relays its output until the plane is ready, and returns.
fn supervise(name: &str) -> Result<()> {
    use std::io::{BufRead, BufReader};
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};

    let exe = std::env::current_exe()?;
    let mut cmd = Command::new(exe);
    cmd.args(std::env::args_os().skip(1))
        .arg("--foreground")
        .env(SUPERVISED, "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: setsid is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn()?;
    let pid = child.id();
    SUPERVISOR.store(pid, std::sync::atomic::Ordering::SeqCst);
    let stderr = child.stderr.take().expect("piped");
    let relay = std::thread::spawn(move || {
        let mut last = String::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if !line.starts_with("error: ") {
                eprintln!("{line}");
            }
            last = line;
        }
        last
    });
    // Until the plane is ready, an interrupted front takes the supervisor with it.
    let mut guard = KillOnDrop(Some(pid));
    let mut ready = false;
    for line in BufReader::new(child.stdout.take().expect("piped"))
        .lines()
        .map_while(Result::ok)
    {
        println!("{line}");
        if line.starts_with("export KUBECONFIG=") {
            ready = true;
            break;
        }
    }
    if ready {
        guard.0 = None;
        SUPERVISOR.store(0, std::sync::atomic::Ordering::SeqCst);
        eprintln!("stop it with: ctrlbench cluster down --name {name} (supervisor process {pid})");
        return Ok(());
    }
    let _ = child.wait();
    drop(guard);
    let last = relay.join().unwrap_or_default();
    bail!("{}", last.trim_start_matches("error: "))
}

/// The supervisor a `cluster up` is waiting for; an interrupt stops it (its
/// own session does not get the terminal's Ctrl-C).
static SUPERVISOR: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

struct KillOnDrop(Option<u32>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Some(pid) = self.0.take() {
            // SAFETY: kill(2) has no memory-safety preconditions.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) };
        }
    }
}

/// Points stdout and stderr at `path` (the supervisor outlives its terminal).
fn redirect_output(path: &std::path::Path) -> Result<()> {
    use std::os::fd::AsRawFd;
    let f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    // SAFETY: dup2 onto the standard descriptors; `f` stays open until both are done.
    unsafe {
        libc::dup2(f.as_raw_fd(), 1);
        libc::dup2(f.as_raw_fd(), 2);
    }
    Ok(())
}

fn running_plane(name: &str) -> Result<PlaneState> {
    let Some(s) = PlaneState::load(name)? else {
        bail!("no plane named '{name}': start one with 'ctrlbench cluster up --name {name}'");
    };
    let (a, e) = s.running();
    if !(a && e) {
        s.stop_and_remove(ctrlbench::cluster::process::STOP_TIMEOUT)?;
        bail!(
            "plane '{name}' was stale (its processes were gone) and has been cleaned up; start it again with 'ctrlbench cluster up --name {name}'"
        );
    }
    Ok(s)
}

fn status(name: Option<String>) -> Result<()> {
    let planes = match &name {
        Some(n) => match PlaneState::load(n)? {
            Some(s) => vec![s],
            None => bail!("no plane named '{n}'"),
        },
        None => PlaneState::list()?,
    };
    if planes.is_empty() {
        println!("no planes ('ctrlbench cluster up' starts one)");
    }
    for s in planes {
        let (a, e) = s.running();
        if !(a && e) {
            s.stop_and_remove(ctrlbench::cluster::process::STOP_TIMEOUT)?;
            println!("{}: stale (processes gone), cleaned up", s.name);
            continue;
        }
        println!(
            "{}: running {} at {}, etcd fsync {}{}",
            s.name,
            s.version,
            s.url,
            bench::on_off(s.etcd_fsync),
            if s.feature_gates.is_empty() {
                String::new()
            } else {
                format!(", feature gates {}", s.feature_gates.join(","))
            }
        );
        println!(
            "  pid={} kube-apiserver (log {})",
            s.apiserver.pid,
            s.apiserver.log.display()
        );
        println!(
            "  pid={} etcd {} (metrics {})",
            s.etcd.pid, s.etcd_url, s.etcd_metrics_url
        );
        println!("  kubeconfig {}", s.kubeconfig.display());
    }
    Ok(())
}
