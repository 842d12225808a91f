"""Turning everything wrong with a campaign file into lines ``file:line:column: where: what — hint: how``.

Problems come from three places: the YAML reader (positions known), pydantic (a ``loc`` into the data) and
the cross-level checks (a path into the data). Paths are mapped onto the file with the positions recorded
by :mod:`duetbench.config.yaml_locations`: a key's position for unknown or missing keys, the value's for
bad values.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import ValidationError

from duetbench.errors import DuetError

from .campaign_schema import (
    BENCHMARK_ONLY_KEYS,
    CAMPAIGN_ONLY_KEYS,
    ERROR_TYPE,
    BenchmarkModel,
    CampaignModel,
    ContainerModel,
    MethodsModel,
    SideModel,
    StoppingModel,
    did_you_mean,
    show,
)
from .yaml_locations import DataPath, Located, Mark

MAX_LINES = 50


@dataclass(frozen=True, order=True)
class Problem:
    """One thing wrong, at one place in the file."""

    mark: Mark
    path: DataPath
    message: str
    hint: str = ""

    def line(self, file: str) -> str:
        where = f"{dotted(self.path)}: " if self.path else ""
        hint = f" — hint: {self.hint}" if self.hint else ""
        return printable(f"{file}:{self.mark.line}:{self.mark.column}: {where}{self.message}{hint}")


def printable(text: str) -> str:
    """Control characters and line separators escaped: keys and values from the file must not break the
    one-line-per-problem layout (or the terminal)."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


@dataclass(frozen=True)
class Issue:
    """A problem found by a check that knows the data path but not the file position."""

    path: DataPath
    message: str
    hint: str = ""
    at: Literal["key", "value"] = "value"


class CampaignError(DuetError):
    """Everything wrong with one campaign file, one self-contained line per problem."""

    def __init__(self, file: str, problems: list[Problem], *, about_file: str | None = None) -> None:
        self.file = file
        self.problems = sorted(set(problems))
        lines = [printable(f"{file}: {about_file}")] if about_file else []
        lines += [p.line(file) for p in self.problems[:MAX_LINES]]
        if len(self.problems) > MAX_LINES:
            lines.append(f"{file}: ... and {len(self.problems) - MAX_LINES} more problems")
        super().__init__("\n".join(lines))

    @classmethod
    def single(cls, file: str, message: str, hint: str = "") -> CampaignError:
        """A problem with the file as a whole (missing, empty, unreadable), so without a line number."""
        return cls(file, [], about_file=message + (f" — hint: {hint}" if hint else ""))


def dotted(path: DataPath) -> str:
    text = ""
    for part in path:
        if isinstance(part, str) and len(part) > 40:
            part = part[:37] + "..."  # a 5000-character key must not fill the screen
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def place(issue: Issue, located: Located) -> Problem:
    mark = located.key_mark(issue.path) if issue.at == "key" else located.value_mark(issue.path)
    return Problem(clamp(mark, located), issue.path, issue.message, issue.hint)


def clamp(mark: Mark, located: Located) -> Mark:
    """PyYAML may point past the last line (an empty value at the end of the file): name a real line."""
    return min(mark, located.last_line)


def from_validation_error(exc: ValidationError, located: Located) -> list[Problem]:
    return [place(_issue(error, located.data), located) for error in exc.errors()]


def _issue(error: Any, data: Any) -> Issue:
    path, missing_key = _data_path(tuple(error["loc"]), data, error["type"])
    kind = error["type"]
    got = show(error.get("input"))
    if kind == ERROR_TYPE:
        at: Literal["key", "value"] = "key" if error["loc"][-1:] == ("[key]",) else "value"
        return Issue(path, error["ctx"]["message"], error["ctx"]["hint"], at)
    if kind == "missing":
        return Issue(path + (missing_key,), f"missing required key '{missing_key}'",
                     _MISSING_HINTS.get(missing_key, ""), "key")
    if kind == "extra_forbidden":
        message, hint = _unknown_key(path)
        return Issue(path, message, hint, "key")
    if kind in ("dict_type", "model_type", "model_attributes_type"):
        return Issue(path, f"must be a mapping (got {got})")
    if kind == "string_type":
        return Issue(path, f"must be a string (got {got})")
    if kind == "list_type":
        return Issue(path, f"must be a list (got {got})")
    return Issue(path, f"{error['msg']} (got {got})")


def _data_path(loc: tuple[Any, ...], data: Any, kind: str) -> tuple[DataPath, str]:
    """The part of pydantic's ``loc`` that exists in the data, and a missing key's name.

    Parts that do not exist in the data are pydantic's own (union branches, '[key]') or keys a shorthand
    added (a side given as a string became {command: ...}); the error then belongs to the last real value.
    """
    path: list[str | int] = []
    current = data
    for part in loc:
        if isinstance(current, dict) and isinstance(part, str) and part in current:
            current = current[part]
        elif isinstance(current, list) and isinstance(part, int) and 0 <= part < len(current):
            current = current[part]
        else:
            continue
        path.append(part)
    missing = str(loc[-1]) if kind == "missing" and loc else ""
    return tuple(path), missing


_MISSING_HINTS = {
    "campaign": "name the campaign, e.g. campaign: my-suite",
    "benchmarks": "list what to run, e.g. benchmarks: {fib: {command: python3 fib.py}}",
    "image": "e.g. image: docker.io/library/python:3.12",
}


def _unknown_key(path: DataPath) -> tuple[str, str]:
    key = str(path[-1])
    parent = path[:-1]
    level, allowed = _level(parent)
    if level == "side" and key in BENCHMARK_ONLY_KEYS:
        benchmark = dotted(parent[:-1])
        return (f"'{key}' cannot be set for one side: both sides of a run share it",
                f"set it on the benchmark ({benchmark}.{key}) or the campaign")
    if level in ("side", "benchmark") and key in CAMPAIGN_ONLY_KEYS:
        return f"'{key}' can only be set at the top level of the campaign", "move it to the top of the file"
    if level == "campaign" and key in ("A", "B"):
        return (f"'{key}' is a side of a benchmark",
                f"move it into a benchmark, e.g. benchmarks: {{fib: {{{key}: ...}}}}")
    guess = did_you_mean(key, allowed)
    return f"unknown {level} key '{key}'", guess or f"known keys: {', '.join(allowed)}"


def _level(path: DataPath) -> tuple[str, list[str]]:
    """Which kind of mapping is at ``path``, and its keys."""
    model: type[Any] = CampaignModel
    name = "campaign"
    if len(path) == 2 and path[0] == "benchmarks":
        model, name = BenchmarkModel, "benchmark"
    elif len(path) == 3 and path[0] == "benchmarks" and path[2] in ("A", "B"):
        model, name = SideModel, "side"
    elif path and path[-1] == "container":
        model, name = ContainerModel, "container"
    elif path and path[-1] == "methods":
        model, name = MethodsModel, "method"
    elif path and path[-1] == "stopping":
        model, name = StoppingModel, "stopping"
    return name, sorted(model.model_fields)
