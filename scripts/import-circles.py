#!/usr/bin/env python3
"""Fails when the source files of a crate import each other in a circle.

A file may name another file of its crate by a path (`crate::run::summary`,
`super::watch`, `self::keys`, or grouped: `use crate::{a, b::c}`). Read top-down, those names should form
floors: a file uses the ones below it and is used by the ones above. A
circle (a uses b, b uses a, perhaps through others) means neither can be
read, changed or tested without the other, so scripts/test.sh runs this
check and a new circle fails the tests. Test code (after `#[cfg(test)]`,
tests.rs files) is left out: tests may look anywhere.

Usage: scripts/import-circles.py   (from the workspace root; exit 1 and one
line per circle when there is one)
"""

import re
import sys
from pathlib import Path

PATH = re.compile(r"\b(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")


def module_of(src: Path, file: Path) -> tuple:
    parts = list(file.relative_to(src).with_suffix("").parts)
    if parts[-1] in ("lib", "main", "mod"):
        parts.pop()
    return tuple(parts)


def non_test_text(file: Path) -> str:
    text = file.read_text(encoding="utf-8")
    cut = text.find("#[cfg(test)]")
    return text if cut < 0 else text[:cut]


GROUP = re.compile(r"\b(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)*)::\{")


def split_top(text: str) -> list:
    """`a, b::{c, d}, e` split at the commas outside braces."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += {"{": 1, "}": -1}.get(ch, 0)
        cur += ch
    parts.append(cur)
    return [p.strip() for p in parts if p.strip()]


def grouped(text: str) -> list:
    """The paths of `use crate::{a, b::{c, d}}` and the like, spelt out:
    ("crate", "::a"), ("crate", "::b::c"), …"""
    out = []
    for m in GROUP.finditer(text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        stack = [(m.group(2), text[m.end() : i - 1])]
        while stack:
            prefix, body = stack.pop()
            for item in split_top(body):
                if item.endswith("}") and "{" in item:
                    head, inner = item.split("{", 1)
                    stack.append((prefix + "::" + head.rstrip(":"), inner[:-1]))
                    continue
                item = item.split(" as ")[0].strip()
                if item not in ("self", "*"):
                    out.append((m.group(1), prefix + "::" + item))
                elif prefix:
                    out.append((m.group(1), prefix))
    return out


def edges_of(src: Path) -> dict:
    files = [f for f in src.rglob("*.rs") if f.name != "tests.rs" and "tests" not in f.relative_to(src).parts[:-1]]
    modules = {module_of(src, f): f for f in files}
    edges = {m: set() for m in modules}
    for m, f in modules.items():
        text = non_test_text(f)
        for kind, rest in PATH.findall(text) + grouped(text):
            base = {"crate": (), "self": m, "super": m[:-1]}[kind]
            target = base + tuple(rest[2:].split("::"))
            # The longest prefix that is a file: `crate::run::summary::Summary`
            # names run/summary.rs.
            while target and target not in modules:
                target = target[:-1]
            if target in modules and target != m:
                edges[m].add(target)
    return edges


def circles(edges: dict) -> list:
    """The strongly connected sets of two or more modules (Kosaraju)."""
    order, seen = [], set()
    for start in edges:
        if start in seen:
            continue
        seen.add(start)
        stack = [(start, iter(sorted(edges[start])))]
        while stack:
            node, it = stack[-1]
            nxt = next((w for w in it if w not in seen), None)
            if nxt is None:
                stack.pop()
                order.append(node)
            else:
                seen.add(nxt)
                stack.append((nxt, iter(sorted(edges[nxt]))))
    reverse = {m: set() for m in edges}
    for m, ws in edges.items():
        for w in ws:
            reverse[w].add(m)
    found, assigned = [], set()
    for root in reversed(order):
        if root in assigned:
            continue
        group, todo = [], [root]
        assigned.add(root)
        while todo:
            n = todo.pop()
            group.append(n)
            for w in reverse[n]:
                if w not in assigned:
                    assigned.add(w)
                    todo.append(w)
        if len(group) > 1:
            found.append(sorted("::".join(g) or "(crate root)" for g in group))
    return found


def main() -> int:
    bad = []
    for src in sorted(Path("crates").glob("*/src")):
        for c in circles(edges_of(src)):
            bad.append(f"{src.parent.name}: {', '.join(c)}")
    for line in bad:
        print(f"import circle in {line}")
    if bad:
        print(f"{len(bad)} import circle(s): move what both sides use into a file below them (docs/architecture.md)")
        return 1
    print("no import circles")
    return 0


if __name__ == "__main__":
    sys.exit(main())
