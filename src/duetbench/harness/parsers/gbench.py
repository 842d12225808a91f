"""Google Benchmark results, one iteration per repetition: its JSON (``--benchmark_out_format=json``) or its
CSV (``--benchmark_out_format=csv``), from a declared file, or from stdout (``--benchmark_format=json|csv``)
when no file is declared. ``format: auto`` (the default) tells them apart by content.

Aggregates (mean, median, stddev, cv, user statistics, the complexity fit's BigO and RMS) are ignored: they
are statistics of the repetitions we already have. A repetition that reports an error fails the parse,
since a silently missing benchmark would skew a comparison; ``skip_errors: true`` drops them instead and
counts them in metadata ``skipped_errors``. Repetitions the benchmark itself skipped (v1.8+: ``skipped``
in the JSON, ``error_occurred`` false in the CSV) are always dropped.

`duet import gbench` reads its files with this parser too (importers/gbench.py), so both read alike.
"""
from __future__ import annotations

import csv
import io
import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

from ...errors import DuetError
from .._common import SECONDS_PER_UNIT, duration, pick_file, read_text, require, unit_seconds
from .._common import Options as _Base
from ..model import Iteration, MetaValue, ParseResult, ParserInput

TIMESTAMP_NOTE = ("Google Benchmark JSON has no timestamps; call the duet hook (adapters/c/duet.h) around each "
                  "repetition, or run one repetition per process under 'duet compare'")

Metric = Literal["real_time", "cpu_time"]
Format = Literal["json", "csv"]

# The CSV reporter's header row; in a file, the context lines (date, executable, CPU, caches, load) come
# first and their number varies, so the header is found by its start.
CSV_HEADER_START = "name,iterations,"
_AGGREGATE_SUFFIXES = ("_mean", "_median", "_stddev", "_cv")
_ONLY_AGGREGATES_HINT = ("rerun without --benchmark_report_aggregates_only (and without "
                         "--benchmark_display_aggregates_only for the output on stdout)")
_ERROR_HINT = ("fix the benchmark or leave it out (--benchmark_filter); in a campaign, the gbench option "
               "skip_errors: true drops errored repetitions")
_AS_WRITTEN = "give the CSV exactly as Google Benchmark wrote it"
# "Run on (2 X 2596.1 MHz CPU s)": the context line the JSON has as num_cpus and mhz_per_cpu.
_RUN_ON = re.compile(r"Run on \((\d+) X ([0-9.]+) MHz CPU")


class Options(_Base):
    file: str | None = None
    """Name of the declared result file; default: the only declared file, or stdout when none is declared."""
    format: Literal["json", "csv", "auto"] = "auto"
    """auto: JSON if the text starts with '{', else CSV."""
    metric: Metric = "real_time"
    skip_errors: bool = False


@dataclass
class Repetitions:
    """What a Google Benchmark result holds, before the error rules are applied by `check`."""

    iterations: list[Iteration] = field(default_factory=list)
    #: (where, benchmark, message) of every errored repetition, in file order.
    errors: list[tuple[str, str, str]] = field(default_factory=list)
    skipped: int = 0
    aggregates: int = 0
    metadata: dict[str, MetaValue] = field(default_factory=dict)


def sniff(text: str) -> Format:
    """JSON or CSV, by content: Google Benchmark's JSON is one object; its CSV starts with the context or the
    header row, never with '{'."""
    return "json" if text.lstrip("\ufeff \t\r\n").startswith("{") else "csv"


def parse(inp: ParserInput, options: Options) -> ParseResult:
    if options.file is None and not inp.files:
        where, text = "stdout", inp.stdout
    else:
        path = pick_file(inp, options.file, "gbench")
        where, text = str(path), read_text(path)
    fmt = sniff(text) if options.format == "auto" else options.format
    if fmt == "csv" and sniff(text) == "json":
        raise DuetError(f"{where}: is JSON, but the gbench option format is csv",
                        hint="set format: json (or auto), or write the CSV with --benchmark_out_format=csv")
    reps = read_json(text, where, options.metric) if fmt == "json" else read_csv(text, where, options.metric)
    check(reps, where, skip_errors=options.skip_errors)
    metadata: dict[str, MetaValue] = {"harness": "Google Benchmark", "source": where, "format": fmt,
                                      "metric": options.metric, **reps.metadata}
    if reps.errors:
        metadata["skipped_errors"] = len(reps.errors)
    if reps.skipped:
        metadata["skipped"] = reps.skipped
    return ParseResult(reps.iterations, clock="none", timestamp_note=TIMESTAMP_NOTE, metadata=metadata)


def check(reps: Repetitions, where: str, *, skip_errors: bool) -> None:
    """The error rules: an errored repetition fails unless `skip_errors`; a result of aggregates alone has
    nothing to compare."""
    if reps.errors and not skip_errors:
        at, name, message = reps.errors[0]
        raise DuetError(f"{at}: benchmark {name!r} reported an error: {message}", hint=_ERROR_HINT)
    if not reps.iterations and reps.aggregates and not reps.errors and not reps.skipped:
        raise DuetError(f"{where}: holds only aggregates (mean, median, ...), no repetitions",
                        hint=_ONLY_AGGREGATES_HINT)


def read_json(text: str, where: str, metric: Metric) -> Repetitions:
    try:
        doc: Any = json.loads(text)
    except json.JSONDecodeError as e:
        raise DuetError(f"{where}: not valid JSON (line {e.lineno}, column {e.colno}: {e.msg})",
                        hint="the harness may have been killed while writing it; for its CSV set the gbench "
                             "option format: csv (or auto)") from None
    except RecursionError:
        raise DuetError(f"{where}: JSON nested too deeply",
                        hint="check that this is Google Benchmark's output") from None
    require(isinstance(doc, dict) and isinstance(doc.get("benchmarks"), list), where,
            "not a Google Benchmark JSON result (no 'benchmarks' list)",
            hint="run with --benchmark_out=FILE --benchmark_out_format=json")
    context = doc.get("context") if isinstance(doc.get("context"), dict) else {}
    _check_schema_version(context, where)
    reps = Repetitions()
    per_name: dict[str, int] = {}
    for n, entry in enumerate(doc["benchmarks"]):
        require(isinstance(entry, dict) and isinstance(entry.get("name"), str), where,
                f"benchmarks[{n}] has no name")
        name = entry["name"]
        run_type = entry.get("run_type", "iteration")
        require(run_type in ("iteration", "aggregate"), where,
                f"benchmarks[{n}] ({name}) has run_type {run_type!r}, neither 'iteration' nor 'aggregate'",
                hint="give the JSON as Google Benchmark wrote it")
        if run_type == "aggregate":
            reps.aggregates += 1
            continue
        if entry.get("error_occurred"):
            reps.errors.append((where, name, str(entry.get("error_message", "?"))))
            continue
        if entry.get("skipped"):
            reps.skipped += 1
            continue
        unit = entry.get("time_unit")
        require(isinstance(unit, str), where, f"benchmarks[{n}] ({name}) has no time_unit")
        value = duration(entry.get(metric), where, f"benchmarks[{n}] ({name}) {metric}")
        index = per_name.get(name, 0)
        per_name[name] = index + 1
        reps.iterations.append(Iteration(index=index, value_s=value * unit_seconds(unit, where, f"benchmarks[{n}]"),
                                         name=name))
    for key in ("library_version", "library_build_type", "num_cpus", "mhz_per_cpu", "date"):
        if isinstance(context.get(key), (str, int, float)) and not isinstance(context.get(key), bool):
            reps.metadata[key] = context[key]
    return reps


def _check_schema_version(context: dict[str, Any], where: str) -> None:
    """Google Benchmark writes `json_schema_version` 1 since v1.8.4 (none before) and adds fields without
    changing it, so another version is a change its readers cannot know; its own compare.py refuses such a
    file, and so does this rather than read times whose meaning may have changed."""
    version = context.get("json_schema_version", 1)
    if version != 1 or isinstance(version, bool):
        release = context.get("library_version")
        by = f" (written by Google Benchmark {release})" if isinstance(release, str) else ""
        raise DuetError(f"{where}: Google Benchmark JSON schema version {json.dumps(version)}{by}; duetbench "
                        "reads version 1",
                        hint="write the results as CSV (--benchmark_out_format=csv), or with a Google Benchmark "
                             "that writes json_schema_version 1")


def read_csv(text: str, where: str, metric: Metric) -> Repetitions:
    """The CSV reporter's rows. It has no run_type column: an errored or skipped repetition has
    error_occurred true or false (and no times), a complexity fit (BigO, RMS) no iteration count, and an
    aggregate is known by its name (`_is_aggregate`)."""
    lines = text.lstrip("\ufeff").splitlines()
    header = next((n for n, line in enumerate(lines) if line.startswith(CSV_HEADER_START)), None)
    if header is None:
        raise DuetError(f"{where}: not a Google Benchmark result: neither JSON nor a CSV with a "
                        f"'{CSV_HEADER_START}...' header row",
                        hint="write it with --benchmark_out=FILE --benchmark_out_format=json (or csv), or on "
                             "stdout with --benchmark_format=json (or csv)")
    # strict: a quote opened and never closed (or text after a closing quote) is an error, not rows swallowed
    # into one name. line_num counts the lines read up to the end of the last whole record.
    reader = csv.DictReader(io.StringIO("\n".join(lines[header:]), newline=""), strict=True)
    try:
        rows = [(header + reader.line_num, row) for row in reader]
    except csv.Error as e:
        raise DuetError(f"{where}:{header + reader.line_num + 1}: not CSV: {e} (a quoted field not closed?)",
                        hint=_AS_WRITTEN) from None
    if not rows:
        raise DuetError(f"{where}: no rows below the header at line {header + 1}",
                        hint="the benchmark ran nothing: check --benchmark_filter")
    missing = [c for c in ("name", metric, "time_unit") if c not in (reader.fieldnames or ())]
    if missing:
        raise DuetError(f"{where}:{header + 1}: the header has no column {', '.join(missing)}", hint=_AS_WRITTEN)
    names = Counter(row["name"] for _, row in rows)
    reps = Repetitions(metadata=_context([line for line in lines[:header] if line.strip()]))
    per_name: dict[str, int] = {}
    columns = list(reader.fieldnames or ())
    width = len(columns)
    # An errored or skipped row ends at error_message: Google Benchmark leaves out the user counters' columns.
    error_width = columns.index("error_message") + 1 if "error_message" in columns else width
    for line, row in rows:
        at, name = f"{where}:{line}", row["name"]
        failed = (row.get("error_occurred") or "").strip().lower()
        # DictReader gives a short row's missing fields as None and a long row's extra ones in a list under None.
        fields = width + len(row.get(None) or ()) - sum(value is None for value in row.values())
        if fields != width and not (failed in ("true", "false") and fields == error_width):
            raise DuetError(f"{at}: {fields} field(s) where the header at line {header + 1} has {width}",
                            hint=_AS_WRITTEN + " (a row cut short, or a name with a comma and no quotes?)")
        if not name.strip():
            raise DuetError(f"{at}: a row without a benchmark name", hint=_AS_WRITTEN)
        if failed == "true":
            reps.errors.append((at, name, row.get("error_message") or "?"))
            continue
        if failed == "false":
            reps.skipped += 1
            continue
        if not (row.get("iterations") or "").strip() or _is_aggregate(name, names):
            reps.aggregates += 1
            continue
        try:
            value = float(row[metric] or "")
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            raise DuetError(f"{at}: {metric} {row[metric]!r} of {name!r} is not a number", hint=_AS_WRITTEN)
        if value < 0:
            raise DuetError(f"{at}: {metric} {row[metric]!r} of {name!r} is negative", hint=_AS_WRITTEN)
        unit = row["time_unit"]
        if unit not in SECONDS_PER_UNIT:
            raise DuetError(f"{at}: time_unit has unknown time unit {unit!r} (known: {', '.join(SECONDS_PER_UNIT)})",
                            hint=_AS_WRITTEN + " (its units are ns, us, ms, s)")
        index = per_name.get(name, 0)
        per_name[name] = index + 1
        reps.iterations.append(Iteration(index=index, name=name, value_s=value * SECONDS_PER_UNIT[unit]))
    return reps


def _context(preamble: list[str]) -> dict[str, MetaValue]:
    """The context lines above a CSV file's header (none on stdout, where they go to stderr): kept whole,
    and the date and CPU under the keys the JSON has for them."""
    if not preamble:
        return {}
    found: dict[str, MetaValue] = {"context": "\n".join(preamble)}
    if re.match(r"\d{4}-\d\d-\d\d", preamble[0]):
        found["date"] = preamble[0].strip()
    for line in preamble:
        match = _RUN_ON.match(line)
        if match:
            found["num_cpus"], found["mhz_per_cpu"] = int(match[1]), float(match[2])
    return found


def _is_aggregate(name: str, names: Counter[str]) -> bool:
    """An aggregate is named after its benchmark plus a statistic (BM_x_mean, or a user statistic's name)
    and comes once per run of its R >= 2 repetitions, so it is rarer than its benchmark; a benchmark that
    merely extends another's name (BM_Sort_fast beside BM_Sort) has as many rows. Without its benchmark (a
    file of aggregates only) a standard suffix counts when a second standard statistic of the same base
    is there too, so that a lone benchmark called BM_mean stays a benchmark."""
    base, sep, _stat = name.rpartition("_")
    if not sep:
        return False
    if base in names:
        return names[name] < names[base]
    return name.endswith(_AGGREGATE_SUFFIXES) and sum(base + s in names for s in _AGGREGATE_SUFFIXES) >= 2
