//! How a local plane's processes are configured before they start: each
//! etcd member's names, ports, certificate and initial cluster, and every
//! apiserver on its port with the shared issuer and the audit policy.
//! `plane.rs` starts them in order and waits for them.

use std::path::Path;

use anyhow::Result;

use super::apiserver::{ApiServer, ApiServerConfig};
use super::audit::AuditFiles;
use super::binaries::Binaries;
use super::etcd::{EtcdConfig, EtcdTls};
use super::options::PlaneOptions;
use super::tinyca;

/// A single member's names and files stay as they always were; several are numbered.
pub fn numbered(base: &str, k: usize, n: usize, ext: &str) -> String {
    match n {
        1 => format!("{base}{ext}"),
        _ => format!("{base}-{k}{ext}"),
    }
}

/// Each etcd member's configuration: its three ports from `ports`, its
/// certificate, and (several members) the initial cluster of all.
pub fn etcd_configs(
    opts: &PlaneOptions,
    bins: &Binaries,
    dir: &Path,
    certs: &tinyca::Certs,
    ports: &[u16],
) -> Vec<EtcdConfig> {
    let n_etcd = opts.etcd_members;
    let mut configs: Vec<EtcdConfig> = (0..n_etcd)
        .map(|k| EtcdConfig {
            bin: bins.etcd.clone(),
            name: if n_etcd == 1 {
                "ctrlbench".into()
            } else {
                format!("etcd-{k}")
            },
            initial_cluster: String::new(),
            data_dir: dir.join(numbered("etcd", k, n_etcd, "")),
            client_port: ports[3 * k],
            peer_port: ports[3 * k + 1],
            metrics_port: ports[3 * k + 2],
            fsync: opts.etcd_fsync,
            tls: EtcdTls {
                ca: certs.ca_cert.clone(),
                cert: certs.etcd_members[k].cert.clone(),
                key: certs.etcd_members[k].key.clone(),
            },
            extra_args: opts.etcd_args.clone(),
        })
        .collect();
    if n_etcd > 1 {
        let initial = configs
            .iter()
            .map(|c| format!("{}={}", c.name, c.peer_url()))
            .collect::<Vec<_>>()
            .join(",");
        for c in &mut configs {
            c.initial_cluster = initial.clone();
        }
    }
    configs
}

/// Every apiserver on its port, with the audit policy when asked for.
pub fn start_apiservers(
    opts: &PlaneOptions,
    bins: &Binaries,
    dir: &Path,
    api_ports: &[u16],
    etcd_urls: &str,
    certs: &tinyca::Certs,
    detached: bool,
) -> Result<Vec<ApiServer>> {
    let audit = if opts.audit_log {
        let a = AuditFiles::in_dir(dir);
        a.write_policy()?;
        Some(a)
    } else {
        None
    };
    // One issuer for all: a token one apiserver issues, every one accepts.
    let issuer = format!("https://127.0.0.1:{}", api_ports[0]);
    let mut apiservers = Vec::new();
    for (k, port) in api_ports.iter().enumerate() {
        let log = dir.join(numbered("kube-apiserver", k, api_ports.len(), ".log"));
        apiservers.push(ApiServer::start(
            ApiServerConfig {
                bin: bins.kube_apiserver.clone(),
                port: *port,
                etcd_url: etcd_urls.to_string(),
                certs: certs.for_apiserver(k),
                issuer: Some(issuer.clone()),
                feature_gates: opts.feature_gates.clone(),
                extra_args: opts.apiserver_args.clone(),
                audit: audit.clone(),
            },
            &log,
            detached,
        )?);
    }
    Ok(apiservers)
}
