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

Host-side packages (proc macros, build scripts and what they use) are
unified too, as the hack's [build-dependencies] (it has an empty build.rs
so that cargo resolves them): one extra syn feature on the host side
recompiles every derive macro, and with them serde, tokio and the whole
kube stack.

Left out: what dev-dependencies add: tower-test turns on tokio's
test-util, whose pausable clock takes a lock on every reading of the time,
which no measured controller may carry. The test build compiles tokio's
dependents once more.
"""

import re
import subprocess
import sys
from collections import defaultdict

SELECTIONS = [
    ["-p", "ctrlbench"],
    ["-p", "widget-controller"],
    ["--workspace"],
]
HACK = "workspace-hack"
LINE = re.compile(r"^(\S+) v(\S+)(?: \(([^)]*)\))?(?: \(proc-macro\))?(?: \(\*\))? \[([^\]]*)\]")


def features(args):
    """{(side, name, version): set(features)} of one selection, side "target"
    or "host" (under a proc macro or a [build-dependencies] edge)."""
    out = subprocess.run(
        ["cargo", "tree", "--no-dedupe", "-e", "normal,build", "-f", "{p} [{f}]", *args],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    found = defaultdict(set)
    # (depth, host) of the ancestors of the current line.
    stack = []
    for raw in out.splitlines():
        body = raw.lstrip("│├└─ \u00a0")
        depth = (len(raw) - len(body)) // 4
        while stack and stack[-1][0] >= depth:
            stack.pop()
        parent_host = stack[-1][1] if stack else False
        if body.startswith("[build-dependencies]"):
            stack.append((depth, True))
            continue
        if body.startswith("["):
            stack.append((depth, parent_host))
            continue
        m = LINE.match(body)
        if not m:
            continue
        host = parent_host or "(proc-macro)" in body
        stack.append((depth, host))
        if m.group(3):  # a path: one of ours
            continue
        side = "host" if host else "target"
        found[(side, m.group(1), m.group(2))] |= {f for f in m.group(4).split(",") if f}
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
        for side, name, version in sorted(differing):
            per = [sorted(s.get((side, name, version), [])) for s in sets]
            print(f"{name} v{version} ({side}) differs: {per}")
        if differing:
            print(f"run scripts/unify-features.py and put its output in crates/{HACK}/Cargo.toml")
            sys.exit(1)
        print("every dependency resolves to one feature set")
        return
    names = defaultdict(set)
    for _, name, version in union:
        names[name].add(version)
    for side, header in (("target", "[dependencies]"), ("host", "[build-dependencies]")):
        print(header)
        for s, name, version in sorted(differing):
            if s != side:
                continue
            major = ".".join(version.split(".")[: 2 if version.startswith("0.") else 1])
            key = name if len(names[name]) == 1 else f"{name}-{major.replace('.', '')}"
            feats = ", ".join(f'"{f}"' for f in sorted(union[(s, name, version)]) if f != "default")
            default = "" if "default" in union[(s, name, version)] else ", default-features = false"
            pkg = "" if key == name else f'package = "{name}", '
            print(f'{key} = {{ {pkg}version = "{major}"{default}, features = [{feats}] }}')
        print()


if __name__ == "__main__":
    main()
