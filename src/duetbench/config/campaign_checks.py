"""Checks that look across levels or outside the file: run on the raw data, next to (not after) pydantic.

They run even when some values are invalid, so a file with a typo in one place and a missing command in
another reports both at once. Values of the wrong type are skipped here: pydantic reports them.
"""
from __future__ import annotations

import shlex
from collections.abc import Iterator
from typing import Any

from duetbench.model.method import AUTO, METHODS

from .campaign_problems import Issue
from .campaign_schema import did_you_mean
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
