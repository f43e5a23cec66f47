//! A controller process of a run: started as its own identity with its output
//! in `controller.log`, found through its `metrics-address=` line (ours) or
//! its metrics URL answering (a user's command; without a URL, by staying
//! up), stopped with SIGTERM then SIGKILL sent to its whole process group,
//! so that what a wrapper command started goes with it. It dies with the
//! harness (parent-death signal).

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};

use ctrlbench_plane::process::{Lifetime, Signal, own, signal_group};
use ctrlbench_plane::quota::Quota;

/// How long a command without a metrics URL must stay up to count as started.
pub const SETTLE: Duration = Duration::from_secs(2);

/// A running controller.
pub struct ControllerProcess {
    child: Child,
    pub pid: u32,
    pub metrics_addr: String,
    /// Its cgroup, removed after the child (fields drop in order).
    _quota: Option<Quota>,
}

/// A controller's log: new, or appended to (a restart keeps one log).
fn open_log(log: &Path, append: bool) -> Result<std::fs::File> {
    Ok(if append {
        std::fs::OpenOptions::new().append(true).open(log)?
    } else {
        std::fs::File::create(log)?
    })
}

/// What a controller process is started from.
pub struct Program<'a> {
    pub bin: &'a Path,
    pub args: &'a [String],
    pub env: &'a [(String, String)],
    /// The CPUs it runs on (None: any).
    pub cpus: Option<&'a [usize]>,
    /// Its CPU quota in millicores (None: unlimited).
    pub cpu_limit: Option<u32>,
}

impl Program<'_> {
    /// The command: its own process group, dying with us, on its CPUs,
    /// in its quota's cgroup.
    fn command(&self) -> Result<(Command, Option<Quota>)> {
        let mut cmd = Command::new(self.bin);
        cmd.args(self.args)
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true);
        if let Some(c) = self.cpus {
            ctrlbench_plane::cpus::pin_command(cmd.as_std_mut(), c);
        }
        let quota = self
            .cpu_limit
            .map(|m| -> Result<Quota> {
                let q = Quota::create(m)?;
                q.apply(cmd.as_std_mut())?;
                Ok(q)
            })
            .transpose()?;
        own(cmd.as_std_mut(), Lifetime::Attached);
        Ok((cmd, quota))
    }
}

impl ControllerProcess {
    /// Starts `p`, logging to `log` (appended to when `append`: a restarted
    /// controller keeps one log); waits for its metrics address.
    pub async fn start(
        p: &Program<'_>,
        log: &Path,
        append: bool,
        timeout: Duration,
    ) -> Result<ControllerProcess> {
        let log_file = open_log(log, append)?;
        Self::start_logging_to(p, log, log_file, timeout).await
    }

    async fn start_logging_to(
        p: &Program<'_>,
        log: &Path,
        log_file: std::fs::File,
        timeout: Duration,
    ) -> Result<ControllerProcess> {
        let bin = p.bin;
        let (mut cmd, quota) = p.command()?;
        cmd.stdout(std::process::Stdio::piped())
            .stderr(log_file.try_clone()?);
        let mut child = cmd
            .spawn()
            .with_context(|| format!("cannot start {}", bin.display()))?;
        let pid = child.id().unwrap_or(0);
        let stdout = child.stdout.take().expect("piped");
        let mut lines = BufReader::new(stdout).lines();
        let found = tokio::time::timeout(timeout, async {
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(a) = line.strip_prefix("metrics-address=") {
                    return Some(a.trim().to_string());
                }
            }
            None
        })
        .await;
        let metrics_addr = match found {
            Ok(Some(a)) => a,
            _ => {
                let _ = child.start_kill();
                let _ = child.wait().await;
                let tail = std::fs::read_to_string(log).unwrap_or_default();
                let last = tail
                    .lines()
                    .rev()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("(no output)");
                bail!(
                    "controller {} printed no metrics-address line: {last}",
                    bin.display()
                );
            }
        };
        // The rest of stdout goes to the log as well.
        let mut out = tokio::fs::OpenOptions::new().append(true).open(log).await?;
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                let _ = out.write_all(format!("{line}\n").as_bytes()).await;
            }
        });
        Ok(ControllerProcess {
            _quota: quota,
            child,
            pid,
            metrics_addr,
        })
    }

    /// Starts a user's command (`program` + `args`, placeholders already
    /// replaced), stdout and stderr to `log`. Ready when `metrics_url`
    /// answers within `timeout` (without one: when it is still up after
    /// [`SETTLE`]). A command that exits first, or a URL that never answers,
    /// is an error naming the exit status or the URL and the log's last line.
    pub async fn start_command(
        p: &Program<'_>,
        log: &Path,
        append: bool,
        metrics_url: Option<&str>,
        timeout: Duration,
    ) -> Result<ControllerProcess> {
        let program = p.bin;
        let log_file = open_log(log, append)?;
        let (mut cmd, quota) = p.command()?;
        cmd.stdout(log_file.try_clone()?).stderr(log_file);
        let mut child = cmd
            .spawn()
            .with_context(|| format!("cannot start {}", program.display()))?;
        let pid = child.id().unwrap_or(0);
        let last_line = || {
            let text = std::fs::read_to_string(log).unwrap_or_default();
            cache_sync_hint(&text).unwrap_or_else(|| {
                text.lines()
                    .rev()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("(no output)")
                    .to_string()
            })
        };
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(2))
            .no_proxy()
            .build()?;
        let t0 = std::time::Instant::now();
        let wait = if metrics_url.is_some() {
            timeout
        } else {
            SETTLE
        };
        loop {
            if let Some(status) = child.try_wait()? {
                bail!(
                    "the command {} exited at once ({status}): {}",
                    program.display(),
                    last_line()
                );
            }
            if let Some(url) = metrics_url
                && http
                    .get(url)
                    .send()
                    .await
                    .is_ok_and(|r| r.status().is_success())
            {
                break;
            }
            if t0.elapsed() >= wait {
                if let Some(url) = metrics_url {
                    signal_group(pid, Signal::KILL);
                    let _ = child.wait().await;
                    bail!(
                        "the command {}'s metrics URL {url} did not answer within {timeout:?}: {}",
                        program.display(),
                        last_line()
                    );
                }
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        Ok(ControllerProcess {
            _quota: quota,
            child,
            pid,
            metrics_addr: String::new(),
        })
    }

    /// SIGTERM, SIGKILL after `grace`, to the controller's whole process
    /// group (a command may be a wrapper that started the real controller);
    /// returns the exit code if it exited by itself.
    pub async fn stop(mut self, grace: Duration) -> Option<i32> {
        self.signal(Signal::TERM);
        match tokio::time::timeout(grace, self.child.wait()).await {
            Ok(Ok(status)) => status.code(),
            _ => {
                self.kill().await;
                None
            }
        }
    }

    /// Sends `sig` to the controller's process group while the controller is
    /// ours (not yet reaped, so the group id is still its own).
    pub fn signal(&mut self, sig: Signal) {
        if self.running() {
            signal_group(self.pid, sig);
        }
    }

    /// SIGKILL to the process group, and waits until the controller is reaped.
    pub async fn kill(&mut self) {
        self.signal(Signal::KILL);
        let _ = self.child.wait().await;
    }

    /// `running` for a shared borrow (a guard); the pid is ours until reaped.
    pub fn running_now(&self) -> bool {
        ctrlbench_plane::process::start_time(self.pid).is_some()
    }

    /// True while the process runs.
    pub fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

/// Why a controller-runtime manager exited while it waited for its caches:
/// a kind it watches that the cluster does not serve, as its log names it
/// ("no matches for kind \"X\" in version \"g/v\"", then "timed out
/// waiting for cache to be synced for Kind *v1.X"). The manager's own last
/// line names neither the cause nor the fix.
pub fn cache_sync_hint(log: &str) -> Option<String> {
    let no_match =
        regex::Regex::new(r#"no matches for kind \\?"(\w+)\\?" in version \\?"([\w.\-/]+)\\?""#)
            .expect("a valid pattern");
    if let Some(c) = no_match.captures_iter(log).last() {
        return Some(format!(
            "the manager waited for the cache of {} ({}), a kind the cluster does not serve: add its CRD's file to [workload] extra_crds",
            &c[1], &c[2]
        ));
    }
    let timed_out =
        regex::Regex::new(r"timed out waiting for cache to be synced for Kind \*?(?:\w+\.)*(\w+)")
            .expect("a valid pattern");
    timed_out.captures_iter(log).last().map(|c| {
        format!(
            "the manager exited waiting for the cache of {}: if the cluster does not serve that kind, add its CRD's file to [workload] extra_crds",
            &c[1]
        )
    })
}

#[cfg(test)]
mod cache_sync_tests {
    use super::cache_sync_hint;

    #[test]
    fn a_missing_kind_is_named_from_the_log() {
        let log = r#"{"level":"error","msg":"if kind is a CRD, it should be installed before calling Start","kind":"Certificate.cert-manager.io","error":"no matches for kind \"Certificate\" in version \"cert-manager.io/v1\""}
{"level":"error","msg":"Could not wait for Cache to sync","error":"failed to wait for captain caches to sync kind source: *v1.Certificate: timed out waiting for cache to be synced for Kind *v1.Certificate"}"#;
        assert_eq!(
            cache_sync_hint(log).unwrap(),
            "the manager waited for the cache of Certificate (cert-manager.io/v1), a kind the cluster does not serve: add its CRD's file to [workload] extra_crds"
        );
        let only_timeout = "E1206 timed out waiting for cache to be synced for Kind *v1.Sailor\n";
        assert!(
            cache_sync_hint(only_timeout)
                .unwrap()
                .contains("cache of Sailor")
        );
        assert_eq!(cache_sync_hint("all good\n"), None);
    }
}
