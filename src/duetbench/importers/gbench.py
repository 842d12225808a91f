"""Google Benchmark results: its JSON (`--benchmark_out_format=json`, or `--benchmark_format=json` on
stdout) and its CSV (`--benchmark_out_format=csv`), whose file starts with the context lines (date,
executable, CPU, caches, load average) before the header row.

Every repetition is one run of one iteration: Google Benchmark times a repetition as a whole and
reports its mean time per benchmark iteration, so the repetition is the unit that varies between
process states (like a hyperfine run). Aggregates (mean, median, stddev, cv, user statistics) are
left out: they are statistics of the repetitions we already have. Both formats go through the `gbench`
harness parser (harness/parsers/gbench.py), so `duet import` and `duet run` read them alike.
"""
from __future__ import annotations

from pathlib import Path

from duetbench.errors import DuetError
from duetbench.harness.model import Iteration
from duetbench.harness.parsers.gbench import Metric

from ._table import Imported
from .harness_json import _assemble, _match, _parse

METRICS: tuple[Metric, ...] = ("real_time", "cpu_time")

__all__ = ["METRICS", "Metric", "read_gbench", "read_one"]


def read_one(path: Path, metric: Metric = "real_time") -> tuple[list[Iteration], dict[str, object]]:
    """Repetitions of one Google Benchmark result file, JSON or CSV (told apart by content); an errored
    repetition fails, as in a campaign without skip_errors."""
    result = _parse("gbench", Path(path), {"metric": metric})
    return list(result.iterations), dict(result.metadata)


class _Parsed:
    """What _match needs of a parse: the iterations (the benchmarks are those they name)."""

    benchmarks: tuple[str, ...] = ()

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
