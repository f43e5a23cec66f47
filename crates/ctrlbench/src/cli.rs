//! The command line: clap types only. One flattened set of plane flags
//! ([`PlaneArgs`]) becomes [`PlaneOptions`] in one place; `commands` does the work.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::experiment::Overrides;
use ctrlbench_plane::{DEFAULT_K8S_VERSION, PlaneOptions, binaries};

mod grow;
pub use grow::GrowArgs;

/// Measures what Kubernetes controller patterns really cost.
///
/// ctrlbench starts a real control plane (etcd + kube-apiserver, built from
/// upstream Go modules) on 127.0.0.1, runs controller variants against it
/// under identical load, and reports where the time went.
#[derive(Parser)]
#[command(name = "ctrlbench", version, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
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
    ///
    /// The file's [workload] (CRD, object template, readiness rule) replaces
    /// the built-in Widget workload; variants with impl = "command" run your
    /// controller, impl = "external" one already running (see `ctrlbench init
    /// --help` for the keys, README "Your own workload and controller").
    Run(RunArgs),
    /// Write report.md and report.html (tables, percentiles, inline SVG plots) into a results directory.
    Report {
        /// A results directory (results/<UTC timestamp>-<experiment>).
        dir: PathBuf,
        /// The equivalence margin of every verdict, e.g. 5%: "equivalent" when
        /// a ratio's whole 95 % interval lies within ±5 %, "higher"/"lower"
        /// only when it lies wholly beyond. Default: the experiment's
        /// (manifest.json margin), else 5%.
        #[arg(long, value_name = "PERCENT", value_parser = parse_margin)]
        margin: Option<f64>,
    },
    /// Write a results directory's answers and headline figures as JSON for
    /// CI dashboards.
    ///
    /// Every results directory already holds verdicts.json (written with
    /// its report): each question with figure, scale, A, B, ratio, 95 %
    /// interval, verdict, repeats and evidence, and each variant's headline
    /// figures (median, min, max over its repeats). `export` turns that
    /// into Bencher's metric format (bmf: {benchmark: {measure: {value,
    /// lower_value, upper_value}}}, on standard output) or
    /// github-action-benchmark's custom JSON ([{name, unit, value, range,
    /// extra}]) as two files, since that action takes one direction per
    /// file: <OUT>-bigger.json (tool: customBiggerIsBetter) and
    /// <OUT>-smaller.json (tool: customSmallerIsBetter); ratios of figures
    /// without a better side are left out. Benchmarks are named
    /// <experiment>/N=<scale>/<variant>; questions' ratios
    /// <experiment>/N=<scale>/<B> / <A>.
    Export {
        /// A results directory (results/<UTC timestamp>-<experiment>).
        dir: PathBuf,
        /// bmf or github-action-benchmark (or verdicts: verdicts.json itself).
        #[arg(long, value_name = "FORMAT", value_parser = parse_export_format)]
        format: ExportFormat,
        /// github-action-benchmark: the two files' common start, e.g.
        /// `bench` for bench-bigger.json and bench-smaller.json (default:
        /// DIR/github-action-benchmark). The other formats: a file to write
        /// instead of standard output.
        #[arg(long, value_name = "PATH")]
        out: Option<PathBuf>,
        /// The equivalence margin of the verdicts (default: the manifest's, else 5%).
        #[arg(long, value_name = "PERCENT", value_parser = parse_margin)]
        margin: Option<f64>,
    },
    /// Print the headline figures of two results directories side by side, with ratios B/A.
    ///
    /// Every ratio comes with a 95 % interval and a verdict: B higher or lower
    /// (beyond the margin), equivalent (within it), or undecided with the
    /// smallest difference the repeats can detect. Two directories are
    /// compared unpaired (bootstrap); variants of one directory paired by
    /// repeat (t interval).
    Compare {
        /// The baseline results directory (A).
        a: PathBuf,
        /// The results directory compared with it (B). Without it, variants
        /// of A are compared with each other (--pair, or every rust-X with go-X).
        b: Option<PathBuf>,
        /// Within one results directory: variant X as A against variant Y as B
        /// (repeatable), e.g. --pair rust-good:go-good.
        #[arg(long, value_name = "X:Y", value_parser = parse_pair)]
        pair: Vec<(String, String)>,
        /// Exit 1 when a headline figure of B (T100, Ready/s, reconcile p99,
        /// writes per object, requests per object, peak RSS) is decidedly worse than A's by more than this
        /// (e.g. 10%): its whole 95 % interval beyond it on the worse side.
        /// Prints which, and the figures it could not decide (never a failure).
        #[arg(long, value_name = "PERCENT", value_parser = parse_percent)]
        fail_on_regression: Option<f64>,
        /// The equivalence margin of the verdicts, e.g. 5% (default: A's
        /// manifest.json margin, else 5%).
        #[arg(long, value_name = "PERCENT", value_parser = parse_margin)]
        margin: Option<f64>,
        /// Two directories: divide every figure of every variant by this
        /// variant's in the same directory (per repeat where they line up,
        /// else by its median), or by each repeat's probe rows (`probe`:
        /// throughput figures only), so a slower machine is not a regression.
        #[arg(long, value_name = "VARIANT|probe")]
        reference: Option<String>,
    },
    /// Gate a results directory on its own [[compare]] answers, as `run
    /// --fail-on-regression` does when its runs end: exit 1 when one is
    /// decided worse by more than the threshold (its whole 95 % interval
    /// beyond it on the worse side), 0 otherwise.
    ///
    /// For CI, where the run and the gate are separate steps: `run
    /// --baseline REF --until-decided`, then `gate RESULTS_DIR
    /// --fail-on-regression 10%`. Undecided answers are listed with the
    /// smallest change they could see and never fail. Errors (no results,
    /// no [[compare]] question) exit 1 too, with one line on stderr.
    Gate {
        /// A results directory (results/<UTC timestamp>-<experiment>).
        dir: PathBuf,
        /// The regression beyond which the gate fails, e.g. 10%.
        #[arg(long, value_name = "PERCENT", value_parser = parse_percent)]
        fail_on_regression: f64,
    },
    /// Print a `[budget]` table measured from a results directory, ready to
    /// paste into the experiment file: each key's highest value over every
    /// variant and repeat, plus the headroom, rounded up to two significant
    /// digits, with a comment saying what was measured.
    Budget {
        /// A results directory (results/<UTC timestamp>-<experiment>).
        dir: PathBuf,
        /// Room above the highest value measured, e.g. 25%.
        #[arg(long, value_name = "PERCENT", default_value = "25%", value_parser = parse_headroom)]
        headroom: f64,
    },
    /// Say what on this machine would disturb a measurement right now:
    /// other processes' CPU (a run is flagged "machine busy" above 10 % of
    /// a core), steal, load, the CPU governor, memory, swap and disk. Exits
    /// 1 when something would.
    Doctor {
        /// How long to watch the other processes.
        #[arg(long, default_value_t = 2.0, value_name = "SECONDS")]
        seconds: f64,
        /// Where results go (its file system's free space is checked).
        #[arg(long, default_value = "results")]
        results: PathBuf,
    },
    /// Name the anti-patterns a results directory's controllers show, with
    /// each one's evidence, cost and fix: the report's "What to fix" again,
    /// from older results too where their files hold the evidence
    /// (footprint.csv needs a run with the audit log). Rules: docs/diagnosis.md.
    Diagnose {
        /// A results directory.
        #[arg(required_unless_present = "rules")]
        dir: Option<PathBuf>,
        /// Print the rule table as Markdown (docs/diagnosis.md) instead.
        #[arg(long)]
        rules: bool,
    },
    /// Keep this machine's between-run spread, per figure, from an A/A
    /// results directory (`ctrlbench run noise`): later runs record it and
    /// their reports judge one repeat by it (a large effect is then decided
    /// from one repeat). Without a calibration a conservative default is used.
    Calibrate {
        /// An A/A results directory: [[compare]] pairs of identical variants, two or more repeats.
        dir: PathBuf,
    },
    /// List the built-in experiments: yours, then the lab's (ctrlbench's own
    /// studies of its controllers, `experiments/lab/`) under their heading.
    Experiments {
        /// Print every `[[variant]]` key instead (the table of
        /// docs/experiments.md, in Markdown): its controller flag, which
        /// implementations take it and what it does.
        #[arg(long)]
        keys: bool,
    },
    /// Write NAME.toml: a commented experiment file for your own controller
    /// (impl = "command", a [workload] with CRD and object template paths to
    /// fill in). Refuses to overwrite an existing file.
    ///
    /// [workload]: crd = "path/crd.yaml" (installed if missing, removed at the
    /// end only if ctrlbench installed it and no object of the kind is left),
    /// object = "path/template.yaml" ({{name}}, {{index}}, {{namespace}},
    /// {{run}}), ready = { condition = "Ready" } | { jsonpath = "{.status.phase}",
    /// equals = "Ready" } | { jsonpath = "…", exists = true } |
    /// { observed_generation = true }. jsonpath supports {.a.b}, {.a.b[0].c}
    /// and {.a['x.y']}, no filters or wildcards.
    /// [[variant]] impl = "command": command = [...] ({port}, {namespace},
    /// {kubeconfig}, {dir}), env, metrics (loopback URL, optional), rbac and
    /// cluster_rbac (reads only). impl = "external": nothing is started;
    /// metrics and namespace optional.
    ///
    /// --from DIR reads a kubebuilder or operator-sdk Go project instead (its
    /// PROJECT file, config/crd/bases, config/samples, config/rbac/role.yaml
    /// and Go sources) and writes ./<projectName>.toml ready to run: the CRD,
    /// the sample as object template, the Role and cluster-wide reads, the
    /// readiness condition, `build` (go build) and a command whose metrics
    /// are on loopback in plain HTTP. A Cargo package depending on kube
    /// (and no PROJECT) is read as a kube-rs project: its committed CRD
    /// YAML, an example object, the kind's own rules, `cargo build`. Python
    /// files importing kopf (and neither) are a kopf operator: its CRD YAML,
    /// an example object, `kopf run` of the handler files, the readiness
    /// its create handler writes. Helm- and Ansible-based operator-sdk
    /// projects are refused.
    Init {
        /// The experiment's name (a label value); the file is ./NAME.toml.
        /// With --from: the project's name unless given.
        #[arg(required_unless_present = "from")]
        name: Option<String>,
        /// An operator's repository (a kubebuilder or operator-sdk Go layout,
        /// a kube-rs package or a kopf operator).
        #[arg(long, value_name = "DIR")]
        from: Option<PathBuf>,
        /// With --from: the kind to create (needed when PROJECT, or a
        /// kube-rs project's CRDs, or those a kopf operator's handlers
        /// serve, have several).
        #[arg(long, value_name = "KIND", requires = "from")]
        kind: Option<String>,
        /// With --from on a kube-rs project: the cargo profile its build
        /// step uses (`dev` builds faster, but measures a debug build).
        #[arg(
            long,
            value_name = "PROFILE",
            default_value = "release",
            requires = "from"
        )]
        cargo_profile: String,
    },
    /// Measure the cluster's raw write capacity: creates and status merge patches
    /// with 1, 4, 16 and 64 concurrent writers, no controller.
    Probe {
        /// Widgets per concurrency level.
        #[arg(long, default_value_t = crate::experiment::spec::DEFAULT_PROBE_OBJECTS)]
        objects: u64,
        /// Probe this cluster instead of a fresh local plane.
        #[arg(long)]
        kubeconfig: Option<PathBuf>,
        #[arg(long)]
        context: Option<String>,
        /// The local plane probed when no cluster is named.
        #[command(flatten)]
        plane: PlaneArgs,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Build the controllers (Rust, and Go for each controller-runtime build) and print their paths.
    #[command(subcommand)]
    Controllers(ControllersCmd),
}

/// What `ctrlbench export` prints.
#[derive(Clone, Copy, Debug)]
pub enum ExportFormat {
    /// verdicts.json as written beside the report.
    Verdicts,
    Dashboard(ctrlbench_report::export::Format),
}

fn parse_export_format(s: &str) -> Result<ExportFormat, String> {
    if s == "verdicts" {
        return Ok(ExportFormat::Verdicts);
    }
    ctrlbench_report::export::Format::parse(s)
        .map(ExportFormat::Dashboard)
        .ok_or_else(|| {
            format!(
                "unknown format {s:?}: use {} or verdicts",
                ctrlbench_report::export::Format::NAMES.join(", ")
            )
        })
}

#[derive(Subcommand)]
pub enum ControllersCmd {
    /// Build (or find cached) controller binaries and print `IMPL PATH` per line.
    Build,
}

#[derive(Args)]
pub struct RunArgs {
    /// Built-in experiment name or path to an experiment file.
    pub experiment: String,
    /// Print the plan and an estimated duration (the builds still to do
    /// included); run, build and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Override the scales, e.g. --scales 50,200.
    #[arg(long, value_delimiter = ',')]
    pub scales: Vec<u64>,
    /// Override the observation window in seconds.
    #[arg(long)]
    pub window: Option<f64>,
    /// Override the number of repeats (with --until-decided: the most repeats).
    #[arg(long)]
    pub repeats: Option<u32>,
    /// Repeat until every question of the experiment is decided (the
    /// file's repeats = "auto"): at least its min_repeats (default 3), at
    /// most --repeats or its max_repeats (default 10).
    #[arg(long)]
    pub until_decided: bool,
    #[command(flatten)]
    pub grow: GrowArgs,
    /// Flag a run "machine busy" (kept out of medians and pairs) when other
    /// processes used more than this share of one core during it (replaces
    /// the file's busy_threshold; default 0.10).
    #[arg(long, env = "CTRLBENCH_BUSY_THRESHOLD", value_name = "FRACTION")]
    pub busy_threshold: Option<f64>,
    /// Where the plane, the controllers and ctrlbench run (replaces the
    /// file's [cluster] cpus), repeatable: --cpus plane=0-1 --cpus
    /// controller=2 --cpus harness=3; --cpus off places nothing (with 4
    /// cores or more the split is otherwise automatic).
    #[arg(long, value_name = "ROLE=CPUS")]
    pub cpus: Vec<String>,
    /// Run only these variants (comma-separated names).
    #[arg(long, value_delimiter = ',')]
    pub variants: Vec<String>,
    /// Widgets created once in a namespace of their own before any
    /// controller starts (replaces the file's background_objects): what a
    /// cluster-wide cache holds besides the run's objects.
    #[arg(long, value_name = "K")]
    pub background_objects: Option<u64>,
    /// Run kube-controller-manager's namespace and garbage-collector
    /// controllers on the local plane (replaces the file's [cluster]
    /// controller_manager): deleted namespaces are emptied and finalized,
    /// and owner references collected, as in a real cluster. Built from the
    /// k8s.io/kubernetes module on first use and cached.
    #[arg(long)]
    pub controller_manager: bool,
    /// Plain progress lines instead of bars.
    #[arg(long)]
    pub no_progress: bool,
    /// Use this cluster instead of a local plane.
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
    /// Kubeconfig context to use (implies an existing cluster).
    #[arg(long)]
    pub context: Option<String>,
    /// Confirm the cluster an experiment file names (its [cluster] kubeconfig
    /// or context) without repeating it with --kubeconfig/--context.
    #[arg(long)]
    pub yes: bool,
    /// Where results directories are created.
    #[arg(long, default_value = "results")]
    pub results: PathBuf,
    /// A/B against a git ref in one run: every command variant with a
    /// `build` gets a twin, <name>-baseline, built from REF's tree (a branch,
    /// tag or commit of the build_dir's repository, exported into the cache;
    /// no network). The twins run interleaved and paired with the working
    /// tree's builds, and "<name> / <name>-baseline" is asked on T100,
    /// Ready/s, reconcile p99, writes per object, requests per object and
    /// peak RSS.
    #[arg(long, value_name = "REF")]
    pub baseline: Option<String>,
    /// Exit 1 when a `[[compare]]` question (with --baseline: the working
    /// tree against REF) is decided worse by more than this, e.g. 10%: its
    /// whole 95 % interval beyond it on the worse side. Undecided questions
    /// never fail; they are listed with the smallest change they could see.
    #[arg(long, value_name = "PERCENT", value_parser = parse_percent)]
    pub fail_on_regression: Option<f64>,
    /// After the report, exit 3 when a variant exceeds a limit of the
    /// file's `[budget]` (the median over its repeats), printing one
    /// `BUDGET EXCEEDED <variant> <key> = <value> > <limit>` line each.
    #[arg(long)]
    pub fail_on_budget: bool,
}

#[derive(Subcommand)]
pub enum ClusterCmd {
    /// Find, download or build etcd and kube-apiserver for a Kubernetes version.
    ///
    /// Lookup order: TEST_ASSET_ETCD / TEST_ASSET_KUBE_APISERVER, then
    /// $KUBEBUILDER_ASSETS, then ~/.cache/ctrlbench/k8s/<version>/; otherwise
    /// the release binaries are downloaded, verified against their published
    /// SHA-256 and cached there (CTRLBENCH_MIRROR=URL: from a mirror of the
    /// same layout; CTRLBENCH_OFFLINE=1: no download). What cannot be
    /// downloaded is built with Go from the module proxy (10–20 minutes cold
    /// on 2 cores).
    Install {
        /// Kubernetes version to install (MAJOR.MINOR.PATCH).
        #[arg(long, default_value = DEFAULT_K8S_VERSION)]
        k8s_version: String,
        /// Also install kube-controller-manager (for `--controller-manager`).
        #[arg(long)]
        controller_manager: bool,
        /// Also install kube-controller-manager, kube-scheduler and KWOK (for
        /// `cluster up --nodes`; KWOK, always built, into
        /// ~/.cache/ctrlbench/kwok/<version>/).
        #[arg(long)]
        nodes: bool,
    },
    /// Start a named plane on free 127.0.0.1 ports and print `export KUBECONFIG=...`.
    ///
    /// The plane keeps running after the command returns (unless --foreground):
    /// a detached supervisor process reaps etcd and kube-apiserver and, with
    /// --apiservers 2 or more, serves the front the kubeconfig names. Stop it
    /// with `ctrlbench cluster down --name NAME`.
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
    /// Stop a plane (SIGTERM, SIGKILL after 10 s): its supervisor (and front),
    /// every apiserver and etcd member; then remove its data directory.
    Down {
        #[arg(long, default_value = "default")]
        name: String,
    },
    /// Bring a throw-away plane up, show it answering with the Widget CRD, take it down.
    Demo {
        #[command(flatten)]
        plane: PlaneArgs,
    },
    /// Start and stop a plane several times; print seconds to /readyz with fsync on and off.
    Bench {
        /// Start/stop cycles per fsync setting.
        #[arg(long, default_value_t = 5)]
        times: usize,
        /// The plane started each cycle (its fsync setting is overridden: both are measured).
        #[command(flatten)]
        plane: PlaneArgs,
    },
}

#[derive(Args)]
pub struct UpArgs {
    /// Name of the plane (its state lives in ~/.local/state/ctrlbench/planes/NAME).
    #[arg(long, default_value = "default")]
    pub name: String,
    #[command(flatten)]
    pub plane: PlaneArgs,
    /// Stay in the foreground and stop the plane on Ctrl-C or SIGTERM.
    #[arg(long)]
    pub foreground: bool,
}

/// "10%" or "10" → 0.10.
fn parse_pair(s: &str) -> Result<(String, String), String> {
    match s.split_once(':') {
        Some((a, b)) if !a.is_empty() && !b.is_empty() => Ok((a.to_string(), b.to_string())),
        _ => Err(format!("{s:?} is not X:Y (two variant names)")),
    }
}

/// A margin: "5%" or "5" → 0.05, below 100 %.
fn parse_margin(s: &str) -> Result<f64, String> {
    let v = parse_percent(s)?;
    if v >= 1.0 {
        return Err(format!("{s:?} must be below 100%"));
    }
    Ok(v)
}

/// A percentage at or above 0 ("25%", "0%").
fn parse_headroom(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .trim_end_matches('%')
        .parse()
        .map_err(|_| format!("{s:?} is not a percentage (e.g. 25%)"))?;
    if !(v >= 0.0 && v.is_finite()) {
        return Err(format!("{s:?} must be a percentage at or above 0"));
    }
    Ok(v / 100.0)
}

fn parse_percent(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .trim_end_matches('%')
        .parse()
        .map_err(|_| format!("{s:?} is not a percentage (e.g. 10%)"))?;
    if !(v > 0.0 && v.is_finite()) {
        return Err(format!("{s:?} must be a positive percentage"));
    }
    Ok(v / 100.0)
}

/// How a local plane is started: one set of flags for `cluster up`, `probe`,
/// `demo` and `bench`, turned into [`PlaneOptions`] in one place.
#[derive(Args, Clone)]
pub struct PlaneArgs {
    /// Kubernetes version (binaries are built on first use).
    #[arg(long, default_value = DEFAULT_K8S_VERSION)]
    pub k8s_version: String,
    /// kube-apiserver feature gates, e.g. ConcurrentWatchObjectDecode=true,WatchList=true.
    #[arg(long, value_delimiter = ',')]
    pub feature_gates: Vec<String>,
    /// Extra kube-apiserver flag (repeatable), e.g. --apiserver-arg=--max-requests-inflight=800.
    #[arg(long = "apiserver-arg", allow_hyphen_values = true)]
    pub apiserver_args: Vec<String>,
    /// Extra etcd flag (repeatable).
    #[arg(long = "etcd-arg", allow_hyphen_values = true)]
    pub etcd_args: Vec<String>,
    /// etcd fsync. On by default: the disk is part of what a benchmark measures.
    #[arg(long, value_enum, default_value_t = OnOff::On)]
    pub etcd_fsync: OnOff,
    /// The apiserver's audit log of writes (Metadata level, a file in the
    /// plane's directory): per-controller server-side latency and write counts
    /// (audit.csv per run). Off by default: it costs create throughput (README).
    #[arg(long, value_enum, default_value_t = OnOff::Off)]
    pub audit_log: OnOff,
    /// etcd cluster size: members on 127.0.0.1, each with its own ports, data
    /// directory and certificate, peer TLS between them.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub etcd_members: usize,
    /// kube-apiservers sharing etcd, each on its own port. With more than one,
    /// the kubeconfig names a loopback TCP front that round-robins new
    /// connections over the apiservers that answer /readyz (checked every 500 ms).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub apiservers: usize,
    /// Also run kube-controller-manager (only its namespace and
    /// garbage-collector controllers, as its own identity, no listener):
    /// deleted namespaces are emptied and finalized, and owner references
    /// collected, natively. Built from the same k8s.io/kubernetes module on
    /// first use and cached beside kube-apiserver.
    #[arg(long)]
    pub controller_manager: bool,
    /// Fake nodes managed by KWOK, with kube-scheduler, both on loopback
    /// with their own identities (implies --controller-manager, which then
    /// also runs the deployment, replicaset, statefulset, job and
    /// endpointslice controllers): workloads' pods get scheduled and become
    /// Running and Ready, with no container runtime. Built on first use.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub nodes: usize,
}

impl TryFrom<&PlaneArgs> for PlaneOptions {
    type Error = anyhow::Error;

    fn try_from(a: &PlaneArgs) -> anyhow::Result<PlaneOptions> {
        let o = PlaneOptions {
            k8s_version: binaries::normalize_version(&a.k8s_version)?,
            feature_gates: a.feature_gates.clone(),
            apiserver_args: a.apiserver_args.clone(),
            etcd_args: a.etcd_args.clone(),
            etcd_fsync: a.etcd_fsync == OnOff::On,
            audit_log: a.audit_log == OnOff::On,
            etcd_members: a.etcd_members,
            apiservers: a.apiservers,
            controller_manager: a.controller_manager || a.nodes > 0,
            nodes: a.nodes,
            ..PlaneOptions::default()
        };
        o.check()?;
        Ok(o)
    }
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum OnOff {
    On,
    Off,
}

impl RunArgs {
    /// The experiment-file overrides this command line asks for.
    pub fn overrides(&self) -> Overrides {
        Overrides {
            scales: self.scales.clone(),
            window_s: self.window,
            repeats: self.repeats,
            until_decided: self.until_decided,
            busy_threshold: self.busy_threshold,
            cpus: self.cpus.clone(),
            variants: self.variants.clone(),
            background_objects: self.background_objects,
            controller_manager: self.controller_manager,
            grow: self.grow.grow,
            max_n: self.grow.max_n,
            budget_minutes: self.grow.budget_minutes,
        }
    }
}
