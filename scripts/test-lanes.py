#!/usr/bin/env python3
"""Runs the workspace's test binaries in two lanes side by side.

`cargo test --workspace` runs one test binary after another, and the
end-to-end binaries (each starting real planes) took about six minutes that
way. They now run in two lanes of about equal length — tests/run.rs,
fleet.rs, faults.rs, cluster.rs and malformed.rs in one, everything else
in the other — which keeps CI inside its budget on two cores: most of
their time is spent waiting on planes and controllers, not on the cores.
Each binary's output is held back and printed whole when it ends, so
lanes never interleave. Any failing
binary fails the script; every binary still runs. Binaries that measure
the machine itself, or whose assertions are verdicts (SERIAL), run last,
alone, once both lanes are done: beside a lane they would see its planes as
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

# Test targets (by target name) of the first lane. In a warm CI run at
# 2 cores, run.rs took 184 s, fleet.rs 146 s, faults.rs 90 s, cluster.rs
# 44 s and malformed.rs 18 s (482 s), and the other lane about as long
# (verdicts.rs 253 s, workload.rs 103 s and the rest: 489 s). diagnosis.rs
# (about 45 s: its own plane with 28 controllers) joins the first lane, as
# init_from.rs's kopf and two-kind runs grew the second; so does
# growth_plane.rs (about 2 minutes: 12 runs of up to 500 widgets). A third
# lane (2026-12-06) cut no time worth its load: under it the lab's
# diagnosis counted extra reconciles and run.rs's client and audit counts
# parted, so two lanes it stays.
# baseline_footprint.rs (about 45 s), an A/B decided on audit-log counts
# that load does not move, joined the first lane from SERIAL (2026-12-06:
# a warm CI run took 15.5 min, lanes 577 and 601 s, SERIAL 174 s).
ALONE = {"run", "fleet", "faults", "cluster", "malformed", "diagnosis", "growth_plane", "baseline_footprint"}
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
    serial = [b for b in binaries if b[1] == "test" and b[0] in SERIAL]
    rest = [b for b in binaries if b not in alone and b not in serial]
    failures = []
    lanes = [threading.Thread(target=run_lane, args=(lane, failures)) for lane in (alone, rest)]
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
