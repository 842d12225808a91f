"""bench/beside: does work of ours beside the later side of a duet pair bias a known difference?

In a duet the side that ends first leaves its CPU idle while its partner still runs. The orchestrator
could use that moment (the next pair's requests, an attribution snapshot, storing); it does not, because
such work slows the side still running, which is always the slower one (docs/notes/duet_on_2cpus.md
point 15). This bench keeps that decision measured: A (`duet-workload integer`, ~20 ms) against B with
``--scale`` more work, `duet compare --method duet --runs N`, in three variants interleaved:

  shipped     duetbench as installed: the orchestrator sleeps until both sides answered;
  beside      the same, plus SPIN_MS of busy work by the orchestrator as soon as the first side ended
              (injected into this process only: ``Runner._wait_pair`` wrapped);
  sequential  the same commands measured by `--method sequential` (no partner at all): the reference.

For each comparison: the median and the mean of the pairs' log ratios (B/A); per variant the median of
those over the repetitions. Writes bench/results/beside.json and beside.md.

    python bench/beside.py [--reps 10] [--runs 60] [--scale 1.05] [--spin-ms 2] [--target-ms 20] [--out beside]
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from duetbench.execute.native import native_binary

RESULTS = Path(__file__).resolve().parent / "results"

#: Runs `duet ARGS...`; with SPIN_MS set, the orchestrator spins that long once the first side of each
#: pair ended, beside its partner (what the runner must not do).
WRAPPER = """import os, runpy, sys, time
spin = float(os.environ.get("BESIDE_SPIN_MS", "0")) / 1e3
if spin:
    from duetbench.execute import runner, waits

    def wait_pair(self, running):
        first = waits.wait_ready(running)
        end = time.monotonic() + spin
        while time.monotonic() < end:
            pass
        waits.wait_all(running)
        return [r.wait() for r in running]

    runner.Runner._wait_pair = wait_pair
runpy.run_module("duetbench", run_name="__main__", alter_sys=True)
"""


def one(variant: str, a: str, b: str, runs: int, spin_ms: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "r.db"
        env = dict(os.environ, BESIDE_SPIN_MS=str(spin_ms if variant == "beside" else 0))
        method = "sequential" if variant == "sequential" else "duet"
        subprocess.run([sys.executable, "-c", WRAPPER, "compare", a, b, "--method", method, "--runs", str(runs),
                        "--no-progress", "--db", str(db)], env=env, cwd=tmp, check=True, stdout=subprocess.DEVNULL)
        with sqlite3.connect(db) as conn:
            rows = conn.execute("SELECT pair, side, wall_s FROM invocations WHERE warmup = 0").fetchall()
    pairs: dict[int, dict[str, float]] = {}
    for pair, side, wall in rows:
        pairs.setdefault(pair, {})[side] = wall
    logs = [math.log(p["B"] / p["A"]) for p in pairs.values() if "A" in p and "B" in p]
    return {"variant": variant, "pairs": len(logs), "median_ratio": math.exp(statistics.median(logs)),
            "mean_ratio": math.exp(statistics.fmean(logs)), "max_pair_ratio": math.exp(max(logs)),
            "load": os.getloadavg()[0]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--runs", type=int, default=60)
    ap.add_argument("--scale", type=float, default=1.05)
    ap.add_argument("--spin-ms", type=float, default=2.0)
    ap.add_argument("--target-ms", type=float, default=20.0)
    ap.add_argument("--out", default="beside", help="results file names under bench/results/ (.json, .md)")
    args = ap.parse_args()
    work = native_binary("duet-workload")
    ops = subprocess.run([str(work), "integer", "--calibrate", str(args.target_ms)], capture_output=True,
                         text=True, check=True).stdout.strip()
    a = f"{work} integer --ops {ops}"
    b = f"{a} --scale {args.scale}"
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    variants = ["shipped", "beside", "sequential"]
    results = [one(v, a, b, args.runs, args.spin_ms) for _ in range(args.reps) for v in variants]
    summary = {v: {"median_of_medians": statistics.median(r["median_ratio"] for r in results if r["variant"] == v),
                   "median_of_means": statistics.median(r["mean_ratio"] for r in results if r["variant"] == v),
                   "largest_pair": max(r["max_pair_ratio"] for r in results if r["variant"] == v)}
               for v in variants}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.out}.json").write_text(json.dumps({"started": started, "args": vars(args), "a": a, "b": b,
                                                     "results": results, "summary": summary}, indent=1))
    loads = [r["load"] for r in results]
    lines = [
        "# Work of ours beside the later side of a duet pair (bench/beside.py)",
        "",
        f"Started {started} on {os.cpu_count()} CPUs; A `integer` ~{args.target_ms:g} ms, B `--scale {args.scale}`; "
        f"`--runs {args.runs}`, {args.reps} repetitions of each variant, interleaved; 1-minute load "
        f"{min(loads):.2f}–{max(loads):.2f}. *beside*: the orchestrator spins {args.spin_ms:g} ms once the first "
        "side of each pair ended (injected here; duetbench itself sleeps until both answered).",
        "",
        "| variant | B/A, median of per-run medians | B/A, median of per-run means | largest single pair |",
        "|---|---:|---:|---:|",
    ]
    for v in variants:
        s = summary[v]
        lines.append(f"| {v} | {s['median_of_medians']:.4f} | {s['median_of_means']:.4f} | {s['largest_pair']:.3f} |")
    lines += ["", "Per run (median / mean of the pairs' B/A):", ""]
    for v in variants:
        lines.append(f"- {v}: " + ", ".join(f"{r['median_ratio']:.4f} / {r['mean_ratio']:.4f}"
                                            for r in results if r["variant"] == v))
    (RESULTS / f"{args.out}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
