"""Checks that look across levels or outside the file: run on the raw data, next to (not after) pydantic.

They run even when some values are invalid, so a file with a typo in one place and a missing command in
another reports both at once. Values of the wrong type are skipped here: pydantic reports them.
"""
from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from typing import Any

from pydantic import ValidationError

from duetbench.errors import DuetError
from duetbench.model.method import AUTO, METHODS

from .campaign_model import stopping_params
from .campaign_problems import Issue
from .campaign_schema import StoppingModel, did_you_mean
from .placeholders import render
from .yaml_locations import DataPath

# A benchmark that names no methods lets a pilot choose between the duet and sequential runs: which one
# is more precise depends on the machine (a CPU hog beside a duet on 2 vCPUs widens its CI 6x; whole-
# machine stops widen sequential 50x: bench/results/trust.md), and the choice keeps the CI's level
# (bench/results/honesty.md, "methods: auto").
DEFAULT_METHODS = {"auto": 10}

Level = tuple[DataPath, dict[str, Any]]
"""One level of the inheritance chain: its path in the file and its raw mapping."""


def cross_level_issues(data: dict[str, Any]) -> list[Issue]:
    issues: list[Issue] = []
    for path, mapping in _levels_with_parser(data):
        issues += _parser_issues(path + ("parser",), mapping["parser"])
    benchmarks = data.get("benchmarks")
    if isinstance(benchmarks, dict):
        for name, benchmark in benchmarks.items():
            if not isinstance(benchmark, (str, dict)):
                continue  # not a benchmark at all: reported by pydantic
            bench_level: Level = (("benchmarks", name), _as_mapping(benchmark))
            issues += _methods_issues(data, bench_level)
            issues += _stopping_issues(data, bench_level)
            issues += _result_file_issues(data, bench_level)
            issues += _shared_result_issues(data, bench_level)
            for side in ("A", "B"):
                if side == "B" and "B" not in bench_level[1]:
                    continue  # an A/A benchmark: B is a copy of A, checked as A
                side_value = bench_level[1].get(side, {})
                if not isinstance(side_value, (str, dict)):
                    continue  # not a side at all: reported by pydantic
                chain = [(bench_level[0] + (side,), _as_mapping(side_value)), bench_level, ((), data)]
                issues += _command_issues(side, chain)
    return list(dict.fromkeys(issues))  # a campaign-level problem is found once per benchmark inheriting it


def _as_mapping(value: Any) -> dict[str, Any]:
    """The shorthand forms (a benchmark or side given as a command string) as mappings; {} when invalid."""
    if isinstance(value, str):
        return {"command": value}
    return value if isinstance(value, dict) else {}


def _inherited(chain: list[Level], key: str) -> tuple[DataPath, Any] | None:
    """The most specific level's value for ``key`` and where it is written."""
    for path, mapping in chain:
        if key in mapping:
            return path + (key,), mapping[key]
    return None


def _levels_with_parser(data: dict[str, Any]) -> Iterator[Level]:
    if "parser" in data:
        yield (), data
    benchmarks = data.get("benchmarks")
    if isinstance(benchmarks, dict):
        for name, benchmark in benchmarks.items():
            if isinstance(benchmark, dict) and "parser" in benchmark:
                yield ("benchmarks", name), benchmark


def _parser_issues(path: DataPath, value: Any) -> list[Issue]:
    if isinstance(value, str):
        name, options, name_path = value, {}, path
    elif isinstance(value, dict) and isinstance(value.get("name"), str):
        name, name_path = value["name"], path + ("name",)
        options = {k: v for k, v in value.items() if k != "name"}
    else:
        return []
    if not name.strip():
        return []
    try:
        from duetbench.harness.registry import parser_names, validate_parser_options

        found = validate_parser_options(name, options)
        known = parser_names()
    except Exception as exc:  # a broken parser plug-in must become a located error, not a traceback
        return [Issue(name_path, f"cannot check parser '{name}': {type(exc).__name__}: {exc}")]
    issues = []
    for loc, message in found:
        if not loc:
            guess = did_you_mean(name, known) if name not in known else ""
            issues.append(Issue(name_path, message, guess))
        else:
            # unknown and missing options are shown at their key (the missing one's: at 'parser')
            at_key = message.startswith("unknown option") or loc[0] not in options
            issues.append(Issue(path + tuple(loc), message, "", "key" if at_key else "value"))
    return issues


def _methods_issues(data: dict[str, Any], benchmark: Level) -> list[Issue]:
    found = _inherited([benchmark, ((), data)], "methods")
    path, methods = found if found else (("benchmarks", benchmark[0][1]), DEFAULT_METHODS)
    if not isinstance(methods, dict) or any(m not in (*METHODS, AUTO) for m in methods):
        return []  # unknown method names are reported by pydantic, with a suggestion
    counts = [methods.get(m) for m in (*METHODS, AUTO) if m in methods]
    if all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in counts) and sum(counts) == 0:  # type: ignore[arg-type]
        where = "this benchmark" if path[:1] == ("benchmarks",) else "the benchmarks inheriting this"
        return [Issue(path, f"no runs at all for {where}",
                      "give at least one method a number of runs > 0, e.g. duet: 10")]
    return []


def _stopping_issues(data: dict[str, Any], benchmark: Level) -> list[Issue]:
    """The `stopping` settings merged from campaign to benchmark, checked together (wi_max against wi_min
    and the window), at the most specific key the problem names: else a run would refuse them mid-campaign."""
    merged: dict[str, Any] = {}
    where: dict[str, DataPath] = {}
    for path, mapping in (((), data), benchmark):
        stopping = mapping.get("stopping")
        if isinstance(stopping, dict):
            merged.update(stopping)
            where.update({key: path + ("stopping", key) for key in stopping})
    try:
        StoppingModel.model_validate(merged)
    except ValidationError:
        return []  # a value of the wrong kind: reported where it is written
    for criterion_key in ("warmup", "runs"):
        criterion = merged.get(criterion_key)
        if criterion is None:
            continue
        try:
            stopping_params(criterion, merged)
        except DuetError as exc:
            named = [key for key in where if re.search(rf"\b{key}\b", exc.message)]
            # a default wi_max below a written minimum is named "wi_max": then the minimum is the culprit
            raised = [key for key in ("wi_min", "window_iterations") if key in where]
            at = min(named, key=exc.message.index) if named else (raised + [criterion_key])[0]
            return [Issue(where[at], exc.message.removeprefix("stopping parameter "),
                          exc.hint or "see docs/campaign-format.md, 'stopping'")]
    return []


def _result_file_issues(data: dict[str, Any], benchmark: Level) -> list[Issue]:
    """A built-in parser's `file` option must be one of the benchmark's `results`, as written: the parser
    finds the file by that text, and would otherwise fail every run of the campaign, one after another."""
    chain = [benchmark, ((), data)]
    parser, results = _inherited(chain, "parser"), _inherited(chain, "results")
    if parser is None or not isinstance(parser[1], dict):
        return []
    name, wanted = parser[1].get("name"), parser[1].get("file")
    if not isinstance(name, str) or ":" in name or not isinstance(wanted, str):
        return []  # a user parser (module:function) may mean something else by 'file'
    declared = [] if results is None else [results[1]] if isinstance(results[1], str) else results[1]
    if not isinstance(declared, list) or wanted in declared:
        return []
    if results is not None and len(results[0]) > len(parser[0]):
        # the benchmark's own results replace the campaign's that the inherited parser reads
        return [Issue(results[0], f"does not declare '{wanted}', the file the campaign's parser reads",
                      "add it, or give this benchmark its own parser")]
    listed = ", ".join(f"'{d}'" for d in declared if isinstance(d, str)) or "none"
    return [Issue(parser[0] + ("file",), f"'{wanted}' is not one of the benchmark's results (declared: {listed})",
                  "add it to 'results', or write it here exactly as it is written there")]


def _shared_result_issues(data: dict[str, Any], benchmark: Level) -> list[Issue]:
    """A result file that A and B of a duet would both write: each side's parser would read whichever side
    wrote it last, and store the other side's times as its own."""
    chain = [benchmark, ((), data)]
    found = _inherited(chain, "methods")
    methods = found[1] if found else DEFAULT_METHODS
    results = _inherited(chain, "results")
    if not isinstance(methods, dict) or results is None:
        return []
    together = [m for m in ("duet", "aduet", AUTO) if isinstance(methods.get(m), int) and methods[m] > 0]
    if not together:
        return []  # sequential runs alone never overlap: each run's files are collected before the next
    sides = ["A", "B"] if "B" in benchmark[1] else ["A"]  # without B: an A/A copy, in A's cwd
    cwds = {repr(_inherited([(benchmark[0] + (s,), _as_mapping(benchmark[1].get(s, {}))), *chain], "cwd"))
            for s in sides}
    entries = [(results[0], results[1])] if isinstance(results[1], str) else \
        [(results[0] + (i,), r) for i, r in enumerate(results[1])] if isinstance(results[1], list) else []
    issues = []
    for path, template in entries:
        if not isinstance(template, str):
            continue
        try:
            a, b = (render(template, outdir=f"/{side}", side=side, benchmark="", method="", run="") for side in "AB")
        except DuetError:
            continue  # a bad placeholder: reported where it is written
        if a == b and (a.startswith("/") or len(cwds) == 1):
            which = "" if results[0][:1] == ("benchmarks",) else f"benchmark {benchmark[0][1]}: "
            issues.append(Issue(path, f"{which}A and B both write {template} when they run together ({together[0]}): "
                                      "each side would read the file the other wrote last",
                                "write it under {outdir} (e.g. {outdir}/result.json), or add {side} to its name"))
    return issues


def _command_issues(side: str, chain: list[Level]) -> list[Issue]:
    command = _inherited(chain, "command")
    benchmark_path = chain[1][0]
    if command is None:
        return [Issue(benchmark_path, f"side {side} has no command",
                      f"add 'command:' to the benchmark (for both sides), to {side}, or to the campaign", "key")]
    path, text = command
    shell = _inherited(chain, "shell")
    if not isinstance(text, str) or (shell is not None and shell[1] is not False):
        return []
    try:
        shlex.split(text)
    except ValueError as exc:
        return [Issue(path, f"cannot split the command like a shell would: {exc}",
                      "fix the quoting, or set shell: true to run it with /bin/sh -c")]
    return []
