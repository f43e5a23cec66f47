//! Kubeconfig files: written mode 0600 because they carry credentials, and
//! turned into `kube::Client`s.

use std::path::Path;

use anyhow::{Context, Result};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use kube::config::{
    AuthInfo, Cluster, Context as KContext, KubeConfigOptions, Kubeconfig, NamedAuthInfo,
    NamedCluster, NamedContext,
};

/// Who a kubeconfig authenticates as.
pub enum Credentials<'a> {
    /// A client certificate and key (PEM).
    Cert { cert: &'a str, key: &'a str },
    /// A bearer token (service accounts, from the TokenRequest API).
    Token(&'a str),
}

/// Builds a single-context kubeconfig for a server and its CA.
pub fn build(
    name: &str,
    server: &str,
    ca_pem: &str,
    creds: Credentials<'_>,
    namespace: Option<&str>,
) -> Kubeconfig {
    let cluster = Cluster {
        server: Some(server.into()),
        certificate_authority_data: Some(STANDARD.encode(ca_pem)),
        ..Default::default()
    };
    for_cluster(name, cluster, creds, namespace)
}

/// The cluster entry of `kc`'s current context, as written there (CA data or
/// file, tls-server-name, proxy-url, insecure-skip-tls-verify and all): the
/// cluster a client of `kc` talks to, never just the first one listed.
pub fn current_cluster(kc: &Kubeconfig) -> Result<Cluster> {
    let ctx_name = kc
        .current_context
        .as_deref()
        .context("the kubeconfig has no current context")?;
    let cluster_name = kc
        .contexts
        .iter()
        .find(|c| c.name == ctx_name)
        .and_then(|c| c.context.as_ref())
        .map(|c| c.cluster.clone())
        .with_context(|| format!("the kubeconfig has no context {ctx_name:?}"))?;
    kc.clusters
        .iter()
        .find(|c| c.name == cluster_name)
        .and_then(|c| c.cluster.clone())
        .with_context(|| {
            format!("the kubeconfig has no cluster {cluster_name:?} (context {ctx_name:?})")
        })
}

/// Builds a single-context kubeconfig for a cluster entry.
pub fn for_cluster(
    name: &str,
    cluster: Cluster,
    creds: Credentials<'_>,
    namespace: Option<&str>,
) -> Kubeconfig {
    let mut auth = AuthInfo::default();
    match creds {
        Credentials::Cert { cert, key } => {
            auth.client_certificate_data = Some(STANDARD.encode(cert));
            auth.client_key_data = Some(STANDARD.encode(key).into());
        }
        Credentials::Token(t) => auth.token = Some(t.to_string().into()),
    }
    Kubeconfig {
        api_version: Some("v1".into()),
        kind: Some("Config".into()),
        clusters: vec![NamedCluster {
            name: name.into(),
            cluster: Some(cluster),
            other: Default::default(),
        }],
        auth_infos: vec![NamedAuthInfo {
            name: name.into(),
            auth_info: Some(auth),
            other: Default::default(),
        }],
        contexts: vec![NamedContext {
            name: name.into(),
            context: Some(KContext {
                cluster: name.into(),
                user: Some(name.into()),
                namespace: namespace.map(Into::into),
                ..Default::default()
            }),
            other: Default::default(),
        }],
        current_context: Some(name.into()),
        ..Default::default()
    }
}

/// Writes a kubeconfig with mode 0600 from the moment it exists. Every
/// value stays on its key's line, as kubectl writes it: the YAML writer's
/// default folds long strings into `>-` blocks, which line-based readers
/// of kubeconfigs (scripts that grep `certificate-authority-data:`) misread.
pub fn write(path: &Path, kc: &Kubeconfig) -> Result<()> {
    let yaml = serde_saphyr::to_string_with_options(
        kc,
        serde_saphyr::ser_options! { prefer_block_scalars: false },
    )?;
    super::tinyca::write(path, &yaml, 0o600)
        .with_context(|| format!("cannot write {}", path.display()))
}

/// A client for a kubeconfig. kube's own silent retries of 429/503/504 are
/// off: a harness request that fails is seen (a loader error is counted and
/// flags its run) instead of quietly changing the load.
pub async fn client(kc: &Kubeconfig) -> Result<kube::Client> {
    let mut config =
        kube::Config::from_custom_kubeconfig(kc.clone(), &KubeConfigOptions::default()).await?;
    config.default_retry = false;
    Ok(kube::Client::try_from(config)?)
}

/// Reads a kubeconfig file and makes a client from it.
pub async fn client_from_file(path: &Path) -> Result<kube::Client> {
    let kc = Kubeconfig::read_from(path)
        .with_context(|| format!("cannot read kubeconfig {}", path.display()))?;
    client(&kc).await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CA, certificate and key (a few hundred base64 characters each)
    /// are each on their key's line, and the file reads back the same.
    #[test]
    fn long_values_stay_on_their_keys_line() {
        let pem = format!("-----BEGIN X-----\n{}\n-----END X-----\n", "A".repeat(600));
        let kc = build(
            "c",
            "https://127.0.0.1:6443",
            &pem,
            Credentials::Cert {
                cert: &pem,
                key: &pem,
            },
            None,
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kubeconfig");
        write(&path, &kc).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let data = STANDARD.encode(&pem);
        for key in [
            "certificate-authority-data",
            "client-certificate-data",
            "client-key-data",
        ] {
            let line = text
                .lines()
                .find(|l| l.trim_start().starts_with(&format!("{key}:")))
                .unwrap_or_else(|| panic!("no {key} in\n{text}"));
            assert!(line.ends_with(&format!("{key}: {data}")), "{line}");
        }
        let back = Kubeconfig::read_from(&path).unwrap();
        let json = |k: &Kubeconfig| serde_json::to_value(k).unwrap();
        assert_eq!(json(&back), json(&kc));
    }
}
