#!/usr/bin/env python3
"""One compile of every dependency: the harness (`cargo run -p ctrlbench`),
the controller it builds (`cargo build -p widget-controller`) and the tests
(`cargo build --workspace`) select different packages, so cargo unifies
each dependency's features differently and compiles kube-client, hyper,
tower … once per selection. crates/workspace-hack depends on every such dependency
with the union of its features, and every member depends on it, so all
selections resolve alike.

  scripts/unify-features.py          print workspace-hack's [dependencies]
  scripts/unify-features.py --check  exit 1 if some dependency still differs

Left out: host-side packages (proc macros and their dependencies, small),
and what dev-dependencies add: tower-test turns on tokio's test-util, whose
pausable clock takes a lock on every reading of the time, which no measured
controller may carry. The test build compiles tokio's dependents once more.
"""

import re
import subprocess
import sys
from collections import defaultdict

SELECTIONS = [
    ["-p", "ctrlbench", "-e", "normal,no-proc-macro"],
    ["-p", "widget-controller", "-e", "normal,no-proc-macro"],
    ["--workspace", "-e", "normal,no-proc-macro"],
]
HACK = "workspace-hack"
LINE = re.compile(r"^(\S+) v(\S+)(?: \(([^)]*)\))?(?: \(\*\))? \[([^\]]*)\]")


def features(args):
    """{(name, version): set(features)} of one selection's target-side packages."""
    out = subprocess.run(
        ["cargo", "tree", "--prefix", "none", "--no-dedupe", "-f", "{p} [{f}]", *args],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    found = {}
    for line in out.splitlines():
        m = LINE.match(line.strip())
        if not m or m.group(3):  # a path: one of ours
            continue
        found[(m.group(1), m.group(2))] = {f for f in m.group(4).split(",") if f}
    return found


def main():
    sets = [features(a) for a in SELECTIONS]
    union = defaultdict(set)
    differing = set()
    for s in sets:
        for k, f in s.items():
            union[k] |= f
    for k in union:
        seen = [s[k] for s in sets if k in s]
        if len(seen) > 1 and any(f != seen[0] for f in seen):
            differing.add(k)
    if "--check" in sys.argv:
        for name, version in sorted(differing):
            per = [sorted(s.get((name, version), [])) for s in sets]
            print(f"{name} v{version} differs: {per}")
        if differing:
            print(f"run scripts/unify-features.py and put its output in crates/{HACK}/Cargo.toml")
            sys.exit(1)
        print("every dependency resolves to one feature set")
        return
    names = defaultdict(list)
    for name, version in union:
        names[name].append(version)
    for name, version in sorted(differing):
        major = ".".join(version.split(".")[: 2 if version.startswith("0.") else 1])
        key = name if len(names[name]) == 1 else f"{name}-{major.replace('.', '')}"
        feats = ", ".join(f'"{f}"' for f in sorted(union[(name, version)]) if f != "default")
        default = "" if "default" in union[(name, version)] else ", default-features = false"
        pkg = "" if key == name else f'package = "{name}", '
        print(f'{key} = {{ {pkg}version = "{major}"{default}, features = [{feats}] }}')


if __name__ == "__main__":
    main()
