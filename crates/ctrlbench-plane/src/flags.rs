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
}
