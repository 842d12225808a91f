"""bench/trust: are duetbench's default answers the best this machine can give, and exactly as sure as
they say? (issue 13, item 6)

Two parts, real processes throughout (the built-in integer workload, a CPU-bound command):

1. **A/A false alarms**: `duet compare CMD CMD` with default settings, repeated, per cell (command length
   × machine condition). Reports the share of verdicts other than "no difference" with its Wilson 99 %
   interval, and the scatter of the estimates relative to the intervals' half-widths (for an honest
   interval, |log estimate| / half-width exceeds 1 about 1 % of the time).
2. **Equal machine time**: for B doing 2 % more work, every method (auto, duet, aduet, sequential) and
   hyperfine get the same wall-clock budget; the median relative width of the 99 % CI of B/A (wall).

Machine conditions: `quiet`; `hog` (one CPU-bound process at normal priority, anywhere); `stops`
(the whole machine stopped at random moments: one SCHED_FIFO spinner per CPU, both bursting together
on a shared random schedule, like a hypervisor's steal).

Writes bench/results/trust.json and trust.md. Nothing else may run meanwhile; the load average is
recorded.

    python bench/trust.py [--aa 100] [--conditions quiet,hog] [--ms 20,100] [--matrix] [--budget 6]
"""
from __future__ import annotations

import argparse
import json
import math
import os
import random
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from duetbench.execute.native import native_binary

RESULTS = Path(__file__).resolve().parent / "results"


def workload(ms: float) -> str:
    w = native_binary("duet-workload")
    ops = subprocess.run([w, "integer", "--calibrate", str(ms)], capture_output=True, text=True, check=True).stdout
    return f"{w} integer --ops {int(ops)}"


#: The interpreter that runs `duet` (`--duet-python`: another install, e.g. an older version, beside this one).
DUET_PYTHON = [sys.executable]


def duet_compare(a: str, b: str, extra: list[str], seed: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.json"
        t0 = time.monotonic()
        proc = subprocess.run([*DUET_PYTHON, "-m", "duetbench", "compare", a, b, "--seed", str(seed), "--no-progress",
                               "--db", str(Path(tmp) / "db.sqlite"), "--export-json", str(out), *extra],
                              capture_output=True, text=True)
        elapsed = time.monotonic() - t0
        if proc.returncode != 0:
            return {"error": proc.stderr.strip()[-300:], "elapsed_s": elapsed}
        data = json.loads(out.read_text())
    wall = next(c for c in data["comparisons"] if c["metric"] == "wall")
    r = wall["ratio"]
    auto = data["options"].get("auto") or {}
    # auto's deciding cost (issue 13: ≤ 15 %): every pilot's wall time, without the time its invocations took
    # to store (the first pilot's holds the store's one-time opening, which every method pays).
    pilot_s = sum(h.get("elapsed_s", 0.0) - h.get("storing_s", 0.0) for h in auto.get("history", []))
    return {"elapsed_s": elapsed, "method": data["method"], "runs": wall["runs"], "estimate": r["estimate"],
            "low": r["low"], "high": r["high"], "interval": r.get("interval"), "verdict": wall["verdict"],
            "rciw": wall["relative_ci_width"], "stopped_by": data["options"].get("stopped_by"),
            "auto": auto.get("reason"), "pilot_s": pilot_s, "pilots": len(auto.get("history", [])),
            "warnings": data["warnings"]}


def hyperfine_width(a: str, b: str, budget: float, ms: float) -> dict[str, Any]:
    """hyperfine -N with as many runs as fit the budget, then Fieller's 99 % interval of mean B / mean A."""
    return hyperfine_runs(a, b, max(int(budget / (2 * ms / 1000.0)), 5))


def hyperfine_runs(a: str, b: str, runs: int) -> dict[str, Any]:
    """hyperfine -N with `runs` runs each, then Fieller's 99 % interval of mean B / mean A."""
    import numpy as np

    from duetbench.analyze.interval import fieller_ratio

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "h.json"
        t0 = time.monotonic()
        subprocess.run(["hyperfine", "-N", "--runs", str(runs), "--export-json", str(out), a, b],
                       capture_output=True, check=True)
        elapsed = time.monotonic() - t0
        times = [np.array(r["times"]) for r in json.loads(out.read_text())["results"]]
    iv = fieller_ratio(times[0], times[1], 0.99)
    return {"elapsed_s": elapsed, "runs": runs, "estimate": iv.estimate, "low": iv.low, "high": iv.high,
            "rciw": (iv.high - iv.low) / iv.estimate}


@contextmanager
def condition(name: str, seed: int) -> Iterator[None]:
    procs: list[subprocess.Popen[bytes]] = []
    if name == "hog":
        procs.append(subprocess.Popen([sys.executable, "-c", "while True: pass"]))
    elif name == "stops":
        cpus = sorted(os.sched_getaffinity(0))
        for cpu in cpus:
            procs.append(subprocess.Popen(["chrt", "-f", "50", "taskset", "-c", str(cpu), sys.executable, "-c",
                                           _STOPPER, str(seed)]))
    elif name != "quiet":
        raise SystemExit(f"unknown condition {name!r}: use quiet, hog or stops")
    try:
        time.sleep(0.3)
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()


# Both spinners draw the same schedule from the same seed and a shared epoch, so they stop both CPUs at
# the same moments: every ~200 ms (exponential gaps) a 2–20 ms burst.
_STOPPER = """
import random, sys, time
rng = random.Random(int(sys.argv[1]))
epoch = int(time.time()) + 1
t = float(epoch)
while True:
    t += rng.expovariate(1 / 0.2)
    burst = rng.uniform(0.002, 0.02)
    while time.time() < t:
        time.sleep(min(0.05, max(t - time.time(), 0)))
    end = t + burst
    while time.time() < end:
        pass
"""


def wilson(k: int, n: int, z: float = 2.576) -> tuple[float, float]:
    if n == 0:
        return (math.nan, math.nan)
    p = k / n
    centre = p + z * z / (2 * n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return ((centre - half) / (1 + z * z / n), (centre + half) / (1 + z * z / n))


def aa_cell(ms: float, cond: str, reps: int, seed: int, earlier: list[dict[str, Any]] | None = None,
            extra: list[str] | None = None, tag: str = "",
            on_row: Callable[[dict[str, Any]], None] = lambda cell: None) -> dict[str, Any]:
    """`reps` more A/A comparisons of one cell, after the `earlier` rows of this cell (another session's,
    with `--add`): seeds continue where they stopped, so no comparison is repeated. `on_row` gets the cell
    so far after every comparison (to be stored at once: a killed bench keeps what it measured)."""
    cmd = workload(ms)
    rows = list(earlier or [])
    host = platform_cpu()
    with condition(cond, seed):
        for k in range(len(rows), len(rows) + reps):
            rows.append({**duet_compare(cmd, cmd, list(extra or []), seed + k), "cpu": host,
                         "load": os.getloadavg()[0]})
            print(json.dumps({"ms": ms, "condition": cond, "tag": tag, **rows[-1]}), flush=True)
            on_row(summarize_aa(ms, cond, rows, extra, tag))
    return summarize_aa(ms, cond, rows, extra, tag)


def platform_cpu() -> str:
    """The host CPU's model name (it changes between sessions on these VMs)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def summarize_aa(ms: float, cond: str, rows: list[dict[str, Any]], extra: list[str] | None = None, tag: str = ""
                 ) -> dict[str, Any]:
    ok = [r for r in rows if "error" not in r]
    alarms = sum(r["verdict"] != "no difference" for r in ok)
    # An unbounded interval is exported as null (JSON has no infinity): it scatters nothing.
    scatter = [abs(math.log(r["estimate"])) / (math.log(r["high"] / r["low"]) / 2) for r in ok
               if r["high"] is not None and r["low"] and r["high"] > r["low"] and math.isfinite(r["high"])]
    methods: dict[str, int] = {}
    for r in ok:
        methods[r["method"]] = methods.get(r["method"], 0) + 1
    return {"ms": ms, "condition": cond, "tag": tag, "args": list(extra or []), "comparisons": len(ok),
            "errors": len(rows) - len(ok),
            "false_alarms": alarms, "rate": alarms / max(len(ok), 1), "wilson99": wilson(alarms, len(ok)),
            "estimate_beyond_half_width": sum(s > 1 for s in scatter) / max(len(scatter), 1),
            "median_scatter": statistics.median(scatter) if scatter else math.nan,
            "median_seconds": statistics.median(r["elapsed_s"] for r in ok) if ok else math.nan,
            "median_runs": statistics.median(r["runs"] for r in ok) if ok else math.nan,
            "methods": methods, "cpus": sorted({str(r.get("cpu", "unknown")) for r in rows}), "rows": rows}


def matrix_cell(ms: float, cond: str, budget: float, reps: int, seed: int) -> dict[str, Any]:
    w = native_binary("duet-workload")
    ops = int(subprocess.run([w, "integer", "--calibrate", str(ms)], capture_output=True, text=True,
                             check=True).stdout)
    a, b = f"{w} integer --ops {ops}", f"{w} integer --ops {ops} --scale 1.02"
    fixed = ["--time-budget", str(budget), "--target-width", "0.00001", "--max-runs", "100000",
             "--no-stop-on-evidence"]
    out: dict[str, Any] = {"ms": ms, "condition": cond, "budget_s": budget, "widths": {}, "rows": []}
    with condition(cond, seed):
        for k in range(reps):
            order = ["auto", "duet", "aduet", "sequential", "hyperfine"]
            random.Random(seed + k).shuffle(order)
            for m in order:
                r = (hyperfine_width(a, b, budget, ms) if m == "hyperfine"
                     else duet_compare(a, b, ["--method", m, *fixed], seed + k))
                # "method" is the one asked for; "measured_by" what duet ran (auto's choice).
                out["rows"].append({**r, "measured_by": r.get("method", m), "method": m})
                print(json.dumps({"ms": ms, "condition": cond, **out["rows"][-1]}), flush=True)
    for m in ("auto", "duet", "aduet", "sequential", "hyperfine"):
        ws = [r["rciw"] for r in out["rows"] if r["method"] == m and "rciw" in r]
        out["widths"][m] = statistics.median(ws) if ws else math.nan
    return out


def goals_cell(reps: int, seed: int) -> dict[str, Any]:
    """Issue 13's speed goals for evident differences, default settings, whole-process wall time."""
    w = native_binary("duet-workload")
    ops = int(subprocess.run([w, "integer", "--calibrate", "10"], capture_output=True, text=True, check=True).stdout)
    cases = {
        "noisy sleeps (10-50 ms vs 30-70 ms)": ("sleep 0.0$(shuf -i 10-50 -n1)", "sleep 0.0$(shuf -i 30-70 -n1)",
                                                ["--shell", "sh"], 6.0),
        "20% more work, 10 ms command": (f"{w} integer --ops {ops}", f"{w} integer --ops {ops} --scale 1.2", [], 3.0),
    }
    out: dict[str, Any] = {}
    for name, (a, b, extra, goal) in cases.items():
        rows = [duet_compare(a, b, extra, seed + k) for k in range(reps)]
        for r in rows:
            print(json.dumps({"goal": name, **r}), flush=True)
        ok = [r for r in rows if "error" not in r]
        out[name] = {"goal_s": goal, "median_s": statistics.median(r["elapsed_s"] for r in ok) if ok else math.nan,
                     "max_s": max((r["elapsed_s"] for r in ok), default=math.nan),
                     "verdicts": [r["verdict"] for r in ok], "stopped_by": [r["stopped_by"] for r in ok],
                     "methods": [r["method"] for r in ok], "rows": rows}
    return out


def relabel(result: dict[str, Any], seed: int) -> None:
    """Restore each matrix row's requested method from the schedule (a run before the fix above stored
    the method duet measured with, so auto's rows read "duet" or "sequential"), and recompute the widths."""
    for cell in result["matrix"]:
        reps = len(cell["rows"]) // 5
        for k in range(reps):
            order = ["auto", "duet", "aduet", "sequential", "hyperfine"]
            random.Random(seed + k).shuffle(order)
            for j, m in enumerate(order):
                row = cell["rows"][5 * k + j]
                row["measured_by"] = row.get("measured_by", row["method"])
                row["method"] = m
        for m in ("auto", "duet", "aduet", "sequential", "hyperfine"):
            ws = [r["rciw"] for r in cell["rows"] if r["method"] == m and "rciw" in r]
            cell["widths"][m] = statistics.median(ws) if ws else math.nan


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--aa", type=int, default=100, help="A/A comparisons per cell (0: skip)")
    p.add_argument("--ms", default="20,100")
    p.add_argument("--conditions", default="quiet,hog")
    p.add_argument("--matrix", action="store_true", help="also the equal-machine-time matrix")
    p.add_argument("--matrix-conditions", default="quiet,stops,hog")
    p.add_argument("--matrix-reps", type=int, default=3)
    p.add_argument("--budget", type=float, default=6.0)
    p.add_argument("--seed", type=int, default=20261124)
    p.add_argument("--goals", type=int, default=0, help="repetitions of the evident-difference speed goals")
    p.add_argument("--add", action="store_true", help="add to bench/results/trust.json: the cells run extend "
                   "their earlier comparisons (another session's), the others are kept")
    p.add_argument("--aa-args", default="", help="extra `duet compare` options for the A/A cells (default: none, "
                   "the default settings); use with --tag")
    p.add_argument("--tag", default="", help="name the A/A cells run now apart from the default-settings cells "
                   "of the same command and condition (e.g. a placement or version being tested)")
    p.add_argument("--duet-python", default=sys.executable, help="the Python whose duetbench runs the comparisons")
    p.add_argument("--relabel", action="store_true", help="fix the matrix rows of an existing trust.json (see relabel)")
    args = p.parse_args()
    DUET_PYTHON[:] = [args.duet_python]
    if args.relabel:
        result = json.loads((RESULTS / "trust.json").read_text())
        relabel(result, args.seed)
        (RESULTS / "trust.json").write_text(json.dumps(result, indent=1))
        (RESULTS / "trust.md").write_text(markdown(result))
        return 0
    RESULTS.mkdir(exist_ok=True)
    result: dict[str, Any] = {"load_before": os.getloadavg(), "aa": [], "matrix": [], "goals": {}}
    before: dict[str, Any] = {}
    if args.add and (RESULTS / "trust.json").exists():
        # Add to the stored results: cells run now extend their earlier rows; the rest is kept as it was.
        before = json.loads((RESULTS / "trust.json").read_text())
        result.update({k: before.get(k, result[k]) for k in ("aa", "matrix", "goals")})
    if args.goals:
        result["goals"] = goals_cell(args.goals, args.seed)
    for ms in (float(x) for x in args.ms.split(",")):
        for cond in args.conditions.split(","):
            if args.aa:
                cells = result["aa"]
                k = next((i for i, c in enumerate(cells) if c["ms"] == ms and c["condition"] == cond
                          and c.get("tag", "") == args.tag), None)
                if k is None:
                    cells.append({"ms": ms, "condition": cond, "tag": args.tag, "rows": []})
                    k = len(cells) - 1

                def store(cell: dict[str, Any], k: int = k, cells: list[dict[str, Any]] = cells) -> None:
                    cells[k] = cell
                    result["load_after"] = os.getloadavg()
                    _write_json(result)
                    (RESULTS / "trust.md").write_text(markdown(result))

                aa_cell(ms, cond, args.aa, args.seed, cells[k]["rows"], shlex.split(args.aa_args), args.tag, store)
    if args.matrix:
        for cond in args.matrix_conditions.split(","):
            # A condition measured again replaces its earlier row (reps of one version, one host).
            result["matrix"] = [c for c in result["matrix"] if c["condition"] != cond]
            result["matrix"].append(matrix_cell(20.0, cond, args.budget, args.matrix_reps, args.seed))
            result["load_after"] = os.getloadavg()
            _write_json(result)
    result["load_after"] = os.getloadavg()
    (RESULTS / "trust.json").write_text(json.dumps(result, indent=1))
    (RESULTS / "trust.md").write_text(markdown(result))
    print(markdown(result))
    return 0


def _write_json(result: dict[str, Any]) -> None:
    """Replace trust.json whole or not at all: a bench killed while writing keeps the previous file."""
    tmp = RESULTS / "trust.json.tmp"
    tmp.write_text(json.dumps(result, indent=1))
    tmp.replace(RESULTS / "trust.json")


def markdown(result: dict[str, Any]) -> str:
    lines = ["# Trust: real A/A comparisons and equal-machine-time widths", "",
             f"Load average before {result['load_before'][0]:.2f}, after {result['load_after'][0]:.2f}.", ""]
    if result["aa"]:
        lines += ["## A/A false alarms, default settings (`duet compare CMD CMD`)", "",
                  "| command | condition | comparisons | false alarms | rate (Wilson 99%) | estimate beyond half-width "
                  "| median s | median runs | methods chosen | host CPUs |", "|---|---|---:|---:|---|---:|---:|---:|---|---|"]
        for c in result["aa"]:
            lo, hi = c["wilson99"]
            cond = c["condition"] + (f" [{c['tag']}: `{' '.join(c['args'])}`]" if c.get("tag") else "")
            lines.append(f"| {c['ms']:g} ms | {cond} | {c['comparisons']} | {c['false_alarms']} | "
                         f"{c['rate']:.1%} ({lo:.1%}–{hi:.1%}) | {c['estimate_beyond_half_width']:.1%} | "
                         f"{c['median_seconds']:.1f} | {c['median_runs']:g} | {c['methods']} | "
                         f"{', '.join(c.get('cpus', [])) or 'not recorded'} |")
        lines.append("")
    if result.get("goals"):
        lines += ["## Evident differences, default settings: whole `duet compare` wall time", "",
                  "| case | goal | median | max | verdicts | stopped by | methods |", "|---|---:|---:|---:|---|---|---|"]
        for name, g in result["goals"].items():
            lines.append(f"| {name} | ≤ {g['goal_s']:g} s | {g['median_s']:.1f} s | {g['max_s']:.1f} s | "
                         f"{', '.join(g['verdicts'])} | {', '.join(str(x) for x in g['stopped_by'])} | "
                         f"{', '.join(g['methods'])} |")
        lines.append("")
    if result["matrix"]:
        lines += ["## Equal machine time: median relative width of the 99% CI of B/A (wall), B does 2% more", "",
                  "| condition | auto | duet | aduet | sequential | hyperfine + Fieller |", "|---|---:|---:|---:|---:|---:|"]
        for c in result["matrix"]:
            w = c["widths"]
            lines.append(f"| {c['condition']} ({c['budget_s']:g} s) | " + " | ".join(
                f"{w[m]:.2%}" for m in ("auto", "duet", "aduet", "sequential", "hyperfine")) + " |")
        lines += ["", "| condition | repetitions | auto / best fixed | auto chose | auto's pilots: share of its time |",
                  "|---|---:|---:|---|---:|"]
        for c in result["matrix"]:
            w = c["widths"]
            best = min(w[m] for m in ("duet", "aduet", "sequential", "hyperfine"))
            autos = [r for r in c["rows"] if r["method"] == "auto" and "rciw" in r]
            shares = [r["pilot_s"] / r["elapsed_s"] for r in autos if "pilot_s" in r]
            share = f"{statistics.median(shares):.1%} (max {max(shares):.1%})" if shares else "not recorded"
            lines.append(f"| {c['condition']} | {len(autos)} | {w['auto'] / best:.2f}× | "
                         f"{', '.join(r['measured_by'] for r in autos)} | {share} |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
