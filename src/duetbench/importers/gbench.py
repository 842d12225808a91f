"""Google Benchmark results: its JSON (`--benchmark_out_format=json`, or `--benchmark_format=json` on
stdout) and its CSV (`--benchmark_out_format=csv`), whose file starts with the context lines (date,
executable, CPU, caches, load average) before the header row.

Every repetition is one run of one iteration: Google Benchmark times a repetition as a whole and
reports its mean time per benchmark iteration, so the repetition is the unit that varies between
process states (like a hyperfine run). Aggregates (mean, median, stddev, cv, user statistics) are
left out: they are statistics of the repetitions we already have. The JSON goes through the `gbench`
harness parser, so `duet import` and `duet run` read it alike.
"""
from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Literal

from duetbench.errors import DuetError
from duetbench.harness._common import SECONDS_PER_UNIT
from duetbench.harness.model import Iteration

from ._table import Imported
from .harness_json import _assemble, _match, _parse

Metric = Literal["real_time", "cpu_time"]
METRICS: tuple[Metric, ...] = ("real_time", "cpu_time")
# The CSV reporter's header; the context preamble above it has no fixed length.
_HEADER_START = "name,iterations,"
_AGGREGATE_SUFFIXES = ("_mean", "_median", "_stddev", "_cv")
_ONLY_AGGREGATES_HINT = ("rerun without --benchmark_report_aggregates_only (and without "
                         "--benchmark_display_aggregates_only for the CSV on stdout)")


def _read_text(path: Path) -> str:
    if not path.is_file():
        raise DuetError(f"{path}: file not found", hint="check the path")
    try:
        return path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as e:
        raise DuetError(f"{path}: cannot read: {e}",
                        hint="give the file written by --benchmark_out (JSON or CSV)") from None


def _csv_iterations(path: Path, text: str, metric: Metric) -> tuple[list[Iteration], dict[str, object]]:
    lines = text.splitlines()
    header = next((n for n, line in enumerate(lines) if line.startswith(_HEADER_START)), None)
    if header is None:
        raise DuetError(f"{path}: not a Google Benchmark result: neither JSON nor a CSV with a "
                        f"'{_HEADER_START}...' header row",
                        hint="write it with --benchmark_out=FILE --benchmark_out_format=json (or csv)")
    preamble = [line for line in lines[:header] if line.strip()]
    rows = list(csv.DictReader(io.StringIO("\n".join(lines[header:]))))
    if not rows:
        raise DuetError(f"{path}: no rows below the header at line {header + 1}",
                        hint="the benchmark ran nothing: check --benchmark_filter")
    missing = [c for c in ("name", metric, "time_unit") if c not in rows[0]]
    if missing:
        raise DuetError(f"{path}:{header + 1}: the header has no column {', '.join(missing)}",
                        hint="give the CSV exactly as Google Benchmark wrote it")
    names = {r["name"] for r in rows}
    iterations: list[Iteration] = []
    per_name: dict[str, int] = {}
    aggregates = 0
    for n, row in enumerate(rows):
        line, name = header + 2 + n, row["name"]
        if _is_aggregate(name, names):
            aggregates += 1
            continue
        if (row.get("error_occurred") or "").strip().lower() == "true":
            raise DuetError(f"{path}:{line}: benchmark {name!r} reported an error: {row.get('error_message') or '?'}",
                            hint="fix the benchmark, or leave it out with --benchmark_filter")
        try:
            value = float(row[metric] or "")
        except ValueError:
            raise DuetError(f"{path}:{line}: {metric} {row[metric]!r} of {name!r} is not a number",
                            hint="give the CSV exactly as Google Benchmark wrote it") from None
        index = per_name.get(name, 0)
        per_name[name] = index + 1
        unit = row["time_unit"]
        if unit not in SECONDS_PER_UNIT:
            raise DuetError(f"{path}:{line}: time_unit has unknown time unit {unit!r} "
                            f"(known: {', '.join(SECONDS_PER_UNIT)})",
                            hint="give the CSV exactly as Google Benchmark wrote it (its units are ns, us, ms, s)")
        iterations.append(Iteration(index=index, name=name, value_s=value * SECONDS_PER_UNIT[unit]))
    if not iterations and aggregates:
        raise DuetError(f"{path}: holds only aggregates (mean, median, ...), no repetitions",
                        hint=_ONLY_AGGREGATES_HINT)
    return iterations, {"harness": "Google Benchmark", "source": str(path), "metric": metric,
                        "context": "\n".join(preamble)}


def _is_aggregate(name: str, names: set[str]) -> bool:
    """The CSV has no run_type column: an aggregate is named after its benchmark plus a statistic
    (BM_x_mean). Any suffix counts when the plain name is in the file (user statistics have their own
    names). Without it (a file of aggregates only) a standard suffix counts when a second standard
    statistic of the same base is there too, so that a lone benchmark called BM_mean stays a benchmark."""
    base, sep, _stat = name.rpartition("_")
    if not sep:
        return False
    if base in names:
        return True
    return name.endswith(_AGGREGATE_SUFFIXES) and sum(base + s in names for s in _AGGREGATE_SUFFIXES) >= 2


def _json_iterations(path: Path, metric: Metric) -> tuple[list[Iteration], dict[str, object]]:
    result = _parse("gbench", path, {"metric": metric})
    if not result.iterations:
        raise DuetError(f"{path}: no repetition in this Google Benchmark JSON (aggregates or skipped runs only)",
                        hint=_ONLY_AGGREGATES_HINT)
    return list(result.iterations), dict(result.metadata)


def read_one(path: Path, metric: Metric = "real_time") -> tuple[list[Iteration], dict[str, object]]:
    """Repetitions of one Google Benchmark result file, JSON or CSV (told apart by content)."""
    path = Path(path)
    text = _read_text(path)
    if text.lstrip().startswith("{"):
        return _json_iterations(path, metric)
    return _csv_iterations(path, text, metric)


class _Parsed:
    """What _match needs of a parse: the iterations."""

    def __init__(self, iterations: list[Iteration]) -> None:
        self.iterations = iterations


def read_gbench(path: Path, path_b: Path | None = None, *, method: str = "sequential",
                metric: Metric = "real_time") -> Imported:
    """Google Benchmark results of A and B. Two files: A's then B's, benchmarks matched by name (those
    in one file only are left out, with a note). One file holding exactly two benchmarks: the first is
    A, the second B (BM_Old and BM_New in one program). `metric`: real_time (wall) or cpu_time."""
    if metric not in METRICS:
        raise DuetError(f"unknown Google Benchmark metric {metric!r}", hint="use real_time or cpu_time")
    path = Path(path)
    its_a, meta_a = read_one(path, metric)
    if path_b is not None:
        its_b, meta_b = read_one(Path(path_b), metric)
        map_a, map_b, notes = _match("Google Benchmark", _Parsed(its_a), _Parsed(its_b),  # type: ignore[arg-type]
                                     (path, Path(path_b)))
        return _assemble("gbench", (path, Path(path_b)), {"A": (map_a, its_a), "B": (map_b, its_b)}, method, True,
                         {"A": meta_a, "B": meta_b}, notes)
    names = list(dict.fromkeys(it.name for it in its_a))
    if len(names) != 2:
        raise DuetError(f"{path}: holds {len(names)} Google Benchmark benchmark(s) ({', '.join(map(repr, names))}), "
                        "so it is not clear which is A and which is B",
                        hint="give two files (A's then B's), or one file with exactly two benchmarks "
                             "(select them with --benchmark_filter)")
    name = f"{names[0]} vs {names[1]}"
    return _assemble("gbench", (path,), {"A": ({names[0]: name}, its_a), "B": ({names[1]: name}, its_a)},
                     method, True, {"A": meta_a, "B": meta_a, "benchmarks": names}, [])
