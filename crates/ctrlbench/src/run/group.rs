//! A run group: the variants measured together in one run (one variant in
//! the isolated schedule, all of them in the concurrent one). Sets up a fresh
//! namespace, a ServiceAccount identity and the controller's processes (its
//! replicas) per variant, hands them to the measurement loop, and tears everything down
//! again — also after errors and Ctrl-C.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use ctrlbench_record::summary::QuietWait;
use ctrlbench_record::{Settings, Summary};

use super::member::{Launch, LaunchKind, Member, Replica};
use super::objects::Objects;
use super::{Ctx, identity, measure, namespace};
use crate::experiment::Impl;
use crate::experiment::plan::Run;
use crate::experiment::spec::StartMode;
use crate::experiment::spec::Variant;

/// How long tearing down a group's namespaces may take in all: two
/// minutes, plus the objects at a delete rate this machine's plane beats
/// (200 objects/s, 20 MiB/s of objects), so that a large run's namespace
/// is not given up on while it is still being emptied.
pub fn teardown_bound(objects: u64, object_bytes: u64) -> Duration {
    const BASE_S: f64 = 120.0;
    const OBJECTS_PER_S: f64 = 200.0;
    const BYTES_PER_S: f64 = 20.0 * 1024.0 * 1024.0;
    Duration::from_secs_f64(
        BASE_S + objects as f64 / OBJECTS_PER_S + (objects * object_bytes) as f64 / BYTES_PER_S,
    )
}

/// Sets up, measures and tears down one run group; also returns what
/// teardown could not remove.
pub async fn run(
    ctx: &Ctx<'_>,
    run: &Run,
    quiet_wait: Option<QuietWait>,
) -> (Result<Vec<Summary>>, Vec<String>) {
    let client = &ctx.cluster.client;
    let exp = ctx.exp;
    let suffix = format!(
        "{:04x}",
        (std::process::id() as u128 ^ Instant::now().elapsed().as_nanos() ^ now_nanos()) & 0xffff
    );
    let mut members: Vec<Member> = Vec::new();
    let audit_from = ctx
        .cluster
        .plane
        .as_ref()
        .and_then(|p| p.audit_log())
        .map(|log| std::fs::metadata(log).map_or(0, |m| m.len()));
    // Set-up: anything created is torn down below, whatever happens.
    let setup = super::until_cancelled(ctx.cancel, async {
        for &vi in &run.variants {
            let v = &exp.variants[vi];
            let run_id = format!("cb-{}-n{}-r{}-{suffix}", v.name, run.scale, run.repeat);
            let run_id: String = run_id
                .chars()
                .take(63)
                .collect::<String>()
                .trim_end_matches('-')
                .to_string();
            // An external controller's own namespace is used as is (created
            // only when missing, and then deleted again).
            let (ns, owns_namespace) = match v.keys.namespace.as_ref() {
                Some(n) => {
                    let exists =
                        kube::Api::<k8s_openapi::api::core::v1::Namespace>::all(client.clone())
                            .get_opt(n)
                            .await?
                            .is_some();
                    if !exists {
                        namespace::create(client, n, &exp.name).await?;
                    }
                    (n.clone(), !exists)
                }
                None => {
                    namespace::create(client, &run_id, &exp.name).await?;
                    (run_id.clone(), true)
                }
            };
            let secrets = tempfile::Builder::new().prefix("ctrlbench-id-").tempdir()?;
            let dir = ctx.results.run(run.scale, &v.name, run.repeat);
            members.push(Member {
                variant: vi,
                ns: ns.clone(),
                owns_namespace,
                run_id,
                cluster_grants: Vec::new(),
                settings: None,
                flags: v.flags(),
                dir,
                objects: Arc::new(Objects::default()),
                replicas: Vec::new(),
                pending: false,
                started_at: None,
                secrets,
                audit_from,
            });
            let m = members.last_mut().expect("just pushed");
            m.dir.create()?;
            match v.implementation {
                Impl::Rust | Impl::Go(_) => start_own(ctx, v, m).await?,
                Impl::Command => start_command(ctx, vi, m).await?,
                Impl::External => {
                    m.replicas = vec![Replica {
                        metrics_url: v.keys.metrics.clone(),
                        ..Replica::default()
                    }];
                    std::fs::write(
                        m.dir.controller_log(),
                        "impl = \"external\": ctrlbench started no controller\n",
                    )?;
                }
            }
        }
        anyhow::Ok(())
    })
    .await
    .unwrap_or_else(|| Err(anyhow::anyhow!("interrupted during set-up")));
    let result = match setup {
        Ok(()) => measure::run(ctx, run, &mut members, &quiet_wait).await,
        Err(e) => Err(e),
    };
    // Teardown, also after errors and Ctrl-C: every replica at once.
    let grace = ctx.stop_grace();
    futures::future::join_all(
        members
            .iter_mut()
            .flat_map(|m| m.replicas.iter_mut())
            .filter_map(|r| r.process.take())
            .map(|p| p.stop(grace)),
    )
    .await;
    // Our own plane about to be removed whole (interrupted, or the last run
    // on it): its namespaces need no deleting.
    if (ctx.cancel.is_cancelled() || ctx.plane_goes) && ctx.cluster.plane.is_some() {
        return (result, Vec::new());
    }
    let not_cleaned = delete_namespaces(ctx, run, &members).await;
    (result, not_cleaned)
}

/// Deletes the group's namespaces (someone else's: only this run's
/// objects) in parallel, within one bound that follows the work; returns
/// what is not gone.
async fn delete_namespaces(ctx: &Ctx<'_>, run: &Run, members: &[Member]) -> Vec<String> {
    let (client, exp) = (&ctx.cluster.client, ctx.exp);
    let objects = run.scale * members.len() as u64;
    let bound = teardown_bound(objects, exp.object_bytes.unwrap_or(0));
    if bound > Duration::from_secs(150) {
        eprintln!(
            "tearing down {} namespace(s), {objects} objects: up to {:.0} s",
            members.len(),
            bound.as_secs_f64()
        );
    }
    let finalize = ctx.cluster.no_namespace_controller;
    let kinds = std::slice::from_ref(&exp.workload.resource);
    let deletes = members.iter().map(|m| async move {
        if !m.owns_namespace {
            // Someone else's namespace: only this run's objects go.
            return super::workload::delete_run_objects(
                client,
                &exp.workload,
                &m.ns,
                &m.run_id,
                bound,
            )
            .await
            .map_err(|e| format!("namespace {}: {e:#}", m.ns));
        }
        // Absent unless the controller had cluster-wide grants (404s are fine).
        identity::delete_cluster_scope(client, &m.ns)
            .await
            .map_err(|e| format!("namespace {}: {e:#}", m.ns))?;
        namespace::delete(
            client,
            &m.ns,
            finalize,
            Duration::from_secs(20),
            bound,
            kinds,
        )
        .await
        .map_err(|e| format!("namespace {}: {e:#}", m.ns))
    });
    let mut not_cleaned = Vec::new();
    match tokio::time::timeout(bound, futures::future::join_all(deletes)).await {
        Ok(results) => not_cleaned.extend(results.into_iter().filter_map(|r| r.err())),
        Err(_) => not_cleaned.extend(
            members
                .iter()
                .map(|m| format!("namespace {}: not gone after {bound:?}", m.ns)),
        ),
    }
    for n in &not_cleaned {
        eprintln!(
            "warning: not cleaned up: {n} (on an existing cluster: delete it yourself, e.g. kubectl delete namespace)"
        );
    }
    not_cleaned
}

/// One of ctrlbench's controllers: its settings, identity and process.
async fn start_own(ctx: &Ctx<'_>, v: &Variant, m: &mut Member) -> Result<()> {
    let client = &ctx.cluster.client;
    let ns = m.ns.clone();
    // A variant's own build (`binary`), else ctrlbench's.
    let bin = ctx
        .programs
        .get(&m.variant)
        .unwrap_or_else(|| &ctx.binaries[&v.implementation]);
    m.settings = print_settings(bin, &ns, &m.flags).await;
    // cache = "cluster" presets list/watch widgets in every namespace.
    let cluster_scope = widget_api::presets::get(v.preset()).is_some_and(|p| p.cluster_scope());
    let mut grants = identity::Grants::widgets(cluster_scope);
    if v.lease().is_some() {
        grants = grants.with_leases();
    }
    m.cluster_grants = grants.describe_cluster();
    let id = identity::create(
        client,
        &ctx.cluster.kubeconfig,
        &ns,
        "widget-controller",
        &grants,
    )
    .await?;
    let kc = m.secrets.path().join("kubeconfig");
    id.write(&kc)?;
    let mut args = vec![
        "--namespace".to_string(),
        ns.clone(),
        "--metrics-bind-address".to_string(),
        "127.0.0.1:0".to_string(),
    ];
    args.extend(m.flags.iter().cloned());
    let mut env = vec![("KUBECONFIG".to_string(), kc.display().to_string())];
    env.extend(v.env().iter().map(|(k, v)| (k.clone(), v.clone())));
    // Kept to start it again the same way (a restart fault). Every replica
    // is the same command: each binds its own free metrics port.
    let launch = Launch {
        bin: bin.clone(),
        args,
        env,
        cpus: ctx.placement.controller_cpus(v)?,
        cpu_limit: v.cpu_limit(),
        kind: LaunchKind::Own,
    };
    m.replicas = (0..v.replicas())
        .map(|_| Replica {
            launch: Some(launch.clone()),
            ..Replica::default()
        })
        .collect();
    m.pending = true;
    // after-load: measure starts it once every object exists.
    if v.start() == StartMode::BeforeLoad {
        m.start_controller().await?;
    }
    Ok(())
}

/// A user's command: its identity (the file's rbac / cluster_rbac), a free
/// port, the placeholders, the process.
async fn start_command(ctx: &Ctx<'_>, vi: usize, m: &mut Member) -> Result<()> {
    let v = &ctx.exp.variants[vi];
    let client = &ctx.cluster.client;
    let grants = identity::Grants::of_rules(v.rbac(), v.cluster_rbac());
    m.cluster_grants = grants.describe_cluster();
    let id = identity::create(
        client,
        &ctx.cluster.kubeconfig,
        &m.ns,
        "controller",
        &grants,
    )
    .await?;
    let kc = m.secrets.path().join("kubeconfig");
    id.write(&kc)?;
    let cpus = ctx.placement.controller_cpus(v)?;
    let dir = std::path::absolute(
        ctx.exp
            .file
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(std::path::Path::new(".")),
    )?;
    // Each replica gets its own {port}; the rest of its command is the same.
    m.replicas.clear();
    for k in 0..v.replicas() {
        let port = free_port()?;
        let fill = |a: &str| {
            Placeholders {
                port,
                namespace: &m.ns,
                kubeconfig: &kc,
                dir: &dir,
            }
            .fill(a)
        };
        let args: Vec<String> = v.command().iter().skip(1).map(|a| fill(a)).collect();
        // Recorded as the file wrote them: the port and the paths differ
        // per run, and two variants that differ only there are an A/A.
        if k == 0 {
            m.flags = v.command().iter().skip(1).cloned().collect();
        }
        let metrics_url = v.keys.metrics.as_deref().map(fill);
        let pprof_url = v.keys.pprof.as_deref().map(fill);
        let mut env = vec![("KUBECONFIG".to_string(), kc.display().to_string())];
        env.extend(v.env().iter().map(|(k, v)| (k.clone(), fill(v))));
        // Kept to start it again the same way (a restart fault).
        m.replicas.push(Replica {
            launch: Some(Launch {
                bin: ctx.programs[&vi].clone(),
                args,
                env,
                cpus: cpus.clone(),
                cpu_limit: v.cpu_limit(),
                kind: LaunchKind::Command {
                    metrics_url: metrics_url.clone(),
                    pprof_url,
                },
            }),
            process: None,
            metrics_url,
        });
    }
    m.pending = true;
    // after-load: measure starts it once every object exists.
    if v.start() == StartMode::BeforeLoad {
        m.start_controller().await?;
    }
    Ok(())
}

/// What a command's arguments, env, metrics and pprof URLs may name.
struct Placeholders<'a> {
    port: u16,
    namespace: &'a str,
    kubeconfig: &'a std::path::Path,
    /// The experiment file's directory: a path in an argument (a script
    /// the program runs) is then relative to the file, as its other paths
    /// are, whatever directory ctrlbench runs in.
    dir: &'a std::path::Path,
}

impl Placeholders<'_> {
    fn fill(&self, a: &str) -> String {
        a.replace("{port}", &self.port.to_string())
            .replace("{namespace}", self.namespace)
            .replace("{kubeconfig}", &self.kubeconfig.display().to_string())
            .replace("{dir}", &self.dir.display().to_string())
    }
}

/// A free port on 127.0.0.1 for `{port}` (the kernel's choice; released
/// for the controller to bind).
fn free_port() -> Result<u16> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(l.local_addr()?.port())
}

/// The settings the binary resolves `flags` to, as it prints them
/// (`--print-settings`, no cluster contact), less the namespace: the summary
/// records that on its own, and without it two runs' settings compare equal
/// (the report's A/A pairs and fault baselines). None, with a warning, when
/// it cannot.
async fn print_settings(bin: &std::path::Path, ns: &str, flags: &[String]) -> Option<Settings> {
    let out = tokio::process::Command::new(bin)
        .args(flags)
        .args(["--namespace", ns, "--print-settings"])
        .env_remove("KUBECONFIG")
        .stdin(std::process::Stdio::null())
        .output()
        .await;
    let parsed = match &out {
        Ok(o) if o.status.success() => {
            serde_json::from_slice::<Settings>(&o.stdout)
                .ok()
                .map(|s| Settings {
                    namespace: String::new(),
                    ..s
                })
        }
        _ => None,
    };
    if parsed.is_none() {
        eprintln!(
            "warning: {} did not print its settings; summary.json will lack them",
            bin.display()
        );
    }
    parsed
}

fn now_nanos() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::{Placeholders, teardown_bound};

    #[test]
    fn a_command_names_its_port_namespace_kubeconfig_and_directory() {
        let p = Placeholders {
            port: 8080,
            namespace: "ns-1",
            kubeconfig: std::path::Path::new("/s/kubeconfig"),
            dir: std::path::Path::new("/e"),
        };
        assert_eq!(
            p.fill("{dir}/../op/main.py --namespace={namespace} :{port} {kubeconfig}"),
            "/e/../op/main.py --namespace=ns-1 :8080 /s/kubeconfig"
        );
    }

    #[test]
    fn the_teardown_bound_follows_the_work() {
        assert_eq!(teardown_bound(200, 0).as_secs(), 121);
        // N = 100 000 bare widgets: 120 s + 500 s.
        assert_eq!(teardown_bound(100_000, 0).as_secs(), 620);
        // 2000 objects of 100 KiB: 120 + 10 + 204 800 000 B at 20 MiB/s ≈ 9.8 s.
        assert_eq!(teardown_bound(2000, 102_400).as_secs(), 139);
    }
}
