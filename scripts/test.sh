#!/usr/bin/env bash
# The project's test command (README; .ci/run calls it). Builds what the tests
# need — etcd, kube-apiserver, kube-controller-manager, kube-scheduler and KWOK with Go into ~/.cache/ctrlbench when absent,
# the three Go controller builds — then runs every test, Rust and Go, against the
# real local control plane.
set -euo pipefail
cd "$(dirname "$0")/.."

# Rust builds go to a target directory in the cache, one per toolchain
# (unless CARGO_TARGET_DIR says otherwise), so that a fresh clone on a
# machine that has run the tests before compiles only the workspace's own
# crates. Remove ~/.cache/ctrlbench/target-* to reclaim the space.
if [ -z "${CARGO_TARGET_DIR:-}" ]; then
  toolchain=$(rustc -V | cksum | cut -d' ' -f1)
  export CARGO_TARGET_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/ctrlbench/target-$toolchain"
fi
echo "cargo builds into $CARGO_TARGET_DIR"

# Each step's header says when it started, and the end says the total, so
# that a slow CI run shows which step grew (the warm budget is 15 minutes).
step() { echo "== $1 (at $((SECONDS / 60)) min $((SECONDS % 60)) s)"; }
trap 'echo "test.sh: $((SECONDS / 60)) min $((SECONDS % 60)) s"' EXIT

# The tests reach nothing beyond this machine: the plane's binaries are
# found in the cache or built, never downloaded from the release hosts
# (tests/fetch.rs of ctrlbench-plane serves its own mirror on 127.0.0.1).
export CTRLBENCH_OFFLINE=1

step "formatting and lints"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --quiet -- -D warnings
if [ -n "$(gofmt -l controllers/go)" ]; then
  echo "gofmt would change: $(gofmt -l controllers/go)"; exit 1
fi

python3 scripts/unify-features.py --check
python3 scripts/import-circles.py

# Before anything long: a machine where pip cannot install kopf fails here,
# saying so, not half an hour later in init_from.rs's test of it.
step "kopf for the kopf fixture's run (a virtualenv in the cache, pip-installed on first use)"
kopf_venv=$(scripts/kopf-venv.sh)
echo "kopf in $kopf_venv"

step "control-plane binaries (built with Go on first use, then cached)"
assets=$(cargo run --quiet -p ctrlbench -- cluster install --controller-manager --nodes | sed -n 's/^kube-apiserver=//p' | xargs dirname)
echo "binaries in $assets"

step "controllers (Rust, Go with controller-runtime v0.18.4, v0.22 and v0.25, and k8s.io/sample-controller)"
cargo run --quiet -p ctrlbench -- controllers build

step "Go reference controller tests (every build: go.mod is v0.22, the others have a modfile)"
(cd controllers/go && go vet ./... && go vet -modfile=v0.18.4.mod ./... && go vet -modfile=v0.25.mod ./...)
# The three builds' tests side by side (each about 20 s, one core busy):
# each has its own envtest plane; the outputs are printed whole, in order.
gotests=$(mktemp -d)
pids=()
for mod in go.mod v0.18.4.mod v0.25.mod; do
  (cd controllers/go && KUBEBUILDER_ASSETS=$assets go test -count=1 -modfile=$mod ./...) >"$gotests/$mod.log" 2>&1 &
  pids+=($!)
done
failed=0
for p in "${pids[@]}"; do wait "$p" || failed=1; done
for mod in go.mod v0.18.4.mod v0.25.mod; do echo "-- go test -modfile=$mod"; cat "$gotests/$mod.log"; done
rm -rf "$gotests"
[ "$failed" = 0 ] || { echo "Go controller tests failed (above)"; exit 1; }

step "Rust tests (two lanes of test binaries and the doc tests side by side, then the serial binaries)"
python3 scripts/test-lanes.py

step "report fixtures: independent figures, and analysis/queries.sql with DuckDB"
for f in crates/ctrlbench-report/tests/data/results-*/; do
  f=$(basename "$f")
  (cd crates/ctrlbench-report/tests/data &&
    python3 expected/independent.py "$f" --check "expected/$f.report.md" | grep -E '^(MISMATCH|checked)')
done
# The growth fixture's exponent, interval and crossing, which tests/growth.rs pastes.
python3 crates/ctrlbench-report/tests/data/growth/independent_growth.py | diff - crates/ctrlbench-report/tests/data/growth/independent_growth.expected
duckdb_version=2.0.1
venv="${XDG_CACHE_HOME:-$HOME/.cache}/ctrlbench/venv-duckdb-$duckdb_version"
if ! "$venv/bin/python" -c "import duckdb, sys; sys.exit(duckdb.__version__ != '$duckdb_version')" 2>/dev/null; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet "duckdb==$duckdb_version"
fi
"$venv/bin/python" analysis/test_queries.py
