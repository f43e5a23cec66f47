//! The builds a session needs before any cluster time is spent: the command
//! variants' `build` steps, then every controller binary (ours in Rust and
//! Go, `@name` third-party builds, allocator builds) at once, awaited in the
//! variants' order, so a cold machine's idle core during one build's
//! download or link goes to another.

use std::collections::HashMap;
use std::path::PathBuf;

use anyhow::{Result, bail};
use tokio_util::sync::CancellationToken;

use super::{command_program, until_cancelled};
use crate::experiment::{Experiment, Impl};

/// The controller binaries, by implementation, and each command variant's program.
pub struct Builds {
    /// The command variants' `build` steps, run first.
    pub user: Vec<ctrlbench_record::manifest::Build>,
    pub binaries: HashMap<Impl, PathBuf>,
    /// By variant index: a command's program, or the `binary` one of our
    /// controllers runs instead of ctrlbench's build.
    pub programs: HashMap<usize, PathBuf>,
}

impl Builds {
    pub async fn prepare(exp: &Experiment, cancel: &CancellationToken) -> Result<Builds> {
        let user = {
            let exp = exp.clone();
            let run = tokio::task::spawn_blocking(move || super::build::run_all(&exp));
            let Some(done) = until_cancelled(cancel, run).await else {
                bail!("interrupted while building the controllers");
            };
            done??
        };
        let mut b = Builds {
            user,
            binaries: HashMap::new(),
            programs: HashMap::new(),
        };
        // Every build starts at once and is awaited in the variants' order:
        // on a cold machine each leaves a core idle at times (module
        // downloads, links), which the others fill.
        enum Dest {
            Program(usize),
            Binary(Impl),
        }
        let mut pending = Vec::new();
        for (i, v) in exp.variants.iter().enumerate() {
            if v.implementation == Impl::Command {
                let first = v.command().first().cloned().unwrap_or_default();
                let exp_file = exp.file.clone();
                pending.push((
                    Dest::Program(i),
                    tokio::task::spawn_blocking(move || command_program(&exp_file, &first)),
                ));
            } else if let Some(bin) = v.keys.binary.as_deref().filter(|_| v.is_own()) {
                let p = crate::experiment::workload::relative_to(&exp.file, bin);
                if !p.is_file() {
                    bail!(
                        "{}: binary {} (from {bin:?}, relative to {}) does not exist",
                        v.name,
                        p.display(),
                        exp.file.display()
                    );
                }
                b.programs.insert(i, p);
            } else if let Some(a) = v.keys.allocator.clone().filter(|a| a != "system") {
                pending.push((
                    Dest::Program(i),
                    tokio::task::spawn_blocking(move || {
                        crate::controllers::rust_binary_with_allocator(&a)
                    }),
                ));
            } else if v.is_own()
                && !pending
                    .iter()
                    .any(|(to, _)| matches!(to, Dest::Binary(imp) if *imp == v.implementation))
            {
                let imp = v.implementation.clone();
                pending.push((
                    Dest::Binary(imp.clone()),
                    tokio::task::spawn_blocking(move || crate::controllers::binary(&imp)),
                ));
            }
        }
        for (to, build) in pending {
            let Some(done) = until_cancelled(cancel, build).await else {
                bail!("interrupted while building the controllers");
            };
            let path = done??;
            match to {
                Dest::Program(i) => {
                    b.programs.insert(i, path);
                }
                Dest::Binary(imp) => {
                    b.binaries.insert(imp, path);
                }
            }
        }
        Ok(b)
    }
}
