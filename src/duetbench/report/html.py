"""`duet report`: one self-contained HTML file, readable offline, with every plot of a campaign.

Per benchmark and method: the verdict with each side's time per iteration, both sides' iteration times
over all runs, B/A of every pair over the runs with the CI as a band, the two distributions in two
colours, the pair scatter, the CI as runs accumulate and A and B side by side in time; for the
campaign: the forest of ratios, the method studies in words and charts, the commands, the environment.

Python derives the data of every plot (downsampled where a campaign is large) and embeds it as one JSON
block; a small vanilla script of ours (static/report.js, with the chart helpers of static/charts.js that
the comparisons' page shares) draws the plots as SVG and adds the interaction (hover values, benchmark
selector, sortable table). No plotting library: the charts needed are few and simple, and our own ~40 KB
of script keeps a report free of third-party code and network references.

Escaping: the page comes from a Jinja2 template with autoescape on; the data block goes through
`tojson` (which escapes <, >, & and ' so nothing can close the script element); the script inserts
text only with textContent/setAttribute, never as markup.
"""
from __future__ import annotations

import json
import math
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

import jinja2
import numpy as np

from duetbench.analyze.comparison import ComparisonResult
from duetbench.analyze.overlap import overlap_pairs, overlap_pairs_by_run
from duetbench.analyze.ratio import ratio_of_means_ci
from duetbench.analyze.verdicts import describe_change
from duetbench.model.method import METHODS
from duetbench.model.table import IterationTable
from duetbench.report.campaign import duration
from duetbench.report.distribution import MIN_ITERATION_BINS, shared_histogram
from duetbench.report.exporters.json import clean_json
from duetbench.report.safe_text import visible, visible_deep
from duetbench.report.studies import study_findings
from duetbench.report.units import ci_width, ratio_interval

#: Points per pair scatter; a random subset beyond this keeps a 100-benchmark report to a few MB.
MAX_SCATTER_POINTS = 250
#: Iterations of side A in the side-by-side timelines of all runs together (B's iterations in the same time
#: windows come along): each run shows its first TIMELINE_ITERATIONS // runs, at least MIN_TIMELINE_PER_RUN,
#: so that every run is there and a campaign with many runs stays within a few KB per plot.
TIMELINE_ITERATIONS = 60
MIN_TIMELINE_PER_RUN = 6
#: Runs in the side-by-side timelines, and in the plots of iteration times and pair ratios over the runs: with
#: more (a campaign of 10,000 runs), evenly spaced runs, the first and last among them. Every run drawn made
#: a 300,000-pixel-tall timeline and 300,000 SVG elements that took the browser 12 s to open.
MAX_TIMELINE_RUNS = 12
MAX_PLOTTED_RUNS = 60
#: Points per side in the plot of iteration times over the runs, and pair ratios in the ratio plot; beyond
#: this, each run keeps evenly spaced iterations (its first and last among them).
MAX_SERIES_POINTS = 240
#: Points on a CI-narrowing curve; with more runs, k is spread over 2..R.
MAX_NARROWING_POINTS = 10
#: Bootstrap replicates per CI-narrowing point where its estimator resamples (the t intervals do not).
NARROWING_RESAMPLES = 1000

Row = tuple[str, str, ComparisonResult | None, str]
T = TypeVar("T")


def _sig(x: float, digits: int = 5) -> float | None:
    """Round to `digits` significant digits: the JSON stays small and the plots cannot tell."""
    if not math.isfinite(x):
        return None
    return float(f"{x:.{digits}g}")


def _sig_list(values: np.ndarray, digits: int = 5) -> list[float | None]:
    return [_sig(float(v), digits) for v in values]


def _unit(values: np.ndarray) -> float:
    """The power of 1000 (s, ms, µs, ns) in which the values' median reads between 1 and 1000: sent in it,
    a time takes "2.041" in the JSON rather than "0.002041" (report.js multiplies it back)."""
    positive = values[np.isfinite(values) & (values > 0)]
    if not positive.size:
        return 1.0
    exponent = math.floor(math.log10(float(np.median(positive))) / 3) * 3
    return float(10.0 ** min(0, max(-9, exponent)))


def _run_sides(rows: IterationTable) -> list[tuple[int, np.ndarray, np.ndarray]]:
    """(run, A rows, B rows) as index arrays into `rows`, iteration order, for runs holding both sides."""
    order = np.lexsort((rows.index, rows.side == "B", rows.run))
    run, is_b = rows.run[order], rows.side[order] == "B"
    cuts = np.flatnonzero((np.diff(run) != 0) | (np.diff(is_b) != 0)) + 1
    parts: dict[int, dict[bool, np.ndarray]] = {}
    for idx in np.split(order, cuts) if order.size else []:
        parts.setdefault(int(rows.run[idx[0]]), {})[bool(rows.side[idx[0]] == "B")] = idx
    return [(r, p[False], p[True]) for r, p in parts.items() if False in p and True in p]


def _groups(table: IterationTable) -> list[tuple[str, str, IterationTable]]:
    """(benchmark, method, all its rows) in the order of `IterationTable.groups`, in one sort rather than
    a scan of the whole table per group (which dominates with 100 benchmarks)."""
    if not len(table):
        return []
    names, first, bench_code = np.unique(table.benchmark, return_index=True, return_inverse=True)
    rank = np.empty(names.size, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(names.size)  # first-seen order
    method_code = np.full(len(table), len(METHODS), dtype=np.int64)
    for i, m in enumerate(METHODS):
        method_code[table.method == m] = i
    key = rank[bench_code] * (len(METHODS) + 1) + method_code
    order = np.argsort(key, kind="stable")
    cuts = np.flatnonzero(np.diff(key[order])) + 1
    out = []
    for idx in np.split(order, cuts):
        code = int(method_code[idx[0]])
        if code < len(METHODS):
            out.append((str(table.benchmark[idx[0]]), METHODS[code], table.where(idx)))
    return out


def _estimate(method: str, rows: IterationTable, confidence_level: float, n_resamples: int,
              u_test: bool = False) -> ComparisonResult:
    """B/A of one benchmark and method from its measured rows, exactly as `duet analyze` computes it."""
    from duetbench.analyze.api import AnalysisOptions, analyze

    return analyze(method, rows, AnalysisOptions(confidence_level=confidence_level, n_resamples=n_resamples,
                                                 u_test=u_test))


def _narrowing(method: str, rows: IterationTable, confidence_level: float) -> list[list[float | None]]:
    """[k, estimate, low, high] with the CI recomputed on the first k runs, k = 2..R (spread when R is large);
    a fifth element 1 where high is unbounded (JSON has no inf)."""
    if method == "aduet" and not rows.has_timestamps():
        return []
    run_ids = np.unique(rows.run)
    total = run_ids.size
    if total < 2:
        return []
    ks = np.unique(np.linspace(2, total, min(MAX_NARROWING_POINTS, total - 1)).round().astype(int))
    if method == "sequential":
        # Run means, not the hierarchical bootstrap of the summary: a dozen hierarchical bootstraps per
        # benchmark would dominate the report's time, and the curve only shows how the CI narrows.
        means = {side: _run_means(rows.where(rows.side == side)) for side in ("A", "B")}
    out = []
    for k in ks:
        try:
            if method == "sequential":
                first = set(run_ids[:k].tolist())
                a, b = ([v for r, v in means[s].items() if r in first] for s in ("A", "B"))
                ratio = ratio_of_means_ci(a, b, confidence_level=confidence_level,
                                          n_resamples=NARROWING_RESAMPLES, random_state=0)
            else:
                ratio = _estimate(method, rows.where(np.isin(rows.run, run_ids[:k])), confidence_level,
                                  NARROWING_RESAMPLES).ratio
        except ValueError:
            continue  # too few units at this k (e.g. a run without measured iterations); later k may work
        point = [int(k), _sig(ratio.estimate), _sig(ratio.low), _sig(ratio.high)]
        out.append(point + [1] if ratio.high == math.inf else point)
    return out


def _run_means(rows: IterationTable) -> dict[int, float]:
    """Each run's mean value, in one pass (a scan of the rows per run was quadratic in the runs)."""
    ids, inverse = np.unique(rows.run, return_inverse=True)
    means = np.bincount(inverse, weights=rows.value) / np.bincount(inverse)
    return dict(zip(ids.tolist(), means.tolist(), strict=True))


def _subsample(n: int, limit: int) -> np.ndarray:
    if n <= limit:
        return np.arange(n)
    return np.sort(np.random.default_rng(0).choice(n, size=limit, replace=False))


def _pair_indices(method: str, rows: IterationTable) -> tuple[np.ndarray, np.ndarray, str] | None:
    """(A rows, B rows, how they pair) of every pair that entered the duet estimators, run by run:
    iteration k with k (duet), iterations overlapping by more than 40% (aduet)."""
    runs = _run_sides(rows)
    if method == "duet":
        a_idx, b_idx = [], []
        for _, ia, ib in runs:
            n = min(ia.size, ib.size)
            a_idx.append(ia[:n])
            b_idx.append(ib[:n])
        if not a_idx:
            return None
        ia, ib = np.concatenate(a_idx), np.concatenate(b_idx)
        kind = "iteration k of A with iteration k of B, per run"
    elif method == "aduet" and rows.has_timestamps() and runs:
        ra = np.concatenate([x for _, x, _ in runs])
        rb = np.concatenate([y for _, _, y in runs])
        try:
            pairs, _ = overlap_pairs_by_run(rows.start_ns[ra], rows.end_ns[ra], rows.start_ns[rb], rows.end_ns[rb],
                                            rows.run[ra], rows.run[rb])
        except ValueError:
            return None
        ia, ib = ra[pairs.a_index], rb[pairs.b_index]
        kind = "iterations overlapping by more than 40% of their length, per run"
    else:
        return None
    return (ia, ib, kind) if ia.size else None


def _pairs(method: str, rows: IterationTable) -> dict[str, Any] | None:
    """A against B for every pair that entered the duet estimators (a random subset of a large campaign's)."""
    found = _pair_indices(method, rows)
    if found is None:
        return None
    ia, ib, kind = found
    keep = _subsample(ia.size, MAX_SCATTER_POINTS)
    unit = _unit(rows.value)
    return {"a": _sig_list(rows.value[ia[keep]] / unit, 4), "b": _sig_list(rows.value[ib[keep]] / unit, 4),
            "unit": unit, "run": rows.run[ia[keep]].tolist(), "shown": int(keep.size), "total": int(ia.size),
            "kind": kind}


def _spread(n: int, keep: int) -> np.ndarray:
    """`keep` evenly spaced positions of 0..n-1, the first and the last among them; all when n <= keep.

    Integer arithmetic that report.js repeats (`positions`), so the page gets the values without their
    positions."""
    if n <= keep:
        return np.arange(n)
    i = np.arange(keep, dtype=np.int64)
    return (i * (n - 1) + (keep - 1) // 2) // (keep - 1)


def _spread_out(items: list[T], limit: int) -> list[T]:
    """At most `limit` of `items`, evenly spaced, the first and the last among them (see `_spread`)."""
    return [items[i] for i in _spread(len(items), limit)]


def _thinned(values: np.ndarray, quota: int) -> dict[str, Any]:
    """A run's values evenly thinned to `quota` (`v`), and how many it had (`n`)."""
    return {"v": _sig_list(values[_spread(values.size, quota)], 4), "n": int(values.size)}


def _series(full: IterationTable) -> dict[str, Any] | None:
    """Each side's iteration times run after run, in the order measured, warm-ups (a run's first
    iterations) included and counted, so that drifts within and between runs show."""
    every = _run_sides(full)
    if not every:
        return None
    runs = _spread_out(every, MAX_PLOTTED_RUNS)
    quota = max(2, MAX_SERIES_POINTS // len(runs))
    unit = _unit(full.value)
    out = []
    for run, ia, ib in runs:
        entry: dict[str, Any] = {"run": run}
        for side, idx in (("A", ia), ("B", ib)):
            warm = full.warmup[idx]
            entry[side] = {**_thinned(full.value[idx] / unit, quota),
                           "w": int(np.argmin(warm)) if not warm.all() else int(warm.size)}
        out.append(entry)
    shown = sum(len(e[s]["v"]) for e in out for s in ("A", "B"))
    total = sum(ia.size + ib.size for _, ia, ib in every)
    return {"runs": out, "unit": unit, "shown": shown, "total": int(total), "runs_total": len(every)}


def _ratio_series(method: str, rows: IterationTable) -> dict[str, Any] | None:
    """B/A of every pair, run by run in the order measured, with each run's geometric mean; sequential
    runs have no pairs: one ratio of means per run."""
    out: list[dict[str, Any]] = []
    if method == "sequential":
        every = _run_sides(rows)
        for run, ia, ib in _spread_out(every, MAX_PLOTTED_RUNS):
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = float(rows.value[ib].mean() / rows.value[ia].mean())
            out.append({"run": run, "v": [_sig(ratio, 5)], "n": 1, "gm": _sig(ratio, 5)})
        return {"runs": out, "kind": "B's mean iteration time over A's, one ratio per run",
                "runs_total": len(every)} if out else None
    found = _pair_indices(method, rows)
    if found is None:
        return None
    ia, ib, kind = found
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = rows.value[ib] / rows.value[ia]
    run_of = rows.run[ia]
    all_runs = list(dict.fromkeys(run_of.tolist()))
    run_ids = _spread_out(all_runs, MAX_PLOTTED_RUNS)
    quota = max(2, MAX_SERIES_POINTS // len(run_ids))
    for run in run_ids:
        r = ratio[run_of == run]
        ok = r[np.isfinite(r) & (r > 0)]
        out.append({"run": int(run), **_thinned(r, quota),
                    "gm": _sig(float(np.exp(np.log(ok).mean())), 5) if ok.size else None})
    return {"runs": out, "kind": kind, "runs_total": len(all_runs)}


def _run_timeline(rows: IterationTable, run: int, ia: np.ndarray, ib: np.ndarray, quota: int) -> dict[str, Any]:
    """One run's first `quota` iterations of A and B's iterations in the same time window, on one time axis
    (ms from the run's first start), with the overlaps. Bars are [start, end, warm-up 0/1]: the index of a bar
    is its position, the run's iterations being shown from its first."""
    ia = ia[np.argsort(rows.start_ns[ia], kind="stable")]
    ib = ib[np.argsort(rows.start_ns[ib], kind="stable")]
    t0 = int(min(rows.start_ns[ia[0]], rows.start_ns[ib[0]]))
    shown_a = ia[:quota]
    horizon = int(rows.end_ns[shown_a[-1]])
    shown_b = ib[rows.start_ns[ib] < horizon]

    def ms(ns: np.ndarray) -> list[float | None]:
        return _sig_list((ns - t0) / 1e6, 4)  # a thousandth of the plot's width at most

    def bars(idx: np.ndarray) -> list[list[Any]]:
        return [[s, e, int(w)] for s, e, w in zip(ms(rows.start_ns[idx]), ms(rows.end_ns[idx]),
                                                   rows.warmup[idx].tolist(), strict=True)]

    overlaps: list[list[float | None]] = []
    try:
        p = overlap_pairs(rows.start_ns[shown_a], rows.end_ns[shown_a], rows.start_ns[shown_b], rows.end_ns[shown_b],
                          min_overlap_rate=0.0)
        lo = np.maximum(rows.start_ns[shown_a][p.a_index], rows.start_ns[shown_b][p.b_index])
        hi = np.minimum(rows.end_ns[shown_a][p.a_index], rows.end_ns[shown_b][p.b_index])
        overlaps = [[s, e, _sig(r, 2)] for s, e, r in zip(ms(lo), ms(hi), p.overlap_rate.tolist(), strict=True)]
    except ValueError:
        pass  # one side's iterations overlap each other (bad timestamps): show the bars without overlaps
    return {"run": run, "A": bars(shown_a), "B": bars(shown_b), "o": overlaps, "n": int(ia.size)}


def _timeline(rows: IterationTable) -> dict[str, Any] | None:
    """Every run's first iterations of A and B side by side in time (see TIMELINE_ITERATIONS)."""
    if not rows.has_timestamps():
        return None
    every = _run_sides(rows)
    if not every:
        return None
    runs = _spread_out(every, MAX_TIMELINE_RUNS)
    quota = max(MIN_TIMELINE_PER_RUN, TIMELINE_ITERATIONS // len(runs))
    out = [_run_timeline(rows, run, ia, ib, quota) for run, ia, ib in runs]
    return {"runs": out, "per_run": quota, "shown": sum(len(r["A"]) for r in out), "total": sum(r["n"] for r in out),
            "runs_total": len(every)}


def _histogram(rows: IterationTable) -> dict[str, Any] | None:
    """Both sides' measured values over shared bins (report/distribution.py)."""
    return shared_histogram(rows.value[rows.side == "A"], rows.value[rows.side == "B"], MIN_ITERATION_BINS)


def _result_row(bench: str, method: str, r: ComparisonResult | None, problem: str) -> dict[str, Any]:
    if r is None:
        return {"benchmark": bench, "method": method, "problem": problem}
    return {"benchmark": bench, "method": method, "estimate": r.ratio.estimate, "low": r.ratio.low,
            "high": r.ratio.high, "verdict": r.verdict, "p": r.u_test_p, "rcw": r.relative_ci_width,
            "runs": r.runs, "cv": r.ratio_cv, "problem": problem, "notes": list(r.notes),
            "a_median": r.a.median, "b_median": r.b.median,
            # An unbounded CI is worded by describe_change as the terminal words it; the JSON's null says no more.
            "unbounded": r.ratio.high == math.inf,
            "change": describe_change(r.ratio, "A", "B") if math.isfinite(r.ratio.estimate + r.ratio.low) else ""}


def _studies(studies: Mapping[str, Any] | None) -> dict[str, Any]:
    """The study results the page charts: detectable slowdown curves, A/A false alarms, machine time."""
    if not studies:
        return {}
    out: dict[str, Any] = {}
    mds = studies.get("mds")
    if isinstance(mds, Mapping):
        out["mds"] = [{"method": str(m), "points": [[_sig(float(s)), _sig(float(q))] for s, q in pts]}
                      for m, pts in mds.items()]
    rates = studies.get("aa_false_positive_rate")
    if isinstance(rates, Mapping) and rates and all(isinstance(v, (int, float)) for v in rates.values()):
        out["aa_false_positive_rate"] = [{"label": str(k), "value": _sig(float(v))} for k, v in rates.items()]
    seconds = studies.get("runtime_seconds")
    if isinstance(seconds, Mapping):
        out["runtime"] = [{"method": str(m), "sequential": _sig(float(v["sequential_s"])),
                           "paired": _sig(float(v["method_s"])), "benchmarks": int(v["benchmarks"])}
                          for m, v in seconds.items()
                          if isinstance(v, Mapping) and {"sequential_s", "method_s", "benchmarks"} <= v.keys()]
    return out


def _environment(environment: Mapping[str, Any]) -> list[tuple[str, str]]:
    rows = []
    for key, value in environment.items():
        if isinstance(value, Mapping):
            rows += [(f"{key}.{k}", _text(v)) for k, v in value.items()]
        else:
            rows.append((str(key), _text(value)))
    return rows


def _text(value: Any) -> str:
    """An environment value as a reader writes it: lists comma-separated, no JSON quoting."""
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return ", ".join(_text(v) for v in value)
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return json.dumps(clean_json(value), default=str)


def report_data(table: IterationTable, results: list[Row], studies: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Everything the page's script draws, JSON-ready (non-finite numbers become null)."""
    cl = next((r.ratio.confidence_level for _, _, r, _ in results if r is not None), 0.99)
    benchmarks: dict[str, dict[str, Any]] = {}
    methods_seen: set[str] = set()
    for bench, method, full in _groups(table):
        rows = full.measured()
        if not len(rows):
            continue
        methods_seen.add(method)
        benchmarks.setdefault(bench, {"name": bench, "methods": []})["methods"].append({
            "method": method,
            "pairs": _pairs(method, rows),
            "series": _series(full),
            "ratios": _ratio_series(method, rows),
            "timeline": _timeline(full) if method != "sequential" else None,
            "hist": _histogram(rows),
            "narrowing": _narrowing(method, rows, cl),
        })
    for bench, *_ in results:
        benchmarks.setdefault(bench, {"name": bench, "methods": []})
    return clean_json({
        "confidence": cl,
        "methods": [m for m in METHODS if any(r[1] == m for r in results) or m in methods_seen],
        "rows": [_result_row(*row) for row in results],
        "benchmarks": list(benchmarks.values()),
        "studies": _studies(studies),
    })


def _fmt(value: float | None, spec: str) -> str:
    return "—" if value is None or not math.isfinite(value) else format(value, spec)


_VERDICT_CLASS = {"slower": "slower", "faster": "faster", "no difference": "same"}


def _table_rows(results: list[Row]) -> list[dict[str, Any]]:
    rows = []
    for bench, method, r, problem in results:
        if r is None:
            rows.append({"benchmark": bench, "method": method, "problem": problem, "ok": False})
            continue
        rows.append({
            "benchmark": bench, "method": method, "ok": True, "problem": problem,
            "a": duration(r.a.median), "a_v": _sig(r.a.median), "b": duration(r.b.median), "b_v": _sig(r.b.median),
            "ratio": _fmt(r.ratio.estimate, ".4f"), "ratio_v": _sig(r.ratio.estimate),
            "ci": ratio_interval(r.ratio.low, r.ratio.high), "low_v": _sig(r.ratio.low),
            "verdict": r.verdict, "verdict_class": _VERDICT_CLASS.get(r.verdict, "same"),
            "p": _fmt(r.u_test_p, ".3g"), "p_v": _sig(r.u_test_p),
            "rcw": ci_width(r.relative_ci_width) if r.relative_ci_width == r.relative_ci_width else "—",
            # An unbounded interval sorts as the widest, not among the blanks.
            "rcw_v": "Infinity" if r.relative_ci_width == math.inf else _sig(r.relative_ci_width),
            "cv": _fmt(None if r.ratio_cv is None else r.ratio_cv * 100, ".2f")
                  + ("%" if r.ratio_cv is not None and math.isfinite(r.ratio_cv) else ""),
            "cv_v": _sig(r.ratio_cv) if r.ratio_cv is not None else None,
            # One number per concept: the CI's units (runs), as the terminal counts them; the pairs beside it.
            "runs": r.ratio.n,
            "pairs": f"{r.runs} iteration pairs" if method != "sequential" and r.runs != r.ratio.n else "",
            "notes": list(r.notes),
        })
    return rows


def _static(name: str) -> str:
    return (resources.files("duetbench.report") / "static" / name).read_text(encoding="utf-8")


def render_html_report(*, title: str, table: IterationTable, results: list[Row], environment: Mapping[str, Any],
                       studies: Mapping[str, Any] | None = None, facts: Mapping[str, str] | None = None,
                       commands: Mapping[str, Mapping[str, str]] | None = None, source: str = "") -> str:
    """The page. `facts`: what identifies the campaign (file, seed, schedule, tool version, ...);
    `commands`: per benchmark, the command of each side; `source`: the campaign file as it was run."""
    env = jinja2.Environment(loader=jinja2.PackageLoader("duetbench.report", "templates"),
                             autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    # No spaces after separators: a tenth of a large campaign's data block.
    env.policies["json.dumps_kwargs"] = {"sort_keys": True, "separators": (",", ":")}
    # Names come from outside (imports): every string shown, in the page or through the script, is `visible`.
    data = report_data(table, results, studies)
    data["commands"] = {str(b): dict(sides) for b, sides in (commands or {}).items()}
    data = visible_deep(data)
    return env.get_template("report.html.j2").render(
        title=visible(title), data=data, rows=visible_deep(_table_rows(results)),
        environment=visible_deep(_environment(environment)), facts=visible_deep(list((facts or {}).items())),
        commands=data["commands"], source=visible(source),
        findings=visible_deep(study_findings(studies, data["confidence"])), confidence=data["confidence"],
        style=_static("report.css"), charts=_static("charts.js"), script=_static("report.js"),
        n_iterations=len(table), n_benchmarks=len(data["benchmarks"]))


def write_html_report(path: Path, *, title: str, table: IterationTable,
                      results: list[tuple[str, str, ComparisonResult | None, str]], environment: dict,
                      studies: dict | None = None, facts: Mapping[str, str] | None = None,
                      commands: Mapping[str, Mapping[str, str]] | None = None, source: str = "") -> None:
    """Write the report of one campaign: `results` rows are (benchmark, method, result or None, problem text)."""
    from duetbench.report.exporters import write_atomically

    html = render_html_report(title=title, table=table, results=results, environment=environment, studies=studies,
                              facts=facts, commands=commands, source=source)
    write_atomically(Path(path), html, "HTML report", hint="choose a writable path with -o")
