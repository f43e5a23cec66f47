//! One control plane per test binary, shared by its tests.
//!
//! The plane is started on a dedicated thread that lives until the process
//! exits: Linux sends the parent-death signal when the *thread* that spawned
//! a child exits, and each test runs on a thread of its own. At exit the
//! plane is stopped and its directory removed (atexit); if the binary is
//! killed instead, the parent-death signal takes the processes down.

use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use kube::config::Kubeconfig;

use crate::{ControlPlane, PlaneOptions};

/// What a test needs to reach the shared plane.
#[derive(Clone)]
pub struct SharedPlane {
    pub kubeconfig: Kubeconfig,
    pub kubeconfig_path: PathBuf,
    pub url: String,
    pub version: String,
    /// etcd's client URL (TLS, client certificates required).
    pub etcd_url: String,
    /// The plane's certificates and keys.
    pub pki: PathBuf,
}

static PLANE: OnceLock<Result<SharedPlane, String>> = OnceLock::new();
static HANDLE: Mutex<Option<ControlPlane>> = Mutex::new(None);

extern "C" fn stop_at_exit() {
    if let Ok(mut h) = HANDLE.lock()
        && let Some(plane) = h.take()
    {
        plane.stop_within(Duration::from_secs(3));
    }
}

/// The test binary's plane, started on first use (etcd fsync off, as envtest).
/// Panics with the start-up error if it cannot start.
pub fn shared_plane() -> &'static SharedPlane {
    let r = PLANE.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("ctrlbench-test-plane".into())
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("tokio runtime");
                let opts = PlaneOptions {
                    etcd_fsync: false,
                    ..PlaneOptions::default()
                };
                match rt.block_on(ControlPlane::start(&opts)) {
                    Ok(plane) => {
                        let shared = SharedPlane {
                            kubeconfig: plane.kubeconfig.clone(),
                            kubeconfig_path: plane.kubeconfig_path.clone(),
                            url: plane.url(),
                            version: plane.version.clone(),
                            etcd_url: plane.etcd_client_urls()[0].clone(),
                            pki: plane.dir.join("pki"),
                        };
                        *HANDLE.lock().expect("plane lock") = Some(plane);
                        // SAFETY: registering a plain extern "C" fn.
                        unsafe { libc::atexit(stop_at_exit) };
                        let _ = tx.send(Ok(shared));
                        loop {
                            std::thread::park();
                        }
                    }
                    Err(e) => {
                        let _ = tx.send(Err(format!("{e:#}")));
                    }
                }
            })
            .expect("spawn plane thread");
        rx.recv()
            .unwrap_or_else(|_| Err("plane thread died".into()))
    });
    match r {
        Ok(p) => p,
        Err(e) => panic!("cannot start the test control plane: {e}"),
    }
}

impl SharedPlane {
    /// A fresh admin client for the calling test's runtime.
    pub async fn client(&self) -> kube::Client {
        crate::kubeconfig::client(&self.kubeconfig)
            .await
            .expect("admin client")
    }
}
