//! The plane's own certificate authority: a serving certificate for 127.0.0.1
//! and localhost, an admin client certificate in `system:masters`, the
//! service-account signing key pair, and etcd's: a server/peer certificate
//! and the apiserver's etcd client certificate (etcd requires client
//! certificates, so no other local user can reach the cluster's data).
//! An HA plane gets one serving certificate per apiserver and one
//! server/peer certificate per etcd member, all from the same CA and all for
//! 127.0.0.1 and localhost (the front passes TLS through, so whichever
//! apiserver answers presents a certificate the client accepts).
//! kube-controller-manager, when a plane runs one, authenticates as
//! `system:kube-controller-manager` (the bootstrap RBAC role of that name: it
//! may only mint the per-controller service-account tokens it then uses).
//! A plane with fake nodes adds kube-scheduler's (`system:kube-scheduler`,
//! its bootstrap role) and KWOK's (`kwok-controller`, bound by the plane to
//! KWOK's own cluster role; see `nodes`).
//! Everything is written as PEM files, private keys 0600.

use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};

use anyhow::Result;
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose, SanType,
};

/// kube-scheduler's user name: the apiserver's bootstrap RBAC binds its role.
pub const SCHEDULER_USER: &str = "system:kube-scheduler";
/// ctrlbench's own user (in system:masters): the loader, the watch, the sampler.
pub const ADMIN_USER: &str = "ctrlbench-admin";
/// KWOK's user name, bound to its cluster role by the plane.
pub const KWOK_USER: &str = "kwok-controller";

/// Paths of the PEM files the apiserver and its clients use.
#[derive(Debug, Clone)]
pub struct Certs {
    pub ca_cert: PathBuf,
    pub serving_cert: PathBuf,
    pub serving_key: PathBuf,
    pub admin_cert: PathBuf,
    pub admin_key: PathBuf,
    pub sa_public: PathBuf,
    pub sa_private: PathBuf,
    /// etcd's serving and peer certificate (server and client auth).
    pub etcd_cert: PathBuf,
    pub etcd_key: PathBuf,
    /// The apiserver's client certificate for etcd.
    pub etcd_client_cert: PathBuf,
    pub etcd_client_key: PathBuf,
    /// Every etcd member's serving/peer pair; member 0's is `etcd_cert`/`etcd_key`.
    pub etcd_members: Vec<CertPair>,
    /// Every apiserver's serving pair; apiserver 0's is `serving_cert`/`serving_key`.
    pub apiservers: Vec<CertPair>,
}

/// A certificate and its private key (PEM files).
#[derive(Debug, Clone)]
pub struct CertPair {
    pub cert: PathBuf,
    pub key: PathBuf,
}

impl Certs {
    /// These certificates as apiserver `k` uses them (its own serving pair).
    pub fn for_apiserver(&self, k: usize) -> Certs {
        let mut c = self.clone();
        if let Some(p) = self.apiservers.get(k) {
            c.serving_cert = p.cert.clone();
            c.serving_key = p.key.clone();
        }
        c
    }
}

/// A PEM pair kept in memory for the kubeconfig.
pub struct Pems {
    pub ca_cert: String,
    pub admin_cert: String,
    pub admin_key: String,
    /// kube-controller-manager's client pair (`system:kube-controller-manager`).
    pub controller_manager_cert: String,
    pub controller_manager_key: String,
    /// kube-scheduler's client pair (`system:kube-scheduler`).
    pub scheduler: ClientPem,
    /// KWOK's client pair (`kwok-controller`).
    pub kwok: ClientPem,
}

/// A client certificate and key (PEM), kept in memory for a kubeconfig.
pub struct ClientPem {
    pub cert: String,
    pub key: String,
}

/// A client certificate for user `cn`, signed by `ca`, kept in memory.
fn client_pem(cn: &str, ca: &rcgen::Issuer<'_, KeyPair>) -> Result<ClientPem> {
    let mut p = CertificateParams::new(Vec::<String>::new())?;
    p.distinguished_name.push(DnType::CommonName, cn);
    p.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    let key = KeyPair::generate()?;
    let cert = p.signed_by(&key, ca)?;
    Ok(ClientPem {
        cert: cert.pem(),
        key: key.serialize_pem(),
    })
}

/// Creates the CA and every certificate and key under `dir` (private keys
/// 0600): one serving pair per apiserver, one server/peer pair per etcd member.
pub fn generate(dir: &Path, etcd_members: usize, apiservers: usize) -> Result<(Certs, Pems)> {
    std::fs::create_dir_all(dir)?;
    let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "ctrlbench-ca");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate()?)?;

    let mut serving = CertificateParams::new(Vec::<String>::new())?;
    serving
        .distinguished_name
        .push(DnType::CommonName, "kube-apiserver");
    serving.subject_alt_names = vec![
        SanType::IpAddress(IpAddr::V4(Ipv4Addr::LOCALHOST)),
        SanType::DnsName("localhost".try_into()?),
    ];
    serving.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let serving_key = KeyPair::generate()?;
    let serving_cert = serving.signed_by(&serving_key, &ca)?;

    let mut admin = CertificateParams::new(Vec::<String>::new())?;
    admin
        .distinguished_name
        .push(DnType::CommonName, ADMIN_USER);
    admin
        .distinguished_name
        .push(DnType::OrganizationName, "system:masters");
    admin.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    let admin_key = KeyPair::generate()?;
    let admin_cert = admin.signed_by(&admin_key, &ca)?;

    let mut kcm = CertificateParams::new(Vec::<String>::new())?;
    kcm.distinguished_name
        .push(DnType::CommonName, "system:kube-controller-manager");
    kcm.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    let kcm_key = KeyPair::generate()?;
    let kcm_cert = kcm.signed_by(&kcm_key, &ca)?;

    let scheduler = client_pem(SCHEDULER_USER, &ca)?;
    let kwok = client_pem(KWOK_USER, &ca)?;

    let sa_key = KeyPair::generate()?;

    let mut etcd = CertificateParams::new(Vec::<String>::new())?;
    etcd.distinguished_name.push(DnType::CommonName, "etcd");
    etcd.subject_alt_names = serving.subject_alt_names.clone();
    // Members authenticate to each other with it too (peer TLS).
    etcd.extended_key_usages = vec![
        ExtendedKeyUsagePurpose::ServerAuth,
        ExtendedKeyUsagePurpose::ClientAuth,
    ];
    let etcd_key = KeyPair::generate()?;
    let etcd_cert = etcd.signed_by(&etcd_key, &ca)?;

    let mut etcd_client = CertificateParams::new(Vec::<String>::new())?;
    etcd_client
        .distinguished_name
        .push(DnType::CommonName, "kube-apiserver-etcd-client");
    etcd_client.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    let etcd_client_key = KeyPair::generate()?;
    let etcd_client_cert = etcd_client.signed_by(&etcd_client_key, &ca)?;

    // Further members and apiservers: their own keys, the same names and uses.
    let mut extra = Vec::new();
    for (prefix, params, count) in [
        ("etcd", &etcd, etcd_members),
        ("apiserver", &serving, apiservers),
    ] {
        for k in 1..count {
            let key = KeyPair::generate()?;
            let cert = params.signed_by(&key, &ca)?;
            let pair = CertPair {
                cert: dir.join(format!("{prefix}-{k}.crt")),
                key: dir.join(format!("{prefix}-{k}.key")),
            };
            write(&pair.cert, &cert.pem(), 0o644)?;
            write(&pair.key, &key.serialize_pem(), 0o600)?;
            extra.push((prefix, pair));
        }
    }
    let mut certs = Certs {
        ca_cert: dir.join("ca.crt"),
        serving_cert: dir.join("apiserver.crt"),
        serving_key: dir.join("apiserver.key"),
        admin_cert: dir.join("admin.crt"),
        admin_key: dir.join("admin.key"),
        sa_public: dir.join("sa.pub"),
        sa_private: dir.join("sa.key"),
        etcd_cert: dir.join("etcd.crt"),
        etcd_key: dir.join("etcd.key"),
        etcd_client_cert: dir.join("apiserver-etcd-client.crt"),
        etcd_client_key: dir.join("apiserver-etcd-client.key"),
        etcd_members: vec![],
        apiservers: vec![],
    };
    certs.etcd_members.push(CertPair {
        cert: certs.etcd_cert.clone(),
        key: certs.etcd_key.clone(),
    });
    certs.apiservers.push(CertPair {
        cert: certs.serving_cert.clone(),
        key: certs.serving_key.clone(),
    });
    for (prefix, pair) in extra {
        match prefix {
            "etcd" => certs.etcd_members.push(pair),
            _ => certs.apiservers.push(pair),
        }
    }
    write(&certs.ca_cert, &ca.pem(), 0o644)?;
    write(&certs.serving_cert, &serving_cert.pem(), 0o644)?;
    write(&certs.serving_key, &serving_key.serialize_pem(), 0o600)?;
    write(&certs.admin_cert, &admin_cert.pem(), 0o644)?;
    write(&certs.admin_key, &admin_key.serialize_pem(), 0o600)?;
    write(&certs.sa_public, &sa_key.public_key_pem(), 0o644)?;
    write(&certs.sa_private, &sa_key.serialize_pem(), 0o600)?;
    write(&certs.etcd_cert, &etcd_cert.pem(), 0o644)?;
    write(&certs.etcd_key, &etcd_key.serialize_pem(), 0o600)?;
    write(&certs.etcd_client_cert, &etcd_client_cert.pem(), 0o644)?;
    write(
        &certs.etcd_client_key,
        &etcd_client_key.serialize_pem(),
        0o600,
    )?;
    let pems = Pems {
        ca_cert: ca.pem(),
        admin_cert: admin_cert.pem(),
        admin_key: admin_key.serialize_pem(),
        controller_manager_cert: kcm_cert.pem(),
        controller_manager_key: kcm_key.serialize_pem(),
        scheduler,
        kwok,
    };
    Ok((certs, pems))
}

/// Writes a file created with `mode` from the start, so a key is never readable by others.
pub fn write(path: &Path, contents: &str, mode: u32) -> Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(mode)
        .open(path)?;
    f.write_all(contents.as_bytes())?;
    Ok(())
}
