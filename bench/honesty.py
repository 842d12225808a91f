"""bench/honesty: are duetbench's 99 % intervals 99 %? (issue 13, "99 % means 99 %").

Seeded simulations of known truth (`duetbench.analyze.honesty`), run through the very functions the CLI
uses: `compare` for `duet compare --runs N`, `monitor.watch` after every run for the adaptive stop
(precision and evidence rules, robust filter on), `analyze.api.analyze` for `duet analyze`'s estimators.
For every cell: the miss rate (for A/A: false alarms) with its Wilson 99 % bound, and for adaptive
cells the median stopping n. The bar: ≤ 2 % at a nominal 1 %.

Writes bench/results/honesty.json and bench/results/honesty.md.

    python bench/honesty.py [--sims 2000] [--quick]
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from duetbench.analyze import honesty

RESULTS = Path(__file__).resolve().parent / "results"


def cells(quick: bool) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    ns = (5, 10, 20, 50) if quick else (5, 10, 20, 30, 50, 100)
    for method in ("duet", "sequential", "aduet"):
        for n in ns:
            for noise in honesty.NOISES:
                for ratio in (1.0, 1.05):
                    for interval in ("t", "bootstrap"):
                        if interval == "bootstrap" and (ratio != 1.0 or noise != "normal"):
                            continue
                        out.append(dict(kind="fixed", method=method, n=n, noise=noise, ratio=ratio,
                                        interval=interval))
    for method, sigmas in (("duet", (0.0025, 0.005, 0.01, 0.02)), ("sequential", (0.0025, 0.005, 0.01)),
                           ("aduet", (0.005, 0.01))):
        for sigma in sigmas:
            for noise in ("normal", "t3", "outliers"):
                for evidence in (True, False):
                    out.append(dict(kind="adaptive", method=method, sigma=sigma, noise=noise, ratio=1.0,
                                    evidence=evidence))
            out.append(dict(kind="adaptive", method=method, sigma=sigma, noise="normal", ratio=1.03, evidence=True))
    for method in ("duet", "sequential"):
        out.append(dict(kind="adaptive", method=method, sigma=0.2, noise="normal", ratio=1.5, evidence=True))
    for method in ("duet", "sequential", "aduet"):
        if method == "aduet":
            continue
        for estimator in ("run-means", "hierarchical"):
            for runs in (3, 5, 10):
                out.append(dict(kind="campaign", method=method, estimator=estimator, runs=runs, ratio=1.0))
    # --method auto: the pilot chooses, then the chosen method's adaptive comparison (duet compare), or its
    # runs with the chosen pilot run among them (duet run, methods: {auto: N}); duet_sigma = sigma is where
    # both methods cost the same and the choice flips most.
    for sigma in (0.005, 0.01):
        for noise in ("normal", "outliers"):
            out.append(dict(kind="auto", method="auto", sigma=sigma, noise=noise, ratio=1.0))
    # ... and a neighbour that lands on one side of the duet's pairs from the 30th unit on: the re-decision
    # (a new pilot, the other method started afresh or the same one going on) is simulated as the CLI runs it.
    for neighbour_sigma in (0.03, 0.1):
        for noise in ("normal", "outliers"):
            out.append(dict(kind="auto", method="auto", sigma=0.005, noise=noise, ratio=1.0, neighbour_after=30,
                            neighbour_sigma=neighbour_sigma))
    for runs in (5, 10, 30):
        for duet_sigma in (0.005, 0.01, 0.02):
            for noise in ("normal", "t3", "outliers"):
                out.append(dict(kind="campaign_auto", method="auto", runs=runs, duet_sigma=duet_sigma, noise=noise,
                                ratio=1.0))
    # A CPU hog that the scheduler moves onto the CPU the faster side left idle (the CPU placement's second
    # adversary, plan/schedule.py): fixed n and the adaptive stop, a mild and a heavy hog.
    # `follow`: the chance that the hog moves after a pair (1: always; 0.5: a random walk between the CPUs).
    for follow in (1.0, 0.5):
        for slowdown in (1.1, 1.5):
            for n in (5, 10, 30, "adaptive"):
                out.append(dict(kind="hog", method="duet", n=n, slowdown=slowdown, follow=follow, sigma=0.01,
                                ratio=1.0))
    return out


def run(cell: dict[str, object], sims: int, seed: int) -> honesty.Rate:
    m = str(cell["method"])
    ratio = float(cell["ratio"])  # type: ignore[arg-type]
    if cell["kind"] == "fixed":
        return honesty.fixed_n(m, int(cell["n"]), ratio=ratio, noise=str(cell["noise"]),  # type: ignore[arg-type]
                               sims=sims, seed=seed, interval=str(cell["interval"]))
    if cell["kind"] == "adaptive":
        # Sequential invocations meet interference separately; without the shared part its noise is σ too.
        return honesty.adaptive(m, ratio=ratio, noise=str(cell["noise"]), sigma=float(cell["sigma"]),  # type: ignore[arg-type]
                                sims=sims, seed=seed, evidence=bool(cell["evidence"]), shared_sigma=0.0)
    if cell["kind"] == "auto":
        after = cell.get("neighbour_after")
        rate, _ = honesty.auto(ratio=ratio, noise=str(cell["noise"]), sigma=float(cell["sigma"]),  # type: ignore[arg-type]
                               sims=sims, seed=seed, shared_sigma=0.0,
                               neighbour_after=None if after is None else int(after),  # type: ignore[call-overload]
                               neighbour_sigma=float(cell.get("neighbour_sigma", 0.1)))  # type: ignore[arg-type]
        return rate
    if cell["kind"] == "campaign_auto":
        rate, _ = honesty.campaign_auto(int(cell["runs"]), 20, ratio=ratio, noise=str(cell["noise"]),  # type: ignore[arg-type]
                                        duet_sigma=float(cell["duet_sigma"]), sims=sims, seed=seed)  # type: ignore[arg-type]
        return rate
    if cell["kind"] == "hog":
        if cell["n"] == "adaptive":
            return honesty.hog_adaptive(ratio=ratio, sigma=float(cell["sigma"]), slowdown=float(cell["slowdown"]),  # type: ignore[arg-type]
                                        follow=float(cell["follow"]), sims=sims, seed=seed)  # type: ignore[arg-type]
        return honesty.hog_fixed_n(int(cell["n"]), ratio=ratio, sigma=float(cell["sigma"]),  # type: ignore[arg-type]
                                   slowdown=float(cell["slowdown"]), follow=float(cell["follow"]),  # type: ignore[arg-type]
                                   sims=sims, seed=seed)
    return honesty.campaign(m, str(cell["estimator"]), int(cell["runs"]), 10, ratio=ratio,  # type: ignore[arg-type]
                            sims=sims, seed=seed)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=2000)
    parser.add_argument("--quick", action="store_true", help="fewer sample sizes")
    parser.add_argument("--from-log", type=Path, nargs="+", help="write the results from the JSON lines runs "
                        "printed (all the cells they finished; a later log's cell replaces an earlier one's), "
                        "without simulating")
    parser.add_argument("--only", default="", help="comma-separated KIND or KIND:METHOD (e.g. fixed:aduet,campaign)")
    args = parser.parse_args()
    if args.from_log:
        by_cell: dict[str, dict[str, object]] = {}
        for log in args.from_log:
            for line in log.read_text().splitlines():
                if line.startswith("{"):
                    row = json.loads(line)
                    by_cell[_label({**row, "kind": row["kind"]}) + str(row["kind"])] = row
        rows = list(by_cell.values())
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / "honesty.json").write_text(json.dumps({"sims": args.sims, "cells": rows}, indent=1))
        (RESULTS / "honesty.md").write_text(markdown(rows, args.sims))
        return 0
    RESULTS.mkdir(exist_ok=True)
    rows = []
    t0 = time.monotonic()
    only = [x.split(":") for x in args.only.split(",") if x]
    for k, cell in enumerate(cells(args.quick)):
        if only and not any(o[0] == cell["kind"] and (len(o) == 1 or o[1] == cell["method"]) for o in only):
            continue
        t = time.monotonic()
        r = run(cell, args.sims, seed=10_000 + k)
        rows.append({**cell, "misses": r.misses, "sims": r.sims, "rate": r.rate, "wilson_upper": r.upper(),
                     "median_n": r.median_n, "seconds": round(time.monotonic() - t, 1)})
        print(json.dumps(rows[-1]), flush=True)
    if only and (RESULTS / "honesty.json").exists():  # a part re-run: its cells replace or join the others
        fresh = {_label(r) + str(r["kind"]) for r in rows}
        kept = [r for r in json.loads((RESULTS / "honesty.json").read_text())["cells"]
                if _label(r) + str(r["kind"]) not in fresh]
        rows = kept + rows
    (RESULTS / "honesty.json").write_text(json.dumps({"sims": args.sims, "seconds": time.monotonic() - t0,
                                                      "cells": rows}, indent=1))
    (RESULTS / "honesty.md").write_text(markdown(rows, args.sims))
    return 0


def markdown(rows: list[dict[str, object]], sims: int) -> str:
    lines = [f"# Interval honesty by simulation ({sims} per cell; nominal 99 %: miss rate should be ≤ 1 %, bar 2 %)", ""]
    # The hog cells are an adversary of the CPU placement, reported in their own section with their limit.
    t_rows = [r for r in rows if r.get("interval", "t") == "t" and r["kind"] != "hog"]
    worst = max(t_rows, key=lambda r: float(r["rate"]))  # type: ignore[arg-type]
    over = [r for r in t_rows if float(r["rate"]) > 0.02]  # type: ignore[arg-type]
    lines += [f"Default intervals: worst cell {float(worst['rate']):.2%} ({_label(worst)}); "  # type: ignore[arg-type]
              f"{len(over)} of {len(t_rows)} cells above 2 %.", ""]
    for kind, title in (("fixed", "Fixed n (`--runs N`)"), ("adaptive", "Adaptive stop (as `duet compare` stops)"),
                        ("campaign", "Campaign estimators (`duet analyze`)"),
                        ("auto", "`duet compare --method auto` (pilot, choice, then the adaptive comparison; with "
                                 "`neighbour_after`, a neighbour lands on one side of the duet's pairs from that unit "
                                 "on, and the re-decisions are simulated as the CLI makes them)"),
                        ("campaign_auto", "`duet run` with `methods: {auto: N}` (the chosen pilot run counts)"),
                        ("hog", "Duet beside a CPU hog that moves to the CPU the faster side left (CPU placement)")):
        lines += [f"## {title}", "", "| cell | misses | rate | Wilson 99% upper | median n |", "|---|---:|---:|---:|---:|"]
        for r in rows:
            if r["kind"] == kind:
                lines.append(f"| {_label(r)} | {r['misses']}/{r['sims']} | {float(r['rate']):.2%} | "  # type: ignore[arg-type]
                             f"{float(r['wilson_upper']):.2%} | {float(r['median_n']):g} |")  # type: ignore[arg-type]
        if kind == "hog":
            lines += ["", "A hog that follows the faster side (follow=1) is balanced out by the placement at every n. "
                      "One that lands on a random side (follow=0.5) makes the pair ratios two-valued: with 5 or 10 "
                      "pairs all or all but one hit on the same side often enough (1 in 16, 1 in 50) that no interval "
                      "over so few values can tell it from a real difference (6.7 % and 2.35 % before). What can is "
                      "each pair's record: a `--runs N` duet of at most 10 pairs records other processes' activity "
                      "around every pair, and when most pairs had one side held off its CPU while another process "
                      "ran (`analyze.interference`, modelled here from the hog the simulation places), its wall "
                      "ratio is unbounded. The default adaptive stop, which cannot stop on evidence before 10 "
                      "pairs, keeps the level without it."]
        lines.append("")
    return "\n".join(lines)


def _label(r: dict[str, object]) -> str:
    keys = [k for k in ("method", "n", "sigma", "duet_sigma", "slowdown", "follow", "noise", "ratio", "interval",
                        "evidence", "estimator", "runs", "neighbour_after", "neighbour_sigma") if k in r]
    return ", ".join(f"{k}={r[k]}" for k in keys)


if __name__ == "__main__":
    raise SystemExit(main())
