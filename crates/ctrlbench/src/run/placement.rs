//! Where the processes of an experiment run: the plane, the controllers
//! under test and ctrlbench itself on disjoint CPU sets — the file's
//! `[cluster] cpus` (or `--cpus`), else, with four cores or more, the
//! plane on all but the last two, the controller on the second last and
//! the harness on the last; with fewer, nowhere in particular, and the
//! manifest says so. A variant's `controller_cpus = K` pins its controller
//! to K CPUs (of the controller set, or of the machine): the CPU limit an
//! operator is deployed with.

use anyhow::{Result, bail};
use ctrlbench_plane::cpus;
use ctrlbench_record::manifest::Placement as Record;

use crate::experiment::{Experiment, Variant};

/// The sets, each None when not placed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Placement {
    pub plane: Option<Vec<usize>>,
    pub controller: Option<Vec<usize>>,
    pub harness: Option<Vec<usize>>,
    pub note: String,
}

/// Cores from which the placement is automatic.
const AUTO_FROM: usize = 4;

impl Placement {
    /// The placement of `exp` on CPUs `available`.
    pub fn of(exp: &Experiment, available: &[usize]) -> Result<Placement> {
        let list = cpus::format(available);
        if let Some(c) = &exp.cluster.cpus {
            for (role, set) in [
                ("plane", &c.plane),
                ("controller", &c.controller),
                ("harness", &c.harness),
            ] {
                if let Some(missing) = set.iter().flatten().find(|x| !available.contains(x)) {
                    bail!(
                        "[cluster] cpus: {role} names CPU {missing}, which this process may not use (it has {list})"
                    );
                }
            }
            let off = c.plane.is_none() && c.controller.is_none() && c.harness.is_none();
            return Ok(Placement {
                plane: c.plane.clone(),
                controller: c.controller.clone(),
                harness: c.harness.clone(),
                note: if off {
                    "none (turned off)"
                } else {
                    "as the experiment says"
                }
                .into(),
            });
        }
        let n = available.len();
        if n < AUTO_FROM || !exp.is_local() {
            return Ok(Placement {
                note: if exp.is_local() {
                    format!("none ({n} cores: {AUTO_FROM} or more are placed automatically)")
                } else {
                    "none (an existing cluster: set [cluster] cpus to place the controller and the harness)".into()
                },
                ..Placement::default()
            });
        }
        Ok(Placement {
            plane: Some(available[..n - 2].to_vec()),
            controller: Some(vec![available[n - 2]]),
            harness: Some(vec![available[n - 1]]),
            note: format!("automatic ({n} cores)"),
        })
    }

    /// The CPUs `v`'s controller runs on.
    pub fn controller_cpus(&self, v: &Variant) -> Result<Option<Vec<usize>>> {
        let Some(k) = v.keys.controller_cpus else {
            return Ok(self.controller.clone());
        };
        let from = self.controller.clone().unwrap_or_else(cpus::available);
        let k = k as usize;
        if k > from.len() {
            bail!(
                "{}: controller_cpus = {k}, but the controller may use {} CPU(s) ({})",
                v.name,
                from.len(),
                cpus::format(&from)
            );
        }
        Ok(Some(from[..k].to_vec()))
    }

    /// What the manifest records.
    pub fn record(&self) -> Option<Record> {
        let f = |s: &Option<Vec<usize>>| s.as_deref().map(cpus::format);
        Some(Record {
            plane: f(&self.plane),
            controller: f(&self.controller),
            harness: f(&self.harness),
            note: self.note.clone(),
            cpu_limits: Default::default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exp(extra: &str) -> Experiment {
        crate::experiment::spec::parse(
            std::path::Path::new("t.toml"),
            &format!("name = \"t\"\nscales = [5]\n{extra}[[variant]]\nname = \"a\"\npreset = \"good\"\ncontroller_cpus = 1\n"),
        )
        .unwrap()
    }

    #[test]
    fn four_cores_or_more_are_split_fewer_are_not() {
        let e = exp("");
        let p = Placement::of(&e, &[0, 1, 2, 3]).unwrap();
        assert_eq!(
            (p.plane, p.controller, p.harness),
            (Some(vec![0, 1]), Some(vec![2]), Some(vec![3]))
        );
        let p = Placement::of(&e, &[0, 1]).unwrap();
        assert_eq!((p.plane.as_ref(), p.controller.as_ref()), (None, None));
        assert!(p.note.starts_with("none (2 cores"), "{}", p.note);
        // controller_cpus = 1 without a placement: one CPU of the machine's.
        let c = p.controller_cpus(&e.variants[0]).unwrap().unwrap();
        assert_eq!(c.len(), 1);
    }

    #[test]
    fn the_files_sets_are_kept_and_checked_against_the_machine() {
        let e = exp("[cluster]\ncpus = { plane = \"0\", controller = \"1\" }\n");
        let p = Placement::of(&e, &[0, 1]).unwrap();
        assert_eq!(p.plane, Some(vec![0]));
        let e = exp("[cluster]\ncpus = { controller = \"5\" }\n");
        let err = Placement::of(&e, &[0, 1]).unwrap_err().to_string();
        assert!(err.contains("CPU 5"), "{err}");
    }
}
