//! The front: one loopback URL for a plane with several apiservers. A TCP
//! (layer 4) proxy on 127.0.0.1 that hands each new connection to the next
//! apiserver, round-robin, among those whose `/readyz` answered `ok` at the
//! last check (every `check_every`); a backend that refuses the connection
//! is marked down and the next one is tried. TLS passes through untouched:
//! every apiserver's serving certificate is for 127.0.0.1 and localhost from
//! the plane's CA, so a client cannot tell which one answered.
//!
//! It runs on a thread of its own with its own single-threaded tokio runtime,
//! so it serves whatever the caller's runtime does (a parked test thread, a
//! blocked `cluster up` supervisor); dropping the `Front` stops it and closes
//! every connection it carries.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::{Context, Result};
use kube::config::Kubeconfig;
use tokio::net::{TcpListener, TcpStream};

/// How the front is run.
#[derive(Debug, Clone)]
pub struct FrontConfig {
    /// The apiservers' secure ports on 127.0.0.1.
    pub backends: Vec<u16>,
    /// How often each backend's `/readyz` is checked.
    pub check_every: Duration,
    /// How long one `/readyz` check or one connection attempt may take.
    pub timeout: Duration,
}

impl FrontConfig {
    /// The defaults: checks every 500 ms, 1 s to answer.
    pub fn new(backends: Vec<u16>) -> FrontConfig {
        FrontConfig {
            backends,
            check_every: Duration::from_millis(500),
            timeout: Duration::from_secs(1),
        }
    }
}

/// A running front.
pub struct Front {
    pub config: FrontConfig,
    /// The port it listens on (127.0.0.1).
    pub port: u16,
    healthy: Arc<Vec<AtomicBool>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Front {
    /// Binds a free port on 127.0.0.1 and starts serving. `probe` is a
    /// kubeconfig whose credentials may read `/readyz` (its server is
    /// replaced by each backend's).
    pub fn start(config: FrontConfig, probe: &Kubeconfig) -> Result<Front> {
        let listener = std::net::TcpListener::bind("127.0.0.1:0")
            .context("the front cannot listen on 127.0.0.1")?;
        listener.set_nonblocking(true)?;
        let port = listener.local_addr()?.port();
        // Until the first check says otherwise every backend counts as up.
        let healthy: Arc<Vec<AtomicBool>> = Arc::new(
            config
                .backends
                .iter()
                .map(|_| AtomicBool::new(true))
                .collect(),
        );
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let (cfg, h, probe) = (config.clone(), healthy.clone(), probe.clone());
        let thread = std::thread::Builder::new()
            .name("ctrlbench-front".into())
            .spawn(move || {
                let rt = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => {
                        tracing::error!("the front cannot start a runtime: {e}");
                        return;
                    }
                };
                rt.block_on(async move {
                    let Ok(listener) = TcpListener::from_std(listener) else {
                        return;
                    };
                    for (i, port) in cfg.backends.iter().enumerate() {
                        tokio::spawn(check(i, *port, probe.clone(), cfg.clone(), h.clone()));
                    }
                    tokio::select! {
                        _ = serve(listener, cfg, h) => {},
                        _ = stopped => {},
                    }
                });
                // Dropping the runtime cancels every proxied connection.
            })?;
        Ok(Front {
            config,
            port,
            healthy,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    pub fn url(&self) -> String {
        format!("https://127.0.0.1:{}", self.port)
    }

    /// Whether each backend passed its last check.
    pub fn healthy(&self) -> Vec<bool> {
        self.healthy
            .iter()
            .map(|h| h.load(Ordering::Relaxed))
            .collect()
    }
}

impl Drop for Front {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Checks backend `i`'s `/readyz` every `check_every`, forever.
async fn check(
    i: usize,
    port: u16,
    mut probe: Kubeconfig,
    cfg: FrontConfig,
    healthy: Arc<Vec<AtomicBool>>,
) {
    for c in &mut probe.clusters {
        if let Some(cluster) = c.cluster.as_mut() {
            cluster.server = Some(format!("https://127.0.0.1:{port}"));
        }
    }
    let mut client = None;
    loop {
        if client.is_none() {
            client = crate::kubeconfig::client(&probe).await.ok();
        }
        let ok = match &client {
            Some(c) => {
                let req = http::Request::get("/readyz").body(Vec::new());
                match req {
                    Ok(req) => matches!(
                        tokio::time::timeout(cfg.timeout, c.request_text(req)).await,
                        Ok(Ok(body)) if body.trim() == "ok"
                    ),
                    Err(_) => false,
                }
            }
            None => false,
        };
        healthy[i].store(ok, Ordering::Relaxed);
        tokio::time::sleep(cfg.check_every).await;
    }
}

/// Accepts connections and proxies each to a backend.
async fn serve(listener: TcpListener, cfg: FrontConfig, healthy: Arc<Vec<AtomicBool>>) {
    let next = Arc::new(AtomicUsize::new(0));
    let cfg = Arc::new(cfg);
    loop {
        let Ok((inbound, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let (cfg, healthy, next) = (cfg.clone(), healthy.clone(), next.clone());
        tokio::spawn(async move {
            let Some(mut outbound) = connect(&cfg, &healthy, &next).await else {
                // Nothing answers: the client sees the connection close.
                return;
            };
            let mut inbound = inbound;
            let _ = inbound.set_nodelay(true);
            let _ = outbound.set_nodelay(true);
            let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
        });
    }
}

/// The next backend in turn that accepts a connection: the healthy ones
/// first, round-robin; then, if none of those answer, the others (a check
/// may lag a restart). A refused connection marks its backend down.
async fn connect(
    cfg: &FrontConfig,
    healthy: &[AtomicBool],
    next: &AtomicUsize,
) -> Option<TcpStream> {
    let n = cfg.backends.len();
    if n == 0 {
        return None;
    }
    let start = next.fetch_add(1, Ordering::Relaxed);
    let order: Vec<usize> = (0..n).map(|k| (start + k) % n).collect();
    let (up, down): (Vec<usize>, Vec<usize>) = order
        .into_iter()
        .partition(|i| healthy[*i].load(Ordering::Relaxed));
    for i in up.into_iter().chain(down) {
        let addr = SocketAddr::from(([127, 0, 0, 1], cfg.backends[i]));
        match tokio::time::timeout(cfg.timeout, TcpStream::connect(addr)).await {
            Ok(Ok(s)) => return Some(s),
            _ => healthy[i].store(false, Ordering::Relaxed),
        }
    }
    None
}
