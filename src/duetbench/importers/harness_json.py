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
        if path.exists():  # /dev/null, a pipe (<(hyperfine ...)), a device: the parsers read files
            raise DuetError(f"{path}: not a regular file (a pipe, device or directory)",
                            hint=f"save the {parser} output to a file first and give that file")
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


def _positive(fmt: str, files: tuple[Path, ...], sides: dict[str, tuple[dict[str, str], list[Iteration]]],
              one_run_each: bool) -> None:
    """A time of 0 has no ratio; say where it is in its file (the table's check would name a row of the
    merged table, which is in no file)."""
    for side, path in zip("AB", (files[0], files[-1]), strict=True):
        bench_of, its = sides[side]
        zero = next((n for n, it in enumerate(its) if it.name in bench_of and it.value_s <= 0), None)
        if zero is not None:
            it = its[zero]
            # Iteration.index counts across forks; the file counts within one.
            nth = sum(1 for other in its[:zero] if (other.name, other.fork) == (it.name, it.fork))
            at = (f"repetition {it.index}" if one_run_each
                  else f"{'fork' if fmt == 'jmh' else 'run'} {it.fork}, iteration {nth}")
            raise DuetError(f"{path}: {fmt} benchmark {it.name!r} (side {side}) has a time of 0 s in {at}: "
                            "a ratio needs times above 0",
                            hint="rerun with more work per timed iteration, or drop that benchmark")


def _assemble(fmt: str, files: tuple[Path, ...], sides: dict[str, tuple[dict[str, str], list[Iteration]]],
              method: str, one_run_each: bool, metadata: dict[str, object], notes: list[str]) -> Imported:
    _positive(fmt, files, sides, one_run_each)
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
        one_file = {"pyperf": "in one pyperf file give that file alone",
                    "Google Benchmark": "of one program give its result file alone (A's benchmark first)"}
        raise DuetError(f"{files[0]} and {files[1]}: no {fmt} benchmark appears in both files "
                        f"(A has {', '.join(map(repr, names_a))}; B has {', '.join(map(repr, names_b))})",
                        hint="A and B must run the same benchmarks" + (
                            f"; for two differently named benchmarks {one_file[fmt]}" if fmt in one_file else ""))
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


def _command(path: Path, command: int | str, flag: str) -> ParseResult:
    """The command `flag` chose in a file of A's and B's; the parser's messages name its option `command`."""
    try:
        return _parse("hyperfine", path, {"command": command})
    except DuetError as exc:
        if "option command: " not in exc.message:
            raise
        raise DuetError(exc.message.replace("option command: ", f"{flag} ", 1),
                        hint=exc.hint or "give one of the indexes listed, or a command exactly as listed; an export "
                        "of one command each: give A's and B's files") from None


def _only_command(path: Path) -> ParseResult:
    """The one command of A's or B's own export; the parser's hint (its option `command`) is not `duet import`'s."""
    try:
        return _parse("hyperfine", path)
    except DuetError as exc:
        if " commands (" not in exc.message:
            raise
        raise DuetError(exc.message, hint="with two files each must hold one command; to compare two commands "
                        "of one export give it alone, with --command-a and --command-b") from None


def read_hyperfine(path: Path, path_b: Path | None = None, *, command_a: int | str = 0, command_b: int | str = 1,
                   benchmark: str | None = None) -> Imported:
    """hyperfine `--export-json` results: A and B are two commands of one file (default: the first two),
    or the only command of each of two files. Every timed run is one run of one iteration (hyperfine
    starts a new process per timing), method sequential; hyperfine exports no warmup times."""
    path = Path(path)
    if path_b is None:
        a, b = _command(path, command_a, "--command-a"), _command(path, command_b, "--command-b")
        files: tuple[Path, ...] = (path,)
    else:
        files = (path, Path(path_b))
        a, b = (_only_command(f) for f in files)
    for side, result, where in (("A", a, files[0]), ("B", b, files[-1])):
        zero = next((it for it in result.iterations if it.value_s <= 0), None)
        if zero is not None:
            raise DuetError(f"{where}: results[{result.metadata['result']}].times[{zero.index}] "
                            f"({result.metadata['command']!r}, side {side}) is 0 s: hyperfine clamps a run "
                            "shorter than the shell start-up it subtracts to 0, and a ratio needs times above 0",
                            hint="rerun hyperfine with -N (--shell=none), or time a longer command")
    name = benchmark or f"{a.metadata['command']} vs {b.metadata['command']}"
    meta: dict[str, object] = {"A": a.metadata, "B": b.metadata}
    # hyperfine -i times failing runs too; a failing command may have timed an early exit, not the work.
    notes = [f"{side} ({r.metadata['command']!r}): {r.metadata['nonzero_exit_codes']} of {len(r.iterations)} "
             "timed runs exited with a non-zero code (hyperfine -i); their times are kept"
             for side, r in (("A", a), ("B", b)) if r.metadata.get("nonzero_exit_codes")]
    return _assemble("hyperfine", files, {"A": ({"": name}, a.iterations), "B": ({"": name}, b.iterations)},
                     "sequential", True, meta, notes)


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
    if not set(_names(a)) & set(_names(b)):
        # A and B run with different -p values (size=1000 against size=2000): one benchmark each, compared by
        # method, as the campaign option params_in_name: false does. Several -p values in one file stay apart.
        try:
            a_by_method, b_by_method = (_parse("jmh", Path(p), {"params_in_name": False}) for p in (path_a, path_b))
        except DuetError:
            pass
        else:
            if set(_names(a_by_method)) & set(_names(b_by_method)):
                map_a, map_b, notes = _match("JMH", a_by_method, b_by_method, (Path(path_a), Path(path_b)))
                notes.insert(0, f"matched by benchmark method, the @Params differ: A {', '.join(_names(a))}; "
                             f"B {', '.join(_names(b))}")
                return _assemble("jmh", (Path(path_a), Path(path_b)),
                                 {"A": (map_a, a_by_method.iterations), "B": (map_b, b_by_method.iterations)},
                                 method, False, {"A": a_by_method.metadata, "B": b_by_method.metadata}, notes)
    map_a, map_b, notes = _match("JMH", a, b, (Path(path_a), Path(path_b)))
    return _assemble("jmh", (Path(path_a), Path(path_b)), {"A": (map_a, a.iterations), "B": (map_b, b.iterations)},
                     method, False, {"A": a.metadata, "B": b.metadata}, notes)
