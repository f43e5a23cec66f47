//! A run group: the variants measured together in one run (one variant in
//! the isolated schedule, all of them in the concurrent one). Sets up a fresh
//! namespace, a ServiceAccount identity and a controller process per
//! variant, hands them to the measurement loop, and tears everything down
//! again — also after errors and Ctrl-C.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use ctrlbench_record::summary::QuietWait;
use ctrlbench_record::{Settings, Summary};

use super::controller::ControllerProcess;
use super::member::{Launch, Member};
use super::watch::Objects;
use super::{Ctx, identity, measure, namespace};
use crate::experiment::plan::Run;

/// How long tearing down a group's namespaces may take in all.
const TEARDOWN_BOUND: Duration = Duration::from_secs(120);

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
    // Set-up: anything created is torn down below, whatever happens.
    let setup = super::until_cancelled(ctx.cancel, async {
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
            let dir = ctx.results.run(run.scale, &v.name, run.repeat);
            dir.create()?;
            let flags = v.flags();
            let bin = &ctx.binaries[&v.implementation];
            members.push(Member {
                variant: vi,
                ns: ns.clone(),
                settings: print_settings(bin, &ns, &flags).await,
                flags: flags.clone(),
                dir,
                objects: Arc::new(Objects::default()),
                process: None,
                launch: None,
                secrets,
            });
            let m = members.last_mut().expect("just pushed");
            // cache = "cluster" presets list/watch widgets in every namespace.
            let cluster_scope =
                widget_api::presets::get(v.spec.preset.as_str()).is_some_and(|p| p.cluster_scope());
            let id = identity::create(
                client,
                &ctx.cluster.kubeconfig,
                &ns,
                "widget-controller",
                cluster_scope,
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
            args.extend(flags);
            let mut env = vec![("KUBECONFIG".to_string(), kc.display().to_string())];
            env.extend(
                v.spec
                    .env
                    .get_ref()
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone())),
            );
            m.launch = Some(Launch {
                bin: bin.clone(),
                args: args.clone(),
                env: env.clone(),
            });
            m.process = Some(
                ControllerProcess::start(
                    bin,
                    &args,
                    &env,
                    &m.dir.controller_log(),
                    Duration::from_secs(30),
                )
                .await?,
            );
        }
        anyhow::Ok(())
    })
    .await
    .unwrap_or_else(|| Err(anyhow::anyhow!("interrupted during set-up")));
    let result = match setup {
        Ok(()) => measure::run(ctx, run, &mut members, &quiet_wait).await,
        Err(e) => Err(e),
    };
    // Teardown, also after errors and Ctrl-C.
    for m in &mut members {
        if let Some(p) = m.process.take() {
            p.stop(ctx.stop_grace()).await;
        }
    }
    // Interrupted on our own plane: it is about to be removed whole, so its
    // namespaces need no deleting (the user is waiting).
    if ctx.cancel.is_cancelled() && ctx.cluster.plane.is_some() {
        return (result, Vec::new());
    }
    // Namespaces go in parallel, within one overall bound.
    let finalize = ctx.cluster.no_namespace_controller;
    let deletes = members.iter().map(|m| async move {
        // Absent unless the preset asked for cluster scope (404s are fine).
        identity::delete_cluster_scope(client, &m.ns)
            .await
            .map_err(|e| format!("namespace {}: {e:#}", m.ns))?;
        namespace::delete(
            client,
            &m.ns,
            finalize,
            Duration::from_secs(20),
            TEARDOWN_BOUND,
        )
        .await
        .map_err(|e| format!("namespace {}: {e:#}", m.ns))
    });
    let mut not_cleaned = Vec::new();
    match tokio::time::timeout(TEARDOWN_BOUND, futures::future::join_all(deletes)).await {
        Ok(results) => not_cleaned.extend(results.into_iter().filter_map(|r| r.err())),
        Err(_) => not_cleaned.extend(
            members
                .iter()
                .map(|m| format!("namespace {}: not gone after {TEARDOWN_BOUND:?}", m.ns)),
        ),
    }
    for n in &not_cleaned {
        eprintln!("warning: not cleaned up: {n}");
    }
    (result, not_cleaned)
}

/// The settings the binary resolves `flags` to, as it prints them
/// (`--print-settings`, no cluster contact); None, with a warning, when it cannot.
async fn print_settings(bin: &std::path::Path, ns: &str, flags: &[String]) -> Option<Settings> {
    let out = tokio::process::Command::new(bin)
        .args(flags)
        .args(["--namespace", ns, "--print-settings"])
        .env_remove("KUBECONFIG")
        .stdin(std::process::Stdio::null())
        .output()
        .await;
    let parsed = match &out {
        Ok(o) if o.status.success() => serde_json::from_slice::<Settings>(&o.stdout).ok(),
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
