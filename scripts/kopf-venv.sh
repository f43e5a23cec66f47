#!/usr/bin/env bash
# A virtualenv with the kopf that tests/fixtures/kopf-operator pins, for the
# test that runs that operator on the local plane (init_from.rs) and for
# scripts/test.sh, which calls this first so that a machine where pip
# cannot install kopf fails at once, saying so, rather than deep in a test.
# The venv lives in the cache, keyed by kopf's version, so it is made once
# per machine and per pin; a venv that already imports that version is
# reused without asking pip anything. Prints the venv's path, alone, on
# stdout; everything else goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."

requirements=crates/ctrlbench/tests/fixtures/kopf-operator/requirements.txt
version=$(sed -n 's/^kopf==\([^[:space:]#;]*\).*/\1/p' "$requirements")
if [ -z "$version" ]; then
  echo "$requirements pins no kopf (a line kopf==VERSION)" >&2
  exit 1
fi
venv="${XDG_CACHE_HOME:-$HOME/.cache}/ctrlbench/venv-kopf-$version"

has_kopf() {
  "$venv/bin/python" -c "import kopf, importlib.metadata as m, sys; sys.exit(m.version('kopf') != '$version')" 2>/dev/null
}

if ! has_kopf; then
  mkdir -p "$(dirname "$venv")"
  # Two callers at once (two checkouts' tests) would otherwise install into
  # the same directory; the second finds the first one's venv when it gets
  # the lock.
  exec 9>"$venv.lock"
  flock 9
  if ! has_kopf; then
    echo "installing kopf==$version into $venv" >&2
    rm -rf "$venv"
    python3 -m venv "$venv" >&2
    # A failed install leaves no venv behind, so the next call tries again
    # rather than finding a half-made one.
    if ! "$venv/bin/pip" install --quiet --disable-pip-version-check "kopf==$version" >&2; then
      rm -rf "$venv"
      echo "pip could not install kopf==$version (is the package index reachable?)" >&2
      exit 1
    fi
    if ! has_kopf; then
      rm -rf "$venv"
      echo "kopf==$version installed, but $venv/bin/python does not import it" >&2
      exit 1
    fi
  fi
fi
echo "$venv"
