//! What an experiment file may not do, in one reviewable place: grant
//! dangerous RBAC verbs or cluster-wide writes, set environment variables
//! that redirect a controller, pass plane flags that change how the plane
//! is secured or reached, scrape anything but loopback, or name results
//! and namespaces with path-like names. The checks elsewhere call these;
//! none of these rules is restated outside this file.

use super::values::RbacRule;

/// Verbs no experiment file may grant: they would let a controller give
/// itself or others more than the file says.
const DENIED_VERBS: &[&str] = &["*", "escalate", "bind", "impersonate"];
/// The verbs a cluster-wide grant may have: reads only.
const CLUSTER_VERBS: &[&str] = &["get", "list", "watch"];

/// What is wrong with a rule list, if anything.
pub fn check_rbac(rules: &[RbacRule], cluster: bool) -> Result<(), String> {
    for r in rules {
        if r.resources.is_empty() || r.verbs.is_empty() {
            return Err("every rule needs resources and verbs".into());
        }
        if let Some(v) = r.verbs.iter().find(|v| DENIED_VERBS.contains(&v.as_str())) {
            return Err(format!(
                "verb {v:?} cannot be granted by an experiment file (name the verbs)"
            ));
        }
        if cluster {
            if let Some(v) = r
                .verbs
                .iter()
                .find(|v| !CLUSTER_VERBS.contains(&v.as_str()))
            {
                return Err(format!(
                    "verb {v:?}: a cluster-wide grant may only read (get, list, watch); writes belong in rbac, in the run's namespace"
                ));
            }
            if r.resources
                .iter()
                .chain(&r.api_groups)
                .any(|x| x.contains('*'))
            {
                return Err(
                    "a cluster-wide grant must name its api_groups and resources (no *)".into(),
                );
            }
            if r.resources
                .iter()
                .any(|x| x == "secrets" || x.starts_with("secrets/"))
            {
                return Err("secrets cannot be read cluster-wide".into());
            }
        }
    }
    Ok(())
}

/// What is wrong with a metrics URL (after `{port}` is replaced), if anything:
/// plain HTTP to a loopback address.
pub fn check_metrics_url(url: &str) -> Result<(), String> {
    check_loopback_url(url, "metrics are scraped", "/metrics")
}

/// The same rule for a command's pprof URL.
pub fn check_pprof_url(url: &str) -> Result<(), String> {
    check_loopback_url(url, "profiles are fetched", "/debug/pprof/profile")
}

fn check_loopback_url(url: &str, what: &str, path: &str) -> Result<(), String> {
    let u = reqwest::Url::parse(&url.replace("{port}", "1"))
        .map_err(|e| format!("{url:?} is not a URL: {e}"))?;
    let host = u.host_str().unwrap_or_default();
    let loopback = host == "localhost"
        || host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|a| a.is_loopback());
    if u.scheme() != "http" || !loopback {
        return Err(format!(
            "{url:?}: {what} over plain HTTP from a loopback address only (http://127.0.0.1:PORT{path})"
        ));
    }
    Ok(())
}

/// Environment variables an experiment file may not set for a controller:
/// they would point it at another cluster or credentials, load code into it,
/// or route its traffic elsewhere.
pub fn env_denied(key: &str) -> bool {
    const EXACT: &[&str] = &[
        "KUBECONFIG",
        "KUBERNETES_SERVICE_HOST",
        "KUBERNETES_SERVICE_PORT",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "NO_PROXY",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "GODEBUG",
        "PATH",
        "HOME",
    ];
    let k = key.to_ascii_uppercase();
    EXACT.contains(&k.as_str()) || k.starts_with("LD_") || k.starts_with("DYLD_")
}

/// The message for the first of `args` that would change how the plane is
/// secured or reached (the plane crate's protected flags), if any.
pub fn check_plane_args(args: &[String], protected: &[&str]) -> Result<(), String> {
    match ctrlbench_plane::flags::first_protected(args, protected) {
        Some(a) => Err(format!(
            "{a:?} would change how the plane is secured or reached; an experiment file cannot set it"
        )),
        None => Ok(()),
    }
}

/// An experiment's name becomes a directory name and a label value: it must
/// be a valid Kubernetes label value (≤ 63 of letters, digits, '-', '_',
/// '.', starting and ending alphanumeric), which also keeps it one path component.
pub fn check_name(name: &str) -> Result<(), String> {
    let b = name.as_bytes();
    let ok = !b.is_empty()
        && b.len() <= 63
        && b.first().is_some_and(u8::is_ascii_alphanumeric)
        && b.last().is_some_and(u8::is_ascii_alphanumeric)
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'));
    if !ok {
        return Err(format!(
            "{name:?} is not a valid name: use ≤ 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit (it names the results directory)"
        ));
    }
    Ok(())
}

/// A variant's name: it is part of namespace and directory names.
pub fn check_variant_name(name: &str) -> Result<(), String> {
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        || name.len() > 40
    {
        return Err(format!(
            "variant name {name:?} must be lowercase letters, digits and '-' (≤ 40)"
        ));
    }
    Ok(())
}

/// An existing namespace an external controller watches: a DNS label,
/// never `default` or `kube-*` (a run deletes what it created there).
pub fn check_namespace(n: &str) -> Result<(), String> {
    let ok = !n.is_empty()
        && n.len() <= 63
        && n.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !n.starts_with('-')
        && !n.ends_with('-');
    if !ok || n.starts_with("kube-") || n == "default" {
        return Err(format!(
            "{n:?} is not a namespace a run may use (a DNS label, not default or kube-*)"
        ));
    }
    Ok(())
}
