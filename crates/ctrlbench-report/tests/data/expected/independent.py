#!/usr/bin/env python3
"""Independent expected values for a ctrlbench results directory.

Standard library only, and no ctrlbench code: every figure is recomputed
from the raw files (objects.csv, summary.json, metrics-<variant>.csv,
apiserver.csv, etcd.csv) following the definitions written in the report's
"How the numbers are computed" section and the README.

Usage (from anywhere):
    independent.py <results dir>                      # print the figures per run
    independent.py <results dir> --check <report.md>  # and assert the report shows them
    independent.py <results dir> --check <report.md> --margin 10%   # rendered with --margin

With --check, every cell of the report's tables that this script recomputes
is formatted the way the report formats it (ms below 1 s, "/s", "MiB", median
[min–max] over repeats) and compared with the cell as rendered; the script
exits 1 on any mismatch and lists each. Not checked: the "Where the reconcile
time goes" table and its notes (attribution), the plots, the header, and the
settings table's client limit, client buckets and retry policy columns (a
rendering of summary.json's settings, not a computation; its impl, preset,
workers and queue columns are checked).

Definitions (per run, N = the scale):
  time zero       objects.csv's last created_at minus summary.json load.seconds
  Ready           objects.csv rows with a non-empty ready_at
  convergence     latest ready_at minus time zero, only when Ready >= N
  T50/T90/T100    first created_at -> the ceil(q*N)-th ready_at (sorted)
  time-to-Ready   ready_at - created_at per created object; never Ready =
                  censored (+inf); p50/p99 by linear interpolation between
                  closest ranks (h = (n-1)q); a percentile whose interpolation
                  touches a censored value is "> window"
  counters        last scrape_ok=1 row minus the first scrape_ok=1 row
  reconcile pXX   histogram_quantile over the bucket deltas of
                  reconcile_latency_le_*: an empty bucket cell (the series did
                  not exist yet: controller-runtime registers the histogram at
                  the first reconcile) counts 0; linear inside the bucket,
                  lower bound 0 for the first, the highest finite bound when
                  the rank falls in +Inf
  mean reconcile  delta reconcile_latency_sum / delta reconcile_latency_count
  Ready/s         N / convergence, else Ready / (last good scrape - time zero)
  writes/s        as writes_per_s.py: delta rest_writes_total over the span from
                  the last good row before the first increase to the first good
                  row showing the final count
  coverage        objects.csv rows with a non-empty first_write_at, shown as
                  "k/N"; "—" when objects.csv has no first_write_at column.
                  For each group whose coverage median is below N the report
                  adds a note "N=<n> <variant>: the controller wrote to k of N
                  objects.": checked too (its count; the wording after it is
                  not)
  update p99      histogram_quantile(0.99) over the deltas of apiserver.csv's
                  widget_update_latency_le_* (PUT/PATCH/APPLY on widgets)
  create p99      the same over widget_create_latency_le_* (POST: the loader's)
                  Both are "—" when apiserver.csv has no such columns: results
                  from before the split have one widget_write_latency_le_* set
                  over creates and updates, which fits neither label.
  fsync p99       the same over etcd.csv's wal_fsync_le_*
  server side     isolated schedule: one row per scale × variant. Concurrent
                  schedule (summary.json "schedule"): the variants of a scale
                  shared the apiserver and etcd, so the table has ONE row per
                  scale, variant cell "cluster-wide: <a> + <b> together" (the
                  variants in the experiment's order), whose figures are the
                  first variant's (its apiserver.csv and etcd.csv; every
                  variant's files are samples of the same cluster-wide
                  counters, taken by its own sampler). The figures computed
                  from the other variants' files are printed beside them.
  after-load      summary.json start.mode "after-load": Ready/s counts from the
                  controller's start (convergence and the window minus
                  start.controller_started_s)
  controller CPU  delta cpu_seconds; peak RSS the largest rss_bytes; but
                  summary.json's controller_os cpu_s / peak_rss_bytes where
                  present (read from /proc by the harness, which records each
                  only where the metrics page did not give it)
  CPU/reconcile   controller CPU / delta reconcile_latency_count
  queue wait      delta queue_wait_s_sum / delta queue_wait_count
  first writes/s  (k - 1) / (last - first first_write_at) over the k objects
                  with a first_write_at

  requeues       delta reconcile_requeue_total (else summary.json
                  reconciles.requeue, else total - success - error); the cell
                  is "ok / error / requeue", and per run ok + error + requeue
                  must equal summary.json reconciles.total
  machine busy    summary.json machine.busy: the run is flagged, kept out of
                  medians and of repeat pairs

Ratios and verdicts (margin M: manifest.json margin, else 0.05, or --margin):
  paired          two groups of one results directory: per repeat k that both
                  groups' unflagged runs have, B_k / A_k; the ratio is their
                  geometric mean, the interval exp(mean(log) +- t * sd / sqrt(K))
                  with t the 97.5 % Student t quantile for K - 1 degrees of
                  freedom (t_quantile: bisection on the integrated density);
                  one pair: no interval. A pair with a value <= 0 makes it
                  unpaired: median(B) / median(A) with the bootstrap interval
                  ratio_interval knows (<= 3 runs a side)
  verdict         "<B> higher" when lo > 1 + M, "<B> lower" when hi < 1 - M,
                  with " (better)" / " (worse)" where the figure has a better
                  side; "equivalent within +-M" when [lo, hi] is inside
                  [1 - M, 1 + M]; else "undecided (+-D %)", D = sqrt(hi/lo) - 1
                  (one decimal below 10 %); "undecided (one pair)" without one
  answers         the "Questions, answered" lines "N=<n> <figure>: <b> / <a> =
                  <cell> — <verdict>, <paired over K repeats | unpaired (x and
                  y runs)>": every rust-X / go-X pair (b = rust-X, a = go-X;
                  with work_ms = 0 on Ready/s, peak RSS, CPU per reconcile and,
                  at N >= 100 000 after the load, the initial list; else
                  Ready/s), every manifest goal's pair on its figure not
                  asked already (better side the bound's), and every manifest
                  [[compare]] pair per scale (COMPARE_SIDES); counterpart
                  questions are not recomputed

Machine noise (A/A), the section checked whole when the report has it, and
its absence when there is no A/A pair:
  A/A pair        each manifest [[compare]] pair (a != b; once, however many
                  figures it is asked on) at each scale where both variants
                  ran and every run of both recorded the same impl, preset,
                  flags, settings, start mode, workload, Kubernetes version,
                  cluster grants and controller_metrics in summary.json
  per figure      Ready/s, T50, T100, reconcile p50 / p99, mean reconcile,
                  controller CPU, CPU per reconcile, peak RSS: a row when a
                  repeat pair (as for the answers: unflagged runs, both
                  measured) has it; K pairs; s = the sample standard deviation
                  of ln(B_k / A_k), shown as e^s - 1; B/A and its paired
                  interval as above; half-width now exp(t * s / sqrt(K)) - 1;
                  at K = 3, 6, 10 the same with that K's t, "✓" when <= M;
                  "—" with one pair (no s) or a value <= 0 (no log)
  sentence        the smallest K in 2..10 whose Ready/s half-width is <= M:
                  "At this spread, deciding a <M> difference in Ready/s takes
                  <K> paired repeats." ("more than 10" when none), then the
                  power sentence: the fewest repeats (1..10) at which a true
                  10 % change clears the margin with 80 % probability
                  (power_sentence says how), or the change 10 repeats reach
  position        "Running second: …": Ready/s of each repeat's later run (by
                  time zero) over its earlier one, whichever variant that was,
                  with the paired interval as for B/A, and how often B ran
                  second
  t precision     a cell that rounds the other way with t moved by 2e-4
                  relatively (a report's t may come from a three-decimal
                  table) is a rounding tie: accepted and listed as a note

The goals section, only when manifest.json declares goals (and then
required), both tables checked row by row, every row expected present once
and no other:
  pairs           per manifest goal, every pair <b>-X / <a>-X of a scale at
                  least its from_scale: the B and A cells, B/A paired
                  as above, and the verdict "<verdict>; target met | not met |
                  undecided": met when the whole interval is on the target's
                  side, not met when wholly on the other, undecided otherwise
                  and without an interval
  probe           manifest.json probe rows; tagged with scale and repeat (a
                  probe before each repeat), a run is divided by its own
                  repeat's row; untagged (older), by the one row
  overhead        status-patch overhead against the probe: rust- groups
                  whose runs all started after the load, at 1 worker writing
                  status by patch: per repeat, the geometric mean of its
                  runs' first writes/s against the repeat's writers=1
                  status_patch_per_s, paired over the repeats as above;
                  "target met | not met | undecided" at >= 0.85; the figures
                  cell shows the rates' and the probes' median [min-max]; the
                  context row the same against watched_status_patch_per_s
  loader          the loader against the probe: every after-load run with no
                  load errors: summary.json load.rate_per_s against its
                  probe's create_per_s at the experiment's concurrency (its
                  TOML, default 16), paired by repeat as the overhead row
  pod start       pods.csv, per pod: created_s -> scheduled_s, running_s,
                  ready_s (an empty stage = censored, +inf); p50/p90/p99 as
                  time-to-Ready, max the largest (+inf: "> window"). Per
                  owner named in objects.csv: its created_at minus
                  summary.json load_started_at, to the latest ready_s of its
                  pods (+inf when one has none). Cells: the median [min-max]
                  of the used runs' own values; counts "n" and "k (m pods)"
  plane processes with plane.csv: etcd and kube-apiserver CPU = the delta
                  of etcd.csv / apiserver.csv cpu_seconds, peak RSS = their
                  largest rss_bytes; kube-controller-manager, kube-scheduler
                  and kwok the same over plane.csv's <name>_cpu_seconds and
                  <name>_rss_bytes (name with "_" for "-"); median [min-max]
  harness         at N >= 100 000: the manifest's harness_peak_rss_bytes
                  against 300 MiB, and the largest after_load_core_fraction
                  of summary.json harness_cpu against 0.05 of a core
"""
import csv
import datetime
import functools
import glob
import json
import math
import os
import re
import sys
import tomllib

INF = float("inf")
# The Rust controller's tunables: printed only when set, shown as "key value".
TUNABLES = ("list_page_size", "watch_bookmarks", "watch_timeout_s")


def ts(s):
    return datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()


def num(s):
    return None if s is None or s == "" else float(s)


# ---------------------------------------------------------------- quantiles


def histogram_quantile(q, buckets):
    """PromQL's histogram_quantile over (upper bound, cumulative count)."""
    b = sorted(buckets)
    if not b or b[-1][0] != INF:
        return math.nan
    merged = []
    for le, c in b:  # same bound twice: add the counts
        if merged and merged[-1][0] == le:
            merged[-1][1] += c
        else:
            merged.append([le, c])
    top = -INF
    for x in merged:  # force cumulative counts monotonic
        top = max(top, x[1])
        x[1] = top
    if len(merged) < 2:
        return math.nan
    total = merged[-1][1]
    if total == 0:
        return math.nan
    rank = q * total
    i = next(k for k, x in enumerate(merged) if x[1] >= rank)
    if i == len(merged) - 1:
        return merged[-2][0]
    if i == 0 and merged[0][0] <= 0:
        return merged[0][0]
    lo, below = (merged[i - 1][0], merged[i - 1][1]) if i > 0 else (0.0, 0.0)
    return lo + (merged[i][0] - lo) * (rank - below) / (merged[i][1] - below)


def percentile(samples, q):
    """Linear interpolation between closest ranks (type 7); +inf is censored."""
    if not samples:
        return None
    s = sorted(samples)
    h = (len(s) - 1) * q
    lo = math.floor(h)
    hi = min(lo + 1, len(s) - 1)
    frac = h - lo
    if s[lo] == INF or (frac > 0 and s[hi] == INF):
        return INF
    return s[lo] + frac * (s[hi] - s[lo])


# ---------------------------------------------------------------- one run


class Csv:
    def __init__(self, path):
        with open(path, newline="") as f:
            self.rows = list(csv.DictReader(f))
        self.good = [r for r in self.rows if r.get("scrape_ok") == "1"]
        self.failed = len(self.rows) - len(self.good)

    def delta(self, col):
        if not self.good:
            return None
        a, b = num(self.good[0].get(col)), num(self.good[-1].get(col))
        return None if a is None or b is None else b - a

    def bucket_delta(self, prefix):
        if not self.good:
            return []
        a, b = self.good[0], self.good[-1]
        out = []
        for col in a:
            if col.startswith(prefix + "_le_"):
                le = col[len(prefix) + 4:]
                le = INF if le == "+Inf" else float(le)
                out.append((le, (num(b[col]) or 0.0) - (num(a[col]) or 0.0)))
        return out


def writes_per_s(m):
    col = "rest_writes_total"
    v = [float(r[col]) for r in m.good]
    t = [ts(r["timestamp"]) for r in m.good]
    base, last = v[0], v[-1]
    if last - base <= 0:
        return 0.0
    k = next(i for i, x in enumerate(v) if x > base)
    j = next(i for i, x in enumerate(v) if x == last)
    return (last - base) / (t[j] - t[max(k - 1, 0)])


def run_figures(run_dir):
    scale, variant, rep = re.search(r"N(\d+)/([^/]+)/rep(\d+)$", run_dir).groups()
    n = int(scale)
    f = {"run": f"N{scale}/{variant}/rep{rep}", "scale": n, "variant": variant, "problems": []}

    with open(os.path.join(run_dir, "objects.csv"), newline="") as fh:
        reader = csv.DictReader(fh)
        objs = list(reader)
        has_first_write = "first_write_at" in (reader.fieldnames or [])
    created = [ts(o["created_at"]) for o in objs if o["created_at"]]
    ready = [ts(o["ready_at"]) for o in objs if o["ready_at"]]

    summary = None
    try:
        with open(os.path.join(run_dir, "summary.json")) as fh:
            summary = json.load(fh)
    except (OSError, ValueError) as e:
        f["problems"].append(f"summary.json: {e}")
    if summary:
        if summary["load"]["errors"]:
            f["problems"].append("loader errors")
        elif summary["load"]["created"] < summary["scale"] and not summary["incomplete"]:
            f["problems"].append("unfinished load")
        if summary["incomplete"]:
            f["problems"].append("incomplete")
        if (summary.get("machine") or {}).get("busy"):
            f["problems"].append("machine busy")
    t0 = max(created) - summary["load"]["seconds"]
    f["t0"] = t0
    f["schedule"] = summary.get("schedule")
    f["impl"] = summary.get("impl")
    f["settings"] = summary.get("settings")
    # What makes two variants one experiment under two names (the A/A
    # check): everything summary.json records about how the run was set up,
    # nothing it measured, not its name or namespace.
    f["setup"] = json.dumps([
        summary.get("impl"), summary.get("preset"), summary.get("flags"), summary.get("settings"),
        (summary.get("start") or {}).get("mode"), summary.get("workload"),
        summary.get("kubernetes_version"), summary.get("cluster_grants") or [],
        summary.get("controller_metrics", True),
    ], sort_keys=True)

    f["ready"] = len(ready)
    f["convergence"] = max(ready) - t0 if len(ready) >= n else None
    first_create = min(created)
    in_order = sorted(ready)
    for name, q in (("t50", 0.5), ("t90", 0.9), ("t100", 1.0)):
        k = max(1, math.ceil(q * n))
        f[name] = in_order[k - 1] - first_create if len(in_order) >= k else None
    ttr = [
        (ts(o["ready_at"]) - ts(o["created_at"])) if o["ready_at"] else INF
        for o in objs
        if o["created_at"]
    ]
    f["ttr_p50"] = percentile(ttr, 0.5)
    f["ttr_p99"] = percentile(ttr, 0.99)
    f["coverage"] = (
        sum(1 for o in objs if o.get("first_write_at")) if has_first_write else None
    )

    m = Csv(os.path.join(run_dir, f"metrics-{variant}.csv"))
    if m.failed:
        f["problems"].append(f"failed scrapes: controller {m.failed}")
    f["ok"] = m.delta("reconcile_success_total")
    f["errors"] = m.delta("reconcile_error_total")
    # Requeues: the CSV counter; without the column summary.json's
    # reconciles.requeue, else total - success - error.
    rec = summary.get("reconciles") or {}
    f["requeue"] = m.delta("reconcile_requeue_total")
    if f["requeue"] is None:
        f["requeue"] = rec.get("requeue")
    if f["requeue"] is None and None not in (rec.get("total"), rec.get("success"), rec.get("error")):
        f["requeue"] = rec["total"] - rec["success"] - rec["error"]
    f["reconciles_total"] = rec.get("total")
    f["retries"] = m.delta("queue_retries_total")
    cnt = m.delta("reconcile_latency_count")
    s = m.delta("reconcile_latency_sum")
    f["mean"] = s / cnt if s is not None and cnt else None
    b = m.bucket_delta("reconcile_latency")
    for name, q in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99)):
        f[name] = histogram_quantile(q, b)
    f["conflicts"] = m.delta("rest_409_total")
    f["throttle"] = m.delta("throttle_wait_s_sum")
    f["cpu"] = m.delta("cpu_seconds")
    rss = [float(r["rss_bytes"]) for r in m.good if r.get("rss_bytes")]
    f["peak_rss"] = max(rss) if rss else None
    # Where the page did not give them, the harness's /proc reading.
    os_figures = summary.get("controller_os") or {}
    if os_figures.get("cpu_s") is not None:
        f["cpu"] = os_figures["cpu_s"]
    if os_figures.get("peak_rss_bytes") is not None:
        f["peak_rss"] = os_figures["peak_rss_bytes"]
    lists = [float(r["initial_list_s"]) for r in m.good if r.get("initial_list_s")]
    f["initial_list"] = max(lists) if lists and max(lists) > 0 else None
    # start = "after-load": Ready/s counts from the controller's start.
    start = summary.get("start") or {}
    f["start_mode"] = start.get("mode")
    started = start["controller_started_s"] if start.get("mode") == "after-load" else 0.0
    window = ts(m.good[-1]["timestamp"]) - t0 - started
    conv = None if f["convergence"] is None else f["convergence"] - started
    f["ready_per_s"] = n / conv if conv and conv > 0 else (f["ready"] / window if window > 0 else None)
    f["cpu_per_reconcile"] = f["cpu"] / cnt if f["cpu"] is not None and cnt else None
    qs, qc = m.delta("queue_wait_s_sum"), m.delta("queue_wait_count")
    f["queue_wait"] = qs / qc if qs is not None and qc else None
    fw = sorted(ts(o["first_write_at"]) for o in objs if o.get("first_write_at"))
    f["first_writes_per_s"] = (len(fw) - 1) / (fw[-1] - fw[0]) if len(fw) >= 2 and fw[-1] > fw[0] else None
    f["load"] = summary["load"]
    f["harness_core_fraction"] = (summary.get("harness_cpu") or {}).get("after_load_core_fraction")
    f["writes_per_s"] = writes_per_s(m)

    a = Csv(os.path.join(run_dir, "apiserver.csv"))
    e = Csv(os.path.join(run_dir, "etcd.csv"))
    for name, c in (("apiserver", a), ("etcd", e)):
        if c.failed:
            f["problems"].append(f"failed scrapes: {name} {c.failed}")
    f["api_p99"] = histogram_quantile(0.99, a.bucket_delta("widget_update_latency"))
    f["api_create_p99"] = histogram_quantile(0.99, a.bucket_delta("widget_create_latency"))
    f["fsync_p99"] = histogram_quantile(0.99, e.bucket_delta("wal_fsync"))
    f["pods"] = pod_figures(run_dir, summary, objs)
    f["plane"] = plane_figures(run_dir, a, e)
    for k, v in list(f.items()):
        if isinstance(v, float) and math.isnan(v):
            f[k] = None
    return f


def plane_figures(run_dir, apiserver, etcd):
    """{process: (CPU s, peak RSS bytes)} with plane.csv; None without."""
    path = os.path.join(run_dir, "plane.csv")
    if not os.path.exists(path):
        return None
    p = Csv(path)

    def peak(c, col):
        v = [num(r.get(col)) for r in c.good if num(r.get(col)) is not None]
        return max(v) if v else None

    out = {"etcd": (etcd.delta("cpu_seconds"), peak(etcd, "rss_bytes")),
           "kube-apiserver": (apiserver.delta("cpu_seconds"), peak(apiserver, "rss_bytes"))}
    for name in ("kube-controller-manager", "kube-scheduler", "kwok"):
        col = name.replace("-", "_")
        cpu, rss = p.delta(col + "_cpu_seconds"), peak(p, col + "_rss_bytes")
        if cpu is not None or rss is not None:
            out[name] = (cpu, rss)
    return out


POD_STAGES = [("created → scheduled", "scheduled_s"), ("created → running", "running_s"),
              ("created → ready", "ready_s")]
POD_OWNERS = "object created → all its pods ready"


def pod_figures(run_dir, summary, objs):
    """{row name: (count cell, samples)} from pods.csv; None without pods."""
    path = os.path.join(run_dir, "pods.csv")
    if not os.path.exists(path):
        return None
    with open(path, newline="") as fh:
        pods = [p for p in csv.DictReader(fh) if p["created_s"]]
    if not pods:
        return None
    out = {}
    for name, col in POD_STAGES:
        v = [float(p[col]) - float(p["created_s"]) if p[col] else INF for p in pods]
        out[name] = (str(len(v)), v)
    start = summary.get("load_started_at")
    if start:
        created = {o["name"]: ts(o["created_at"]) - ts(start) for o in objs if o["created_at"]}
        last = {}
        for p in pods:
            if p["owner"] in created:
                ready = float(p["ready_s"]) if p["ready_s"] else INF
                t, n = last.get(p["owner"], (-INF, 0))
                last[p["owner"]] = (max(t, ready), n + 1)
        if last:
            v = [t - created[o] for o, (t, _) in last.items()]
            out[POD_OWNERS] = (f"{len(v)} ({sum(n for _, n in last.values())} pods)", v)
    return out


def pod_cells(runs, row):
    """The count and p50/p90/p99/max cells of one Pod start row."""
    per = [r["pods"][row] for r in used(runs) if r["pods"] and row in r["pods"]]
    if not per:
        return None
    counts = []
    for c, _ in per:
        if not counts or counts[-1] != c:
            counts.append(c)
    cells = [", ".join(counts)]
    for q in (0.5, 0.9, 0.99, None):
        vals = [max(v) if q is None else percentile(v, q) for _, v in per]
        cells.append(fmt_stat(vals, fmt_duration))
    return cells


def load(results_dir):
    with open(os.path.join(results_dir, "manifest.json")) as fh:
        manifest = json.load(fh)
    order = []
    for r in manifest["runs"]:
        if r["variant"] not in order:
            order.append(r["variant"])
    dirs = glob.glob(os.path.join(results_dir, "N*", "*", "rep*"))
    runs = [run_figures(d) for d in dirs]
    rank = lambda v: order.index(v) if v in order else len(order)  # noqa: E731
    runs.sort(key=lambda r: (r["scale"], rank(r["variant"]), r["variant"], int(r["run"].rsplit("rep", 1)[1])))
    return runs


# ---------------------------------------------------------------- formatting as the report does


def fmt_count(v):
    return f"{v:.0f}" if v == int(v) else f"{v:.1f}"


def fmt_duration(v):
    if v == INF:
        return "> window"
    if abs(v) >= 1:
        return f"{v:.2f} s"
    ms = v * 1000
    return f"{ms:.1f} ms" if abs(ms) >= 10 else f"{ms:.2f} ms"


def fmt_rate(v):
    return f"{v:.1f}/s"


def fmt_mib(v):
    return f"{v / (1024 * 1024):.1f} MiB"


def fmt_seconds(v):
    return f"{v:.2f} s"


def fmt_stat(values, fmt):
    """One value as is; several as "median [min–max]" with a shared unit once."""
    v = [x for x in values if x is not None]
    if not v:
        return "—"
    med, lo, hi = percentile(v, 0.5), min(v), max(v)
    if len(v) == 1 or lo == hi:
        return fmt(med)
    m, a, b = fmt(med), fmt(lo), fmt(hi)

    def unit(x):
        i = max((k + 1 for k, c in enumerate(x) if c.isdigit()), default=0)
        return x[i:]

    u = unit(m)
    if u and unit(a) == u and unit(b) == u:
        return f"{m[: len(m) - len(u)]} [{a[: len(a) - len(u)]}–{b[: len(b) - len(u)]}]{u}"
    return f"{m} [{a}–{b}]"


GROUP_COLUMNS = {
    "retries": ("retries", fmt_count),
    "mean reconcile": ("mean", fmt_duration),
    "reconcile p50": ("p50", fmt_duration),
    "reconcile p90": ("p90", fmt_duration),
    "reconcile p99": ("p99", fmt_duration),
    "time-to-Ready p50": ("ttr_p50", fmt_duration),
    "time-to-Ready p99": ("ttr_p99", fmt_duration),
    "Ready/s": ("ready_per_s", fmt_rate),
    "T50": ("t50", fmt_duration),
    "T90": ("t90", fmt_duration),
    "T100": ("t100", fmt_duration),
    "controller writes/s (own client)": ("writes_per_s", fmt_rate),
    "409s": ("conflicts", fmt_count),
    "client throttle wait": ("throttle", fmt_duration),
    "controller CPU": ("cpu", fmt_seconds),
    "peak RSS": ("peak_rss", fmt_mib),
    "apiserver widget update p99 (PUT/PATCH/APPLY)": ("api_p99", fmt_duration),
    "apiserver widget create p99 (loader's POST)": ("api_create_p99", fmt_duration),
    "etcd WAL fsync p99": ("fsync_p99", fmt_duration),
    "CPU per reconcile": ("cpu_per_reconcile", fmt_duration),
    "queue wait (mean)": ("queue_wait", fmt_duration),
}


def group_cells(runs):
    """The report's cell for each column this script checks, for one group."""
    used = [r for r in runs if not r["problems"]] or runs
    n = used[0]["scale"]
    col = lambda k: [r[k] for r in used]  # noqa: E731
    cells = {k: fmt_stat(col(key), fmt) for k, (key, fmt) in GROUP_COLUMNS.items()}
    cells["start"] = next((r["start_mode"] for r in runs if r["start_mode"]), "—")
    cells["Ready/N at window end"] = f"{fmt_stat(col('ready'), fmt_count)}/{n}"
    cov = fmt_stat(col("coverage"), fmt_count)
    cells["objects written (coverage)"] = "—" if cov == "—" else f"{cov}/{n}"
    cells["reconciles ok / error / requeue"] = (
        f"{fmt_stat(col('ok'), fmt_count)} / {fmt_stat(col('errors'), fmt_count)} / "
        f"{fmt_stat(col('requeue'), fmt_count)}"
    )
    conv = [r["convergence"] for r in used if r["convergence"] is not None]
    left = [r["scale"] - r["ready"] for r in used if r["convergence"] is None]
    if not left:
        cells["convergence (Ready==N)"] = fmt_stat(conv, fmt_duration)
    elif not conv:
        cells["convergence (Ready==N)"] = f"not converged: {fmt_stat(left, fmt_count)} left"
    else:
        cells["convergence (Ready==N)"] = (
            f"{fmt_stat(conv, fmt_duration)} ({len(conv)} of {len(used)} runs converged; "
            f"others {fmt_stat(left, fmt_count)} left)"
        )
    return cells


def run_cells(r):
    one = lambda v, fmt: "—" if v is None else fmt(v)  # noqa: E731
    return {
        "Ready/N": f"{fmt_count(r['ready'])}/{r['scale']}",
        "convergence": one(r["convergence"], fmt_duration) if r["convergence"] is not None else "not converged",
        "reconciles ok": one(r["ok"], fmt_count),
        "errors": one(r["errors"], fmt_count),
        "reconcile p99": one(r["p99"], fmt_duration),
        "Ready/s": one(r["ready_per_s"], fmt_rate),
        "writes/s": one(r["writes_per_s"], fmt_rate),
    }


# ---------------------------------------------------------------- performance goals

RUST_GO = (
    # (figure key, higher is better): a zero-work rust-X / go-X pair's questions
    ("ready_per_s", True),
    ("peak_rss", False),
    ("cpu_per_reconcile", False),
    ("initial_list", False),
)
SCALE_N = 100000
# The figures a [[goal]] may name that this script computes: label -> (key, format).
GOAL_FIGURES = {
    "ready/s": ("ready_per_s", fmt_rate), "peak rss": ("peak_rss", fmt_mib),
    "cpu per reconcile": ("cpu_per_reconcile", fmt_duration),
    "start → initial list": ("initial_list", fmt_duration),
}


def rust_go_asks(key, scale, rust_runs, go_runs):
    """Start-up is asked at N >= 100 000 on controllers started after the load."""
    if key != "initial_list":
        return True
    return int(scale) >= SCALE_N and all(r["start_mode"] == "after-load" for r in rust_runs + go_runs)


def used(runs):
    return [r for r in runs if not r["problems"]] or runs


def ratio_interval(go, rust):
    """The report's 95 % bootstrap interval of median(rust)/median(go), where
    it can be known without its random draws: with at most 3 runs a side, a
    resample's median is the side's minimum with probability >= 7/27 (n=3;
    1/4 for n=2), so the extreme ratio min(rust)/max(go) comes up in >= 6.7 %
    of the 2000 draws, far more than the 2.5 % tail: the percentiles are the
    extremes. None beyond 3 runs a side (not checked)."""
    if len(go) < 2 or len(rust) < 2:
        return "one sample"
    if len(go) > 3 or len(rust) > 3:
        return None
    return (min(rust) / max(go), max(rust) / min(go))


@functools.lru_cache(maxsize=None)
def t_quantile(p, df):
    """Student's t quantile, by bisection on the CDF, itself the integral of
    the density from 0 (Simpson's rule): no table shared with the report.
    One and two degrees of freedom have closed forms (their long tails
    would need far more steps): tan(pi (p - 1/2)) and (2p - 1) sqrt(2 / (1 - (2p - 1)^2))."""
    if df == 1:
        return math.tan(math.pi * (p - 0.5))
    if df == 2:
        a = 2 * p - 1
        return a * math.sqrt(2 / (1 - a * a))
    logc = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    pdf = lambda t: math.exp(logc - (df + 1) / 2 * math.log1p(t * t / df))  # noqa: E731

    def cdf(x, n=4000):
        h = x / n
        acc = pdf(0) + pdf(x) + sum((4 if k % 2 else 2) * pdf(k * h) for k in range(1, n))
        return 0.5 + acc * h / 3

    lo, hi = 0.0, 100.0
    for _ in range(50):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cdf(mid) < p else (lo, mid)
    return (lo + hi) / 2


def paired_ratio(pairs, tscale=1.0):
    """(geometric mean of b/a, (lo, hi) or None): the 95 % Student t interval
    on the log ratios, K - 1 degrees of freedom; None when a value is not
    positive (the log is undefined)."""
    if not pairs or any(a is None or b is None or a <= 0 or b <= 0 for a, b in pairs):
        return None
    logs = [math.log(b / a) for a, b in pairs]
    k = len(logs)
    mean = sum(logs) / k
    if k < 2:
        return math.exp(mean), None
    sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / (k - 1))
    half = t_quantile(0.975, k - 1) * tscale * sd / math.sqrt(k)
    return math.exp(mean), (math.exp(mean - half), math.exp(mean + half))


def pct(fraction):
    p = fraction * 100
    return f"{p:.0f} %" if abs(p - round(p)) < 1e-9 else f"{p:.1f} %"


def verdict_words(iv, margin, name, higher_is_better, paired):
    """The four verdicts: beyond the margin on one side (the whole interval),
    within it (equivalent), else undecided with the interval's half-width on
    the log scale, sqrt(hi/lo) - 1."""
    if iv is None:
        return "undecided (one pair)" if paired else "undecided (one sample)"
    lo, hi = iv
    better = lambda up: "" if higher_is_better is None else (  # noqa: E731
        " (better)" if up == higher_is_better else " (worse)")
    if lo > 1 + margin:
        return f"{name} higher" + better(True)
    if hi < 1 - margin:
        return f"{name} lower" + better(False)
    if lo >= 1 - margin and hi <= 1 + margin:
        return f"equivalent within ±{pct(margin)}"
    if lo <= 0:
        return "undecided (interval unbounded)"
    d = (math.sqrt(hi / lo) - 1) * 100
    return f"undecided (±{d:.1f} %)" if d < 10 else f"undecided (±{d:.0f} %)"


def target_words(iv, at_least, target):
    if iv is None:
        return "target undecided"
    meets = (lambda v: v >= target) if at_least else (lambda v: v <= target)
    worst, best = (iv[0], iv[1]) if at_least else (iv[1], iv[0])
    return "target met" if meets(worst) else ("target not met" if not meets(best) else "target undecided")


def repeat_of(r):
    return int(r["run"].rsplit("rep", 1)[1])


def interleaved(a_runs, b_runs, key):
    """B/A of two groups of one results directory: (ratio, interval, basis,
    paired), paired by repeat over the runs the medians use; unpaired (ratio
    of medians, the bootstrap's interval where ratio_interval knows it) when
    a zero leaves a log ratio undefined. None: not measured; "unknown": an
    unpaired interval this script cannot know without the random draws."""
    ua, ub = used(a_runs), used(b_runs)
    bs = {repeat_of(r): r for r in ub}
    pairs = [(r[key], bs[repeat_of(r)][key]) for r in ua
             if repeat_of(r) in bs and r[key] is not None and bs[repeat_of(r)][key] is not None]
    p = paired_ratio(pairs)
    if p is not None:
        k = len(pairs)
        return p[0], p[1], f"paired over {k} repeat{'' if k == 1 else 's'}", True
    av = [r[key] for r in ua if r[key] is not None]
    bv = [r[key] for r in ub if r[key] is not None]
    if not av or not bv or percentile(av, 0.5) == 0:
        return None
    iv = ratio_interval(av, bv)
    if iv == "one sample":
        iv = None
    elif iv is None:
        return "unknown"
    return percentile(bv, 0.5) / percentile(av, 0.5), iv, f"unpaired ({len(av)} and {len(bv)} runs)", False


def ratio_cell(ratio, iv, paired):
    if iv is None:
        return f"{ratio:.2f} (one pair)" if paired else f"{ratio:.2f} (single sample)"
    return f"{ratio:.2f} [{iv[0]:.2f}–{iv[1]:.2f}]"


def rust_go_pairs(groups):
    """[(scale, rust variant, go variant)]: every rust-X / go-X of a scale."""
    out = []
    for (scale, variant) in groups:
        if not variant.startswith("rust-"):
            continue
        go = "go-" + variant[len("rust-"):]
        if (scale, go) in groups:
            out.append((scale, variant, go))
    return out


def goal_pairs(groups):
    """The rust-X / go-X pairs whose runs all recorded work_ms = 0."""
    zero = lambda rs: all((r["settings"] or {}).get("work_ms") == 0 for r in rs)  # noqa: E731
    return [(s, r, g) for s, r, g in rust_go_pairs(groups)
            if zero(groups[(s, r)]) and zero(groups[(s, g)])]


def declared_pairs(groups, goal):
    """(scale, "<b>-X", "<a>-X") for every pair of a scale a manifest goal names."""
    out = []
    for scale, name in groups:
        rest = name[len(goal["b"]) + 1:] if name.startswith(goal["b"] + "-") else None
        if rest is None or int(scale) < int(goal.get("from_scale") or 0):
            continue
        if (scale, f"{goal['a']}-{rest}") in groups:
            out.append((scale, name, f"{goal['a']}-{rest}"))
    return out


def pair_rows(groups, margin, manifest):
    """{(N, "b-X / a-X", figure): cells} for every pair of every goal the
    manifest declares (none: no rows): B/A paired over the repeats, the
    verdict against the margin and the bound's."""
    rows = {}
    for goal in manifest.get("goals") or []:
        if goal["figure"].lower() not in GOAL_FIGURES:
            continue
        key, fmt = GOAL_FIGURES[goal["figure"].lower()]
        at_least, bound = goal["at_least"], goal["bound"]
        for scale, b_name, a_name in declared_pairs(groups, goal):
            b, a = groups[(scale, b_name)], groups[(scale, a_name)]
            bv = [r[key] for r in used(b) if r[key] is not None]
            av = [r[key] for r in used(a) if r[key] is not None]
            got = interleaved(a, b, key)
            if got is None or got == "unknown":
                cell = v = None
            else:
                ratio, iv, _, paired = got
                cell = ratio_cell(ratio, iv, paired)
                v = (verdict_words(iv, margin, goal["b"], at_least, paired) + "; "
                     + target_words(iv, at_least, bound))
            bound_s = f"{bound:g}"  # as Rust prints an f64: 1.1, 0.5, 1
            rows[(scale, f"{b_name} / {a_name}", goal["figure"])] = {
                "target": f"{'≥' if at_least else '≤'} {bound_s}",
                "B": fmt_stat(bv, fmt),
                "A": fmt_stat(av, fmt),
                "B/A [95 %]": cell,
                "verdict": v,
            }
    return rows


# The figures a [[compare]] question may name that this script computes
# (label or column heading, any case), with the label the report prints.
COMPARE_FIGURES = {
    "ready/s": ("Ready/s", "ready_per_s"), "peak rss": ("peak RSS", "peak_rss"),
    "cpu per reconcile": ("CPU per reconcile", "cpu_per_reconcile"), "t100": ("T100", "t100"),
    "reconcile p99": ("reconcile p99", "p99"), "mean reconcile": ("mean reconcile", "mean"),
    "writes/s": ("writes/s", "writes_per_s"),
    "controller writes/s (own client)": ("writes/s", "writes_per_s"),
    "cpu": ("CPU", "cpu"), "controller cpu": ("CPU", "cpu"),
}
# Which side is better, per label the report prints: a [[compare]] answer's
# verdict says "(better)" / "(worse)" on these; writes/s, CPU and mean
# reconcile have no side (a build that converges sooner raises writes/s).
COMPARE_SIDES = {"Ready/s": True, "peak RSS": False, "CPU per reconcile": False, "T100": False,
                 "reconcile p99": False}
GOAL_LABELS = {"ready_per_s": "Ready/s", "peak_rss": "peak RSS", "cpu_per_reconcile": "CPU per reconcile",
               "initial_list": "start → initial list"}


def answer_cells(a, b, key, margin, name, higher_is_better):
    got = interleaved(a, b, key)
    if got is None:
        return (None, "undecided: not measured on both sides")
    if got == "unknown":
        return None
    ratio, iv, basis, paired = got
    return (ratio_cell(ratio, iv, paired),
            f"{verdict_words(iv, margin, name, higher_is_better, paired)}, {basis}")


def expected_answers(groups, manifest, margin):
    """{(N, figure, b, a): (cell, words) or None} of the report's opening
    answers this script recomputes: every goal pair on its three figures,
    and every [[compare]] pair of the manifest (None: a figure it does not
    compute, or an interval it cannot know)."""
    out = {}
    zero = goal_pairs(groups)
    for scale, rust, go in rust_go_pairs(groups):
        if (scale, rust, go) not in zero:
            # Work per reconcile: the throughput question only.
            out[(scale, "Ready/s", rust, go)] = answer_cells(
                groups[(scale, go)], groups[(scale, rust)], "ready_per_s", margin, rust, True)
    for scale, rust, go in zero:
        for key, higher in RUST_GO:
            if not rust_go_asks(key, scale, groups[(scale, rust)], groups[(scale, go)]):
                continue
            out[(scale, GOAL_LABELS[key], rust, go)] = answer_cells(
                groups[(scale, go)], groups[(scale, rust)], key, margin, rust, higher)
    # A declared goal asks its figure of its pairs where no question above does.
    for goal in manifest.get("goals") or []:
        if goal["figure"].lower() not in GOAL_FIGURES:
            continue
        key, _ = GOAL_FIGURES[goal["figure"].lower()]
        for scale, b_name, a_name in declared_pairs(groups, goal):
            k = (scale, GOAL_LABELS[key], b_name, a_name)
            if k not in out:
                out[k] = answer_cells(groups[(scale, a_name)], groups[(scale, b_name)], key,
                                      margin, b_name, goal["at_least"])
    scales = sorted({k[0] for k in groups}, key=int)
    for q in manifest.get("compare") or []:
        fig = COMPARE_FIGURES.get(q["figure"].strip().lower())
        label = fig[0] if fig else q["figure"]
        for scale in scales:
            a, b = groups.get((scale, q["a"])), groups.get((scale, q["b"]))
            key = (scale, label, q["b"], q["a"])
            if a is None or b is None:
                missing = " or ".join(v for v, g in ((q["b"], b), (q["a"], a)) if g is None)
                out[key] = (None, f"undecided: no runs of {missing} at this scale")
            else:
                out[key] = (answer_cells(a, b, fig[1], margin, q["b"], COMPARE_SIDES.get(label))
                            if fig else None)
    return out


ANSWER = re.compile(r"^- N=(\d+) (.+): (\S+) / (\S+?)(?: = (.+?))? — (.+)$")
NOT_CHECKED = []


def check_answers(report_md, groups, manifest, margin, compare, failures):
    """Every answer line of "Questions, answered" against expected_answers:
    each expected line present once with its cells, no unexpected one
    (counterpart questions, which this script does not recompute, are
    listed as not checked when the report has that section)."""
    text = open(report_md, encoding="utf-8").read()
    want = expected_answers(groups, manifest, margin)
    parts = text.split("## Questions, answered", 1)
    if len(parts) == 1:
        if want:
            failures.append(f"no \"Questions, answered\" section, but {len(want)} questions")
        return
    body = parts[1].split("\n## ", 1)[0]
    counterparts = "## Presets against their counterparts" in text
    seen = set()
    for line in body.splitlines():
        m = ANSWER.match(line)
        if not m:
            continue
        key = (m.group(1), m.group(2), m.group(3), m.group(4))
        if key in seen:
            failures.append(f"answer {key} twice")
        seen.add(key)
        if key not in want:
            if counterparts:
                NOT_CHECKED.append(f"answer {key} (a counterpart question: not recomputed here)")
            else:
                failures.append(f"answer {key} is not expected")
            continue
        if want[key] is None:
            NOT_CHECKED.append(f"answer {key} (a figure or interval this script does not compute)")
            continue
        cell, words = want[key]
        if cell is not None:
            compare(f"answer {key} ratio", cell, m.group(5) or "—")
        compare(f"answer {key} verdict", words, m.group(6))
    for key in want:
        if key not in seen:
            failures.append(f"answer {key} missing from the report")


OVERHEAD_RATIO = "status patches/s at 1 worker ÷ probe's 1-writer patch rate"
OVERHEAD = "status-patch overhead against the probe: " + OVERHEAD_RATIO
CONTEXT = "context: " + OVERHEAD_RATIO + " with one watch open"


def probe_rows(runs, groups, manifest):
    """{(N, variant, goal): cells} of the probe table: the status-patch
    overhead (and its context row against the probe's pass with a watch open)
    for each rust- group at 1 worker writing status by patch, from each run's
    first writes/s; the loader over every after-load run with an error-free
    load."""
    rows_of = manifest.get("probe") or []
    tagged = any(p.get("repeat") is not None for p in rows_of)

    def probe_for(r, writers, key):
        """The probe value of the run's own repeat (tagged probes), else the one probe."""
        for p in rows_of:
            if p["writers"] == writers and (not tagged or (p.get("scale"), p.get("repeat")) ==
                                            (r["scale"], int(r["run"].rsplit("rep", 1)[1]))):
                v = p.get(key)
                return v if v and v > 0 else None
        return None

    def by_repeat(rs, value, writers, key):
        """(pairs, probes seen, runs used): per (scale, repeat), the repeat's
        probe and the geometric mean of its runs' values; the runs of one
        repeat share one probe, so the repeat is the unit."""
        groups, seen, n = {}, [], 0
        for r in rs:
            p = probe_for(r, writers, key)
            v = value(r)
            if p is None or v is None or v <= 0:
                continue
            groups.setdefault((r["scale"], repeat_of(r)), (p, []))[1].append(v)
            seen += [p] if p not in seen else []
            n += 1
        pairs = [(p, math.exp(sum(math.log(v) for v in vs) / len(vs))) for p, vs in groups.values()]
        return pairs, seen, n

    def cells(pairs, target):
        """The ratio cell (with its rounding ties: t moved by T_PRECISION)
        and the target's words."""
        ratio, iv = paired_ratio(pairs)
        ties = tuple(ratio_cell(*paired_ratio(pairs, 1 + x), True) for x in (T_PRECISION, -T_PRECISION))
        return (ratio_cell(ratio, iv, True),) + ties, target_words(iv, True, target)

    rows = {}
    for (scale, variant), rs in groups.items():
        if not variant.startswith("rust-"):
            continue
        if not all(r["start_mode"] == "after-load" and (r["settings"] or {}).get("workers") == 1
                   and r["settings"].get("status_write") == "patch" for r in rs):
            continue
        fw = [r["first_writes_per_s"] for r in used(rs) if r["first_writes_per_s"] is not None]
        for goal, key, target in ((OVERHEAD, "status_patch_per_s", 0.85),
                                  (CONTEXT, "watched_status_patch_per_s", None)):
            pairs, seen, _ = by_repeat(used(rs), lambda r: r["first_writes_per_s"], 1, key)
            if not pairs:
                continue
            cell, words = cells(pairs, target or 0.0)
            rows[(scale, variant, goal)] = {
                "target": "—" if target is None else f"≥ {target}",
                "figures": f"{fmt_stat(fw, fmt_rate)} ÷ {fmt_stat(seen, fmt_rate)}",
                "ratio": cell,
                "verdict": "—" if target is None else words,
            }
    conc = tomllib.loads(manifest["experiment_text"]).get("concurrency", 16)
    # Flagged runs stay out, as from every pair (all of them when none is clean).
    alone_runs = used([r for r in runs if r["start_mode"] == "after-load"
                       and r["load"]["errors"] == 0 and r["load"]["rate_per_s"] > 0])
    pairs, seen, n = by_repeat(alone_runs, lambda r: r["load"]["rate_per_s"], conc, "create_per_s")
    if pairs:
        cell, words = cells(pairs, 0.95)
        rows[("all", f"loader alone ({n} after-load runs)",
              f"loader against the probe: creates/s ÷ probe's create rate at {conc} writers")] = {
            "target": "≥ 0.95",
            "figures": f"{fmt_stat(seen, fmt_rate)} probe",
            "ratio": cell,
            "verdict": words,
        }
    # The harness at N >= 100 000: its peak RSS (the manifest's) and the
    # largest share of a core it used while watching after the load.
    big = [r for r in runs if r["scale"] >= SCALE_N]
    rss = manifest.get("harness_peak_rss_bytes")
    if big and rss is not None:
        mib = rss / 2**20
        rows[(str(max(r["scale"] for r in big)), "ctrlbench itself (manifest.json harness_peak_rss_bytes)",
              "Scale: the harness's peak RSS over the whole experiment")] = {
            "target": "≤ 300 MiB", "figures": f"{mib:.0f} MiB", "ratio": "—",
            "verdict": "met" if mib <= 300 else "not met"}
    shares = [(r["scale"], r["harness_core_fraction"]) for r in big if r["harness_core_fraction"] is not None]
    if shares:
        scale, worst = max(shares, key=lambda x: x[1])
        rows[(str(scale), f"ctrlbench itself, after the load ({len(shares)} runs)",
              "Scale: the harness's share of a core while it watches (summary.json harness_cpu)")] = {
            "target": "≤ 0.05 of a core", "figures": f"{worst:.3f} (the largest)", "ratio": "—",
            "verdict": "met" if worst <= 0.05 else "not met"}
    return rows


def check_goal_table(name, head, rows, want, compare, failures):
    """Every expected row present once with its cells; no other row."""
    got = set()
    for row in rows:
        key = tuple(row[:3])
        got.add(key)
        if key not in want:
            failures.append(f"{name}: report row {key} is not expected")
            continue
        for h, cell in zip(head[3:], row[3:]):
            w = want[key].get(h)
            if isinstance(w, tuple):
                # The exact cell first, then its rounding ties (accepted).
                w = cell if cell in w else w[0]
            if w is not None:
                compare(f"{name} {key} {h}", w, cell)
    for key in want:
        if key not in got:
            failures.append(f"{name}: no row {key}")


# ---------------------------------------------------------------- machine noise (A/A)

NOISE_HEADING = "## Machine noise (A/A)"
NOISE_HEAD = ["figure", "spread (e^s − 1)", "K", "B/A [95 %]", "half-width now",
              "at K = 3", "at K = 6", "at K = 10"]
NOISE_FIGURES = (
    ("Ready/s", "ready_per_s"), ("T50", "t50"), ("T100", "t100"), ("reconcile p50", "p50"),
    ("reconcile p99", "p99"), ("mean reconcile", "mean"), ("controller CPU", "cpu"),
    ("CPU per reconcile", "cpu_per_reconcile"), ("peak RSS", "peak_rss"),
)
NOISE_PAIR = re.compile(r"^### N=(\d+): (\S+) / (\S+)$")


def aa_pairs(groups, manifest):
    """[(scale, a, b)]: each [[compare]] pair (once, in the manifest's order)
    at each scale where both variants ran and every run of both recorded the
    same setup."""
    out, seen = [], []
    scales = sorted({k[0] for k in groups}, key=int)
    for q in manifest.get("compare") or []:
        if q["a"] == q["b"] or (q["a"], q["b"]) in seen:
            continue
        seen.append((q["a"], q["b"]))
        for scale in scales:
            a, b = groups.get((scale, q["a"])), groups.get((scale, q["b"]))
            if a and b and len({r["setup"] for r in a + b}) == 1:
                out.append((scale, q["a"], q["b"]))
    return out


# A report may take t from a printed table (three decimals: within 2e-4 of
# the exact quantile, relatively). A cell of the noise table that rounds
# the other way with t moved by that much sits on a rounding tie: accepted,
# and listed as a note.
T_PRECISION = 2e-4


def half_width(s, k, tscale=1.0):
    """The paired 95 % interval's half-width at k pairs of log spread s."""
    return math.exp(t_quantile(0.975, k - 1) * tscale * s / math.sqrt(k)) - 1


def pm(fraction):
    return f"±{fraction * 100:.1f} %"


def noise_rows(a_runs, b_runs, margin, tscale=1.0):
    """[[cells]] of one pair's table, one row per figure measured in a pair,
    and the Ready/s spread (None without one); t multiplied by tscale."""
    ua, ub = used(a_runs), used(b_runs)
    bs = {repeat_of(r): r for r in ub}
    rows, ready_s = [], None
    for label, key in NOISE_FIGURES:
        pairs = [(r[key], bs[repeat_of(r)][key]) for r in ua
                 if repeat_of(r) in bs and r[key] is not None and bs[repeat_of(r)][key] is not None]
        if not pairs:
            continue
        k = len(pairs)
        if any(x <= 0 or y <= 0 for x, y in pairs):
            rows.append([label, "—", str(k), "—", "—", "—", "—", "—"])
            continue
        logs = [math.log(y / x) for x, y in pairs]
        mean = sum(logs) / k
        if k < 2:
            rows.append([label, "—", "1", f"{math.exp(mean):.2f} (one pair)", "—", "—", "—", "—"])
            continue
        s = math.sqrt(sum((v - mean) ** 2 for v in logs) / (k - 1))
        if key == "ready_per_s":
            ready_s = s
        h = t_quantile(0.975, k - 1) * tscale * s / math.sqrt(k)
        cells = [label, f"{(math.exp(s) - 1) * 100:.1f} %", str(k),
                 f"{math.exp(mean):.2f} [{math.exp(mean - h):.2f}–{math.exp(mean + h):.2f}]",
                 pm(math.exp(h) - 1)]
        for n in (3, 6, 10):
            w = half_width(s, n, tscale)
            cells.append(pm(w) + (" ✓" if w <= margin else ""))
        rows.append(cells)
    return rows, ready_s


# Pocock's nominal two-sided level per look, 1 to 10 looks at an overall
# 5 % (Pocock 1977, Biometrika 64:191); beyond 10, 5 % / looks.
POCOCK_LEVELS = [0.05, 0.0294, 0.0221, 0.0182, 0.0158, 0.0142, 0.0130, 0.0120, 0.0112, 0.0106]


def per_look(looks):
    return POCOCK_LEVELS[looks - 1] if 1 <= looks <= 10 else 0.05 / looks


def normal_cdf(z):
    return 0.5 * (1 + math.erf(z / math.sqrt(2)))


def normal_quantile(p):
    lo, hi = -10.0, 10.0
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if normal_cdf(mid) < p else (lo, mid)
    return (lo + hi) / 2


def power_sentence(s, pairs, margin, looks):
    """The power the spread s (worth pairs - 1 degrees of freedom) gives a
    true 10 % change at 1 to 10 repeats K: the mean log ratio normal around
    ln 1.1 with standard error s / sqrt(K), against the interval's half-width
    t * s / sqrt(K) (t at the look's level, pairs - 1 + K - 1 degrees of
    freedom) past ln(1 + M): Phi((ln 1.1 - ln(1 + M) - half) / se) >= 0.8."""
    def half_se(k):
        se = s / math.sqrt(k)
        t = t_quantile(1 - per_look(looks) / 2, pairs - 1 + k - 1)
        return t * se, se
    m = pct(margin)
    for k in range(1, 11):
        half, se = half_se(k)
        if normal_cdf((math.log(1.1) - math.log(1 + margin) - half) / se) >= 0.8:
            return (f" Judged by this spread, a true 10 % change in Ready/s is decided (its interval "
                    f"clears the ±{m} margin) with 80 % probability after {k} repeat{'' if k == 1 else 's'}.")
    half, se = half_se(10)
    d = math.exp(math.log(1 + margin) + half + normal_quantile(0.8) * se) - 1
    return (f" Judged by this spread, 10 repeats decide a true change in Ready/s of "
            f"{pct(math.ceil(d * 100) / 100)} (its interval clearing the ±{m} margin) with 80 % "
            f"probability; 10 % is out of their reach.")


def noise_sentence(s, margin, tscale=1.0, pairs=None, looks=1):
    if s is None:
        return ("Ready/s has no spread yet (fewer than two repeat pairs measured it): "
                "nothing to project from.")
    k = next((n for n in range(2, 11) if half_width(s, n, tscale) <= margin), None)
    takes = f"{k} paired repeats" if k else "more than 10 paired repeats"
    power = power_sentence(s, pairs, margin, looks) if pairs else ""
    return f"At this spread, deciding a {pct(margin)} difference in Ready/s takes {takes}.{power}"


def check_noise(report_md, groups, manifest, margin, compare, failures):
    """The "Machine noise (A/A)" section: present exactly when there is an
    A/A pair; one "### N=<n>: <b> / <a>" per pair and scale, its table's
    header, every row (the figures in order) and cell, and its sentence."""
    text = open(report_md, encoding="utf-8").read()
    want = aa_pairs(groups, manifest)
    parts = text.split("\n" + NOISE_HEADING + "\n", 1)
    if len(parts) == 1:
        if want:
            failures.append(f"no \"Machine noise (A/A)\" section, but A/A pairs {want}")
        return
    if not want:
        failures.append("a \"Machine noise (A/A)\" section, but no A/A pair")
        return
    body = parts[1].split("\n## ", 1)[0]
    got = {}
    cur = None
    for line in body.splitlines():
        m = NOISE_PAIR.match(line)
        if m:
            cur = (m.group(1), m.group(3), m.group(2))
            if cur in got:
                failures.append(f"noise: pair {cur} twice")
            got[cur] = {"head": None, "rows": [], "sentence": None, "position": None}
        elif cur and line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
            if got[cur]["head"] is None:
                got[cur]["head"] = cells
            elif not set("".join(cells)) <= set("-|"):
                got[cur]["rows"].append(cells)
        elif cur and line.startswith("Running second: "):
            got[cur]["position"] = line.strip()
        elif cur and line.strip() and got[cur]["head"] is not None:
            got[cur]["sentence"] = got[cur]["sentence"] or line.strip()
    if [k for k in got] != want:
        failures.append(f"noise: pairs {list(got)} in the report, {want} expected")
    for key in want:
        if key not in got:
            continue
        scale, a, b = key
        g = got[key]
        compare(f"noise {key} header", " | ".join(NOISE_HEAD), " | ".join(g["head"] or []))
        scales = (1.0, 1 - T_PRECISION, 1 + T_PRECISION)
        (rows, ready_s), *ties = [noise_rows(groups[(scale, a)], groups[(scale, b)], margin, x)
                                  for x in scales]

        def tied(what, want, alternatives, got):
            if got != want and got in alternatives:
                TIES.append((want, got))
                want = got
            compare(what, want, got)

        if [r[0] for r in rows] != [r[0] for r in g["rows"]]:
            failures.append(f"noise {key}: figures {[r[0] for r in g['rows']]} in the report, "
                            f"{[r[0] for r in rows]} expected")
        by_fig = {r[0]: r for r in g["rows"]}
        for i, row in enumerate(rows):
            if row[0] not in by_fig:
                continue
            for j, (h, w, c) in enumerate(zip(NOISE_HEAD[1:], row[1:], by_fig[row[0]][1:])):
                tied(f"noise {key} {row[0]} {h}", w, [t[0][i][j + 1] for t in ties], c)
        pairs = next((int(r[2]) for r in rows if r[0] == "Ready/s"), None)
        looks = (manifest.get("evidence") or {}).get("looks", 1)
        tied(f"noise {key} sentence", noise_sentence(ready_s, margin, 1.0, pairs, looks),
             [noise_sentence(r, margin, x, pairs, looks) for (_, r), x in zip(ties, scales[1:])],
             g["sentence"] or "")
        compare(f"noise {key} position", position_sentence(groups[(scale, a)], groups[(scale, b)], b),
                g["position"] or "")


def position_sentence(a_runs, b_runs, b):
    """Ready/s of each repeat's later run (by time zero) over its earlier one,
    whichever variant ran first; the paired interval as for B/A."""
    bs = {repeat_of(r): r for r in used(b_runs)}
    pairs, b_second = [], 0
    for r in used(a_runs):
        y = bs.get(repeat_of(r))
        if not y or r["ready_per_s"] is None or y["ready_per_s"] is None:
            continue
        if y["t0"] > r["t0"]:
            b_second += 1
            pairs.append((r["ready_per_s"], y["ready_per_s"]))
        else:
            pairs.append((y["ready_per_s"], r["ready_per_s"]))
    got = paired_ratio(pairs)
    if got is None:
        return None
    ratio, iv = got
    cell = f"{ratio:.2f} [{iv[0]:.2f}–{iv[1]:.2f}]" if iv else f"{ratio:.2f} (one pair)"
    k = len(pairs)
    return (f"Running second: the later run of each repeat over the earlier one, on Ready/s, is {cell} "
            f"over {k} repeat{'' if k == 1 else 's'} ({b} ran second in {b_second} of them). The two are "
            "one controller, so this is the position's own effect (a drifting plane, a warmer cache, the "
            "previous run's clean-up); B/A above carries it only as far as the order was unbalanced.")


# ---------------------------------------------------------------- the report's tables


def report_tables(path):
    """Every Markdown table of report.md as (header, rows)."""
    tables, cur = [], None
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
            if cur is None:
                cur = (cells, [])
                tables.append(cur)
            elif not set("".join(cells)) <= set("-|"):
                cur[1].append(cells)
        else:
            cur = None
    return tables


NUM = re.compile(r"-?\d+(?:\.\d+)?")


NEAR = []
# Cells on a rounding tie within the t quantile's precision (the noise table).
TIES = []


def same(want, got):
    """Exactly as rendered; or, on a last-digit difference, within half a unit
    of the rendered precision (a tie rounded the other way; listed as a note)."""
    if want == got:
        return True
    if NUM.sub("#", want) != NUM.sub("#", got):
        return False
    for w, g in zip(NUM.findall(want), NUM.findall(got)):
        d = len(g.split(".")[1]) if "." in g else 0
        if abs(float(w) - float(g)) > 0.5 * 10 ** -d + 1e-9:
            return False
    NEAR.append((want, got))
    return True


SERVER_SIDE = (
    "apiserver widget update p99 (PUT/PATCH/APPLY)",
    "apiserver widget create p99 (loader's POST)",
    "etcd WAL fsync p99",
)
CLUSTER_WIDE = re.compile(r"^cluster-wide: (.+) together(| ⚠ .*)$")
COVERAGE_NOTE = re.compile(r"^- N=(\d+) (\S+): the controller wrote to (.+?) of (\d+) objects\.")


def marker(runs):
    """The report's mark of a group resting on flagged runs or leaving some out."""
    flagged = [r for r in runs if r["problems"]]
    if flagged and len(flagged) == len(runs):
        return " ⚠ flagged runs only"
    return " ⚠ runs excluded" if flagged else ""


def concurrent(runs):
    return any(r["schedule"] == "concurrent" for r in runs)


def server_side_rows(groups):
    """{(N, variant cell): the group whose figures the row shows}: a row per
    group of an isolated schedule, one cluster-wide row per scale of a
    concurrent one (the first variant's figures)."""
    rows = {}
    shared = {}
    for (scale, variant), runs in groups.items():
        if concurrent(runs):
            shared.setdefault(scale, []).append(variant)
        else:
            rows[(scale, variant + marker(runs))] = (scale, variant)
    for scale, variants in shared.items():
        first = (scale, variants[0])
        label = f"cluster-wide: {' + '.join(variants)} together{marker(groups[first])}"
        rows[(scale, label)] = first
    return rows


def cluster_wide_notes(runs):
    """Under the concurrent schedule the server-side figures of every variant's
    own apiserver.csv / etcd.csv, beside the first variant's that the report shows."""
    out = []
    by_scale = {}
    for r in runs:
        if r["schedule"] == "concurrent":
            by_scale.setdefault(r["scale"], []).append(r)
    for scale, rs in by_scale.items():
        for key, label in (("api_p99", "update p99"), ("api_create_p99", "create p99"),
                           ("fsync_p99", "fsync p99")):
            vals = [(r["run"], "—" if r[key] is None else fmt_duration(r[key])) for r in rs]
            differ = len({v for _, v in vals}) > 1
            out.append(f"cluster-wide N={scale} {label}: " + ", ".join(f"{n} {v}" for n, v in vals)
                       + ("  (the variants' files differ; the report shows the first's)" if differ else ""))
    return out


def settings_cells(runs):
    """Settings-table cells this script checks, from the first run that recorded settings."""
    for r in runs:
        s = r.get("settings")
        if s:
            q, d = s.get("queue"), s.get("debounce_ms")
            queue = "?" if q is None else (f"{q}, debounce {d} ms" if d else q)
            impl = r["impl"] or "?"
            extras = ([s["allocator"]] if s.get("allocator") else []) + \
                (["profiled"] if s.get("pprof") else []) + \
                (["managedFields as text"] if s.get("managed_fields_text") else []) + \
                (["lists at resourceVersion 0"] if s.get("list_semantic") == "any" else []) + \
                [f"{k} {json.dumps(s[k])}" for k in sorted(TUNABLES) if s.get(k) is not None]
            if extras:
                impl += f" ({', '.join(extras)})"
            return {"impl": impl, "preset": s["preset"], "workers": str(s["workers"]),
                    "queue": queue}
    return {"impl": "not recorded"}


def check(runs, report_md, manifest, margin):
    groups = {}
    for r in runs:
        groups.setdefault((str(r["scale"]), r["variant"]), []).append(r)
    by_run = {r["run"]: r for r in runs}
    failures, checked = [], 0
    seen_groups, seen_runs = set(), set()

    def compare(what, want, got):
        nonlocal checked
        checked += 1
        if not same(want, got):
            failures.append(f"{what}: report {got!r}, independent {want!r}")

    goal_tables = 0
    for head, rows in report_tables(report_md):
        if head[:3] == ["N", "pair", "goal"]:
            goal_tables += 1
            check_goal_table("goals", head, rows, pair_rows(groups, margin, manifest), compare, failures)
        elif head[:3] == ["N", "variant", "goal"]:
            goal_tables += 1
            check_goal_table("probe goals", head, rows, probe_rows(runs, groups, manifest), compare, failures)
        elif head[:2] == ["N", "variant"] and all(h in head for h in SERVER_SIDE):
            want_rows = server_side_rows(groups)
            got_rows = set()
            for row in rows:
                key = (row[0], row[1])
                got_rows.add(key)
                if key not in want_rows:
                    failures.append(f"server side: report row {key} is not expected "
                                    f"(expected rows: {sorted(want_rows)})")
                    continue
                group = want_rows[key]
                seen_groups.add(group)
                want = group_cells(groups[group])
                for h, got in zip(head[2:], row[2:]):
                    if h in want:
                        compare(f"N={key[0]} {row[1]} {h}", want[h], got)
            for key in want_rows:
                if key not in got_rows:
                    failures.append(f"server side: no row {key}")
        elif head[:3] == ["N", "variant", "plane process"]:
            want_rows = {}
            for k, rs in groups.items():
                kept = [r for r in rs if not r["problems"]] or rs
                for r in kept:
                    for name in (r["plane"] or {}):
                        per = [x["plane"][name] for x in kept if x["plane"] and name in x["plane"]]
                        want_rows[(str(k[0]), k[1], name)] = [
                            fmt_stat([c for c, _ in per], fmt_seconds),
                            fmt_stat([m for _, m in per], fmt_mib)]
            got_rows = set()
            for row in rows:
                key = (row[0], row[1].split(" ⚠")[0], row[2])
                got_rows.add(key)
                if key not in want_rows:
                    failures.append(f"plane processes: report row {key} is not expected")
                    continue
                for h, want, got in zip(head[3:], want_rows[key], row[3:]):
                    compare(f"plane N={key[0]} {key[1]} {key[2]} {h}", want, got)
            for key in want_rows:
                if key not in got_rows:
                    failures.append(f"plane processes: no row {key}")
        elif head[:3] == ["N", "variant", "from → to"]:
            want_rows = {(str(k[0]), k[1], row): pod_cells(rs, row)
                         for k, rs in groups.items()
                         for row in [n for n, _ in POD_STAGES] + [POD_OWNERS]}
            want_rows = {k: v for k, v in want_rows.items() if v is not None}
            got_rows = set()
            for row in rows:
                key = (row[0], row[1].split(" ⚠")[0], row[2])
                got_rows.add(key)
                if key not in want_rows:
                    failures.append(f"pod start: report row {key} is not expected")
                    continue
                for h, want, got in zip(head[3:], want_rows[key], row[3:]):
                    compare(f"pod start N={key[0]} {key[1]} {key[2]} {h}", want, got)
            for key in want_rows:
                if key not in got_rows:
                    failures.append(f"pod start: no row {key}")
        elif head[:2] == ["N", "variant"] and "writes/reconcile" not in head:
            # (the attribution table, which has "writes/reconcile", is not checked)
            for row in rows:
                variant = row[1].split(" ⚠")[0]
                key = (row[0], variant)
                if key not in groups:
                    failures.append(f"report row {key} has no run directory")
                    continue
                seen_groups.add(key)
                compare(f"N={key[0]} {variant} marker", variant + marker(groups[key]), row[1])
                want = group_cells(groups[key])
                for h, got in zip(head[2:], row[2:]):
                    if h in want:
                        compare(f"N={key[0]} {variant} {h}", want[h], got)
        elif head[:2] == ["variant", "impl"]:
            for row in rows:
                rs = [r for k, g in groups.items() if k[1] == row[0] for r in g]
                if not rs:
                    failures.append(f"settings: variant {row[0]} has no run directory")
                    continue
                want = settings_cells(rs)
                for h, got in zip(head[1:], row[1:]):
                    if h in want:
                        compare(f"settings {row[0]} {h}", want[h], got)
        elif head[:2] == ["run", "status"]:
            for row in rows:
                if row[0] not in by_run:
                    failures.append(f"report run {row[0]} has no run directory")
                    continue
                seen_runs.add(row[0])
                want = run_cells(by_run[row[0]])
                for h, got in zip(head[2:], row[2:]):
                    if h in want:
                        compare(f"{row[0]} {h}", want[h], got)
    # The notes on coverage below N: one per such group, with its count.
    notes = {}
    for line in open(report_md, encoding="utf-8"):
        m = COVERAGE_NOTE.match(line)
        if m:
            notes[(m.group(1), m.group(2))] = (m.group(3), m.group(4))
    for key, rs in groups.items():
        used = [r for r in rs if not r["problems"]] or rs
        cov = [r["coverage"] for r in used if r["coverage"] is not None]
        below = bool(cov) and percentile(cov, 0.5) < rs[0]["scale"]
        if below:
            want = (fmt_stat(cov, fmt_count), key[0])
            compare(f"N={key[0]} {key[1]} coverage note", f"wrote to {want[0]} of {want[1]}",
                    "no note" if key not in notes else f"wrote to {notes[key][0]} of {notes[key][1]}")
        elif key in notes:
            failures.append(f"N={key[0]} {key[1]}: a coverage note, but coverage is not below N")
    check_answers(report_md, groups, manifest, margin, compare, failures)
    check_noise(report_md, groups, manifest, margin, compare, failures)
    # The reconcile counts are whole: ok + error + requeue is summary.json's total.
    for r in runs:
        parts = (r["ok"], r["errors"], r["requeue"])
        if r["reconciles_total"] is not None and None not in parts:
            checked += 1
            if abs(sum(parts) - r["reconciles_total"]) > 1e-6:
                failures.append(f"{r['run']}: ok + error + requeue = {sum(parts)}, "
                                f"summary.json reconciles.total = {r['reconciles_total']}")
    goals = bool(manifest.get("goals"))
    if goals and not goal_tables and (pair_rows(groups, margin, manifest)
                                      or probe_rows(runs, groups, manifest)):
        failures.append("no goals table, but the manifest declares goals and this run has "
                        "their pairs or probe rows")
    if goal_tables and not goals:
        failures.append("a goals table, but the manifest declares no goals")
    for key in groups:
        if key not in seen_groups:
            failures.append(f"N={key[0]} {key[1]}: not in the report's tables")
    for name in by_run:
        if name not in seen_runs:
            failures.append(f"{name}: not in the report's per-run detail")
    return checked, failures


# ---------------------------------------------------------------- main

FIELDS = [
    "ready", "convergence", "t50", "t90", "t100", "ttr_p50", "ttr_p99", "ok", "errors",
    "retries", "mean", "p50", "p90", "p99", "ready_per_s", "writes_per_s", "conflicts",
    "throttle", "cpu", "peak_rss", "api_p99", "api_create_p99", "fsync_p99", "coverage",
    "cpu_per_reconcile", "queue_wait", "first_writes_per_s", "requeue",
]


def main(argv):
    args = argv[1:]
    margin_arg = None
    if "--margin" in args:
        i = args.index("--margin")
        margin_arg = float(args[i + 1].rstrip("%")) / 100
        del args[i:i + 2]
    if len(args) not in (1, 3) or (len(args) == 3 and args[1] != "--check"):
        sys.exit(f"usage: {argv[0]} <results dir> [--check <report.md>] [--margin 5%]")
    runs = load(args[0])
    for r in runs:
        print(r["run"] + (f"  ⚠ {'; '.join(r['problems'])}" if r["problems"] else ""))
        for k in FIELDS:
            v = r[k]
            print(f"  {k:14} {'—' if v is None else (round(v, 9) if isinstance(v, float) else v)}")
    for line in cluster_wide_notes(runs):
        print(line)
    if len(args) == 3:
        with open(os.path.join(args[0], "manifest.json")) as fh:
            manifest = json.load(fh)
        # The margin the report was rendered with: --margin as given to
        # `ctrlbench report`, else the manifest's, else 5 %.
        margin = margin_arg if margin_arg is not None else (manifest.get("margin") or 0.05)
        checked, failures = check(runs, args[2], manifest, margin)
        for w, g in NEAR:
            print(f"note: {g!r} in the report, {w!r} here: equal within the rendered precision")
        for w, g in TIES:
            print(f"note: {g!r} in the report, {w!r} here: a rounding tie within the t "
                  "quantile's precision")
        for n in NOT_CHECKED:
            print(f"not checked: {n}")
        for f in failures:
            print("MISMATCH", f)
        print(f"checked {checked} cells of {args[2]}: {len(failures)} mismatch(es)")
        if failures or checked == 0:
            sys.exit(1)


if __name__ == "__main__":
    main(sys.argv)
