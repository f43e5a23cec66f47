#!/usr/bin/env python3
"""Every query of analysis/queries.sql against the report, on recorded fixtures.

For each results directory under crates/ctrlbench-report/tests/data/
(results-small, results-small-b, results-mixed with a Go run, a client token
bucket and a looping bad-fix, results-concurrent, results-perf-small with
controllers started after the load), this runs every statement
of queries.sql with the duckdb Python package, with that directory as the
working directory (the file's globs are relative to it), and compares each
query's result with the figure the golden report shows
(tests/data/expected/<fixture>.report.md), formatted the way the report
formats it (median [min–max] over repeats):

  query 3  retries                -> "retries"
           mean_reconcile_s       -> "mean reconcile"
           reconciles (ok+error)  -> per-run detail "reconciles ok" + "errors"
  query 4  ready                  -> "Ready/N at window end"
           convergence_s, left_   -> "convergence (Ready==N)" and per-run "convergence"
           ttr_p50_s, ttr_p99_s   -> "time-to-Ready p50", "time-to-Ready p99"
  query 5  q = 0.5 / 0.9 / 0.99   -> "reconcile p50/p90/p99" and per-run "reconcile p99"

Queries with no number in the report's tables (the report draws them as
plots only), checked for consistency instead:

  query 1  queue depth over time: one row per good scrape of every run
           (the "Work queue depth over time" plot).
  query 2  per-gap rates: one row per pair of consecutive good scrapes, and
           sum(reconciles_per_s * gap) over a run = its reconcile count, the
           report's ok + errors (the "Reconciles per second" plot; the
           requeue counter, which query 2 also counts, stays 0 in these
           fixtures).

A query added to queries.sql without a check here fails the test.

Run: python3 analysis/test_queries.py   (or under pytest: test_queries).
scripts/test.sh runs it with duckdb from a cached virtualenv.
"""
import csv
import glob
import math
import os
import re
import sys

import duckdb

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DATA = os.path.join(ROOT, "crates", "ctrlbench-report", "tests", "data")
sys.path.insert(0, os.path.join(DATA, "expected"))
# Formatting, table parsing and the server-side table's header only (stdlib
# Python, no ctrlbench code).
from independent import (  # noqa: E402
    SERVER_SIDE,
    fmt_count,
    fmt_duration,
    fmt_rate,
    fmt_stat,
    report_tables,
    same,
)

CHECKED_QUERIES = {1, 2, 3, 4, 5}


def statements():
    """queries.sql as (query number or None for views, text)."""
    sql = open(os.path.join(HERE, "queries.sql"), encoding="utf-8").read()
    out = []
    for chunk in re.split(r";[ \t]*\n", sql):
        code = "\n".join(l for l in chunk.splitlines() if not l.strip().startswith("--")).strip()
        if not code:
            continue
        m = re.search(r"^-- (\d+)\. ", chunk, re.M)
        out.append((int(m.group(1)) if m else None, chunk))
    return out


def run_queries(results_dir):
    con = duckdb.connect()
    cwd = os.getcwd()
    os.chdir(results_dir)
    try:
        res = {}
        for number, text in statements():
            rel = con.sql(text)
            if number is not None:
                cols = rel.columns
                res[number] = [dict(zip(cols, row)) for row in rel.fetchall()]
        return res
    finally:
        os.chdir(cwd)


def good_rows(results_dir, scale, variant, rep):
    p = os.path.join(results_dir, f"N{scale}", variant, f"rep{rep}", f"metrics-{variant}.csv")
    with open(p, newline="") as f:
        return sum(1 for r in csv.DictReader(f) if r["scrape_ok"] == "1")


def report(results_dir):
    """Group cells {(scale, variant): {column: cell}} and per-run cells."""
    name = os.path.basename(results_dir)
    path = os.path.join(DATA, "expected", f"{name}.report.md")
    groups, runs = {}, {}
    for head, rows in report_tables(path):
        if head[:2] == ["N", "variant"] and all(h in head for h in SERVER_SIDE):
            # apiserver/etcd figures: no query of queries.sql computes them (and
            # under the concurrent schedule this table's rows are cluster-wide,
            # "cluster-wide: <a> + <b> together", not scale × variant groups);
            # expected/independent.py checks them.
            continue
        if head[:3] in (["N", "variant", "from → to"], ["N", "variant", "plane process"]):
            # Pod start (pods.csv), the plane's processes (plane.csv): no query
            # computes them; expected/independent.py checks them.
            continue
        if "goal" in head:
            # The Performance goals tables: ratios of figures, not query
            # results; expected/independent.py checks them.
            continue
        if head[:2] == ["N", "variant"] and "writes/reconcile" not in head:
            for row in rows:
                key = (int(row[0]), row[1].split(" ⚠")[0])
                groups.setdefault(key, {}).update(zip(head[2:], row[2:]))
        elif head[:2] == ["run", "status"]:
            for row in rows:
                runs[row[0]] = dict(zip(head[2:], row[2:]))
    return groups, runs


def num(v):
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def check_fixture(results_dir, failures):
    name = os.path.basename(results_dir)
    res = run_queries(results_dir)
    missing = set(res) - CHECKED_QUERIES
    if missing:
        failures.append(f"queries.sql has queries {sorted(missing)} that test_queries.py does not check")
    run_keys = sorted(
        (int(m.group(1)), m.group(2), int(m.group(3)))
        for d in glob.glob(os.path.join(results_dir, "N*", "*", "rep*"))
        for m in [re.search(r"N(\d+)/([^/]+)/rep(\d+)$", d)]
    )
    groups, runs = report(results_dir)
    checked = 0

    def expect(what, want, got):
        nonlocal checked
        checked += 1
        if got is None:
            failures.append(f"{name} {what}: the report has no such cell (query gives {want!r})")
        elif not same(want, got):
            failures.append(f"{name} {what}: query gives {want!r}, report shows {got!r}")

    def by_run(number):
        out = {}
        for r in res[number]:
            out.setdefault((r["scale"], r["variant"], r["rep"]), []).append(r)
        for k in run_keys:
            if k not in out:
                failures.append(f"{name} query {number}: no row for N{k[0]}/{k[1]}/rep{k[2]}")
        return out

    q1, q2, q3, q4, q5 = (by_run(n) for n in (1, 2, 3, 4, 5))

    for (scale, variant), cells in groups.items():
        keys = [k for k in run_keys if k[:2] == (scale, variant)]
        g = f"N={scale} {variant}"
        col = lambda q, field: [num(q[k][0][field]) for k in keys if k in q]  # noqa: E731
        # query 3
        expect(f"{g} retries (query 3)", fmt_stat(col(q3, "retries"), fmt_count), cells.get("retries"))
        expect(f"{g} mean reconcile (query 3)", fmt_stat(col(q3, "mean_reconcile_s"), fmt_duration),
               cells.get("mean reconcile"))
        # query 4
        expect(f"{g} Ready (query 4)", f"{fmt_stat(col(q4, 'ready'), fmt_count)}/{scale}",
               cells.get("Ready/N at window end"))
        conv = [c for c in col(q4, "convergence_s") if c is not None]
        left = [num(q4[k][0]["left_"]) for k in keys if k in q4 and q4[k][0]["convergence_s"] is None]
        if not left:
            want = fmt_stat(conv, fmt_duration)
        elif not conv:
            want = f"not converged: {fmt_stat(left, fmt_count)} left"
        else:
            want = (f"{fmt_stat(conv, fmt_duration)} ({len(conv)} of {len(conv) + len(left)} runs "
                    f"converged; others {fmt_stat(left, fmt_count)} left)")
        expect(f"{g} convergence (query 4)", want, cells.get("convergence (Ready==N)"))
        for p in ("p50", "p99"):
            expect(f"{g} time-to-Ready {p} (query 4)", fmt_stat(col(q4, f"ttr_{p}_s"), fmt_duration),
                   cells.get(f"time-to-Ready {p}"))
        # query 5
        for q, p in ((0.5, "p50"), (0.9, "p90"), (0.99, "p99")):
            vals = [num(r["latency_s"]) for k in keys for r in q5.get(k, []) if abs(float(r["q"]) - q) < 1e-9]
            expect(f"{g} reconcile {p} (query 5)", fmt_stat(vals, fmt_duration), cells.get(f"reconcile {p}"))

    for k in run_keys:
        label = f"N{k[0]}/{k[1]}/rep{k[2]}"
        cells = runs.get(label, {})
        ok, err = num(cells.get("reconciles ok", "nan")), num(cells.get("errors", "nan"))
        if k in q3:
            expect(f"{label} reconciles (query 3)", fmt_count(q3[k][0]["reconciles"]),
                   fmt_count(ok + err) if cells else None)
        if k in q4:
            c = q4[k][0]["convergence_s"]
            expect(f"{label} convergence (query 4)", "not converged" if c is None else fmt_duration(c),
                   cells.get("convergence"))
        p99 = [r["latency_s"] for r in q5.get(k, []) if abs(float(r["q"]) - 0.99) < 1e-9]
        expect(f"{label} reconcile p99 (query 5)", fmt_duration(p99[0]) if p99 else "—",
               cells.get("reconcile p99"))
        # query 1: one row per good scrape.
        n_good = good_rows(results_dir, *k)
        checked += 1
        if len(q1.get(k, [])) != n_good:
            failures.append(f"{name} {label} query 1: {len(q1.get(k, []))} rows, {n_good} good scrapes")
        # query 2: one row per gap; the rates integrate back to the reconcile count.
        rows = q2.get(k, [])
        checked += 2
        if len(rows) != n_good - 1:
            failures.append(f"{name} {label} query 2: {len(rows)} rows, {n_good - 1} gaps")
        total = sum(r["reconciles_per_s"] * r["gap_s"] for r in rows)
        if cells and abs(total - (ok + err)) > 0.002 * max(ok + err, 1):
            failures.append(f"{name} {label} query 2: rates integrate to {total:.3f}, "
                            f"the report counts {ok + err:.0f} reconciles")
    # Every group of the report was compared.
    for key in groups:
        if not any(k[:2] == key for k in run_keys):
            failures.append(f"{name}: report group {key} has no run directory")
    return checked


def fixtures():
    return sorted(
        d for d in glob.glob(os.path.join(DATA, "results-*"))
        if os.path.isfile(os.path.join(DATA, "expected", os.path.basename(d) + ".report.md"))
    )


def test_queries():
    failures, total = [], 0
    dirs = fixtures()
    assert len(dirs) >= 4, f"fixtures under {DATA}: {dirs}"
    for d in dirs:
        n = check_fixture(d, failures)
        print(f"{os.path.basename(d)}: {n} comparisons")
        total += n
    for f in failures:
        print("FAIL", f)
    assert not failures, f"{len(failures)} of {total} comparisons failed"
    print(f"queries.sql: {total} comparisons with the reports, all equal (duckdb {duckdb.__version__})")


if __name__ == "__main__":
    try:
        test_queries()
    except AssertionError as e:
        print(e)
        sys.exit(1)
