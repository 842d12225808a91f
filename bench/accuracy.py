"""bench/accuracy: is duetbench any good on this machine?

A/A and A/B comparisons (1%, 2%, 5% more work) of the built-in integer workload, with each method of
``duet compare`` and with hyperfine, each given the same machine time, under three conditions:

  quiet      nothing else running on purpose;
  sync       synchronized interference: every process of the comparison (both sides, the orchestrator)
             frozen and thawed together at random moments through the cgroup v1 freezer — a host that
             steals time from the whole VM;
  neighbour  an asymmetric noisy neighbour: ``stress-ng --cpu 1``, unpinned.

Writes bench/results/accuracy.json (every comparison) and bench/results/accuracy.md (the table:
relative CI width, A/A false positives, detections per slowdown, machine time).

    python bench/accuracy.py [--budget 5] [--aa-reps 4] [--ab-reps 2] [--conditions quiet,sync,neighbour]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from collections.abc import Iterator

import numpy as np

from duetbench.analyze.ratio import ratio_of_means_ci
from duetbench.analyze.verdicts import verdict
from duetbench.execute.native import native_binary

RESULTS = Path(__file__).resolve().parent / "results"
FREEZER = Path("/sys/fs/cgroup/freezer")
TOOLS = ("duet", "aduet", "sequential", "hyperfine")
SLOWDOWNS = (1.00, 1.01, 1.02, 1.05)


# -- interference ------------------------------------------------------------------------------------
class Freezer:
    """Freezes a v1 freezer cgroup for random short spells: 2-20 ms every ~40 ms on average."""

    def __init__(self, name: str, seed: int) -> None:
        self.path = FREEZER / name
        self.path.mkdir(exist_ok=True)
        self._stop = threading.Event()
        self._rng = random.Random(seed)
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self.frozen_s = 0.0

    def _loop(self) -> None:
        state = self.path / "freezer.state"
        while not self._stop.wait(self._rng.expovariate(1 / 0.040)):
            spell = self._rng.uniform(0.002, 0.020)
            state.write_text("FROZEN")
            time.sleep(spell)
            state.write_text("THAWED")
            self.frozen_s += spell

    def wrap(self, argv: list[str]) -> list[str]:
        """Enter the freezer cgroup before exec, so every descendant is in it from the start."""
        return ["sh", "-c", f'echo $$ > {self.path}/cgroup.procs && exec "$@"', "sh", *argv]

    def __enter__(self) -> Freezer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        (self.path / "freezer.state").write_text("THAWED")


@contextmanager
def condition(name: str, seed: int) -> Iterator[Freezer | None]:
    if name == "quiet":
        yield None
    elif name == "sync":
        if not FREEZER.is_dir():
            raise SystemExit("the sync condition needs the cgroup v1 freezer at /sys/fs/cgroup/freezer")
        with Freezer(f"duetbench-bench-{os.getpid()}", seed) as freezer:
            yield freezer
        try:
            freezer.path.rmdir()
        except OSError:
            pass
    elif name == "neighbour":
        if not shutil.which("stress-ng"):
            raise SystemExit("the neighbour condition needs stress-ng (apt-get install stress-ng)")
        hog = subprocess.Popen(["stress-ng", "--cpu", "1", "--timeout", "0", "--quiet"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        try:
            yield None
        finally:
            hog.terminate()
            hog.wait()
    else:
        raise SystemExit(f"unknown condition {name!r}")


# -- one comparison ----------------------------------------------------------------------------------
def timed(argv: list[str], freezer: Freezer | None, what: str) -> float:
    """Run one tool (inside the freezer cgroup when there is one); its elapsed time is the machine time."""
    if freezer:
        argv = freezer.wrap(argv)
    t0 = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True)
    elapsed = time.monotonic() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{what} failed: {proc.stderr[-500:]}")
    return elapsed


def run_duetbench(method: str, cmd_a: str, cmd_b: str, runs: int, seed: int, freezer: Freezer | None,
                  tmp: Path) -> dict[str, object]:
    out = tmp / "out.json"
    argv = [sys.executable, "-m", "duetbench", "compare", cmd_a, cmd_b, "--method", method, "--runs", str(runs),
            "--warmup", "1", "--seed", str(seed), "--no-progress", "--db", str(tmp / "bench.db"),
            "--export-json", str(out)]
    elapsed = timed(argv, freezer, "duet compare")
    data = json.loads(out.read_text())
    comps = {c["metric"]: c for c in data["comparisons"]}
    return {"elapsed_s": elapsed, "wall": comps["wall"], "cpu": comps["cpu"]}


def run_hyperfine(cmd_a: str, cmd_b: str, runs: int, seed: int, freezer: Freezer | None,
                  tmp: Path) -> dict[str, object]:
    out = tmp / "hyperfine.json"
    argv = ["hyperfine", "-N", "--warmup", "1", "--runs", str(runs), "--style", "none",
            "--export-json", str(out), cmd_a, cmd_b]
    elapsed = timed(argv, freezer, "hyperfine")
    results = json.loads(out.read_text())["results"]
    a, b = (np.array(r["times"]) for r in results)
    # The same estimator as duetbench's sequential method, applied to hyperfine's raw times.
    ci = ratio_of_means_ci(a, b, confidence_level=0.99, n_resamples=10_000, random_state=seed)
    wall = {"ratio": {"estimate": ci.estimate, "low": ci.low, "high": ci.high}, "verdict": verdict(ci.low, ci.high),
            "relative_ci_width": (ci.high - ci.low) / ci.estimate, "runs": runs}
    return {"elapsed_s": elapsed, "wall": wall, "cpu": None}


# -- the table -------------------------------------------------------------------------------------------
def summarize(rows: list[dict[str, object]]) -> str:
    """One line per condition, tool and metric (hyperfine reports wall time only)."""
    lines = ["| condition | tool | metric | median rel. CI width | A/A false positives | detected 1% | detected 2% | "
             "detected 5% | 5% estimate (median) | machine time per comparison |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for cond in dict.fromkeys(r["condition"] for r in rows):
        for metric in ("wall", "cpu"):
            for tool in TOOLS:
                sel = [r for r in rows if r["condition"] == cond and r["tool"] == tool and r.get(metric)]
                if not sel:
                    continue
                widths = [r[metric]["relative_ci_width"] for r in sel]
                aa = [r for r in sel if r["scale"] == 1.0]
                fp = sum(r[metric]["verdict"] != "no difference" for r in aa)
                cells = []
                for s in SLOWDOWNS[1:]:
                    ab = [r for r in sel if r["scale"] == s]
                    cells.append(f"{sum(r[metric]['verdict'] == 'slower' for r in ab)}/{len(ab)}")
                five = [r[metric]["ratio"]["estimate"] for r in sel if r["scale"] == 1.05]
                lines.append(f"| {cond} | {tool} | {metric} | {statistics.median(widths):.2%} | {fp}/{len(aa)} | "
                             + " | ".join(cells)
                             + (f" | {statistics.median(five):.4f} | " if five else " | – | ")
                             + f"{statistics.mean(r['elapsed_s'] for r in sel):.1f} s |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--budget", type=float, default=5.0, help="machine seconds per comparison")
    parser.add_argument("--target-ms", type=float, default=20.0, help="duration of one workload invocation")
    parser.add_argument("--aa-reps", type=int, default=4)
    parser.add_argument("--ab-reps", type=int, default=2)
    parser.add_argument("--conditions", default="quiet,sync,neighbour")
    parser.add_argument("--tools", default=",".join(TOOLS))
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--summarize", type=Path, metavar="JSON", help="only re-print the table of a results file")
    args = parser.parse_args()
    if args.summarize:
        print(summarize(json.loads(args.summarize.read_text())["rows"]))
        return

    work = str(native_binary("duet-workload"))
    ops = int(subprocess.run([work, "integer", "--calibrate", str(args.target_ms)], capture_output=True,
                             text=True, check=True).stdout.strip())
    # Invocation time including process start-up, to turn the budget into run counts.
    probe = subprocess.run(["hyperfine", "-N", "--runs", "20", "--style", "none", "--export-json", "/dev/stdout",
                            f"{work} integer --ops {ops}"], capture_output=True, text=True, check=True)
    t = json.loads(probe.stdout)["results"][0]["mean"]
    parallel_runs = max(5, int(args.budget / t))
    sequential_runs = max(5, int(args.budget / (2 * t)))
    print(f"workload: integer --ops {ops}, {t * 1000:.1f} ms per invocation; runs: parallel {parallel_runs}, "
          f"sequential {sequential_runs}", flush=True)

    rng = random.Random(args.seed)
    rows: list[dict[str, object]] = []
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.strftime("%Y-%m-%dT%H:%M:%S")
    for cond in args.conditions.split(","):
        jobs = [(tool, scale) for tool in args.tools.split(",") for scale in SLOWDOWNS
                for _ in range(args.aa_reps if scale == 1.0 else args.ab_reps)]
        rng.shuffle(jobs)  # interleave tools and cases so that drifts in the background hit all alike
        with condition(cond, rng.randrange(2**31)) as freezer, tempfile.TemporaryDirectory() as tmp:
            for tool, scale in jobs:
                cmd_a = f"{work} integer --ops {ops}"
                cmd_b = cmd_a if scale == 1.0 else f"{cmd_a} --scale {scale}"
                seed = rng.randrange(2**31)
                if tool == "hyperfine":
                    res = run_hyperfine(cmd_a, cmd_b, sequential_runs, seed, freezer, Path(tmp))
                else:
                    runs = sequential_runs if tool == "sequential" else parallel_runs
                    res = run_duetbench(tool, cmd_a, cmd_b, runs, seed, freezer, Path(tmp))
                row = {"condition": cond, "tool": tool, "scale": scale, "seed": seed, **res}
                rows.append(row)
                w = res["wall"]
                print(f"{cond:9} {tool:10} x{scale:.2f}: {w['ratio']['estimate']:.4f} "
                      f"[{w['ratio']['low']:.4f}, {w['ratio']['high']:.4f}] width {w['relative_ci_width']:.2%} "
                      f"{w['verdict']:13} {res['elapsed_s']:.1f}s", flush=True)
                (args.out / "accuracy.json").write_text(json.dumps(
                    {"started": started, "ops": ops, "invocation_s": t, "budget_s": args.budget,
                     "parallel_runs": parallel_runs, "sequential_runs": sequential_runs, "rows": rows}, indent=1))
    table = summarize(rows)
    header = (f"# bench/accuracy — {started}\n\nInteger workload, {t * 1000:.1f} ms per invocation; "
              f"{args.budget:g} machine-seconds per comparison ({parallel_runs} pairs for duet/aduet, "
              f"{sequential_runs} runs per side for sequential and hyperfine); 99% CIs of B/A on wall time; "
              f"{args.aa_reps} A/A and {args.ab_reps} A/B comparisons per slowdown, per tool and condition.\n\n")
    (args.out / "accuracy.md").write_text(header + table + "\n")
    print(table)


if __name__ == "__main__":
    main()
