//! The Kubernetes releases ctrlbench knows: the default version, the ones
//! with committed wrapper modules (`tools/k8s/`, embedded here so that an
//! installed binary can build them too) and the etcd release each is paired
//! with. Below `binaries`, `fetch` and `go_build`, which all read it.

/// The Kubernetes release built by default: the newest one whose kubernetes
/// module and staging modules the Go module proxy serves.
pub const DEFAULT_K8S_VERSION: &str = "1.37.2";

/// A Kubernetes release with committed wrapper modules (`tools/k8s/`), and
/// the etcd release that Kubernetes version is tested with (its
/// `hack/lib/etcd.sh`; for 1.34, the newest 3.6 patch).
pub(crate) struct Release {
    pub(crate) k8s: &'static str,
    pub(crate) apiserver_mod: &'static str,
    pub(crate) apiserver_sum: &'static str,
    pub(crate) etcd: &'static str,
    pub(crate) etcd_mod: &'static str,
    pub(crate) etcd_sum: &'static str,
}

pub(crate) const RELEASES: [Release; 2] = [
    Release {
        k8s: "1.37.2",
        apiserver_mod: include_str!("../../../tools/k8s/kube-apiserver-1.37.2/go.mod"),
        apiserver_sum: include_str!("../../../tools/k8s/kube-apiserver-1.37.2/go.sum"),
        etcd: "3.7.0",
        etcd_mod: include_str!("../../../tools/k8s/etcd-3.7.0/go.mod"),
        etcd_sum: include_str!("../../../tools/k8s/etcd-3.7.0/go.sum"),
    },
    // The write-up's release, pinned in experiments/seed-exp*.toml.
    Release {
        k8s: "1.34.12",
        apiserver_mod: include_str!("../../../tools/k8s/kube-apiserver-1.34.12/go.mod"),
        apiserver_sum: include_str!("../../../tools/k8s/kube-apiserver-1.34.12/go.sum"),
        etcd: "3.6.16",
        etcd_mod: include_str!("../../../tools/k8s/etcd-3.6.16/go.mod"),
        etcd_sum: include_str!("../../../tools/k8s/etcd-3.6.16/go.sum"),
    },
];

/// The etcd release paired with a Kubernetes version: 3.7 from Kubernetes
/// 1.37 on (what 1.37 is tested with), 3.6 before.
pub fn etcd_version(k8s_version: &str) -> &'static str {
    let minor: u32 = k8s_version
        .trim_start_matches('v')
        .split('.')
        .nth(1)
        .and_then(|m| m.parse().ok())
        .unwrap_or(0);
    let etcd_minor = if minor >= 37 { "3.7." } else { "3.6." };
    RELEASES
        .iter()
        .map(|r| r.etcd)
        .find(|e| e.starts_with(etcd_minor))
        .expect("an etcd release per minor")
}

/// Whether `version` is a release with committed wrapper modules.
pub fn committed(version: &str) -> bool {
    RELEASES.iter().any(|r| r.k8s == version)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn committed_modules_match_their_versions() {
        assert!(RELEASES.iter().any(|r| r.k8s == DEFAULT_K8S_VERSION));
        for r in &RELEASES {
            assert!(
                r.apiserver_mod
                    .contains(&format!("k8s.io/kubernetes v{}", r.k8s)),
                "{}",
                r.k8s
            );
            assert!(
                r.etcd_mod
                    .contains(&format!("go.etcd.io/etcd/server/v3 v{}", r.etcd)),
                "{}",
                r.etcd
            );
            assert_eq!(etcd_version(r.k8s), r.etcd);
        }
        assert_eq!(etcd_version("1.33.5"), "3.6.16");
        assert_eq!(etcd_version("1.38.0"), "3.7.0");
    }
}
