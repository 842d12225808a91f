"""Google Benchmark JSON (``--benchmark_out=FILE --benchmark_out_format=json``): one iteration per repetition.

Aggregates (mean, median, stddev, cv) are ignored: they are statistics of the repetitions we already have.
A repetition that reports an error (``error_occurred``) fails the parse, since a silently missing benchmark
would skew a comparison; ``skip_errors: true`` drops them instead and counts them in metadata
``skipped_errors``. Repetitions the benchmark itself skipped (``skipped``, v1.8+) are always dropped.
"""
from __future__ import annotations

from typing import Literal

from ...errors import DuetError
from .._common import Options as _Base
from .._common import load_json, number, pick_file, require, unit_seconds
from ..model import Iteration, ParseResult, ParserInput

TIMESTAMP_NOTE = ("Google Benchmark JSON has no timestamps; call the duet hook (adapters/c/duet.h) around each "
                  "repetition, or run one repetition per process under 'duet compare'")


class Options(_Base):
    file: str | None = None
    """Name of the declared result file; default: the only declared file."""
    metric: Literal["real_time", "cpu_time"] = "real_time"
    skip_errors: bool = False


def parse(inp: ParserInput, options: Options) -> ParseResult:
    path = pick_file(inp, options.file, "gbench")
    doc = load_json(path)
    require(isinstance(doc, dict) and isinstance(doc.get("benchmarks"), list), path,
            "not a Google Benchmark JSON result (no 'benchmarks' list)",
            hint="run with --benchmark_out=FILE --benchmark_out_format=json")
    iterations: list[Iteration] = []
    per_name: dict[str, int] = {}
    errors = skipped = 0
    for n, entry in enumerate(doc["benchmarks"]):
        require(isinstance(entry, dict) and isinstance(entry.get("name"), str), path,
                f"benchmarks[{n}] has no name")
        name = entry["name"]
        if entry.get("run_type", "iteration") != "iteration":
            continue
        if entry.get("error_occurred"):
            if not options.skip_errors:
                raise DuetError(f"{path}: benchmark {name!r} reported an error: {entry.get('error_message', '?')}",
                                hint="fix the benchmark, or set the gbench option skip_errors: true")
            errors += 1
            continue
        if entry.get("skipped"):
            skipped += 1
            continue
        unit = entry.get("time_unit")
        require(isinstance(unit, str), path, f"benchmarks[{n}] ({name}) has no time_unit")
        value = number(entry.get(options.metric), path, f"benchmarks[{n}] ({name}) {options.metric}")
        index = per_name.get(name, 0)
        per_name[name] = index + 1
        iterations.append(Iteration(index=index, value_s=value * unit_seconds(unit, path, f"benchmarks[{n}]"),
                                    name=name))
    metadata: dict[str, str | int | float] = {"harness": "Google Benchmark", "source": str(path),
                                              "metric": options.metric}
    context = doc.get("context") or {}
    for key in ("library_version", "library_build_type", "num_cpus", "mhz_per_cpu", "date"):
        if isinstance(context.get(key), (str, int, float)) and not isinstance(context.get(key), bool):
            metadata[key] = context[key]
    if errors:
        metadata["skipped_errors"] = errors
    if skipped:
        metadata["skipped"] = skipped
    return ParseResult(iterations, clock="none", timestamp_note=TIMESTAMP_NOTE, metadata=metadata)
