//! `ctrlbench run`: executes an experiment's plan. Per run: fresh namespaces,
//! one ServiceAccount identity per controller, the controller processes, a
//! baseline scrape, the loader, our own Ready watch and the per-second
//! sampler; then teardown and `summary.json`. Ctrl-C stops the loader and the
//! controllers, deletes the namespaces and marks the results incomplete.

pub mod controller;
pub mod identity;
pub mod loader;
pub mod namespace;
pub mod probe;
pub mod progress;
pub mod sampler;
pub mod watch;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::cluster::{ControlPlane, PlaneOptions, binaries};
use crate::experiment::plan::{self, Run};
use crate::experiment::{Experiment, Impl};
use crate::samples::layout;
use controller::ControllerProcess;
use loader::LoadStats;
use sampler::Sampler;
use watch::Objects;

/// Widgets per concurrency level when an experiment asks for the probe.
const PROBE_OBJECTS: u64 = 500;

/// Seconds a controller gets after SIGTERM.
const STOP_GRACE: Duration = Duration::from_secs(10);

/// How `ctrlbench run` was invoked.
pub struct RunOptions {
    pub results_root: PathBuf,
    pub progress: bool,
    pub kubeconfig: Option<PathBuf>,
    pub context: Option<String>,
}

/// Where the results went and whether the experiment finished.
pub struct Outcome {
    pub dir: PathBuf,
    pub complete: bool,
}

/// The cluster a run talks to.
pub struct Cluster {
    pub client: kube::Client,
    pub kubeconfig: Kubeconfig,
    pub plane: Option<ControlPlane>,
    crd_installed_by_us: bool,
    /// No kube-controller-manager: ctrlbench must empty and finalize its namespaces.
    pub no_namespace_controller: bool,
    pub version: String,
}

async fn connect(exp: &Experiment, opts: &RunOptions) -> Result<Cluster> {
    let c = &exp.spec.cluster;
    let kubeconfig_path = opts
        .kubeconfig
        .clone()
        .or_else(|| c.kubeconfig.as_ref().map(|k| expand_home(k.get_ref())));
    let context = opts
        .context
        .clone()
        .or_else(|| c.context.as_ref().map(|k| k.get_ref().clone()));
    let popts = PlaneOptions {
        k8s_version: binaries::normalize_version(
            c.k8s_version
                .as_ref()
                .map(|v| v.get_ref().as_str())
                .unwrap_or(binaries::DEFAULT_K8S_VERSION),
        )?,
        feature_gates: c.feature_gates.clone(),
        apiserver_args: c.apiserver_args.clone(),
        etcd_args: c.etcd_args.clone(),
        etcd_fsync: c.etcd_fsync.unwrap_or(true),
        ..PlaneOptions::default()
    };
    Cluster::connect(popts, kubeconfig_path, context).await
}

impl Cluster {
    /// A local plane started with `popts`, unless a kubeconfig or a context
    /// names an existing cluster (where the CRD is installed if missing).
    pub async fn connect(
        popts: PlaneOptions,
        kubeconfig_path: Option<PathBuf>,
        context: Option<String>,
    ) -> Result<Cluster> {
        if kubeconfig_path.is_none() && context.is_none() {
            eprintln!(
                "starting the local control plane (Kubernetes {}) …",
                popts.k8s_version
            );
            let plane = ControlPlane::start(&popts).await?;
            eprintln!(
                "plane ready in {:.1} s at {}",
                plane.ready_after.as_secs_f64(),
                plane.url()
            );
            return Ok(Cluster {
                client: plane.client().await?,
                kubeconfig: plane.kubeconfig.clone(),
                version: plane.version.clone(),
                plane: Some(plane),
                crd_installed_by_us: false,
                no_namespace_controller: true,
            });
        }
        let mut kc = match &kubeconfig_path {
            Some(p) => Kubeconfig::read_from(p)
                .with_context(|| format!("cannot read kubeconfig {}", p.display()))?,
            None => Kubeconfig::read().context("cannot read the default kubeconfig")?,
        };
        if let Some(ctx) = &context {
            kc.current_context = Some(ctx.clone());
        }
        let config =
            kube::Config::from_custom_kubeconfig(kc.clone(), &KubeConfigOptions::default()).await?;
        let client = kube::Client::try_from(config)?;
        let version = client
            .apiserver_version()
            .await
            .context("cannot reach the cluster")?
            .git_version;
        let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
        let installed = crds
            .get_opt("widgets.benchmark.example.com")
            .await?
            .is_none();
        if installed {
            crate::cluster::plane::install_crd(&client).await?;
        }
        // kube-controller-manager publishes kube-root-ca.crt into every
        // namespace; its absence means nothing will finalize deleted namespaces.
        let cms: Api<k8s_openapi::api::core::v1::ConfigMap> =
            Api::namespaced(client.clone(), "default");
        let no_namespace_controller = matches!(cms.get_opt("kube-root-ca.crt").await, Ok(None));
        Ok(Cluster {
            client,
            kubeconfig: kc,
            plane: None,
            crd_installed_by_us: installed,
            version,
            no_namespace_controller,
        })
    }

    /// Removes the CRD if this run installed it, and stops a plane it started.
    pub async fn close(self) -> Result<()> {
        if self.crd_installed_by_us {
            let crds: Api<CustomResourceDefinition> = Api::all(self.client.clone());
            let _ = crds
                .delete("widgets.benchmark.example.com", &DeleteParams::default())
                .await;
        }
        if let Some(plane) = self.plane {
            tokio::task::spawn_blocking(move || plane.stop()).await?;
        }
        Ok(())
    }
}

fn expand_home(p: &str) -> PathBuf {
    match p.strip_prefix("~/") {
        Some(rest) => dirs::home_dir().unwrap_or_default().join(rest),
        None => PathBuf::from(p),
    }
}

/// Runs the whole experiment; returns the results directory.
pub async fn execute(
    exp: &Experiment,
    opts: &RunOptions,
    cancel: CancellationToken,
) -> Result<Outcome> {
    let runs = plan::expand(exp);
    // Build every controller first: a failed build should cost no cluster time.
    let mut binaries = std::collections::HashMap::new();
    for v in &exp.variants {
        if !binaries.contains_key(&v.implementation) {
            let imp = v.implementation.clone();
            let bin =
                tokio::task::spawn_blocking(move || crate::controllers::binary(&imp)).await??;
            binaries.insert(v.implementation.clone(), bin);
        }
    }
    let dir = layout::create_results_dir(&opts.results_root, exp.name())?;
    let mut manifest = Manifest::new(exp, &dir);
    manifest.write(&dir)?;
    let cluster = connect(exp, opts).await?;
    manifest.kubernetes_version = cluster.version.clone();
    manifest.local_plane = cluster.plane.is_some();
    warm_up(&cluster).await?;
    if exp.spec.probe {
        let rows = probe::run(
            &cluster.client,
            PROBE_OBJECTS,
            cluster.no_namespace_controller,
        )
        .await?;
        manifest.probe = Some(serde_json::to_value(rows)?);
    }
    manifest.write(&dir)?;

    let mut complete = true;
    for (i, run) in runs.iter().enumerate() {
        if cancel.is_cancelled() {
            complete = false;
            break;
        }
        let names: Vec<&str> = run
            .variants
            .iter()
            .map(|v| exp.variants[*v].name.as_str())
            .collect();
        eprintln!(
            "run {}/{}: N={} rep {} {}",
            i + 1,
            runs.len(),
            run.scale,
            run.repeat,
            names.join(" + ")
        );
        match run_group(exp, run, &cluster, &binaries, &dir, opts, &cancel).await {
            Ok(summaries) => manifest.runs.extend(summaries),
            Err(e) => {
                manifest.errors.push(format!(
                    "N={} rep {} {}: {e:#}",
                    run.scale,
                    run.repeat,
                    names.join("+")
                ));
                eprintln!("run failed: {e:#}");
            }
        }
        manifest.write(&dir)?;
        if cancel.is_cancelled() {
            complete = false;
        }
    }
    manifest.complete = complete && manifest.errors.is_empty();
    manifest.finished_at = Some(layout::now_rfc3339());
    manifest.harness_cpu_seconds = own_cpu_seconds();
    manifest.write(&dir)?;
    cluster.close().await?;
    Ok(Outcome {
        dir,
        complete: manifest.complete,
    })
}

/// One throw-away widget before anything is measured: the first writes to a
/// freshly established CRD are slow (the apiserver builds its handlers), and
/// the first run should not pay for that.
async fn warm_up(cluster: &Cluster) -> Result<()> {
    let ns = format!("cb-warmup-{:04x}", std::process::id() & 0xffff);
    namespace::create(&cluster.client, &ns, "warmup").await?;
    let api: Api<widget_api::Widget> = Api::namespaced(cluster.client.clone(), &ns);
    let created = api
        .create(
            &kube::api::PostParams::default(),
            &widget_api::Widget::numbered(1),
        )
        .await;
    namespace::delete(
        &cluster.client,
        &ns,
        cluster.no_namespace_controller,
        Duration::from_secs(20),
        Duration::from_secs(120),
    )
    .await?;
    created.context("cannot create a widget (is the Widget CRD served?)")?;
    Ok(())
}

/// One variant's part of a run.
struct Member {
    variant: usize,
    ns: String,
    dir: PathBuf,
    objects: Arc<Objects>,
    process: Option<ControllerProcess>,
    _secrets: tempfile::TempDir,
}

#[allow(clippy::too_many_arguments)]
async fn run_group(
    exp: &Experiment,
    run: &Run,
    cluster: &Cluster,
    binaries: &std::collections::HashMap<Impl, PathBuf>,
    results: &Path,
    opts: &RunOptions,
    cancel: &CancellationToken,
) -> Result<Vec<serde_json::Value>> {
    let client = &cluster.client;
    let suffix = format!(
        "{:04x}",
        (std::process::id() as u128 ^ Instant::now().elapsed().as_nanos() ^ now_nanos()) & 0xffff
    );
    let mut members: Vec<Member> = Vec::new();
    // Set-up: anything created is torn down below, whatever happens.
    let setup = async {
        for &vi in &run.variants {
            let v = &exp.variants[vi];
            let ns = format!("cb-{}-n{}-r{}-{suffix}", v.name, run.scale, run.repeat);
            let ns: String = ns
                .chars()
                .take(63)
                .collect::<String>()
                .trim_end_matches('-')
                .to_string();
            namespace::create(client, &ns, exp.name()).await?;
            let secrets = tempfile::Builder::new().prefix("ctrlbench-id-").tempdir()?;
            members.push(Member {
                variant: vi,
                ns: ns.clone(),
                dir: layout::run_dir(results, run.scale, &v.name, run.repeat),
                objects: Arc::new(Objects::default()),
                process: None,
                _secrets: secrets,
            });
            let m = members.last_mut().expect("just pushed");
            std::fs::create_dir_all(&m.dir)?;
            let id =
                identity::create(client, &cluster.kubeconfig, &ns, "widget-controller").await?;
            let kc = m._secrets.path().join("kubeconfig");
            id.write(&kc)?;
            let mut args = vec![
                "--namespace".to_string(),
                ns.clone(),
                "--metrics-bind-address".to_string(),
                "127.0.0.1:0".to_string(),
            ];
            args.extend(v.spec.flags());
            let mut env = vec![("KUBECONFIG".to_string(), kc.display().to_string())];
            env.extend(v.spec.env.iter().map(|(k, v)| (k.clone(), v.clone())));
            m.process = Some(
                ControllerProcess::start(
                    &binaries[&v.implementation],
                    &args,
                    &env,
                    &m.dir.join("controller.log"),
                    Duration::from_secs(30),
                )
                .await?,
            );
        }
        anyhow::Ok(())
    }
    .await;
    let result = match setup {
        Ok(()) => measure(exp, run, cluster, &mut members, opts, cancel).await,
        Err(e) => Err(e),
    };
    // Teardown, also after errors and Ctrl-C.
    for m in &mut members {
        if let Some(p) = m.process.take() {
            p.stop(STOP_GRACE).await;
        }
    }
    let finalize = cluster.no_namespace_controller;
    for m in &members {
        if let Err(e) = namespace::delete(
            client,
            &m.ns,
            finalize,
            Duration::from_secs(20),
            Duration::from_secs(300),
        )
        .await
        {
            eprintln!("warning: {e:#}");
        }
    }
    result
}

async fn measure(
    exp: &Experiment,
    run: &Run,
    cluster: &Cluster,
    members: &mut [Member],
    opts: &RunOptions,
    cancel: &CancellationToken,
) -> Result<Vec<serde_json::Value>> {
    let client = &cluster.client;
    let etcd_url = cluster.plane.as_ref().map(|p| p.etcd.config.metrics_url());
    let targets = members
        .iter()
        .map(|m| {
            let addr = m
                .process
                .as_ref()
                .map(|p| p.metrics_addr.clone())
                .unwrap_or_default();
            (exp.variants[m.variant].name.clone(), addr, m.dir.clone())
        })
        .collect();
    let mut sampler = Sampler::new(Some(client.clone()), etcd_url, targets)?;
    // Baseline: a first successful scrape of every controller.
    let t0 = Instant::now();
    loop {
        sampler.scrape_once().await?;
        if sampler.controllers.iter().all(|c| c.baseline.is_some()) {
            break;
        }
        anyhow::ensure!(
            t0.elapsed() < Duration::from_secs(15),
            "a controller's /metrics never answered"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    let stop = cancel.child_token();
    let mut watches = Vec::new();
    let mut loads = Vec::new();
    for m in members.iter() {
        m.objects.expected.store(run.scale, Ordering::SeqCst);
        watches.push(tokio::spawn(watch::watch_ready(
            client.clone(),
            m.ns.clone(),
            m.objects.clone(),
            stop.clone(),
        )));
    }
    let load_start = Instant::now();
    for m in members.iter() {
        loads.push(tokio::spawn(loader::create(
            client.clone(),
            m.ns.clone(),
            run.scale,
            *exp.spec.concurrency.get_ref() as usize,
            m.objects.clone(),
            stop.clone(),
        )));
    }
    let names: Vec<String> = members
        .iter()
        .map(|m| exp.variants[m.variant].name.clone())
        .collect();
    let bars = progress::Bars::new(&names, run.scale, exp.window_s(), opts.progress);
    let interval = Duration::from_secs_f64(*exp.spec.scrape_interval_s.get_ref());
    let window = Duration::from_secs_f64(exp.window_s());
    let quiet = Duration::from_secs_f64(*exp.spec.quiet_s.get_ref());
    let mut next_scrape = Instant::now() + interval;
    // The harness's own CPU: while loading, then while only watching and sampling.
    let cpu_at_start = own_cpu_seconds();
    let mut loaded: Option<(Instant, f64)> = None;
    let stop_reason = loop {
        if cancel.is_cancelled() {
            break "interrupted";
        }
        if loaded.is_none() && loads.iter().all(|l| l.is_finished()) {
            loaded = Some((Instant::now(), own_cpu_seconds()));
        }
        let elapsed = load_start.elapsed();
        if elapsed >= window {
            break "window";
        }
        if exp.spec.stop_when_converged
            && members.iter().all(|m| m.objects.ready() >= run.scale)
            && sampler
                .controllers
                .iter()
                .all(|c| c.last_change.elapsed() >= quiet)
        {
            break "converged";
        }
        if Instant::now() >= next_scrape {
            next_scrape += interval;
            sampler.scrape_once().await?;
            for (i, m) in members.iter_mut().enumerate() {
                let alive = m.process.as_mut().is_some_and(|p| p.running());
                bars.update(
                    i,
                    m.objects.ready(),
                    sampler.controllers[i].rate,
                    elapsed,
                    alive,
                );
            }
        }
        tokio::select! {
            _ = cancel.cancelled() => {},
            _ = tokio::time::sleep(Duration::from_millis(100)) => {},
        }
    };
    bars.finish();
    // The last row is taken while the controllers still run.
    stop.cancel();
    let mut load_stats = Vec::new();
    for l in loads {
        load_stats.push(l.await.unwrap_or_default());
    }
    sampler.scrape_once().await?;
    for w in watches {
        let _ = w.await;
    }
    let elapsed = load_start.elapsed().as_secs_f64();
    let cpu_at_end = own_cpu_seconds();
    let harness_cpu = match loaded {
        Some((t, cpu)) => {
            let wall = t.elapsed().as_secs_f64();
            json!({
                "load_phase_s": cpu - cpu_at_start,
                "after_load_s": cpu_at_end - cpu,
                "after_load_wall_s": wall,
                "after_load_core_fraction": if wall > 0.0 { (cpu_at_end - cpu) / wall } else { 0.0 },
            })
        }
        None => json!({"load_phase_s": cpu_at_end - cpu_at_start}),
    };
    let mut summaries = Vec::new();
    for (i, m) in members.iter_mut().enumerate() {
        let code = match m.process.take() {
            Some(p) => p.stop(STOP_GRACE).await,
            None => None,
        };
        crate::samples::csv::write_objects(&m.dir.join("objects.csv"), &m.objects.rows())?;
        let mut s = summary(
            exp,
            run,
            m,
            &sampler.controllers[i],
            &load_stats[i],
            load_start,
            elapsed,
            stop_reason,
            code,
            &sampler,
        );
        s["harness_cpu"] = harness_cpu.clone();
        std::fs::write(
            m.dir.join("summary.json"),
            serde_json::to_string_pretty(&s)?,
        )?;
        summaries.push(s);
    }
    Ok(summaries)
}

#[allow(clippy::too_many_arguments)]
fn summary(
    exp: &Experiment,
    run: &Run,
    m: &Member,
    c: &sampler::ControllerTarget,
    load: &LoadStats,
    load_start: Instant,
    elapsed: f64,
    stop_reason: &str,
    exit_code: Option<i32>,
    sampler: &Sampler,
) -> serde_json::Value {
    let v = &exp.variants[m.variant];
    let ready = m.objects.ready();
    let convergence = m
        .objects
        .all_ready_at()
        .map(|t| t.duration_since(load_start).as_secs_f64());
    let delta = |f: fn(&crate::samples::csv::ControllerRow) -> f64| match (c.baseline, c.last) {
        (Some(b), Some(l)) => Some(f(&l) - f(&b)),
        _ => None,
    };
    json!({
        "variant": v.name,
        "impl": v.implementation.to_string(),
        "preset": v.spec.preset.as_str(),
        "flags": v.spec.flags(),
        "namespace": m.ns,
        "scale": run.scale,
        "repeat": run.repeat,
        "schedule": exp.spec.schedule,
        "concurrent_with": run.variants.iter().filter(|x| **x != m.variant).map(|x| exp.variants[*x].name.clone()).collect::<Vec<_>>(),
        "window_s": exp.window_s(),
        "elapsed_s": elapsed,
        "stop_reason": stop_reason,
        "incomplete": stop_reason == "interrupted",
        "load": {
            "created": load.created,
            "errors": load.errors,
            "seconds": load.seconds,
            "rate_per_s": load.rate(),
            "first_error": load.first_error,
        },
        "ready": ready,
        "remaining": run.scale.saturating_sub(ready),
        "converged": convergence.is_some(),
        "convergence_s": convergence,
        "throughput_ready_per_s": convergence.map(|t| if t > 0.0 { ready as f64 / t } else { 0.0 }).unwrap_or(ready as f64 / elapsed.max(1e-9)),
        "reconciles": {
            "total": delta(|r| r.reconciles),
            "success": delta(|r| r.success),
            "error": delta(|r| r.errors),
        },
        "scrapes": {"ok": c.ok, "failed": c.failed, "apiserver_failed": sampler.apiserver_failed, "etcd_failed": sampler.etcd_failed},
        "controller_exit_code": exit_code,
    })
}

fn now_nanos() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}

/// CPU seconds this process has used (user + system).
pub fn own_cpu_seconds() -> f64 {
    let fields = crate::cluster::process::stat_fields("self").unwrap_or_default();
    // SAFETY: sysconf has no preconditions.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    // utime and stime are fields 14 and 15.
    let f = |i: usize| {
        fields
            .get(i)
            .and_then(|x| x.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (f(11) + f(12)) / ticks
}

/// `manifest.json`.
#[derive(serde::Serialize)]
struct Manifest {
    tool: String,
    tool_version: String,
    git_revision: Option<String>,
    experiment: String,
    experiment_file: String,
    experiment_text: String,
    started_at: String,
    finished_at: Option<String>,
    complete: bool,
    kubernetes_version: String,
    etcd_version: String,
    local_plane: bool,
    machine: serde_json::Value,
    harness_cpu_seconds: f64,
    probe: Option<serde_json::Value>,
    runs: Vec<serde_json::Value>,
    errors: Vec<String>,
}

impl Manifest {
    fn new(exp: &Experiment, _dir: &Path) -> Manifest {
        let git = std::process::Command::new("git")
            .args(["rev-parse", "HEAD"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
        let mem_kb = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|m| {
                m.lines().find_map(|l| {
                    l.strip_prefix("MemTotal:")?
                        .trim()
                        .trim_end_matches("kB")
                        .trim()
                        .parse::<u64>()
                        .ok()
                })
            })
            .unwrap_or(0);
        Manifest {
            tool: "ctrlbench".into(),
            tool_version: env!("CARGO_PKG_VERSION").into(),
            git_revision: git,
            experiment: exp.name().into(),
            experiment_file: exp.file.display().to_string(),
            experiment_text: exp.text.clone(),
            started_at: layout::now_rfc3339(),
            finished_at: None,
            complete: false,
            kubernetes_version: String::new(),
            etcd_version: binaries::ETCD_VERSION.into(),
            local_plane: exp.is_local(),
            machine: json!({
                "cores": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
                "memory_bytes": mem_kb * 1024,
            }),
            harness_cpu_seconds: 0.0,
            probe: None,
            runs: vec![],
            errors: vec![],
        }
    }

    fn write(&self, dir: &Path) -> Result<()> {
        let tmp = dir.join("manifest.json.tmp");
        std::fs::write(&tmp, serde_json::to_string_pretty(self)?)?;
        std::fs::rename(tmp, dir.join("manifest.json"))?;
        Ok(())
    }
}
