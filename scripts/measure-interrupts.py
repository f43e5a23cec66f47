#!/usr/bin/env python3
"""Time from SIGINT to exit of `ctrlbench run` in each phase (median of N).

Usage: scripts/measure-interrupts.py [CTRLBENCH] [N]
Runs a one-variant experiment (rust bad-fix, N=200, 60 s window) on a fresh
local plane and interrupts it: while the plane starts, right after the
controller's run begins (set-up/load), and 8 s into the window. Prints one
line per phase: the median and every sample, and the exit codes.
"""
import os, signal, statistics, subprocess, sys, tempfile, threading, time

exe = sys.argv[1] if len(sys.argv) > 1 else "target/release/ctrlbench"
n = int(sys.argv[2]) if len(sys.argv) > 2 else 3
EXP = 'name = "intr"\nscales = [200]\nwindow_s = 60\n[[variant]]\nname = "loop"\nimpl = "rust"\npreset = "bad-fix"\n'
PHASES = [
    ("plane start", "starting the local control plane", 0.3),
    ("set-up and load", "run 1/1", 0.5),
    ("window", "run 1/1", 8.0),
]

def once(marker, delay):
    with tempfile.TemporaryDirectory() as d:
        exp = os.path.join(d, "e.toml")
        open(exp, "w").write(EXP)
        env = dict(os.environ, XDG_STATE_HOME=d, TMPDIR=d)
        p = subprocess.Popen([exe, "run", exp, "--no-progress", "--results", os.path.join(d, "r")],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
        seen = threading.Event()
        def read():
            for line in p.stderr:
                if marker in line:
                    seen.set()
        threading.Thread(target=read, daemon=True).start()
        if not seen.wait(120):
            p.kill(); p.wait()
            raise SystemExit(f"never saw {marker!r}")
        time.sleep(delay)
        t = time.monotonic()
        p.send_signal(signal.SIGINT)
        code = p.wait(60)
        return time.monotonic() - t, code

for name, marker, delay in PHASES:
    samples = [once(marker, delay) for _ in range(n)]
    secs = [s for s, _ in samples]
    print(f"{name:16} median {statistics.median(secs):.2f} s  samples {' '.join(f'{s:.2f}' for s in secs)}  exit {sorted({c for _, c in samples})}")
