//! Where the loader's creates/s part from the probe's: the same N creates at
//! the same concurrency, interleaved in rotating order, with one difference
//! at a time — the loader's own path (template, labels, field manager,
//! per-object bookkeeping), the run's watch of the loader's objects open (a
//! before-load run has it; an after-load run opens it after the load), the
//! run's per-second scrape of the apiserver's /metrics, and all of them
//! together as a before-load run's load phase has them. Each pass gets a fresh namespace;
//! the output is each pass's creates/s and, per configuration, the geometric
//! mean of its ratios to the probe pass of the same round, and the CPU each
//! created object cost this process, kube-apiserver and etcd (far less noisy
//! than rates on a shared machine: on 2 cores whatever else runs takes its
//! CPU from the apiserver).
//!
//! Against a plane `ctrlbench cluster up` started:
//! `KUBECONFIG=… cargo run --release -p ctrlbench --example loader_gap -- 5000 16 3`
//! (objects, writers, rounds). Nothing else should run beside it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use futures::StreamExt;
use kube::api::{Api, PostParams};
use tokio_util::sync::CancellationToken;

use ctrlbench::experiment::workload::Workload;
use ctrlbench::run::measure::watch::watch_ready;
use ctrlbench::run::objects::Objects;
use ctrlbench::run::{loader, namespace};
use widget_api::Widget;

#[derive(Clone, Copy, PartialEq)]
enum Pass {
    Probe,
    Loader,
    LoaderDecoded,
    LoaderWatched,
    ProbeScraped,
    LoaderAsInARun,
}

const PASSES: [Pass; 6] = [
    Pass::Probe,
    Pass::Loader,
    Pass::LoaderDecoded,
    Pass::LoaderWatched,
    Pass::ProbeScraped,
    Pass::LoaderAsInARun,
];

impl Pass {
    fn name(self) -> &'static str {
        match self {
            Pass::Probe => "probe (typed Widget, no watch, no scrape)",
            Pass::Loader => "loader alone",
            Pass::LoaderDecoded => "loader via Api<DynamicObject>::create",
            Pass::LoaderWatched => "loader + the run's watch",
            Pass::ProbeScraped => "probe + /metrics each second",
            Pass::LoaderAsInARun => "loader + watch + scrape (before-load run)",
        }
    }
    fn uses_loader(self) -> bool {
        matches!(
            self,
            Pass::Loader | Pass::LoaderWatched | Pass::LoaderAsInARun
        )
    }
    fn watched(self) -> bool {
        matches!(self, Pass::LoaderWatched | Pass::LoaderAsInARun)
    }
    fn scraped(self) -> bool {
        matches!(self, Pass::ProbeScraped | Pass::LoaderAsInARun)
    }
}

#[tokio::main]
async fn main() -> Result<()> {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<u64>());
    let n = args.next().transpose()?.unwrap_or(5000);
    let writers = args.next().transpose()?.unwrap_or(16) as usize;
    let rounds = args.next().transpose()?.unwrap_or(3) as usize;
    let client = kube::Client::try_default()
        .await
        .context("set KUBECONFIG to a plane from `ctrlbench cluster up`")?;
    let workload = Arc::new(Workload::widgets());
    let crd = ctrlbench::run::workload::CrdToInstall::of_workload(&workload);
    ctrlbench::run::workload::ensure_crd(&client, &crd).await?;
    let mut rates = vec![Vec::new(); PASSES.len()];
    let mut cpus = vec![[0.0f64; 3]; PASSES.len()];
    for round in 0..rounds {
        for k in 0..PASSES.len() {
            // Rotate the order so no configuration always runs first.
            let p = (k + round) % PASSES.len();
            let ns = format!("cb-gap-{round}-{p}-{:04x}", std::process::id() & 0xffff);
            namespace::create(&client, &ns, "gap").await?;
            let before = cpu();
            let rate = pass(&client, &workload, &ns, PASSES[p], n, writers).await;
            let after = cpu();
            let per_object: Vec<f64> = (0..3)
                .map(|j| (after[j] - before[j]) * 1e6 / n as f64)
                .collect();
            eprintln!(
                "round {round}: {:<42} {rate:7.1} creates/s; µs CPU per object: us {:.0}, apiserver {:.0}, etcd {:.0}",
                PASSES[p].name(),
                per_object[0],
                per_object[1],
                per_object[2]
            );
            rates[p].push(rate);
            for j in 0..3 {
                cpus[p][j] += per_object[j] / rounds as f64;
            }
            let kinds = [workload.resource.clone()];
            namespace::delete(
                &client,
                &ns,
                true,
                Duration::from_secs(20),
                Duration::from_secs(300),
                &kinds,
            )
            .await?;
        }
    }
    println!(
        "| pass | creates/s per round | ÷ probe (geometric mean) | µs CPU per object: us, apiserver, etcd |\n|---|---|---|---|"
    );
    for ((p, r), c) in PASSES.iter().zip(&rates).zip(&cpus) {
        let ratio = (r
            .iter()
            .zip(&rates[0])
            .map(|(x, b)| (x / b).ln())
            .sum::<f64>()
            / r.len() as f64)
            .exp();
        let each: Vec<String> = r.iter().map(|x| format!("{x:.0}")).collect();
        println!(
            "| {} | {} | {ratio:.3} | {:.0}, {:.0}, {:.0} |",
            p.name(),
            each.join(", "),
            c[0],
            c[1],
            c[2]
        );
    }
    Ok(())
}

/// CPU seconds so far of this process, every kube-apiserver and every etcd.
fn cpu() -> [f64; 3] {
    let tick = 1.0 / rustix::param::clock_ticks_per_second() as f64;
    let procs = ctrlbench::machine::processes();
    let of = |name: &str| -> f64 {
        procs
            .iter()
            .filter(|p| p.comm == name)
            .map(|p| p.own_ticks as f64 * tick)
            .sum()
    };
    [
        ctrlbench_plane::process::own_cpu_seconds(),
        of("kube-apiserver"),
        of("etcd"),
    ]
}

async fn pass(
    client: &kube::Client,
    workload: &Arc<Workload>,
    ns: &str,
    p: Pass,
    n: u64,
    writers: usize,
) -> f64 {
    let stop = CancellationToken::new();
    let run = format!("gap-{ns}");
    let objects = Arc::new(Objects::default());
    let mut side = Vec::new();
    if p.watched() {
        let (tx, rx) = tokio::sync::oneshot::channel();
        side.push(tokio::spawn(watch_ready(
            client.clone(),
            workload.clone(),
            ns.to_string(),
            run.clone(),
            objects.clone(),
            tx,
            stop.clone(),
        )));
        let _ = tokio::time::timeout(Duration::from_secs(30), rx).await;
    }
    if p.scraped() {
        let (client, stop) = (client.clone(), stop.clone());
        side.push(tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            loop {
                tokio::select! {
                    _ = stop.cancelled() => return,
                    _ = tick.tick() => {
                        ctrlbench::run::measure::sampler::apiserver_values(&client).await;
                    }
                }
            }
        }));
    }
    let rate = if p == Pass::LoaderDecoded {
        // What the loader did before it sent its JSON as is: the object
        // typed, the answer decoded.
        let api = ctrlbench::run::workload::api(client, ns, workload);
        let t0 = Instant::now();
        let ok = futures::stream::iter(1..=n)
            .map(|i| {
                let api = api.clone();
                let (workload, run) = (workload.clone(), run.clone());
                async move {
                    let o = ctrlbench::run::workload::object(&workload, i, ns, &run).ok()?;
                    let pp = PostParams {
                        field_manager: Some("ctrlbench-loader".into()),
                        ..Default::default()
                    };
                    api.create(&pp, &o).await.ok()
                }
            })
            .buffer_unordered(writers)
            .filter(|ok| std::future::ready(ok.is_some()))
            .count()
            .await;
        ok as f64 / t0.elapsed().as_secs_f64()
    } else if p.uses_loader() {
        loader::create(
            client.clone(),
            workload.clone(),
            ns.to_string(),
            run,
            n,
            writers,
            objects,
            CancellationToken::new(),
        )
        .await
        .rate()
    } else {
        let api: Api<Widget> = Api::namespaced(client.clone(), ns);
        let t0 = Instant::now();
        let ok = futures::stream::iter(1..=n)
            .map(|i| {
                let api = api.clone();
                async move {
                    api.create(&PostParams::default(), &Widget::numbered(i))
                        .await
                        .is_ok()
                }
            })
            .buffer_unordered(writers)
            .filter(|ok| std::future::ready(*ok))
            .count()
            .await;
        ok as f64 / t0.elapsed().as_secs_f64()
    };
    stop.cancel();
    for h in side {
        let _ = h.await;
    }
    rate
}
