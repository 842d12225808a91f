"""bench/real_data: what duetbench's own estimators say on real A/B data from outside the team.

Data: tests/importers/data (provenance and licences in its README).
  - cloud-benchmark-conductor (Japke et al. 2023): Go microbenchmarks, RMIT sequential, 39 experiments ×
    21 benchmarks; severity 0 = A/A, severities 1…2048 = injected slowdowns of growing cost.
  - faasterBench (Grambow et al. 2023): FaaS durations; mode A pairs f1/f2 inside one invocation (duet-like),
    modes B/C run them apart (sequential); regression 0 % (A/A) and +5 %.
  - asynchronous-duet thesis (Drozdík 2023): per-run run times only (no A/B sides), so only the run-time
    saving can be computed.
For each: A/A false alarms per method, detection rates, relative CI widths (ours against the authors'
published method), paired against unpaired.

Writes bench/results/real_data.json and bench/results/real_data.md.

    PYTHONPATH=src python3 bench/real_data.py [--resamples 4000] [--seed 1]
"""
from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from duetbench.analyze.comparison import compare
from duetbench.model.table import IterationTable
from duetbench.importers import read_csv
from duetbench.importers.datasets import CONDUCTOR, FAASTERBENCH, THESIS_RQ1
from duetbench.importers.published import faasterbench_change, median_ratio_study, runtime_speedup

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "importers" / "data"
RESULTS = ROOT / "bench" / "results"


def _runs(rows: IterationTable, side: str) -> list[np.ndarray]:
    return rows.where(rows.side == side).runs_of(side)


def conductor(resamples: int, seed: int) -> dict[str, Any]:
    """Our sequential estimator (ratio of means, hierarchical bootstrap over the 9 trials of 5 values)
    against the authors' median ratio with an unstructured bootstrap of medians."""
    table = read_csv(DATA / "cloud-benchmark-conductor" / "fbs_microbenchmarks_rmit.csv.gz", CONDUCTOR).table
    theirs = {r.benchmark: r for r in median_ratio_study(table, n_resamples=resamples, random_state=seed)}
    rows: list[dict[str, Any]] = []
    for bench, _method, g in table.groups():
        ours = compare("sequential", _runs(g, "A"), _runs(g, "B"), n_resamples=resamples, random_state=seed,
                       u_test=False)
        t = theirs[bench]
        issue, severity, name = bench.split("/", 2)
        rows.append({"issue": issue, "severity": int(severity), "benchmark": name,
                     "ours": {"ratio": ours.ratio.estimate, "low": ours.ratio.low, "high": ours.ratio.high,
                              "verdict": ours.verdict, "rciw": ours.relative_ci_width},
                     "median_ratio": {"ratio": t.ratio, "low": t.low, "high": t.high, "change_found": t.change_found,
                                      "rciw": (t.high - t.low) / t.ratio}})
    by_sev: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_sev[r["severity"]].append(r)
    per_severity = [{"severity": s, "n": len(rs),
                     "ours_flagged": sum(r["ours"]["verdict"] != "no difference" for r in rs),
                     "ours_slower": sum(r["ours"]["verdict"] == "slower" for r in rs),
                     "median_ratio_flagged": sum(r["median_ratio"]["change_found"] for r in rs),
                     "median_ratio_slower": sum(r["median_ratio"]["low"] > 1 for r in rs),
                     "ours_median_rciw": float(np.median([r["ours"]["rciw"] for r in rs])),
                     "median_ratio_median_rciw": float(np.median([r["median_ratio"]["rciw"] for r in rs]))}
                    for s, rs in sorted(by_sev.items())]
    return {"comparisons": rows, "per_severity": per_severity}


def faas(resamples: int, seed: int) -> dict[str, Any]:
    """Paired (duet: mode A, runs = invocations of 3 pairs) against unpaired (sequential: modes B/C) with our
    estimators, next to the notebook's median-of-ratios estimates."""
    table = read_csv(DATA / "faasterBench" / "faasterbench_wosc23_long.csv.gz", FAASTERBENCH).table
    rows = []
    for bench in dict.fromkeys(table.benchmark.tolist()):
        g = table.where(table.benchmark == bench)
        platform, regression, wrappers, calls = bench.split("/")
        entry: dict[str, Any] = {"platform": platform, "regression_pct": int(regression),
                                 "wrappers": int(wrappers), "calls": int(calls)}
        duet = g.where(g.method == "duet")
        seq = g.where(g.method == "sequential")
        for key, method, rs in (("duet", "duet", duet), ("sequential", "sequential", seq)):
            result = compare(method, _runs(rs, "A"), _runs(rs, "B"), n_resamples=resamples,  # type: ignore[arg-type]
                             random_state=seed, u_test=False)
            entry[key] = {"ratio": result.ratio.estimate, "low": result.ratio.low, "high": result.ratio.high,
                          "verdict": result.verdict, "rciw": result.relative_ci_width, "units": result.ratio.n}
        for key, paired in (("notebook_paired", True), ("notebook_unpaired", False)):
            c = faasterbench_change(table, bench, paired=paired, n_resamples=resamples, random_state=seed)
            entry[key] = {"change_pct": c.estimate_pct, "low_pct": c.low_pct, "high_pct": c.high_pct,
                          "flagged": not c.low_pct <= 0 <= c.high_pct, "rciw": (c.high_pct - c.low_pct) / 100}
        rows.append(entry)
    summary = []
    for platform in ("aws", "google"):
        for regression in (0, 5):
            rs = [r for r in rows if r["platform"] == platform and r["regression_pct"] == regression]
            line: dict[str, Any] = {"platform": platform, "regression_pct": regression, "configs": len(rs)}
            for key in ("duet", "sequential"):
                line[f"{key}_flagged"] = sum(r[key]["verdict"] != "no difference" for r in rs)
                line[f"{key}_median_rciw"] = float(np.median([r[key]["rciw"] for r in rs]))
                line[f"{key}_median_change_pct"] = float(np.median([(r[key]["ratio"] - 1) * 100 for r in rs]))
            for key in ("notebook_paired", "notebook_unpaired"):
                line[f"{key}_flagged"] = sum(r[key]["flagged"] for r in rs)
                line[f"{key}_median_rciw"] = float(np.median([r[key]["rciw"] for r in rs]))
            summary.append(line)
    return {"configs": rows, "summary": summary}


def thesis() -> dict[str, Any]:
    table = read_csv(DATA / "asynchronous-duet" / "rq1_run_times.csv.gz", THESIS_RQ1).table
    out: dict[str, Any] = {}
    for method in ("aduet", "duet"):
        speedup = runtime_speedup(table, duet_method=method)
        out[method] = {env: {"benchmarks": len(v), "median_speedup": float(np.median(v))}
                       for env in ("AWS:t3.medium", "bare-metal", "teaching")
                       if (v := [x for k, x in speedup.items() if k.startswith(env + "/")])}
    return out


def _markdown(res: dict[str, Any]) -> str:
    c, f, t = res["conductor"], res["faasterbench"], res["thesis"]
    lines = [
        "# Real outside data through duetbench's estimators", "",
        f"`PYTHONPATH=src python3 bench/real_data.py --resamples {res['resamples']} --seed {res['seed']}` "
        f"({res['seconds']:.0f} s). 99 % CIs. Data and licences: tests/importers/data/README.md. "
        "The published figures themselves are reproduced by tests/importers/test_published.py.", "",
        "## cloud-benchmark-conductor (Go microbenchmarks, RMIT sequential; severity 0 = A/A)", "",
        "Ours: `compare(\"sequential\")`: ratio of means, hierarchical bootstrap over 9 trials × 5 values. "
        "Authors: median ratio, bootstrap of medians over the 45 values, trials ignored. "
        "Flagged = CI excludes 1; RCIW = relative CI width.", "",
        "| severity | n | ours flagged | ours slower | authors flagged | authors slower | ours median RCIW | "
        "authors median RCIW |", "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for s in c["per_severity"]:
        lines.append(f"| {s['severity']} | {s['n']} | {s['ours_flagged']} | {s['ours_slower']} | "
                     f"{s['median_ratio_flagged']} | {s['median_ratio_slower']} | {s['ours_median_rciw']:.3f} | "
                     f"{s['median_ratio_median_rciw']:.3f} |")
    aa = c["per_severity"][0]
    lines += ["", f"A/A false alarms (severity 0): ours {aa['ours_flagged']}/{aa['n']} "
              f"({aa['ours_flagged'] / aa['n']:.1%}), authors' {aa['median_ratio_flagged']}/{aa['n']} "
              f"({aa['median_ratio_flagged'] / aa['n']:.1%}); nominal α = 1 %.", "",
              "## faasterBench (FaaS; paired in one invocation vs. run apart; regression 0 % = A/A, +5 %)", "",
              "Ours: `compare(\"duet\")` on mode A (runs = invocations of 3 pairs, all pairs) and "
              "`compare(\"sequential\")` on modes B/C (every invocation one run). Notebook: the published "
              "median-of-ratios estimators (paired: last pair of each invocation, triplicated, as published).", "",
              "| platform | regression | configs | duet flagged | sequential flagged | notebook paired flagged | "
              "notebook unpaired flagged | duet median RCIW | sequential median RCIW | notebook paired RCIW | "
              "notebook unpaired RCIW | duet median change | sequential median change |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for s in f["summary"]:
        lines.append(f"| {s['platform']} | {s['regression_pct']} % | {s['configs']} | {s['duet_flagged']} | "
                     f"{s['sequential_flagged']} | {s['notebook_paired_flagged']} | {s['notebook_unpaired_flagged']} | "
                     f"{s['duet_median_rciw']:.4f} | {s['sequential_median_rciw']:.4f} | "
                     f"{s['notebook_paired_median_rciw']:.4f} | {s['notebook_unpaired_median_rciw']:.4f} | "
                     f"{s['duet_median_change_pct']:+.2f} % | {s['sequential_median_change_pct']:+.2f} % |")
    lines += ["", "Observations: pairing halves the CI width (duet vs sequential RCIW), but in faasterBench's mode A "
              "f1 always runs before f2 in the same invocation (README: the random order never happens), so the "
              "paired A/A comparisons carry an order effect (+0.7 % AWS, +1.9 % Google) that a narrow CI turns "
              "into false alarms: our duet estimator flags most A/A configurations. The notebook's paired "
              "estimator hides part of this by using only the last pair of each invocation. A synchronous duet "
              "needs A and B started together (or their order randomized), not one after the other.", "",
              "## asynchronous-duet thesis (per-run run times; no A/B sides, so no A/A study possible)", "",
              "Run-time speedup of duets over sequential runs, mean(sequential)/mean(duet) − 1 per benchmark, "
              "median per environment (thesis: async 5 % / 73 % / 53 %).", "",
              "| duet | environment | benchmarks | median speedup |", "|---|---|---:|---:|"]
    for method, envs in t.items():
        for env, v in envs.items():
            lines.append(f"| {method} | {env} | {v['benchmarks']} | {v['median_speedup']:.1%} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resamples", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    start = time.perf_counter()
    res: dict[str, Any] = {"resamples": args.resamples, "seed": args.seed,
                           "conductor": conductor(args.resamples, args.seed),
                           "faasterbench": faas(args.resamples, args.seed), "thesis": thesis()}
    res["seconds"] = time.perf_counter() - start
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "real_data.json").write_text(json.dumps(res, indent=1) + "\n")
    (RESULTS / "real_data.md").write_text(_markdown(res))
    print(_markdown(res))


if __name__ == "__main__":
    main()
