//! widget-controller: the write-up's controller variants in Rust
//! (kube-rs), selected by flags, exporting controller-runtime's metric names.
//!
//! Prints `metrics-address=HOST:PORT` on stdout once /metrics is served, and
//! stops on SIGTERM/SIGINT after letting in-flight reconciles finish. With
//! `--print-settings` it prints the resolved settings as one JSON object and
//! exits without touching any cluster.

mod allocator;
mod client;
mod controller;
mod election;
#[cfg(test)]
mod fixtures;
mod flags;
mod logging;
mod managed_fields;
mod metrics;
mod profile;
mod queue;

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result};
use clap::Parser;
use tokio::sync::mpsc;

use flags::{Flags, Settings};
use metrics::Metrics;
use widget_api::presets::Queue;

/// How long in-flight reconciles get after a stop signal.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

fn main() -> ExitCode {
    let flags = Flags::parse();
    let settings = match flags.resolve() {
        Ok(s) => Settings {
            allocator: allocator::NAME.map(String::from),
            ..s
        },
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if flags.print_settings {
        println!("{}", settings.to_json());
        return ExitCode::SUCCESS;
    }
    logging::init(
        settings.log_level,
        settings.log_format,
        std::io::stderr,
        std::io::IsTerminal::is_terminal(&std::io::stderr()),
    );
    let rt = match RuntimeFlavor::from_env() {
        RuntimeFlavor::Multi => tokio::runtime::Builder::new_multi_thread(),
        RuntimeFlavor::Current => tokio::runtime::Builder::new_current_thread(),
    }
    .enable_all()
    .build()
    .expect("tokio runtime");
    match rt.block_on(run(settings)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// The tokio runtime the controller runs on (environment variable
/// `WIDGET_RUNTIME`, for before/after measurements): `current` (one thread,
/// `#[tokio::main(flavor = "current_thread")]`; the default) or `multi`
/// (tokio's multi-threaded scheduler, one worker per core, what plain
/// `#[tokio::main]` gives). On a shared 2-core machine every request crosses
/// tasks (reconcile → kube's Buffer worker → hyper's connection task and
/// back); on one thread those hops are queue pushes, not cross-thread
/// wake-ups: measured 0.55× the reconcile p50 and 0.76× the CPU of `multi`
/// at one worker (README, Performance).
#[derive(Clone, Copy, Debug)]
enum RuntimeFlavor {
    Multi,
    Current,
}

impl RuntimeFlavor {
    fn from_env() -> RuntimeFlavor {
        match std::env::var("WIDGET_RUNTIME").as_deref() {
            Ok("multi") => RuntimeFlavor::Multi,
            _ => RuntimeFlavor::Current,
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            RuntimeFlavor::Multi => "multi",
            RuntimeFlavor::Current => "current",
        }
    }
}

async fn run(settings: Settings) -> Result<()> {
    let queue = match controller::effective_queue(&settings) {
        Queue::Kube => queue::Queue::default(),
        Queue::Fifo => queue::Queue::fifo(),
    };
    let metrics = Arc::new(Metrics::with_queue(
        settings.workers,
        queue,
        settings.leader_election.is_some(),
    ));
    let config = kube::Config::infer()
        .await
        .context("no Kubernetes configuration: set KUBECONFIG or run in a cluster")?;
    // One token bucket per client, as client-go has one per REST client:
    // the informer's (its LISTs; watches are never throttled), the
    // reconciler's (reads and writes) and the API reader's (conflict
    // re-reads) do not share a budget.
    let bucket = settings.token_bucket();
    let stack = client::Stack::from_env();
    let h2 = settings.http_version.as_deref() == Some("h2");
    let clients = controller::Clients {
        informer: client::build(config.clone(), metrics.clone(), bucket, stack, h2).await?,
        client: client::build(config.clone(), metrics.clone(), bucket, stack, h2).await?,
        api_reader: client::build(config, metrics.clone(), bucket, stack, h2).await?,
    };

    if settings.metrics_bind_address != "0" {
        serve_metrics(
            &settings.metrics_bind_address,
            metrics.clone(),
            settings.pprof,
        )
        .await?;
    }
    tracing::info!(namespace = %settings.namespace, preset = %settings.preset, workers = settings.workers,
        predicate = settings.predicate.as_str(), status_write = settings.status_write.as_str(),
        annotate = settings.annotate, conflict_retry = settings.conflict_retry, queue = controller::effective_queue(&settings).as_str(),
        debounce_ms = settings.debounce_ms, client_stack = stack.as_str(), runtime = RuntimeFlavor::from_env().as_str(),
        "starting widget controller");

    // With leader election only the leader runs the controller (its watch
    // included: a standby's cache is cold, unlike controller-runtime's,
    // whose caches sync on every replica).
    let mut candidate = None;
    if settings.leader_election.is_some() {
        let mut c = election::Candidate::join(clients.client.clone(), &settings.namespace).await?;
        tokio::select! {
            _ = signal() => return Ok(()),
            r = c.elected() => r?,
        }
        metrics.leader.set(1);
        tracing::info!("elected leader");
        candidate = Some(c);
    }
    let lost = async {
        match candidate.as_mut() {
            Some(c) => c.lost().await,
            None => std::future::pending().await,
        }
    };

    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let (fatal_tx, mut fatal_rx) = mpsc::unbounded_channel::<String>();
    let mut ctl = tokio::spawn(controller::run(
        clients,
        settings,
        metrics,
        fatal_tx,
        async {
            let _ = stop_rx.await;
        },
    ));
    tokio::select! {
        _ = signal() => {
            tracing::info!("stop signal: finishing in-flight reconciles");
            let _ = stop_tx.send(());
            if tokio::time::timeout(SHUTDOWN_GRACE, &mut ctl).await.is_err() {
                tracing::warn!("in-flight reconciles did not finish within {SHUTDOWN_GRACE:?}");
            }
            Ok(())
        }
        Some(msg) = fatal_rx.recv() => anyhow::bail!("{msg}"),
        _ = lost => anyhow::bail!("leader election lost: stopping, so that only the new leader reconciles"),
        r = &mut ctl => {
            r?;
            Ok(())
        }
    }
}

/// Serves /metrics on `bind` (and, with `pprof`, /debug/pprof/profile) and
/// prints `metrics-address=HOST:PORT` (the bound address).
async fn serve_metrics(bind: &str, metrics: Arc<Metrics>, pprof: bool) -> Result<()> {
    let listener = tokio::net::TcpListener::bind(bind)
        .await
        .with_context(|| format!("cannot listen on --metrics-bind-address {}", bind))?;
    let addr = listener.local_addr()?;
    let m = metrics;
    let mut app = axum::Router::new().route(
        "/metrics",
        axum::routing::get(move || {
            let m = m.clone();
            async move {
                (
                    [(
                        http::header::CONTENT_TYPE,
                        "application/openmetrics-text; version=1.0.0; charset=utf-8",
                    )],
                    m.encode(),
                )
            }
        }),
    );
    if pprof {
        app = app.route("/debug/pprof/profile", axum::routing::get(profile::serve));
    }
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    println!("metrics-address={addr}");
    Ok(())
}

async fn signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {},
        _ = term.recv() => {},
    }
}
