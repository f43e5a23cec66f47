//! `[cluster]`: a local plane's settings, or an existing cluster that takes
//! none of them; the plane's size within the plane crate's bounds; plane
//! flags the policy allows. Yields the plain [`Cluster`].

use super::errors::{Checked, Source};
use super::policy;
use super::schema::ClusterSpec;
use super::validated::{Cluster, Cpus};

/// `cpus`: CPU lists, pairwise disjoint; the plane's only on a local plane.
fn cpus(src: &Source, s: &toml::Spanned<super::schema::CpusSpec>, local: bool) -> Checked<Cpus> {
    let at = |m: String| src.at("cpus", s.span(), m);
    let parse = |role: &str, v: &Option<String>| {
        v.as_deref()
            .map(|l| ctrlbench_plane::cpus::parse(l).map_err(|m| at(format!("{role}: {m}"))))
            .transpose()
    };
    let c = s.get_ref();
    let out = Cpus {
        plane: parse("plane", &c.plane)?,
        controller: parse("controller", &c.controller)?,
        harness: parse("harness", &c.harness)?,
    };
    if out.plane.is_some() && !local {
        return Err(at(
            "plane: an existing cluster's processes are not ctrlbench's to place".into(),
        ));
    }
    if let Some((a, b, c)) = out.overlap() {
        return Err(at(format!(
            "{a} and {b} share CPU {c}: the sets must not overlap"
        )));
    }
    Ok(out)
}

/// A component's client limits: each key within 1 … MAX_CLIENT_QPS, the
/// burst at least the rate; a key not given keeps the component's default.
/// None when neither is given.
fn client_limits(
    src: &Source,
    (qps_key, qps): (&str, &Option<toml::Spanned<u32>>),
    (burst_key, burst): (&str, &Option<toml::Spanned<u32>>),
    default: ctrlbench_plane::options::ClientLimits,
) -> Checked<Option<ctrlbench_plane::options::ClientLimits>> {
    let max = ctrlbench_plane::options::MAX_CLIENT_QPS;
    for (key, v) in [(qps_key, qps), (burst_key, burst)] {
        if let Some(v) = v
            && !(1..=max).contains(v.get_ref())
        {
            return Err(src.at(key, v.span(), format!("must be from 1 to {max}")));
        }
    }
    if qps.is_none() && burst.is_none() {
        return Ok(None);
    }
    let limits = ctrlbench_plane::options::ClientLimits {
        qps: qps.as_ref().map_or(default.qps, |v| *v.get_ref()),
        burst: burst.as_ref().map_or(default.burst, |v| *v.get_ref()),
    };
    if limits.burst < limits.qps {
        let (key, span) = match burst {
            Some(b) => (burst_key, b.span()),
            None => (qps_key, qps.as_ref().map(|v| v.span()).unwrap_or(0..0)),
        };
        return Err(src.at(
            key,
            span,
            format!(
                "{burst_key} ({}) must be at least {qps_key} ({}): a burst below the rate never lets the rate through",
                limits.burst, limits.qps
            ),
        ));
    }
    Ok(Some(limits))
}

/// A component's client limits, None when the file gives none.
type Limits = Option<ctrlbench_plane::options::ClientLimits>;

/// The controller manager's and the scheduler's client limits; the
/// scheduler's only with fake nodes.
fn plane_clients(src: &Source, c: &ClusterSpec) -> Checked<(Limits, Limits)> {
    let controller_manager_client = client_limits(
        src,
        ("controller_manager_qps", &c.controller_manager_qps),
        ("controller_manager_burst", &c.controller_manager_burst),
        ctrlbench_plane::options::CONTROLLER_MANAGER_CLIENT,
    )?;
    // kube-scheduler runs only with fake nodes: a limit without them would
    // be recorded nowhere and change nothing.
    if let Some((key, span)) = [
        ("scheduler_qps", c.scheduler_qps.as_ref().map(|v| v.span())),
        (
            "scheduler_burst",
            c.scheduler_burst.as_ref().map(|v| v.span()),
        ),
        (
            "scheduler_default_spread",
            c.scheduler_default_spread.as_ref().map(|v| v.span()),
        ),
    ]
    .into_iter()
    .find_map(|(k, v)| v.map(|v| (k, v)))
        && c.nodes.as_ref().is_none_or(|n| *n.get_ref() == 0)
    {
        return Err(src.at(
            key,
            span,
            "kube-scheduler runs only with fake nodes: set nodes, or remove this key",
        ));
    }
    let scheduler_client = client_limits(
        src,
        ("scheduler_qps", &c.scheduler_qps),
        ("scheduler_burst", &c.scheduler_burst),
        ctrlbench_plane::options::SCHEDULER_CLIENT,
    )?;
    Ok((controller_manager_client, scheduler_client))
}

pub fn check(src: &Source, c: &ClusterSpec) -> Checked<Cluster> {
    if let Some(kc) = c.kubeconfig.as_ref().or(c.context.as_ref()) {
        let local = [
            ("k8s_version", c.k8s_version.is_some()),
            ("feature_gates", !c.feature_gates.is_empty()),
            ("apiserver_args", !c.apiserver_args.get_ref().is_empty()),
            ("etcd_fsync", c.etcd_fsync.is_some()),
            ("audit_log", c.audit_log.is_some()),
            ("etcd_members", c.etcd_members.is_some()),
            ("apiservers", c.apiservers.is_some()),
            ("controller_manager", c.controller_manager.is_some()),
            ("nodes", c.nodes.is_some()),
            ("node_pods", c.node_pods.is_some()),
            ("controller_manager_qps", c.controller_manager_qps.is_some()),
            (
                "controller_manager_burst",
                c.controller_manager_burst.is_some(),
            ),
            ("scheduler_qps", c.scheduler_qps.is_some()),
            ("scheduler_burst", c.scheduler_burst.is_some()),
            (
                "scheduler_default_spread",
                c.scheduler_default_spread.is_some(),
            ),
            ("mirror", c.mirror.is_some()),
            ("offline", c.offline.is_some()),
        ];
        if let Some((key, _)) = local.iter().find(|(_, set)| *set) {
            return Err(src.at(
                "cluster",
                kc.span(),
                format!(
                    "an existing cluster (kubeconfig/context) cannot take the local-plane setting `{key}`: remove it, or remove kubeconfig/context"
                ),
            ));
        }
    }
    for (key, v, min, max) in [
        ("nodes", &c.nodes, 0, ctrlbench_plane::options::MAX_NODES),
        (
            "node_pods",
            &c.node_pods,
            1,
            ctrlbench_plane::options::MAX_NODE_PODS,
        ),
        (
            "etcd_members",
            &c.etcd_members,
            1,
            ctrlbench_plane::options::MAX_ETCD_MEMBERS,
        ),
        (
            "apiservers",
            &c.apiservers,
            1,
            ctrlbench_plane::options::MAX_APISERVERS,
        ),
    ] {
        if let Some(v) = v
            && !(min..=max as u32).contains(v.get_ref())
        {
            return Err(src.at(key, v.span(), format!("must be from {min} to {max}")));
        }
    }
    let (controller_manager_client, scheduler_client) = plane_clients(src, c)?;
    if let Some(m) = &c.mirror {
        ctrlbench_plane::fetch::check_mirror(m.get_ref())
            .map_err(|e| src.at("mirror", m.span(), e))?;
    }
    if let Some(a) = &c.apiservers
        && *a.get_ref() > 1
        && c.audit_log == Some(true)
    {
        return Err(src.at(
            "apiservers",
            a.span(),
            "the audit log needs a single apiserver (each would log a part of the writes)",
        ));
    }
    for (key, args, protected) in [
        (
            "apiserver_args",
            &c.apiserver_args,
            ctrlbench_plane::flags::APISERVER_PROTECTED,
        ),
        (
            "etcd_args",
            &c.etcd_args,
            ctrlbench_plane::flags::ETCD_PROTECTED,
        ),
    ] {
        policy::check_plane_args(args.get_ref(), protected)
            .map_err(|m| src.at(key, args.span(), m))?;
    }
    let cpus = match &c.cpus {
        None => None,
        Some(s) => Some(cpus(src, s, c.kubeconfig.is_none() && c.context.is_none())?),
    };
    let nodes = c.nodes.as_ref().map_or(0, |v| *v.get_ref() as usize);
    Ok(Cluster {
        cpus,
        k8s_version: c.k8s_version.as_ref().map(|v| v.get_ref().clone()),
        feature_gates: c.feature_gates.clone(),
        apiserver_args: c.apiserver_args.get_ref().clone(),
        etcd_args: c.etcd_args.get_ref().clone(),
        etcd_fsync: c.etcd_fsync.unwrap_or(true),
        // On wherever it can be (one apiserver logs every request): the
        // footprint of each controller comes from it.
        audit_log: c
            .audit_log
            .unwrap_or(c.apiservers.as_ref().is_none_or(|a| *a.get_ref() == 1)),
        etcd_members: c.etcd_members.as_ref().map_or(1, |v| *v.get_ref() as usize),
        apiservers: c.apiservers.as_ref().map_or(1, |v| *v.get_ref() as usize),
        // Fake nodes' pods come from the controller manager's workload
        // controllers.
        controller_manager: c.controller_manager.unwrap_or(false) || nodes > 0,
        nodes,
        node_pods: c
            .node_pods
            .as_ref()
            .map_or(ctrlbench_plane::options::DEFAULT_NODE_PODS, |v| {
                *v.get_ref() as usize
            }),
        controller_manager_client,
        scheduler_client,
        scheduler_without_default_spread: c
            .scheduler_default_spread
            .as_ref()
            .is_some_and(|v| !*v.get_ref()),
        mirror: c.mirror.as_ref().map(|v| v.get_ref().trim().to_string()),
        offline: c.offline.unwrap_or(false),
        kubeconfig: c.kubeconfig.as_ref().map(|v| v.get_ref().clone()),
        context: c.context.as_ref().map(|v| v.get_ref().clone()),
    })
}
