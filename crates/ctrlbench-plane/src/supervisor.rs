//! Named planes that outlive the command that started them. `up` starts a
//! plane in the foreground, or — by default — re-runs the same command as a
//! detached supervisor (`--foreground` in a new session) and returns once the
//! plane is ready. The supervisor reaps etcd and kube-apiserver when they
//! exit; without a living parent they would stay zombies that `kill -0`
//! still sees.

use std::io::Write;
use std::sync::atomic::{AtomicU32, Ordering};

use anyhow::{Result, bail};

use crate::bench::on_off;
use rustix::process::Signal;

use crate::process::{Lifetime, STOP_TIMEOUT, own, signal};
use crate::state::{self, PlaneState};
use crate::{ControlPlane, PlaneOptions};

/// Set in the environment of the detached `cluster up --foreground` process.
const SUPERVISED: &str = "CTRLBENCH_SUPERVISED";

/// The supervisor a front `up` is waiting for; an interrupt stops it (its
/// own session does not get the terminal's Ctrl-C).
static SUPERVISOR: AtomicU32 = AtomicU32::new(0);

/// Starts the plane `name`. In the foreground it runs until the returned
/// future is dropped (Ctrl-C); otherwise a detached supervisor keeps it.
pub async fn up(name: &str, opts: &PlaneOptions, foreground: bool) -> Result<()> {
    state::check_name(name)?;
    let bins = opts.binaries().await?;
    if !foreground {
        // The supervisor takes the name and does the rest.
        let name = name.to_string();
        return tokio::task::spawn_blocking(move || detach(&name)).await?;
    }
    // One plane per name: held until this process exits. Only the holder
    // may clean up what an earlier plane of this name left behind.
    let _name = state::lock(name)?;
    if let Some(msg) = state::prepare(name)? {
        eprintln!("{msg}");
    }
    let dir = state::plane_dir(name)?;
    // Once more with new ports when a process exits while starting (a port
    // taken between pick and bind); the failed try removed its files.
    let plane = match ControlPlane::start_in(opts, &bins, dir.clone(), false).await {
        Err(e) if crate::plane::startup_exit(&e) => {
            tracing::warn!(error = %format!("{e:#}"), "plane start failed; trying once more with new ports");
            ControlPlane::start_in(opts, &bins, dir.clone(), false).await?
        }
        r => r?,
    };
    let st = PlaneState::of(name, &plane, opts.etcd_fsync, &opts.feature_gates);
    st.save()?;
    println!(
        "plane '{name}' ready in {:.2} s: {} ({}), etcd fsync {}",
        plane.ready_after.as_secs_f64(),
        plane.url(),
        plane.version,
        on_off(opts.etcd_fsync)
    );
    for r in &st.etcd {
        println!("pid={} etcd", r.pid);
    }
    for r in &st.apiservers {
        println!("pid={} kube-apiserver", r.pid);
    }
    if let Some(r) = &st.controller_manager {
        println!("pid={} kube-controller-manager", r.pid);
    }
    for (name, r) in [("kube-scheduler", &st.scheduler), ("kwok", &st.kwok)] {
        if let Some(r) = r {
            println!("pid={} {name}", r.pid);
        }
    }
    if st.apiservers.len() > 1 {
        println!(
            "front {} over {} apiservers, etcd members {}",
            st.url,
            st.apiservers.len(),
            st.etcd.len()
        );
    }
    println!("export KUBECONFIG={}", st.kubeconfig.display());
    std::io::stdout().flush()?;
    if std::env::var_os(SUPERVISED).is_some() {
        // The front process has gone: keep our own output in the plane directory.
        redirect_output(&dir.join("supervisor.log"))?;
    } else {
        eprintln!("running in the foreground; Ctrl-C stops the plane");
    }
    // Dropping this future (Ctrl-C, SIGTERM) drops the plane and stops it.
    std::future::pending::<()>().await;
    drop(plane);
    Ok(())
}

/// Stops a detached supervisor that a front `up` is still waiting for
/// (call on interrupt).
pub fn stop_pending() {
    let sup = SUPERVISOR.load(Ordering::SeqCst);
    if sup != 0 {
        signal(sup, Signal::TERM);
    }
}

/// Starts this command again as a detached supervisor (`--foreground` in a
/// new session), relays its output until the plane is ready, and returns.
fn detach(name: &str) -> Result<()> {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};

    let exe = std::env::current_exe()?;
    let mut cmd = Command::new(exe);
    cmd.args(std::env::args_os().skip(1))
        .arg("--foreground")
        .env(SUPERVISED, "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    own(&mut cmd, Lifetime::Detached);
    let mut child = cmd.spawn()?;
    let pid = child.id();
    SUPERVISOR.store(pid, Ordering::SeqCst);
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
        SUPERVISOR.store(0, Ordering::SeqCst);
        eprintln!("stop it with: ctrlbench cluster down --name {name} (supervisor process {pid})");
        return Ok(());
    }
    let _ = child.wait();
    drop(guard);
    let last = relay.join().unwrap_or_default();
    bail!("{}", last.trim_start_matches("error: "))
}

struct KillOnDrop(Option<u32>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Some(pid) = self.0.take() {
            signal(pid, Signal::TERM);
        }
    }
}

/// Points stdout and stderr at `path` (the supervisor outlives its terminal).
fn redirect_output(path: &std::path::Path) -> Result<()> {
    let f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    rustix::stdio::dup2_stdout(&f)?;
    rustix::stdio::dup2_stderr(&f)?;
    Ok(())
}

/// A running plane by name; a stale one (processes gone) is cleaned up and reported.
pub fn running(name: &str) -> Result<PlaneState> {
    let Some(s) = PlaneState::load(name)? else {
        bail!("no plane named '{name}': start one with 'ctrlbench cluster up --name {name}'");
    };
    let (a, e) = s.running();
    if !(a && e) {
        s.stop_and_remove(STOP_TIMEOUT)?;
        bail!(
            "plane '{name}' was stale (its processes were gone) and has been cleaned up; start it again with 'ctrlbench cluster up --name {name}'"
        );
    }
    Ok(s)
}

/// Stops a plane and removes its directory; says whether it was still running.
pub async fn down(name: &str) -> Result<bool> {
    let Some(s) = PlaneState::load(name)? else {
        bail!("no plane named '{name}' ('ctrlbench cluster status' lists them)");
    };
    let (a, e) = s.running();
    tokio::task::spawn_blocking(move || s.stop_and_remove(STOP_TIMEOUT)).await??;
    Ok(a || e)
}

/// The status of one plane or of all; stale planes are cleaned up on the way.
pub fn status(name: Option<&str>) -> Result<String> {
    let planes = match name {
        Some(n) => match PlaneState::load(n)? {
            Some(s) => vec![s],
            None => bail!("no plane named '{n}'"),
        },
        None => PlaneState::list()?,
    };
    if planes.is_empty() {
        return Ok("no planes ('ctrlbench cluster up' starts one)\n".into());
    }
    let mut out = String::new();
    for s in planes {
        let (a, e) = s.running();
        if !(a && e) {
            s.stop_and_remove(STOP_TIMEOUT)?;
            out.push_str(&format!("{}: stale (processes gone), cleaned up\n", s.name));
            continue;
        }
        out.push_str(&s.to_string());
    }
    Ok(out)
}
