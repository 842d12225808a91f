"""bench/threads: does duetbench see a change in a multi-threaded command's parallel speed?

By default duetbench pins each command to one CPU (a duet: one per side), so a program's threads queue on
it and what is compared is the work done on one CPU. `--cpus-per-command all` gives each command every
CPU the process may use, as an unpinned run (hyperfine's) would. This bench measures, in one session:

1. **The verdict**: A = `duet-workload integer --ops N` (one thread, ~MS ms), B = the same ops split over
   T threads (`--threads T`: the same work; on C CPUs it can take ~max(1/T, 1/C) of A's time). Per
   variant, REPS comparisons of fixed --runs: `duet compare` by default, with `--cpus-per-command all`,
   and `hyperfine -N` (Fieller's 99 % interval of its mean ratio, as bench/trust.py): the median B/A,
   its interval, the verdict, and whether the report warned about the threads.
2. **Honesty with all CPUs**: A/A comparisons of the T-thread command against itself with
   `--cpus-per-command all` and otherwise default settings (adaptive stop): false alarms at the nominal
   1 %, with Wilson's 99 % interval.

Writes bench/results/threads.json and threads.md. Nothing else may run meanwhile; the load average is
recorded.

    python bench/threads.py [--ms 20] [--threads 4] [--reps 5] [--runs 30] [--aa 40]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

import trust  # bench/trust.py, beside this file

from duetbench.execute.native import native_binary

RESULTS = Path(__file__).resolve().parent / "results"


def duet_compare(a: str, b: str, extra: list[str], seed: int) -> dict[str, Any]:
    """bench/trust.py's run of one comparison, with whether the report warned about the threads."""
    row = trust.duet_compare(a, b, extra, seed)
    row["warned"] = any("threads or processes at once" in w for w in row.pop("warnings", []))
    return row


def hyperfine_ratio(a: str, b: str, runs: int) -> dict[str, Any]:
    """bench/trust.py's hyperfine -N run with Fieller's 99 % interval, and its verdict."""
    row = trust.hyperfine_runs(a, b, runs)
    row["verdict"] = ("no difference" if row["low"] <= 1 <= row["high"] else
                      "slower" if row["low"] > 1 else "faster")
    return row


def load() -> float:
    return os.getloadavg()[0]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ms", type=float, default=20.0, help="A's work, in ms of one thread")
    p.add_argument("--threads", type=int, default=4, help="B's threads")
    p.add_argument("--reps", type=int, default=5, help="comparisons per variant")
    p.add_argument("--runs", type=int, default=30, help="runs (pairs) per comparison of part 1")
    p.add_argument("--aa", type=int, default=40, help="A/A comparisons with all CPUs (0: skip)")
    p.add_argument("--seed", type=int, default=20261128)
    args = p.parse_args()

    w = native_binary("duet-workload")
    ops = int(subprocess.run([w, "integer", "--calibrate", str(args.ms)], capture_output=True, text=True,
                             check=True).stdout)
    a = f"{w} integer --ops {ops}"
    b = f"{a} --threads {args.threads}"
    cpus = len(os.sched_getaffinity(0))
    loads = [load()]
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    variants: dict[str, list[dict[str, Any]]] = {"duet default": [], "duet --cpus-per-command all": [],
                                                 "hyperfine -N": []}
    for rep in range(args.reps):  # interleaved, so that a change in the machine meets every variant alike
        seed = args.seed + rep
        variants["duet default"].append(duet_compare(a, b, ["--runs", str(args.runs)], seed))
        variants["duet --cpus-per-command all"].append(
            duet_compare(a, b, ["--runs", str(args.runs), "--cpus-per-command", "all"], seed))
        if _has("hyperfine"):
            variants["hyperfine -N"].append(hyperfine_ratio(a, b, args.runs))
        loads.append(load())
        print(json.dumps({k: v[-1] for k, v in variants.items() if v}), flush=True)
    aa: list[dict[str, Any]] = []
    for rep in range(args.aa):
        aa.append(duet_compare(b, b, ["--cpus-per-command", "all"], args.seed + 1000 + rep))
        if rep % 10 == 9:
            loads.append(load())
            print(json.dumps(aa[-1]), flush=True)
    loads.append(load())
    ok = [r for r in aa if "error" not in r]
    alarms = sum(r["verdict"] != "no difference" for r in ok)
    wilson = trust.wilson
    summary = {
        "started": started, "cpus": cpus, "ms": args.ms, "threads": args.threads, "ops": ops, "runs": args.runs,
        "load": [min(loads), max(loads)], "a": a, "b": b,
        "variants": {name: _summary(rows) for name, rows in variants.items() if rows},
        "aa": {"comparisons": len(ok), "errors": len(aa) - len(ok), "false_alarms": alarms,
               "wilson99": wilson(alarms, len(ok)),
               "methods": sorted({r["method"] for r in ok}),
               "median_runs": statistics.median([r["runs"] for r in ok]) if ok else None,
               "median_elapsed_s": statistics.median([r["elapsed_s"] for r in ok]) if ok else None},
        "rows": {"variants": variants, "aa": aa},
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "threads.json").write_text(json.dumps(summary, indent=1) + "\n")
    (RESULTS / "threads.md").write_text(markdown(summary))
    print(markdown(summary))


def _has(program: str) -> bool:
    from shutil import which

    return which(program) is not None


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [r for r in rows if "error" not in r]
    if not ok:
        return {"comparisons": 0, "errors": [r.get("error") for r in rows]}
    by_estimate = sorted(ok, key=lambda r: r["estimate"])
    mid = by_estimate[(len(by_estimate) - 1) // 2]
    return {"comparisons": len(ok), "errors": len(rows) - len(ok), "estimate": mid["estimate"], "low": mid["low"],
            "high": mid["high"], "verdicts": sorted({r["verdict"] for r in ok}),
            "methods": sorted({r.get("method", "-") for r in ok}),
            "warned": sum(bool(r.get("warned")) for r in ok),
            "median_elapsed_s": statistics.median([r["elapsed_s"] for r in ok])}


def markdown(s: dict[str, Any]) -> str:
    lines = ["# A multi-threaded command's parallel speed (bench/threads.py)", "",
             f"Started {s['started']} on {s['cpus']} CPUs; 1-minute load average {s['load'][0]:.2f}–"
             f"{s['load'][1]:.2f} (B's own threads count in it while B runs). A: `duet-workload integer` with "
             f"{s['ops']} ops (~{s['ms']:.0f} ms on one "
             f"thread); B: the same ops split over {s['threads']} threads (`--threads {s['threads']}`). "
             f"On {s['cpus']} CPUs, B can take about 1/{min(s['threads'], s['cpus'])} of A's time at best.", "",
             f"## B/A, {s['runs']} runs per comparison (the comparison with the median estimate)", "",
             "| variant | comparisons | B/A | 99 % CI | verdicts | method | warned about threads "
             "| wall per comparison |",
             "|---|---:|---:|---|---|---|---:|---:|"]
    for name, v in s["variants"].items():
        if not v.get("comparisons"):
            lines.append(f"| {name} | 0 | – | – | {v.get('errors')} | | | |")
            continue
        lines.append(f"| {name} | {v['comparisons']} | {v['estimate']:.3f} | {v['low']:.3f}–{v['high']:.3f} | "
                     f"{', '.join(v['verdicts'])} | {', '.join(v['methods'])} | "
                     f"{v['warned'] if name.startswith('duet') else '–'} | {v['median_elapsed_s']:.1f} s |")
    aa = s["aa"]
    if aa["comparisons"]:
        low, high = aa["wilson99"]
        lines += ["", "## A/A with all CPUs", "",
                  f"B against itself, `--cpus-per-command all`, default settings otherwise (adaptive stop): "
                  f"{aa['false_alarms']} false alarms in {aa['comparisons']} ({100 * low:.1f}–{100 * high:.1f} %, "
                  f"Wilson 99 %; nominal 1 %, goal ≤ 2 %), method {', '.join(aa['methods'])}, median "
                  f"{aa['median_runs']} runs, {aa['median_elapsed_s']:.1f} s each."]
    lines += ["", f"Commands: A `{s['a']}`; B `{s['b']}`.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
