#!/usr/bin/env python3
"""Writes results-noise: an A/A results directory derived from results-perf-small.

The A/A ("noise") experiment runs one variant twice under two names, a and b,
interleaved, with [[compare]] a / b pairs: every difference between them is
the machine's. No such run was recorded on the fixtures' machine, so this
builds one, deterministically, from recorded runs: variant a is
results-perf-small's rust-good-single-patch (both repeats, values
unchanged, only renamed), and b is the same runs with known factors applied
per repeat, standing in for the machine's noise:

  rate   every moment of the run after its load start (objects.csv, the
         controller's scrape timestamps) stretched by 1 / rate around it, and
         summary.json's durations with it: Ready/s, first writes/s x rate;
         T50, T100, convergence x 1 / rate (to the millisecond the files keep)
  cpu    metrics-b.csv cpu_seconds x cpu: controller CPU, CPU per reconcile
  rss    rss_bytes x rss (rounded to a byte): peak RSS
  lat    reconcile_latency_sum x lat: mean reconcile (the histogram buckets
         are not moved, so reconcile p50 / p99 stay equal: spread 0)

apiserver.csv and etcd.csv are copied unchanged. Standard library only.
Run from this directory: python3 make_results_noise.py
"""
import csv
import datetime
import io
import json
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "results-perf-small")
OUT = os.path.join(HERE, "results-noise")
VARIANT = "rust-good-single-patch"
# Per repeat: (rate, cpu, rss, lat) of b against a.
FACTORS = {1: (1.04, 0.97, 1.01, 1.03), 2: (0.99, 1.02, 0.995, 0.96)}

EXPERIMENT = """name = "noise"
description = "A/A: one variant twice under two names, interleaved; what differs is this machine's noise."
scales = [30]
window_s = 20
stop_when_converged = true
quiet_s = 2
repeats = "auto"
schedule = "isolated"
concurrency = 4

[[variant]]
name = "a"
impl = "rust"
preset = "good-single-patch"
work_ms = 0
client_qps = -1
log_level = "info"

[[variant]]
name = "b"
impl = "rust"
preset = "good-single-patch"
work_ms = 0
client_qps = -1
log_level = "info"

[[compare]]
a = "a"
b = "b"
figure = "Ready/s"

[[compare]]
a = "a"
b = "b"
figure = "CPU per reconcile"

[[compare]]
a = "a"
b = "b"
figure = "peak RSS"
"""


def ms(s):
    return round(datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp() * 1000)


def iso(t_ms):
    d = datetime.datetime.fromtimestamp(t_ms / 1000, tz=datetime.timezone.utc)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t_ms % 1000:03d}Z"


def fmt(v):
    return repr(round(v, 9)) if v != int(v) else str(int(v))


def run(rep, name, factors):
    src = os.path.join(SRC, "N30", VARIANT, f"rep{rep}")
    dst = os.path.join(OUT, "N30", name, f"rep{rep}")
    os.makedirs(dst)
    for f in ("apiserver.csv", "etcd.csv"):
        shutil.copy(os.path.join(src, f), dst)
    with open(os.path.join(src, "summary.json")) as fh:
        summary = json.load(fh)
    rate, cpu, rss, lat = factors or (1.0, 1.0, 1.0, 1.0)
    stretch = 1.0 / rate
    with open(os.path.join(src, "objects.csv"), newline="") as fh:
        reader = csv.DictReader(fh)
        fields, objs = reader.fieldnames, list(reader)
    t0 = max(ms(o["created_at"]) for o in objs if o["created_at"]) - summary["load"]["seconds"] * 1000
    moved = lambda s: iso(round(t0 + (ms(s) - t0) * stretch)) if s else s  # noqa: E731
    out = io.StringIO()
    w = csv.DictWriter(out, fieldnames=fields, lineterminator="\n")
    w.writeheader()
    for o in objs:
        w.writerow({k: moved(v) if k.endswith("_at") else v for k, v in o.items()})
    with open(os.path.join(dst, "objects.csv"), "w") as fh:
        fh.write(out.getvalue())
    with open(os.path.join(src, f"metrics-{VARIANT}.csv"), newline="") as fh:
        rows = list(csv.reader(fh))
    head = rows[0]
    scale = {"cpu_seconds": cpu, "rss_bytes": rss, "reconcile_latency_sum": lat}
    for r in rows[1:]:
        if factors:
            r[0] = moved(r[0])
        for col, f in scale.items():
            i = head.index(col)
            if r[i] and f != 1.0:
                v = float(r[i]) * f
                r[i] = str(round(v)) if col == "rss_bytes" else fmt(v)
    with open(os.path.join(dst, f"metrics-{name}.csv"), "w", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)
    summary["variant"] = name
    summary["namespace"] = summary["namespace"].replace(VARIANT, name)
    if factors:
        load = summary["load"]
        load["seconds"] *= stretch
        load["rate_per_s"] *= rate
        if summary.get("convergence_s") is not None:
            summary["convergence_s"] *= stretch
        summary["throughput_ready_per_s"] *= rate
        for k in ("controller_started_s", "first_write_s", "all_ready_s"):
            if (summary.get("start") or {}).get(k) is not None:
                summary["start"][k] *= stretch
    with open(os.path.join(dst, "summary.json"), "w") as fh:
        json.dump(summary, fh, indent=2)
        fh.write("\n")
    return summary


def main():
    if os.path.exists(OUT):
        shutil.rmtree(OUT)
    with open(os.path.join(SRC, "manifest.json")) as fh:
        manifest = json.load(fh)
    runs = []
    for rep in (1, 2):
        runs.append(run(rep, "a", None))
        runs.append(run(rep, "b", FACTORS[rep]))
    manifest.update(
        experiment="noise",
        experiment_file="noise (built in)",
        experiment_text=EXPERIMENT,
        probe=None,
        runs=runs,
        compare=[{"a": "a", "b": "b", "figure": f} for f in ("Ready/s", "CPU per reconcile", "peak RSS")],
        repeats={"mode": "auto", "done": 2, "min": 2, "max": 2, "stopped": "max_repeats"},
    )
    with open(os.path.join(OUT, "manifest.json"), "w") as fh:
        json.dump(manifest, fh, indent=2)
        fh.write("\n")


if __name__ == "__main__":
    main()
