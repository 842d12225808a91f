"""JMH JSON (``-rf json -rff FILE``): one iteration per measurement iteration in ``primaryMetric.rawData``.

Sample mode (``rawDataHistogram``) gives one iteration per JMH iteration whose value is the histogram's
weighted mean: expanding value×count would yield thousands of samples per iteration with no timestamps of
their own, which neither pairs with the other side nor matches the hook's one log line per JMH iteration.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from .._common import Options as _Base
from .._common import duration, load_json, pick_file, require, unit_seconds
from ..model import Iteration, ParseResult, ParserInput

TIMESTAMP_NOTE = ("JMH JSON has no timestamps; add -prof io.duetbench.jmh.DuetProfiler to the JMH command "
                  "so the hook logs every iteration")
_TIME_PER_OP_MODES = ("avgt", "sample", "ss")
_EMPTY_HINT = ("JMH measured nothing there: give it measurement iterations (-i 1 or more), and see its log for "
               "that fork's error")


class Options(_Base):
    file: str | None = None
    """Name of the declared result file; default: the only declared file."""
    params_in_name: bool = True
    """False: name a result by its benchmark method alone, without `:k=v` for its @Params — for an A and
    a B that differ only by `-p` (A's `size=1000` and B's `size=2000` are then one benchmark, compared)."""


def _seconds_per_op(mode: str, unit: str, path: Path, where: str) -> tuple[float, bool]:
    """(factor, inverse): value_s = factor/score when inverse (throughput), else factor·score."""
    if mode == "thrpt":
        require(unit.startswith("ops/"), path, f"{where}: throughput unit {unit!r} is not 'ops/<time unit>'")
        return unit_seconds(unit.removeprefix("ops/"), path, where), True
    require(mode in _TIME_PER_OP_MODES, path,
            f"{where}: unknown mode {mode!r} (known: thrpt, {', '.join(_TIME_PER_OP_MODES)})")
    require(unit.endswith("/op"), path, f"{where}: time unit {unit!r} is not '<time unit>/op'")
    return unit_seconds(unit.removesuffix("/op"), path, where), False


def _name(entry: dict[str, Any]) -> str:
    params = entry.get("params") or {}
    if not params:
        return str(entry["benchmark"])
    return f"{entry['benchmark']}:" + ",".join(f"{k}={v}" for k, v in params.items())


def _histogram_mean(hist: Any, path: Path, where: str) -> float:
    require(isinstance(hist, list) and hist != [], path, f"{where}: expected a non-empty [[value, count], ...] list")
    total = weight = 0.0
    for pair in hist:
        require(isinstance(pair, list) and len(pair) == 2, path, f"{where}: expected [value, count], got {pair!r}")
        value, count = duration(pair[0], path, where), duration(pair[1], path, where)
        total += value * count
        weight += count
    require(weight > 0, path, f"{where}: histogram has no samples")
    return total / weight


def _scores(entry: dict[str, Any], path: Path, where: str) -> list[list[float]]:
    metric = entry["primaryMetric"]
    raw = metric.get("rawData")
    if raw is None and "rawDataHistogram" in metric:
        hist = metric["rawDataHistogram"]
        require(isinstance(hist, list), path, f"{where}: rawDataHistogram is not a list of forks")
        return [[_histogram_mean(it, path, f"{where} rawDataHistogram[{f}][{i}]") for i, it in enumerate(fork)]
                for f, fork in enumerate(hist)]
    require(raw is not None, path, f"{where}: primaryMetric has no rawData",
            hint="do not run JMH with -Djmh.json.rawData=false")
    require(isinstance(raw, list) and all(isinstance(f, list) for f in raw), path,
            f"{where}: rawData is not a list of forks")
    return [[duration(v, path, f"{where} rawData[{f}][{i}]") for i, v in enumerate(fork)] for f, fork in enumerate(raw)]


def parse(inp: ParserInput, options: Options) -> ParseResult:
    path = pick_file(inp, options.file, "jmh")
    doc = load_json(path)
    require(isinstance(doc, list), path, "not a JMH JSON result (expected a top-level array of benchmarks)",
            hint="run JMH with -rf json -rff FILE")
    for n, entry in enumerate(doc):
        require(isinstance(entry, dict) and "benchmark" in entry and "mode" in entry
                and isinstance(entry.get("primaryMetric"), dict), path,
                f"benchmark #{n}: not a JMH result (needs benchmark, mode, primaryMetric)")
    bases = [_name(entry) if options.params_in_name else str(entry["benchmark"]) for entry in doc]
    # `-bm avgt,ss` (or `-bm all`) measures one benchmark in several modes: a 5 ns avgt and a 2 µs ss time
    # are not iterations of one thing, so the mode joins the name of such a benchmark.
    modes: dict[str, set[str]] = {}
    for base, entry in zip(bases, doc, strict=True):
        modes.setdefault(base, set()).add(str(entry["mode"]))
    iterations: list[Iteration] = []
    seen: set[str] = set()
    for base, entry in zip(bases, doc, strict=True):
        where = f"benchmark {entry['benchmark']!r}"
        unit = entry["primaryMetric"].get("scoreUnit")
        require(isinstance(unit, str), path, f"{where}: primaryMetric.scoreUnit missing")
        factor, inverse = _seconds_per_op(str(entry["mode"]), unit, path, where)
        name = base if len(modes[base]) == 1 else f"{base} [{entry['mode']}]"
        if not options.params_in_name:
            require(name not in seen, path,
                    f"{where}: several @Param combinations in one run would share the name {name!r}",
                    hint="keep params_in_name (the default) when one run measures several -p values")
        require(name not in seen, path, f"{where}: {name!r} appears twice in mode {entry['mode']}",
                hint="give each JMH run its own -rff file; do not join result files by hand")
        seen.add(name)
        forks = _scores(entry, path, where)
        shown = f"benchmark {name!r}"  # with its @Params (and mode), as the import names it
        key = "rawData" if entry["primaryMetric"].get("rawData") is not None else "rawDataHistogram"
        require(forks != [], path, f"{shown}: no forks (its {key} is empty)", hint=_EMPTY_HINT)
        index = 0
        for fork, scores in enumerate(forks):
            # else the fork vanishes unnoticed, or the benchmark is called missing from this file
            require(scores != [], path, f"{shown}: fork {fork + 1} of {len(forks)} has no measurement iterations "
                                        f"(its {key}[{fork}] is empty)", hint=_EMPTY_HINT)
            for score in scores:
                if inverse:
                    require(score > 0 and factor / score < float("inf"), path,
                            f"{where}: throughput {score} {unit} cannot be turned into time per op")
                    value = factor / score
                else:
                    value = factor * score
                iterations.append(Iteration(index=index, value_s=value, name=name, fork=fork))
                index += 1
    first = doc[0] if doc else {}
    metadata: dict[str, str | int | float] = {"harness": "JMH", "source": str(path)}
    for key in ("jmhVersion", "jdkVersion", "vmName", "vmVersion", "jvm"):
        if isinstance(first.get(key), str):
            metadata[key] = first[key]
    return ParseResult(iterations, clock="none", timestamp_note=TIMESTAMP_NOTE, metadata=metadata)
