//! What the report crate's test binaries share: the fixtures' paths, a
//! scratch copy of a fixture a test may alter, editing one of its JSON
//! files in place, and a standard normal draw for the simulations. Each
//! test binary compiles this file on its own and uses only part of it.

#![allow(dead_code)] // each binary uses a different part

use std::path::{Path, PathBuf};

use rand::Rng;
use rand::rngs::StdRng;
use serde_json::Value;

/// A fixture under tests/data.
pub fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// Copies a fixture into a temp dir so a test can write or alter it; the
/// copy goes with the returned `TempDir`.
pub fn scratch(name: &str) -> (tempfile::TempDir, PathBuf) {
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let p = e.unwrap().path();
            let t = to.join(p.file_name().unwrap());
            if p.is_dir() {
                copy(&p, &t);
            } else {
                std::fs::copy(&p, &t).unwrap();
            }
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join(name);
    copy(&data(name), &dir);
    (tmp, dir)
}

/// Rewrites a JSON file through `f`.
pub fn edit_json(path: &Path, f: impl FnOnce(&mut Value)) {
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    f(&mut v);
    std::fs::write(path, v.to_string()).unwrap();
}

/// A standard normal draw (Box–Muller).
pub fn normal(rng: &mut StdRng) -> f64 {
    let (u, v): (f64, f64) = (rng.random::<f64>().max(1e-300), rng.random());
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}
