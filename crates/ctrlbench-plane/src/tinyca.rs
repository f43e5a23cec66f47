//! The plane's own certificate authority: a serving certificate for 127.0.0.1
//! and localhost, an admin client certificate in `system:masters`, and the
//! service-account signing key pair. Everything is written as PEM files.

use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};

use anyhow::Result;
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose, SanType,
};

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
}

/// A PEM pair kept in memory for the kubeconfig.
pub struct Pems {
    pub ca_cert: String,
    pub admin_cert: String,
    pub admin_key: String,
}

/// Creates the CA and every certificate and key under `dir` (private keys 0600).
pub fn generate(dir: &Path) -> Result<(Certs, Pems)> {
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
        .push(DnType::CommonName, "ctrlbench-admin");
    admin
        .distinguished_name
        .push(DnType::OrganizationName, "system:masters");
    admin.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    let admin_key = KeyPair::generate()?;
    let admin_cert = admin.signed_by(&admin_key, &ca)?;

    let sa_key = KeyPair::generate()?;

    let certs = Certs {
        ca_cert: dir.join("ca.crt"),
        serving_cert: dir.join("apiserver.crt"),
        serving_key: dir.join("apiserver.key"),
        admin_cert: dir.join("admin.crt"),
        admin_key: dir.join("admin.key"),
        sa_public: dir.join("sa.pub"),
        sa_private: dir.join("sa.key"),
    };
    write(&certs.ca_cert, &ca.pem(), 0o644)?;
    write(&certs.serving_cert, &serving_cert.pem(), 0o644)?;
    write(&certs.serving_key, &serving_key.serialize_pem(), 0o600)?;
    write(&certs.admin_cert, &admin_cert.pem(), 0o644)?;
    write(&certs.admin_key, &admin_key.serialize_pem(), 0o600)?;
    write(&certs.sa_public, &sa_key.public_key_pem(), 0o644)?;
    write(&certs.sa_private, &sa_key.serialize_pem(), 0o600)?;
    let pems = Pems {
        ca_cert: ca.pem(),
        admin_cert: admin_cert.pem(),
        admin_key: admin_key.serialize_pem(),
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
