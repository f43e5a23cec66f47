#!/usr/bin/env python3
"""Runs the workspace's test binaries in two lanes side by side.

`cargo test --workspace` runs one test binary after another, and the
end-to-end binaries (each starting real planes) took about six minutes that
way. They now run in two lanes of about equal length — tests/run.rs,
fleet.rs, faults.rs, cluster.rs and malformed.rs in one, everything else
in the other — which keeps CI inside its budget on two cores: most of
their time is spent waiting on planes and controllers, not on the cores.
The doc tests open the second lane. Each binary's output is held back and printed whole when it ends, so
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
# Names are ctrlbench's test targets, or PACKAGE/TARGET for another package's.
ALONE = ["growth_plane", "run", "baseline_footprint", "faults", "diagnosis", "fleet", "cluster", "malformed"]
SERIAL = ["machine", "baseline"]
# The second lane's plane-heavy binaries, in this order, after every other
# binary (the unit tests and the report's, seconds each). Each lane runs in
# a fixed order, never cargo's (which changes with what it had to rebuild),
# so that the same binaries overlap from one run to the next: a run whose
# order changed overlapped controllers.rs with diagnosis.rs's 28
# controllers, and controllers.rs took 121 s instead of 38.
REST = ["ctrlbench-plane/fetch", "pod_watch", "budget", "nodes", "parity", "ci_recipe", "verdicts", "dry_run",
        "controllers", "init_from", "workload", "cli_report", "pods"]


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
        label = f"{cwd.name} {kind} {name}" if exe else "workspace doc tests"
        t0 = time.monotonic()
        with tempfile.TemporaryFile(mode="w+") as log:
            # cargo test runs each binary from its package's directory.
            argv = [exe] if exe else ["cargo", "test", "--workspace", "--doc", "--quiet"]
            rc = subprocess.run(argv, cwd=cwd, stdout=log, stderr=subprocess.STDOUT).returncode
            log.seek(0)
            text = log.read()
        with print_lock:
            print(f"---- {label} ({time.monotonic() - t0:.0f} s, exit {rc})")
            sys.stdout.write(text)
            sys.stdout.flush()
        if rc != 0:
            failures.append(label)


def main():
    binaries = test_binaries(sys.argv[1:])

    def in_order(names):
        by_name = {(b[0] if b[2].name == "ctrlbench" else f"{b[2].name}/{b[0]}"): b for b in binaries if b[1] == "test"}
        return [by_name[n] for n in names if n in by_name]

    alone, serial, rest_named = in_order(ALONE), in_order(SERIAL), in_order(REST)
    others = sorted((b for b in binaries if b not in alone + serial + rest_named), key=lambda b: (str(b[2]), b[1], b[0]))
    # The doc tests (rustdoc compiles each crate, about 13 s) open the
    # second lane, whose first minute is unit tests, rather than wait after
    # both lanes.
    doc = ("doc", "doc", Path.cwd(), None)
    rest = [doc] + others + rest_named
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
