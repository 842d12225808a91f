"""hyperfine, pyperf and JMH JSON files: A and B measured by the tool itself, one after the other.

The files are read by duetbench's harness parsers (harness/parsers/), so an import accepts exactly
what `duet run` accepts from these harnesses, with the same error messages. These tools run A and B
separately, so the method is "sequential" unless the caller knows better (`method`).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from duetbench.errors import DuetError
from duetbench.harness.model import Iteration, ParseResult, ParserInput
from duetbench.harness.parsers.pyperf import NO_VALUES_HINT
from duetbench.harness.registry import parse

from ._table import Imported, build_table


def _parse(parser: str, path: Path, options: dict[str, object] | None = None) -> ParseResult:
    if not path.is_file():
        raise DuetError(f"{path}: file not found", hint="check the path")
    try:
        return parse(parser, options, ParserInput(files={"result": path}))
    except DuetError as exc:
        if str(path) in exc.message:
            raise
        # The parsers' shared checks (a negative time, ...) speak of the parser, not of the file: A's or B's?
        raise DuetError(f"{path}: {exc.message}", hint=exc.hint) from None


def _columns(side: str, bench_of: dict[str, str], its: list[Iteration], one_run_each: bool) -> dict[str, list]:
    """Per-iteration columns of one side. `one_run_each`: every iteration is its own run (hyperfine)."""
    out: dict[str, list] = {"benchmark": [], "run": [], "side": [], "value": [], "warmup": [], "index": []}
    counters: dict[tuple[str, int], int] = {}
    for n, it in enumerate(its):
        if it.name not in bench_of:
            continue
        run = n if one_run_each else it.fork
        index = counters.get((it.name, run), 0)
        counters[(it.name, run)] = index + 1
        out["benchmark"].append(bench_of[it.name])
        out["run"].append(run)
        out["side"].append(side)
        out["value"].append(it.value_s)
        out["warmup"].append(it.warmup)
        out["index"].append(index)
    return out


def _assemble(fmt: str, files: tuple[Path, ...], sides: dict[str, tuple[dict[str, str], list[Iteration]]],
              method: str, one_run_each: bool, metadata: dict[str, object], notes: list[str]) -> Imported:
    cols = {"A": _columns("A", *sides["A"], one_run_each), "B": _columns("B", *sides["B"], one_run_each)}
    merged = {k: np.array(cols["A"][k] + cols["B"][k]) for k in cols["A"]}
    where = " and ".join(str(f) for f in dict.fromkeys(files))
    n = merged["value"].size
    table = build_table(where, benchmark=merged["benchmark"].astype(object), method=np.full(n, method, dtype=object),
                        run_key=merged["run"], side=merged["side"].astype(object),
                        value_s=merged["value"].astype(float), index=merged["index"].astype(np.int64),
                        warmup=merged["warmup"].astype(bool), rows=np.arange(n))
    return Imported(table, fmt, tuple(str(f) for f in files), metadata, tuple(notes))


def _measured(result: ParseResult) -> list[str]:
    """The names of the benchmarks with a value, in the file's order."""
    return list(dict.fromkeys(it.name for it in result.iterations))


def _names(result: ParseResult) -> list[str]:
    """Every benchmark the file holds, those without a value too when the parser lists them."""
    return list(result.benchmarks) or _measured(result)


def _match(fmt: str, a: ParseResult, b: ParseResult, files: tuple[Path, Path]
           ) -> tuple[dict[str, str], dict[str, str], list[str]]:
    """Benchmarks present in both files, by name, with values in both; the others are reported in a note."""
    names_a, names_b = _names(a), _names(b)
    common = [n for n in names_a if n in names_b]
    if not common:
        raise DuetError(f"{files[0]} and {files[1]}: no {fmt} benchmark appears in both files "
                        f"(A has {', '.join(map(repr, names_a))}; B has {', '.join(map(repr, names_b))})",
                        hint="A and B must run the same benchmarks; for two differently named benchmarks "
                             "in one pyperf file give that file alone")
    # In both files but not measured in one (pyperf: calibration runs only): nothing to compare it with.
    measured = {str(f): set(_measured(r)) for f, r in zip(files, (a, b), strict=True)}
    unmeasured = {f: [n for n in common if n not in names] for f, names in measured.items()}
    kept = [n for n in common if all(n in names for names in measured.values())]
    if not kept:
        said = "; ".join(f"without values in {f}: {', '.join(map(repr, names))}"
                         for f, names in unmeasured.items() if names)
        raise DuetError(f"{files[0]} and {files[1]}: no {fmt} benchmark has values in both files ({said})",
                        hint=NO_VALUES_HINT)
    only = [n for n in names_a + names_b if n not in common]
    notes = [f"left out (in one file only): {', '.join(only)}"] if only else []
    notes += [f"left out (no values in {f}): {', '.join(names)}" for f, names in unmeasured.items() if names]
    mapping = {n: n or Path(files[0]).stem for n in kept}
    return mapping, mapping, notes


def read_hyperfine(path: Path, path_b: Path | None = None, *, command_a: int | str = 0, command_b: int | str = 1,
                   benchmark: str | None = None) -> Imported:
    """hyperfine `--export-json` results: A and B are two commands of one file (default: the first two),
    or the only command of each of two files. Every timed run is one run of one iteration (hyperfine
    starts a new process per timing), method sequential; hyperfine exports no warmup times."""
    path = Path(path)
    if path_b is None:
        a = _parse("hyperfine", path, {"command": command_a})
        b = _parse("hyperfine", path, {"command": command_b})
        files: tuple[Path, ...] = (path,)
    else:
        a, b = _parse("hyperfine", path), _parse("hyperfine", Path(path_b))
        files = (path, Path(path_b))
    name = benchmark or f"{a.metadata['command']} vs {b.metadata['command']}"
    meta: dict[str, object] = {"A": a.metadata, "B": b.metadata}
    return _assemble("hyperfine", files, {"A": ({"": name}, a.iterations), "B": ({"": name}, b.iterations)},
                     "sequential", True, meta, [])


def read_pyperf(path: Path, path_b: Path | None = None, *, method: str = "sequential") -> Imported:
    """pyperf JSON (`-o FILE`, also .json.gz). Two files: A and B, benchmarks matched by name. One file
    holding exactly two benchmarks: the first is A, the second B. Runs are pyperf's worker processes
    (calibration runs skipped), iterations their values; warmup values are kept, flagged as warmup."""
    path = Path(path)
    if path_b is not None:
        a, b = _parse("pyperf", path), _parse("pyperf", Path(path_b))
        map_a, map_b, notes = _match("pyperf", a, b, (path, Path(path_b)))
        return _assemble("pyperf", (path, Path(path_b)), {"A": (map_a, a.iterations), "B": (map_b, b.iterations)},
                         method, False, {"A": a.metadata, "B": b.metadata}, notes)
    both = _parse("pyperf", path)
    names = _names(both)  # a benchmark without values counts: it is in the file, first or second
    if len(names) != 2:
        raise DuetError(f"{path}: holds {len(names)} pyperf benchmark(s) ({', '.join(map(repr, names))}), "
                        "so it is not clear which is A and which is B",
                        hint="give two files (A then B), or one file with exactly two benchmarks")
    measured = set(_measured(both))
    for side, name in zip("AB", names, strict=True):
        if name not in measured:
            raise DuetError(f"{path}: pyperf benchmark {name!r} ({side}) has no values, only calibration runs",
                            hint=NO_VALUES_HINT)
    name = f"{names[0]} vs {names[1]}"
    return _assemble("pyperf", (path,), {"A": ({names[0]: name}, both.iterations),
                                         "B": ({names[1]: name}, both.iterations)},
                     method, False, {"A": both.metadata, "B": both.metadata, "benchmarks": names}, [])


def read_jmh(path_a: Path, path_b: Path, *, method: str = "sequential") -> Imported:
    """JMH JSON (`-rf json`) of A and of B; benchmarks (with their @Param values) matched by name.
    Forks are runs and `primaryMetric.rawData` their iterations (JMH reports measurement iterations
    only); throughput scores become seconds per operation."""
    a, b = _parse("jmh", Path(path_a)), _parse("jmh", Path(path_b))
    map_a, map_b, notes = _match("JMH", a, b, (Path(path_a), Path(path_b)))
    return _assemble("jmh", (Path(path_a), Path(path_b)), {"A": (map_a, a.iterations), "B": (map_b, b.iterations)},
                     method, False, {"A": a.metadata, "B": b.metadata}, notes)
