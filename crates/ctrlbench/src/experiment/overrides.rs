//! Command-line overrides of an experiment file (`run --scales --window
//! --repeats --variants`), checked by the same rules as the file's own keys.
//! `--grow` replaces the scales and repeats after these (`grow.rs`).

use anyhow::{Result, bail};

use super::spec::{self, Experiment};

/// What the command line replaces; empty / None keeps the file's value.
#[derive(Debug, Default, Clone)]
pub struct Overrides {
    pub scales: Vec<u64>,
    pub window_s: Option<f64>,
    pub repeats: Option<u32>,
    /// `--until-decided`: repeats = "auto" (`repeats` is then the most).
    pub until_decided: bool,
    /// `--busy-threshold`.
    pub busy_threshold: Option<f64>,
    /// `--cpus ROLE=CPUS` (repeatable) or `--cpus off`.
    pub cpus: Vec<String>,
    /// Keep only these variants (by name).
    pub variants: Vec<String>,
    pub background_objects: Option<u64>,
    /// `--controller-manager`: `[cluster] controller_manager = true`.
    pub controller_manager: bool,
    /// `--grow`, `--max-n`, `--budget-minutes`: the scales picked for a
    /// growth study (`grow.rs` checks them and makes the plan).
    pub grow: bool,
    pub max_n: Option<u64>,
    pub budget_minutes: Option<f64>,
}

impl Overrides {
    /// Applies the overrides; an invalid value is one error naming the flag.
    pub fn apply(&self, exp: &mut Experiment) -> Result<()> {
        let flag = |name: &str, r: Result<(), String>| match r {
            Ok(()) => Ok(()),
            Err(m) => bail!("{name}: {m}"),
        };
        if !self.scales.is_empty() {
            flag("--scales", spec::top::check_scales(&self.scales))?;
            exp.scales = self.scales.clone();
        }
        if let Some(w) = self.window_s {
            flag("--window", spec::top::check_seconds(w, spec::top::WINDOW_S))?;
            exp.window_s = w;
        }
        if let Some(r) = self.repeats {
            flag("--repeats", spec::top::check_repeats(r))?;
            exp.repeats = super::spec::Repeats::Fixed(r);
        }
        if let Some(t) = self.busy_threshold {
            if !(t > 0.0 && t < 64.0) {
                bail!(
                    "--busy-threshold: must be more than 0 and less than 64 (a share of one core), not {t}"
                );
            }
            exp.busy_threshold = t;
        }
        if !self.cpus.is_empty() {
            exp.cluster.cpus = Some(cpus_flag(&self.cpus, exp.is_local())?);
        }
        if self.until_decided {
            let (min, max) = match exp.repeats {
                super::spec::Repeats::Auto { min, max } => (min, max),
                super::spec::Repeats::Fixed(_) => spec::top::AUTO_REPEATS,
            };
            let max = self.repeats.unwrap_or(max);
            exp.repeats = super::spec::Repeats::Auto {
                min: min.min(max),
                max,
            };
        }
        if let Some(k) = self.background_objects {
            flag("--background-objects", spec::top::check_background(k))?;
            exp.background_objects = k;
        }
        if self.controller_manager {
            let c = &mut exp.cluster;
            if c.kubeconfig.is_some() || c.context.is_some() {
                bail!(
                    "--controller-manager: the experiment names an existing cluster, which runs its own controllers"
                );
            }
            c.controller_manager = true;
        }
        if !self.variants.is_empty() {
            for v in &self.variants {
                if !exp.variants.iter().any(|x| &x.name == v) {
                    bail!(
                        "--variants: no variant {v:?} in {} (it has {})",
                        exp.name,
                        exp.variants
                            .iter()
                            .map(|x| x.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    );
                }
            }
            exp.variants.retain(|x| self.variants.contains(&x.name));
        }
        Ok(())
    }
}

/// `--cpus`: sets as the file's `[cluster] cpus` takes them, checked alike.
fn cpus_flag(args: &[String], local: bool) -> Result<super::spec::validated::Cpus> {
    let mut c = super::spec::validated::Cpus::default();
    if args == ["off"] {
        return Ok(c);
    }
    for a in args {
        let Some((role, list)) = a.split_once('=') else {
            bail!(
                "--cpus: {a:?} is not ROLE=CPUS (plane, controller or harness, e.g. controller=2), or off"
            );
        };
        let set =
            Some(ctrlbench_plane::cpus::parse(list).map_err(|m| anyhow::anyhow!("--cpus: {m}"))?);
        match role {
            "plane" if !local => {
                bail!("--cpus: an existing cluster's processes are not ctrlbench's to place")
            }
            "plane" => c.plane = set,
            "controller" => c.controller = set,
            "harness" => c.harness = set,
            _ => bail!("--cpus: unknown role {role:?}: use plane, controller or harness"),
        }
    }
    if let Some((a, b, cpu)) = c.overlap() {
        bail!("--cpus: {a} and {b} share CPU {cpu}: the sets must not overlap");
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exp() -> Experiment {
        spec::parse(
            std::path::Path::new("t.toml"),
            "name = \"t\"\nscales = [20]\n[[variant]]\nname = \"a\"\npreset = \"good\"\n[[variant]]\nname = \"b\"\npreset = \"bad\"\n",
        )
        .unwrap()
    }

    #[test]
    fn overrides_replace_and_are_checked_like_the_file() {
        let mut e = exp();
        Overrides {
            scales: vec![5, 50],
            window_s: Some(3.0),
            repeats: Some(2),
            until_decided: false,
            busy_threshold: None,
            cpus: Vec::new(),
            variants: vec!["b".into()],
            background_objects: Some(300),
            controller_manager: true,
            ..Overrides::default()
        }
        .apply(&mut e)
        .unwrap();
        assert!(e.cluster.controller_manager);
        assert_eq!(e.scales, [5, 50]);
        assert_eq!(
            (e.window_s, e.repeats, e.variants.len()),
            (3.0, super::spec::Repeats::Fixed(2), 1)
        );
        assert_eq!(e.background_objects, 300);
        for (o, want) in [
            (
                Overrides {
                    scales: vec![0],
                    ..Overrides::default()
                },
                "--scales: needs at least one scale",
            ),
            (
                Overrides {
                    window_s: Some(f64::INFINITY),
                    ..Overrides::default()
                },
                "--window: must be a positive number of seconds",
            ),
            (
                Overrides {
                    repeats: Some(0),
                    ..Overrides::default()
                },
                "--repeats: must be at least 1",
            ),
            (
                Overrides {
                    variants: vec!["c".into()],
                    ..Overrides::default()
                },
                "--variants: no variant \"c\" in t (it has a, b)",
            ),
        ] {
            let e = o.apply(&mut exp()).unwrap_err().to_string();
            assert!(e.starts_with(want), "{e}");
        }
    }
}
