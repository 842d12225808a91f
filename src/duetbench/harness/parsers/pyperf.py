"""pyperf JSON (``-o FILE``, also ``.json.gz``): every run's warmups and values, in seconds per loop.

Runs without values are the calibration runs pyperf adds when ``--loops`` is not given; they are skipped.
Each run is one worker process, numbered in ``Iteration.fork`` (calibration runs excluded). A benchmark
whose runs all calibrate (``--calibrate-loops``) gives no iteration; `ParseResult.benchmarks` still names it.
Names are unique within a file, as pyperf has them (it refuses to load a file where two benchmarks share one):
iterations of two benchmarks under one name would mix their runs.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ...errors import DuetError
from .._common import Options as _Base
from .._common import duration, load_json, pick_file, require
from ..model import Iteration, ParseResult, ParserInput

TIMESTAMP_NOTE = ("pyperf JSON has no per-value timestamps; run pyperf with --hook duet (duetbench's pyperf hook, "
                  "docs/hooks.md) and --loops N so the hook logs every value")

#: How to get values for a benchmark that has none: its runs only calibrated the number of loops.
NO_VALUES_HINT = "measure it with pyperf without --calibrate-loops (or --recalibrate-loops), then use that file"


class Options(_Base):
    file: str | None = None
    """Name of the declared result file; default: the only declared file."""


def _benchmark(bench: Any, n: int, top: dict[str, Any], path: Path) -> tuple[str, list[Iteration]]:
    require(isinstance(bench, dict) and isinstance(bench.get("runs"), list), path,
            f"benchmarks[{n}]: no 'runs' list")
    meta = {**top, **(bench.get("metadata") or {})}
    unit = meta.get("unit", "second")
    require(unit == "second", path, f"benchmarks[{n}]: values are in {unit!r}, not seconds",
            hint="duetbench compares times; do not use --track-memory/--tracemalloc results")
    name = str(meta.get("name", ""))
    iterations: list[Iteration] = []
    fork = 0
    for r, run in enumerate(bench["runs"]):
        where = f"benchmarks[{n}].runs[{r}]"
        require(isinstance(run, dict), path, f"{where} is not an object")
        values = run.get("values") or []
        if not values:
            continue
        warmups = run.get("warmups") or []
        for w, pair in enumerate(warmups):
            require(isinstance(pair, list) and len(pair) == 2, path, f"{where}.warmups[{w}] is not [loops, value]")
            iterations.append(Iteration(len(iterations), duration(pair[1], path, f"{where}.warmups[{w}]"),
                                        warmup=True, name=name, fork=fork))
        for v, value in enumerate(values):
            iterations.append(Iteration(len(iterations), duration(value, path, f"{where}.values[{v}]"),
                                        name=name, fork=fork))
        fork += 1
    return name, iterations


def _hook_states(benchmarks: list[Any], top: dict[str, Any]) -> list[str]:
    """The duet pyperf hook's states (its ``duet_sync`` run metadata) over the worker runs, sorted; pyperf
    moves metadata shared by every run up to the benchmark or the file, so all three levels count."""
    states = set()
    for bench in benchmarks:
        if not isinstance(bench, dict):
            continue
        for run in bench.get("runs") or []:
            if not isinstance(run, dict) or not run.get("values"):
                continue
            meta = {**top, **(bench.get("metadata") or {}), **(run.get("metadata") or {})}
            if isinstance(meta.get("duet_sync"), str):
                states.add(meta["duet_sync"])
    return sorted(states)


def parse(inp: ParserInput, options: Options) -> ParseResult:
    path = pick_file(inp, options.file, "pyperf")
    doc = load_json(path)
    require(isinstance(doc, dict) and isinstance(doc.get("benchmarks"), list), path,
            "not a pyperf JSON result (no 'benchmarks' list)", hint="run pyperf with -o FILE.json")
    top = doc.get("metadata") or {}
    iterations: list[Iteration] = []
    first_of: dict[str, int] = {}  # benchmark name -> its position in the file
    for n, bench in enumerate(doc["benchmarks"]):
        name, its = _benchmark(bench, n, top, path)
        if name in first_of:
            same = f"are both named {name!r}" if name else "both have no name"
            raise DuetError(f"{path}: benchmarks[{first_of[name]}] and benchmarks[{n}] {same}, which pyperf does not "
                            "allow in one file", hint="give each benchmark its own name (pyperf --name), or put "
                                                      "them in two files")
        first_of[name] = n
        iterations += its
    if first_of and not iterations:
        raise DuetError(f"{path}: no pyperf benchmark in it has values ({', '.join(map(repr, first_of))}: "
                        "calibration runs only)", hint=NO_VALUES_HINT)
    metadata: dict[str, str | int | float] = {"harness": "pyperf", "source": str(path)}
    for key in ("perf_version", "python_version", "python_implementation", "timer", "loops"):
        if isinstance(top.get(key), (str, int, float)) and not isinstance(top.get(key), bool):
            metadata[key] = top[key]
    states = _hook_states(doc["benchmarks"], top)
    if states:
        metadata["duet_sync"] = ",".join(states)
    return ParseResult(iterations, clock="none", timestamp_note=TIMESTAMP_NOTE, metadata=metadata,
                       benchmarks=tuple(first_of))
