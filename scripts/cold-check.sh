#!/usr/bin/env bash
# The README's two commands as a new user meets them: a clean clone of the
# committed HEAD, an empty HOME (fresh cargo registry, Go module and build
# caches, ctrlbench cache), then the main job and the test command, each
# timed, with the minutes of the steps inside them (builds, plane, run).
# Only the Rust toolchain is shared (RUSTUP_HOME): it is installed, not built.
#
#   scripts/cold-check.sh [--main | --tests] [--mirror] [--keep]
#
# --main / --tests run one of the two; --keep leaves the clone and its HOME.
# --mirror serves, on 127.0.0.1, a release mirror (Kubernetes' and etcd's
# layouts, with their checksums) made from this machine's cached plane
# binaries, and points CTRLBENCH_MIRROR at it: the first run as it is where
# release binaries can be fetched.
# Both need the machine to themselves: run nothing beside it.
set -euo pipefail
cd "$(dirname "$0")/.."

want_main=1 want_tests=1 keep=0 mirror=0
for a in "$@"; do
  case "$a" in
    --main) want_tests=0 ;;
    --tests) want_main=0 ;;
    --keep) keep=1 ;;
    --mirror) mirror=1 ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "error: unknown argument $a: use --main, --tests, --mirror or --keep" >&2; exit 2 ;;
  esac
done

root=$(mktemp -d "${TMPDIR:-/tmp}/ctrlbench-cold.XXXXXX")
server=
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; fi
  if [ "$keep" = 1 ]; then echo "kept $root"; else rm -rf "$root"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

git clone --quiet --no-local . "$root/ctrlbench"
if [ "$mirror" = 1 ]; then
  k8s=$(sed -n 's/^pub const DEFAULT_K8S_VERSION: &str = "\(.*\)";/\1/p' crates/ctrlbench-plane/src/releases.rs)
  etcd=$(grep -A4 "k8s: \"$k8s\"" crates/ctrlbench-plane/src/releases.rs | sed -n 's/.*etcd: "\(.*\)".*/\1/p')
  have="${XDG_CACHE_HOME:-$HOME/.cache}/ctrlbench/k8s/$k8s"
  for b in etcd kube-apiserver; do
    [ -x "$have/$b" ] || { echo "error: --mirror needs $have/$b: run ctrlbench cluster install first" >&2; exit 2; }
  done
  arch=$(uname -m | sed 's/x86_64/amd64/; s/aarch64/arm64/')
  m="$root/mirror"
  mkdir -p "$m/release/v$k8s/bin/linux/$arch" "$m/etcd/v$etcd/etcd-v$etcd-linux-$arch"
  for b in kube-apiserver kube-controller-manager kube-scheduler; do
    [ -x "$have/$b" ] || continue
    cp "$have/$b" "$m/release/v$k8s/bin/linux/$arch/$b"
    sha256sum "$have/$b" | cut -d' ' -f1 > "$m/release/v$k8s/bin/linux/$arch/$b.sha256"
  done
  cp "$have/etcd" "$m/etcd/v$etcd/etcd-v$etcd-linux-$arch/etcd"
  (cd "$m/etcd/v$etcd" && tar czf "etcd-v$etcd-linux-$arch.tar.gz" "etcd-v$etcd-linux-$arch" &&
    rm -r "etcd-v$etcd-linux-$arch" && sha256sum "etcd-v$etcd-linux-$arch.tar.gz" > SHA256SUMS)
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  python3 -m http.server --bind 127.0.0.1 --directory "$m" "$port" >"$root/mirror.log" 2>&1 &
  server=$!
  export CTRLBENCH_MIRROR="http://127.0.0.1:$port"
  echo "mirror of Kubernetes $k8s and etcd $etcd at $CTRLBENCH_MIRROR"
fi
commit=$(git -C "$root/ctrlbench" rev-parse --short HEAD)
mkdir -p "$root/home"
export RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}"
export HOME="$root/home"
export CARGO_HOME="$root/home/.cargo"
export GOPATH="$root/home/go"
export GOMODCACHE="$root/home/go/pkg/mod"
export GOCACHE="$root/home/.cache/go-build"
export XDG_CACHE_HOME="$root/home/.cache"
[ "$mirror" = 1 ] || unset CTRLBENCH_MIRROR
unset CTRLBENCH_OFFLINE XDG_STATE_HOME KUBEBUILDER_ASSETS TEST_ASSET_ETCD TEST_ASSET_KUBE_APISERVER \
  TEST_ASSET_KUBE_CONTROLLER_MANAGER CTRLBENCH_WIDGET_CONTROLLER CARGO_TARGET_DIR
cd "$root/ctrlbench"

# Runs "$@" with every output line stamped by the seconds since its start;
# prints the step's minutes and the moments its inner steps ended.
timed() {
  local label=$1; shift
  local log="$root/$label.log" start rc
  start=$(date +%s)
  set +e
  "$@" 2>&1 | python3 -u -c '
import sys, time
t0 = time.time()
for line in sys.stdin:
    sys.stdout.write("%7.1f %s" % (time.time() - t0, line))
    sys.stdout.flush()
' > "$log"
  rc=${PIPESTATUS[0]}
  set -e
  local total=$(( $(date +%s) - start ))
  echo "== $label: exit $rc after $((total / 60)) min $((total % 60)) s (log: $log)"
  grep -E 'downloaded and verified|not downloaded|Finished .release|Finished .dev|Finished .test|^ *[0-9.]+ built |plane ready|^ *[0-9.]+ == |results: |decided|test result: .*[1-9][0-9]* failed|[0-9]+ passed' "$log" \
    | awk '{ printf "   %5.1f min  ", $1 / 60; $1 = ""; print substr($0, 2) }' | cut -c1-160
  return "$rc"
}

echo "cold check of $commit in $root ($(nproc) cores)"
status=0
if [ "$want_main" = 1 ]; then
  timed main cargo run --release -p ctrlbench -- run quick --results "$root/results" || status=1
fi
if [ "$want_tests" = 1 ]; then
  timed tests ./scripts/test.sh || status=1
fi
exit "$status"
