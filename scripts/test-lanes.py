#!/usr/bin/env python3
"""Runs the workspace's test binaries in three lanes side by side.

`cargo test --workspace` runs one test binary after another, and the
end-to-end binaries (each starting real planes) took about six minutes that
way. They now run in three lanes of about equal length (the sets below)
— which keeps CI inside its budget on two cores: most of their time is
spent waiting on planes and controllers, not on the cores.
Each binary's output is held back and printed whole when it ends, so
lanes never interleave. Any failing
binary fails the script; every binary still runs. Binaries that measure
the machine itself, or whose assertions are verdicts (SERIAL), run last,
alone, once the lanes are done: beside a lane they would see its planes as
other load, and a verdict measured under that load is not the one asserted.

Usage: scripts/test-lanes.py [cargo test args…]  (from the workspace root)
"""

import json
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

# Test targets (by target name) of the first two lanes; the third runs
# everything else. In a warm CI run at 2 cores (2026-12-06) run.rs took
# 184 s, fleet.rs 140 s, cluster.rs 45 s, faults.rs 39 s, diagnosis.rs
# 36 s and malformed.rs 16 s (460 s); workload.rs 108 s, growth_plane.rs
# 107 s, budget.rs 72 s and init_from.rs 69 s (356 s); verdicts.rs 244 s
# and the rest about as long. Two lanes took 600 s with the cores about
# half busy, so three overlap their waits on planes and controllers.
ALONE = {"run", "fleet", "faults", "cluster", "malformed", "diagnosis"}
SECOND = {"workload", "growth_plane", "budget", "init_from"}
SERIAL = {"machine", "baseline"}


def test_binaries(extra):
    """Builds every test binary and returns (name, kind, package dir, path)."""
    out = subprocess.run(
        ["cargo", "test", "--workspace", "--no-run", "--message-format=json", *extra],
        check=True,
        stdout=subprocess.PIPE,
        text=True,
    ).stdout
    found = []
    for line in out.splitlines():
        msg = json.loads(line)
        if msg.get("reason") != "compiler-artifact" or not msg.get("executable"):
            continue
        if not msg["profile"]["test"]:
            continue
        t = msg["target"]
        found.append((t["name"], t["kind"][0], Path(msg["manifest_path"]).parent, msg["executable"]))
    return found


print_lock = threading.Lock()


def run_lane(binaries, failures):
    for name, kind, cwd, exe in binaries:
        t0 = time.monotonic()
        with tempfile.TemporaryFile(mode="w+") as log:
            # cargo test runs each binary from its package's directory.
            rc = subprocess.run([exe], cwd=cwd, stdout=log, stderr=subprocess.STDOUT).returncode
            log.seek(0)
            text = log.read()
        with print_lock:
            print(f"---- {cwd.name} {kind} {name} ({time.monotonic() - t0:.0f} s, exit {rc})")
            sys.stdout.write(text)
            sys.stdout.flush()
        if rc != 0:
            failures.append(f"{cwd.name} {kind} {name}")


def main():
    binaries = test_binaries(sys.argv[1:])
    alone = [b for b in binaries if b[1] == "test" and b[0] in ALONE]
    second = [b for b in binaries if b[1] == "test" and b[0] in SECOND]
    serial = [b for b in binaries if b[1] == "test" and b[0] in SERIAL]
    rest = [b for b in binaries if b not in alone and b not in second and b not in serial]
    failures = []
    lanes = [
        threading.Thread(target=run_lane, args=(lane, failures)) for lane in (alone, second, rest)
    ]
    for t in lanes:
        t.start()
    for t in lanes:
        t.join()
    run_lane(serial, failures)
    if failures:
        print("failed: " + ", ".join(failures))
        sys.exit(1)
    print(f"all {len(binaries)} test binaries passed")


if __name__ == "__main__":
    main()
