"""bench/analysis: how fast is the whole analysis of a big campaign, and is our bootstrap worth having?

1. A synthetic A/A campaign (duetbench.analyze.simulate) of about a million iterations —
   100 benchmarks × 3 methods × 20 runs × 2 sides × 85 iterations (10 of them warm-up) — gets
   every study of `duetbench.analyze.studies.run_studies`: per benchmark and method the ratio CI
   (10 000 bootstrap replicates, 99%), verdict and U test; A/A false-positive rates; minimal
   detectable slowdown on a 16-point grid (async duet recomputed per slowdown); shuffle analysis
   (20 shuffles); runtime saving; overlap statistics; CI-width reduction. Wall time and memory
   (peak RSS growth over the loaded campaign, resource.getrusage) are reported.
   The hierarchical estimator is timed apart on a few benchmarks and extrapolated.
2. Our bootstrap against `scipy.stats.bootstrap(method="percentile")` on the same data: the same
   CI within Monte Carlo error (judged against the spread of our own CI bounds over seeds), and
   the time ratio — for the bootstrap primitive alone and for the studies' workloads
   (the slowdown grid and the shuffles), where we avoid repeating bootstraps.

    PYTHONPATH=src python3 bench/analysis.py [--benchmarks 100] [--quick]

Writes bench/results/analysis.json and bench/results/analysis.md.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from duetbench.analyze.bootstrap import percentile_ci
from duetbench.analyze.api import AnalysisOptions, analyze
from duetbench.analyze.pairing import paired_runs
from duetbench.analyze.shuffle import shuffle_analysis
from duetbench.analyze.simulate import simulate_campaign
from duetbench.analyze.slowdown import DEFAULT_SLOWDOWNS, minimal_detectable_slowdown
from duetbench.analyze.studies import CampaignStudies, run_studies, split_groups

RESULTS = Path(__file__).resolve().parent / "results"
REPLICATES = 10_000
LEVEL = 0.99


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux reports KiB


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def best_of(fn: Callable[[], Any], repeats: int = 5) -> tuple[Any, float]:
    """Fastest of a few runs: for calls of milliseconds, where one scheduler hiccup would decide."""
    results = [timed(fn) for _ in range(repeats)]
    return results[0][0], min(t for _, t in results)


def summarize(st: CampaignStudies) -> dict[str, Any]:
    """The campaign-level figures, to show the analysis did what it should on known truth."""
    fp = {m: {"ci_rate": r.ci_rate, "u_rate": r.u_rate, "benchmarks": r.benchmarks} for m, r in (st.false_positives or {}).items()}
    curves = {m: {"slowdowns": c.slowdowns.round(3).tolist(), "share_equal_ci": c.share_equal_ci.round(3).tolist(),
                  "share_equal_u": c.share_equal_u.round(3).tolist()} for m, c in st.slowdown_curves.items()}
    rel = np.array([o.relative_overlap_time for o in st.overlaps])
    return {
        "false_positives": fp,
        "slowdown_curves": curves,
        "width_reduction_geomean": {m: st.width_reduction.geomean_reduction(m) for m in ("duet", "aduet")},
        "shuffle_width_ratio_geomean": st.shuffle_ratio,
        "runtime_speedup_median": {m: st.runtime.median_speedup(m) for m in ("duet", "aduet")},
        "relative_overlap_time_median": dict(zip([f"{m:.1f}" for m in st.overlaps[0].m], np.median(rel, axis=0).round(3).tolist()))
        if st.overlaps else {},
    }


def scipy_ci(data: np.ndarray, seed: int) -> tuple[float, float]:
    from scipy import stats

    r = stats.bootstrap((data,), np.mean, n_resamples=REPLICATES, confidence_level=LEVEL, method="percentile",
                        vectorized=True, random_state=seed)
    return float(r.confidence_interval.low), float(r.confidence_interval.high)


def ours_ci(data: np.ndarray, seed: int) -> tuple[float, float]:
    r = percentile_ci(data, np.mean, confidence_level=LEVEL, n_resamples=REPLICATES, random_state=seed)
    return r.low, r.high


def resampling_floor(x: np.ndarray) -> float:
    """What any exact percentile bootstrap of the mean must do, and nothing else: draw REPLICATES × n
    uniform indices (numpy's cheapest unbiased draw, 16-bit) and sum the values they pick."""
    rng = np.random.default_rng(0)
    n = x.size
    step = max(1, (1 << 16) // n)
    total = 0.0
    for start in range(0, REPLICATES, step):
        m = min(step, REPLICATES - start)
        total += float(x[rng.integers(0, n, size=(n, m), dtype=np.uint16)].sum())
    return total


def agreement(samples: list[np.ndarray], seeds: int = 5) -> dict[str, Any]:
    """Same CI within Monte Carlo error: |ours − scipy| per bound, in units of the SD of our bound
    over `seeds` seeds (√2·SD is the SD of a difference of two independent estimates)."""
    z = []
    for k, x in enumerate(samples):
        ours = np.array([ours_ci(x, 1000 * k + s) for s in range(seeds)])
        sd = ours.std(axis=0, ddof=1)
        theirs = np.array(scipy_ci(x, 7 + k))
        diff = np.abs(ours[0] - theirs)
        # With very few units every replicate set can give the same bound (sd 0): equal is 0 SD off.
        z.append(np.where(diff == 0, 0.0, diff / np.maximum(np.sqrt(2) * sd, np.finfo(float).tiny)))
    zz = np.array(z)
    from scipy import stats

    # With the SD estimated from `seeds` draws, z follows roughly Student's t with seeds − 1 df.
    return {"samples": len(samples), "seeds": seeds, "max_z": float(zz.max()), "median_z": float(np.median(zz)),
            "share_within_3sd": float(np.mean(zz <= 3.0)), "expected_within_3sd": float(1 - 2 * stats.t.sf(3.0, seeds - 1))}


def bootstrap_bench(table: Any, n_bench: int) -> dict[str, Any]:
    groups = [g for _, m, g in split_groups(table) if m == "duet"][:n_bench]
    run_level = []  # per-run mean log ratio of the sync duet: what its CI resamples (20 values)
    pair_level = []  # all pairs' log ratios (1500 values): the "merged" estimator's units
    for g in groups:
        a, b = paired_runs(g.measured())
        run_level.append(np.array([np.log(y / x).mean() for x, y in zip(a, b)]))
        pair_level.append(np.log(np.concatenate(b) / np.concatenate(a)))
    out: dict[str, Any] = {}
    for name, data in ((f"run means ({run_level[0].size} values)", run_level),
                       (f"pairs ({pair_level[0].size} values)", pair_level[:10])):
        _, t_ours = timed(lambda d=data: [ours_ci(x, 1) for x in d])  # type: ignore[misc]
        _, t_scipy = timed(lambda d=data: [scipy_ci(x, 1) for x in d])  # type: ignore[misc]
        _, t_floor = timed(lambda d=data: [resampling_floor(x) for x in d])  # type: ignore[misc]
        out[name] = {"cis": len(data), "ours_s": t_ours, "scipy_s": t_scipy, "speedup": t_scipy / t_ours,
                     "floor_s": t_floor, "best_possible_speedup": t_scipy / t_floor,
                     "agreement": agreement(data[:20])}

    # Every benchmark's CI at once (mean_cis, the batched form; shuffle.py uses it), against
    # scipy's own batched form (axis=-1, one shared set of resamples, as ours).
    from scipy import stats

    from duetbench.analyze.bootstrap import mean_cis

    for name, data in ((f"run means, all benchmarks in one call ({len(run_level)} × {run_level[0].size} values)",
                        np.array(run_level)),
                       (f"pairs, batched ({min(10, len(pair_level))} × {pair_level[0].size} values)",
                        np.array(pair_level[:10]))):
        def ours_batched(d: np.ndarray = data) -> tuple[np.ndarray, np.ndarray]:
            r = mean_cis(d, confidence_level=LEVEL, n_resamples=REPLICATES, random_state=1)
            return r.low, r.high

        def scipy_batched(d: np.ndarray = data) -> tuple[np.ndarray, np.ndarray]:
            r = stats.bootstrap((d,), np.mean, n_resamples=REPLICATES, confidence_level=LEVEL, method="percentile",
                                axis=-1, vectorized=True, random_state=2)
            return r.confidence_interval.low, r.confidence_interval.high

        (o_lo, o_hi), t_ours = best_of(ours_batched)
        (s_lo, s_hi), t_scipy = best_of(scipy_batched)
        ratio = (o_hi - o_lo) / (s_hi - s_lo)
        out[name] = {"cis": len(data), "ours_s": t_ours, "scipy_s": t_scipy, "speedup": t_scipy / t_ours,
                     "width_ratio_ours_over_scipy_median": float(np.median(ratio)),
                     "width_ratio_ours_over_scipy_p5_p95": np.percentile(ratio, [5, 95]).tolist()}

    # The slowdown grid of the sync duet (16 slowdowns): scipy needs a bootstrap per slowdown; we
    # bootstrap once and scale (exact, see slowdown.py). Bootstraps only, on identical data.
    grid = DEFAULT_SLOWDOWNS

    def ours_grid() -> list[np.ndarray]:
        res = []
        for x in run_level:
            r = percentile_ci(x, np.mean, confidence_level=LEVEL, n_resamples=REPLICATES, random_state=1)
            res.append(np.exp(np.array([r.low, r.high]))[None, :] * (1.0 + grid)[:, None])
        return res

    def scipy_grid() -> list[np.ndarray]:
        return [np.exp(np.array([scipy_ci(x + np.log1p(s), 1) for s in grid])) for x in run_level]

    ours_m, t_ours = timed(ours_grid)
    theirs_m, t_scipy = timed(scipy_grid)
    rel = np.max([np.max(np.abs(o / t - 1)) for o, t in zip(ours_m, theirs_m)])
    out["slowdown grid, sync duet (16 CIs per benchmark)"] = {
        "cis": len(run_level) * grid.size, "ours_s": t_ours, "scipy_s": t_scipy, "speedup": t_scipy / t_ours,
        "max_relative_bound_difference": float(rel),
    }

    # Shuffles: the same 20 re-pairings per benchmark (per-run mean log ratios, shuffles × runs);
    # ours: one array operation over all shuffles (shuffle.py), scipy: one call per shuffle.
    from duetbench.analyze.shuffle import _relative_widths, _shuffled_log_gms

    rng = np.random.default_rng(3)
    mats = []
    for g in groups[:20]:
        a, b = paired_runs(g.measured())
        mats.append(_shuffled_log_gms(np.log(np.array(a)), np.log(np.array(b)), 20, True, rng))

    def ours_shuffle() -> list[np.ndarray]:
        return [_relative_widths(gms, LEVEL, REPLICATES, np.random.default_rng(2)) for gms in mats]

    def scipy_shuffle() -> list[np.ndarray]:
        res = []
        for gms in mats:
            w = []
            for k, row in enumerate(gms):
                low, high = scipy_ci(row, k)
                w.append((np.exp(high) - np.exp(low)) / np.exp(row.mean()))
            res.append(np.array(w))
        return res

    ours_s, t_ours = timed(ours_shuffle)
    theirs_s, t_scipy = timed(scipy_shuffle)
    ratio = np.concatenate(ours_s) / np.concatenate(theirs_s)
    out["shuffle analysis (20 shuffles per benchmark)"] = {
        "cis": 20 * len(mats), "ours_s": t_ours, "scipy_s": t_scipy, "speedup": t_scipy / t_ours,
        "width_ratio_ours_over_scipy_median": float(np.median(ratio)),
        "width_ratio_ours_over_scipy_p5_p95": np.percentile(ratio, [5, 95]).tolist(),
    }
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--benchmarks", type=int, default=100)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--iterations", type=int, default=75)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--quick", action="store_true", help="10 benchmarks, for a smoke test")
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--render", action="store_true", help="only rewrite analysis.md from analysis.json")
    args = ap.parse_args()
    if args.render:
        (args.out / "analysis.md").write_text(render(json.loads((args.out / "analysis.json").read_text())))
        return 0
    n_bench = 10 if args.quick else args.benchmarks

    load_before = os.getloadavg()
    import scipy.stats  # noqa: F401  (imported before timing: ~1 s once per process, not analysis)

    sim, t_sim = timed(lambda: simulate_campaign(benchmarks=n_bench, runs=args.runs, iterations=args.iterations,
                                                 warmup=args.warmup, asym_sd=0.01, seed=2026))
    table = sim.table
    rss_loaded = rss_mb()
    st, t_all = timed(lambda: run_studies(table, aa=True, n_resamples=REPLICATES, n_shuffles=20, seed=1))
    rss_peak = rss_mb()

    # Each study alone, on the same groups (so the parts can be compared; their sum exceeds the
    # total a little because each pass re-splits the table).
    groups = split_groups(table)
    parts: dict[str, float] = {}
    _, parts["ratio CIs + U tests (run means)"] = timed(lambda: [analyze(m, g, AnalysisOptions(estimator="run-means", n_resamples=REPLICATES, seed=1)) for _, m, g in groups])
    _, parts["minimal detectable slowdown"] = timed(lambda: [minimal_detectable_slowdown(g, m, n_resamples=REPLICATES, random_state=1) for _, m, g in groups])
    _, parts["shuffle analysis"] = timed(lambda: [shuffle_analysis(g, m, n_shuffles=20, n_resamples=REPLICATES, random_state=1) for _, m, g in groups if m != "sequential"])
    few = groups[:6]
    _, t_hier = timed(lambda: [analyze(m, g, AnalysisOptions(estimator="hierarchical", n_resamples=REPLICATES, seed=1)) for _, m, g in few])
    hier_extrapolated = t_hier / len(few) * len(groups)

    boot = bootstrap_bench(table, n_bench)
    load_after = os.getloadavg()
    result = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "numpy": np.__version__,
                    "scipy": __import__("scipy").__version__, "load_average_before": load_before, "load_average_after": load_after},
        "campaign": {"iterations": len(table), "benchmarks": n_bench, "methods": 3, "runs": args.runs,
                     "iterations_per_side": args.iterations + args.warmup, "warmup": args.warmup,
                     "bootstrap_replicates": REPLICATES, "confidence_level": LEVEL},
        "simulate_s": t_sim,
        "analysis_s": t_all,
        "rss_loaded_mb": rss_loaded,
        "rss_peak_mb": rss_peak,
        "rss_growth_mb": rss_peak - rss_loaded,
        "parts_s": parts,
        "hierarchical_s_measured": {"groups": len(few), "seconds": t_hier},
        "hierarchical_s_extrapolated_all_groups": hier_extrapolated,
        "studies": summarize(st),
        "bootstrap_vs_scipy": boot,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "analysis.json").write_text(json.dumps(result, indent=2, default=float) + "\n")
    (args.out / "analysis.md").write_text(render(result))
    print(render(result))
    return 0


def render(r: dict[str, Any]) -> str:
    c = r["campaign"]
    m = r["machine"]
    lines = [
        f"# Analysis speed ({r['date']})",
        "",
        f"Synthetic A/A campaign: **{c['iterations']:,} iterations** = {c['benchmarks']} benchmarks × {c['methods']} methods × "
        f"{c['runs']} runs × 2 sides × {c['iterations_per_side']} iterations ({c['warmup']} warm-up). "
        f"{c['bootstrap_replicates']:,} bootstrap replicates, {c['confidence_level']:.0%} CIs. "
        f"{m['cpus']} CPUs, Python {m['python']}, numpy {m['numpy']}, scipy {m['scipy']}; "
        f"load average before {m['load_average_before'][0]:.2f}, after {m['load_average_after'][0]:.2f} "
        "(other work on the machine slows every figure here).",
        "",
        f"**Whole analysis (all studies): {r['analysis_s']:.1f} s** (goal < 30 s); memory: peak RSS "
        f"{r['rss_peak_mb']:.0f} MB, {r['rss_growth_mb']:.0f} MB above the loaded campaign ({r['rss_loaded_mb']:.0f} MB). "
        f"Simulating the campaign took {r['simulate_s']:.1f} s (not counted).",
        "",
        "| part (run alone) | seconds |",
        "|---|---:|",
    ]
    lines += [f"| {k} | {v:.1f} |" for k, v in r["parts_s"].items()]
    h = r["hierarchical_s_measured"]
    lines += [
        f"| hierarchical estimator instead of run means (measured on {h['groups']} groups, extrapolated) | "
        f"{r['hierarchical_s_extrapolated_all_groups']:.0f} |",
        "",
        "The hierarchical estimator (runs, then iterations within runs) resamples every iteration in every replicate, "
        "so it is opt-in; the default (run means, the papers' estimator) resamples the 20 run summaries.",
        "",
        "## Our bootstrap against scipy.stats.bootstrap (percentile, same data, same replicates)",
        "",
        "| workload | CIs | ours s | scipy s | speed-up | same CI? |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for name, b in r["bootstrap_vs_scipy"].items():
        if "agreement" in b:
            a = b["agreement"]
            same = (f"max {a['max_z']:.1f} MC SD, {a['share_within_3sd']:.0%} of bounds within 3 SD "
                    f"(expected {a['expected_within_3sd']:.0%}: SD from {a['seeds']} seeds)")
        elif "max_relative_bound_difference" in b:
            same = f"bounds differ by ≤ {b['max_relative_bound_difference']:.2%} (MC error)"
        else:
            lo, hi = b["width_ratio_ours_over_scipy_p5_p95"]
            same = f"CI width ours/scipy: median {b['width_ratio_ours_over_scipy_median']:.3f}, 90% within {lo:.3f}–{hi:.3f}"
        lines.append(f"| {name} | {b['cis']} | {b['ours_s']:.2f} | {b['scipy_s']:.2f} | {b['speedup']:.1f}× | {same} |")
    # What the studies bootstrap for the sync duet benchmarks, as they do it: each benchmark's ratio CI
    # alone, then its slowdown grid and its shuffles.
    studies_rows = [k for k in r["bootstrap_vs_scipy"] if k.startswith(("run means (", "slowdown grid", "shuffle"))]
    together = ""
    if len(studies_rows) == 3:
        ours = sum(r["bootstrap_vs_scipy"][k]["ours_s"] for k in studies_rows)
        theirs = sum(r["bootstrap_vs_scipy"][k]["scipy_s"] for k in studies_rows)
        cis = sum(r["bootstrap_vs_scipy"][k]["cis"] for k in studies_rows)
        lines.append(f"| **the three kinds of CI the studies make for the sync duet, together** (rows 1, 5 and 6) | {cis} | "
                     f"{ours:.2f} | {theirs:.2f} | **{theirs / ours:.1f}×** | as in those rows |")
        together = f"the studies' CIs of the sync duet together ({theirs / ours:.1f}×) and "
    s = r["studies"]
    speed = {k: b["speedup"] for k, b in r["bootstrap_vs_scipy"].items()}
    met = [k for k, v in speed.items() if v >= 10]
    floors = {k: b for k, b in r["bootstrap_vs_scipy"].items() if "floor_s" in b}
    lines += [
        "",
        (f"Goal ≥ 10× faster than scipy for the same result: met for {together}{', '.join(met) if met else 'no workload'}; "
         f"not for {', '.join(k for k in speed if k not in met) or 'none'}."),
        "",
        "**Why not for one isolated CI**: any exact bootstrap must draw replicates × n uniform indices and pick the "
        "values they point at. Doing only that, with numpy's cheapest unbiased draw (16-bit), takes "
        + "; ".join(f"{b['floor_s']:.2f} s for the {b['cis']} CIs of {k}, so no exact resampler can beat scipy by more "
                    f"than {b['best_possible_speedup']:.1f}× there (ours: {b['speedup']:.1f}×)" for k, b in floors.items())
        + ". Only a different computation (a saddlepoint approximation of the bootstrap distribution of a mean, "
        "Davison & Hinkley 1988) could go further; it is not the papers' method and is not used. Where one data set "
        "needs many CIs the speed-up holds: every benchmark at once, the slowdown grid (16 CIs per benchmark and "
        "method) and the shuffles (20 per duet benchmark), which are 36 of the 37 CIs the studies make per duet "
        "benchmark; the one left is its ratio CI, a single call.",
        "",
        "Bootstraps only, on identical inputs. Ours draws its indices as 16-bit integers (numpy makes two from one "
        "32-bit word) in cache-sized chunks. Batched (every benchmark at once, "
        "scipy given its own batched form, `axis=-1`), ours resamples counts once and forms all replicate means as "
        "one matrix product (the mean is linear), then takes the two tail quantiles exactly from each row's tails "
        "instead of partitioning all 10 000 replicates (analyze/quantile.py). The slowdown grid scales one bootstrap "
        "distribution exactly (slowdown.py); the shuffles use the batched form (shuffle.py).",
        "",
        "## What the studies found on this campaign (known truth: A/A, synchronized interference)",
        "",
        "| method | A/A false positives (CI) | (U test) | MDS share equal at 0 / 1% / 2% / 5% (CI) |",
        "|---|---:|---:|---|",
    ]
    for meth, fp in s["false_positives"].items():
        cur = s["slowdown_curves"][meth]["share_equal_ci"]
        lines.append(f"| {meth} | {fp['ci_rate']:.1%} | {fp['u_rate']:.1%} | {cur[0]:.2f} / {cur[1]:.2f} / {cur[2]:.2f} / {cur[5]:.2f} |")
    w = s["width_reduction_geomean"]
    sh = s["shuffle_width_ratio_geomean"]
    rt = s["runtime_speedup_median"]
    lines += [
        "",
        (f"CI-width reduction sequential → duet {w['duet']:.1f}×, → aduet {w['aduet']:.1f}× (geomean); shuffling widens the "
         f"duet CIs {sh.get('duet', float('nan')):.1f}×, aduet {sh.get('aduet', float('nan')):.1f}×; runtime speed-up of "
         f"duet {rt['duet']:.2f}×, aduet {rt['aduet']:.2f}× (median); median relative overlap time "
         + ", ".join(f"{v:.2f} at m = {k}" for k, v in s["relative_overlap_time_median"].items() if k in ("0.0", "0.4", "0.8"))
         + "."),
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
