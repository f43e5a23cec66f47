//! A process's command-line flags as an ordered map, as controller-runtime's
//! envtest keeps them: the defaults first, and a user's `--name=value`
//! replaces the default of the same name instead of repeating it (a repeated
//! flag means "last one wins" for some binaries and "error" for others).

use anyhow::{Result, bail};

/// Ordered `--name[=value]` flags.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Flags(Vec<(String, Option<String>)>);

impl Flags {
    /// Sets `--name=value`, replacing an earlier value in place.
    pub fn set(&mut self, name: &str, value: impl Into<String>) {
        self.put(name, Some(value.into()));
    }

    fn put(&mut self, name: &str, value: Option<String>) {
        match self.0.iter_mut().find(|(n, _)| n == name) {
            Some(e) => e.1 = value,
            None => self.0.push((name.to_string(), value)),
        }
    }

    /// The value of `--name`, if set with one.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .and_then(|(_, v)| v.as_deref())
    }

    /// Applies a user's flags (`--name=value` or a bare `--name`); each
    /// replaces the default of the same name.
    pub fn apply(&mut self, user: &[String]) -> Result<()> {
        for a in user {
            let Some(flag) = a.strip_prefix("--").filter(|f| !f.is_empty()) else {
                bail!("{a:?} is not a flag: write --name=value");
            };
            match flag.split_once('=') {
                Some((n, v)) => self.put(n, Some(v.to_string())),
                None => self.put(flag, None),
            }
        }
        Ok(())
    }

    /// The command line.
    pub fn to_args(&self) -> Vec<String> {
        self.0
            .iter()
            .map(|(n, v)| match v {
                Some(v) => format!("--{n}={v}"),
                None => format!("--{n}"),
            })
            .collect()
    }
}

/// kube-apiserver flags that keep the plane closed (listen addresses, TLS,
/// authentication, authorization, etcd access): no experiment file may set
/// them. A trailing '-' protects every flag with that prefix.
pub const APISERVER_PROTECTED: &[&str] = &[
    "advertise-address",
    "bind-address",
    "secure-port",
    "insecure-",
    "etcd-",
    "tls-",
    "client-ca-file",
    "service-account-",
    "anonymous-auth",
    "authorization-",
    "authentication-",
    "token-auth-file",
    // The audit log is ctrlbench's (loopback file); a webhook would leave the machine.
    "audit-",
    "basic-auth-file",
    "requestheader-",
    "oidc-",
    "kubelet-client-",
    "proxy-client-",
    "enable-aggregator-routing",
    "cert-dir",
];

/// etcd flags that keep its data closed (listen and advertise URLs, TLS and
/// client-certificate authentication, membership): no experiment file may set them.
pub const ETCD_PROTECTED: &[&str] = &[
    "listen-",
    "advertise-",
    "initial-",
    "name",
    "data-dir",
    "cert-file",
    "key-file",
    "trusted-ca-file",
    "client-cert-auth",
    "client-crl-file",
    "auto-tls",
    "peer-",
    "enable-grpc-gateway",
    "cipher-suites",
    "tls-",
];

/// The first user flag (`--name[=value]`) that `protected` covers, if any.
pub fn first_protected<'a>(user: &'a [String], protected: &[&str]) -> Option<&'a str> {
    user.iter().map(String::as_str).find(|a| {
        let name = a
            .trim_start_matches('-')
            .split('=')
            .next()
            .unwrap_or_default();
        protected.iter().any(|p| match p.strip_suffix('-') {
            Some(prefix) => name.starts_with(&format!("{prefix}-")),
            None => name == *p,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_user_flag_replaces_the_default() {
        let mut f = Flags::default();
        f.set("log-level", "warn");
        f.set("data-dir", "/d");
        f.apply(&[
            "--log-level=debug".into(),
            "--quota-backend-bytes=8589934592".into(),
            "--experimental-x".into(),
        ])
        .unwrap();
        assert_eq!(
            f.to_args(),
            [
                "--log-level=debug",
                "--data-dir=/d",
                "--quota-backend-bytes=8589934592",
                "--experimental-x"
            ]
        );
        assert_eq!(f.get("data-dir"), Some("/d"));
        assert!(f.apply(&["debug".into()]).is_err());
        assert!(f.apply(&["--".into()]).is_err());
    }

    #[test]
    fn protected_flags_are_found_by_name_and_prefix() {
        let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            first_protected(
                &v(&["--max-requests-inflight=800", "--anonymous-auth=true"]),
                APISERVER_PROTECTED
            ),
            Some("--anonymous-auth=true")
        );
        assert!(first_protected(&v(&["--etcd-servers=http://x"]), APISERVER_PROTECTED).is_some());
        assert!(
            first_protected(&v(&["--max-requests-inflight=800"]), APISERVER_PROTECTED).is_none()
        );
        assert!(
            first_protected(
                &v(&["--listen-client-urls=http://0.0.0.0:2379"]),
                ETCD_PROTECTED
            )
            .is_some()
        );
        assert!(first_protected(&v(&["--client-cert-auth=false"]), ETCD_PROTECTED).is_some());
        assert!(first_protected(&v(&["--quota-backend-bytes=1"]), ETCD_PROTECTED).is_none());
        // "name" is exact: --namespace-ish flags are not caught by it.
        assert!(first_protected(&v(&["--names=1"]), ETCD_PROTECTED).is_none());
    }
}
