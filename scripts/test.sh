#!/usr/bin/env bash
# The project's test command (README; .ci/run calls it). Builds what the tests
# need — etcd and kube-apiserver are built with Go into ~/.cache/ctrlbench when
# absent — then runs every test against the real local control plane.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== formatting and lints"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --quiet -- -D warnings

echo "== control-plane binaries (built with Go on first use, then cached)"
cargo run --quiet -p ctrlbench -- cluster install

echo "== tests"
cargo test --workspace
