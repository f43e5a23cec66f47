//! What the tests of `init --from` and `--baseline` share: a copy of an
//! operator fixture outside the checkout, git in it, and `ctrlbench init`.

use std::path::{Path, PathBuf};
use std::process::Output;

use super::{assert_success, ctrlbench};

pub fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/memcached-operator")
}

/// A copy of the fixture in `root`, so that its build writes nothing into the checkout.
pub fn copy_fixture(root: &Path) -> PathBuf {
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
    let to = root.join("memcached-operator");
    copy(&fixture(), &to);
    to
}

/// Runs git in `dir`, which must succeed; its output.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .output()
        .unwrap();
    assert_success(&out);
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The commits the manifest's builds were made from, in order.
pub fn build_commits(m: &ctrlbench_record::Manifest) -> Vec<String> {
    m.builds
        .iter()
        .filter_map(|b| b.git_commit.clone())
        .collect()
}

/// `dir` as a git repository whose `main` holds its files.
pub fn commit_as_main(dir: &Path) -> String {
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "scaffold"]);
    git(dir, &["rev-parse", "HEAD"])
}

pub fn init_in(cwd: &Path, args: &[&str]) -> Output {
    ctrlbench()
        .current_dir(cwd)
        .arg("init")
        .args(args)
        .output()
        .unwrap()
}

/// The one `error:` line of a failed command.
#[track_caller]
pub fn one_error(out: &Output) -> String {
    assert!(!out.status.success(), "it succeeded");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    errors[0].to_string()
}

/// The kube-rs fixture, used in place: it is a member of the workspace, so
/// its build is the tests' own (one kube compile), into the workspace's target.
pub fn kube_rs_fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/echo-operator")
}

/// The kopf fixture, used in place: init --from only reads it.
pub fn kopf_fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/kopf-operator")
}

/// A copy of `tests/fixtures/<name>` in `root` (as `root/<name>`), so that
/// its build writes nothing into the checkout.
pub fn copy_named_fixture(root: &Path, name: &str) -> PathBuf {
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
    let from = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    let to = root.join(name);
    copy(&from, &to);
    to
}
