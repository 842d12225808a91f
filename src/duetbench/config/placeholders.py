"""``{name}`` placeholders in commands, result paths and environment values.

Checked when the campaign is loaded (a typo should fail before hours of measuring, not at the first run)
and substituted when a run executes. ``{{`` and ``}}`` stand for literal braces, as in Python's str.format;
unlike str.format, nothing but a bare known name is allowed between braces, so a shell snippet such as
``awk '{print $1}'`` is reported instead of failing obscurely at run time.
"""
from __future__ import annotations

import difflib
import re

from duetbench.errors import DuetError

NAMES: tuple[str, ...] = ("outdir", "side", "benchmark", "method", "run")
"""outdir: the side's output directory of this run (absolute); side: A or B; benchmark: its name;
method: sequential, duet or aduet; run: the run's id."""

_TOKEN = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")


def problems(template: str) -> list[tuple[str, str]]:
    """(message, hint) for every malformed or unknown placeholder in ``template``; [] when it is fine."""
    found: list[tuple[str, str]] = []
    for match in _TOKEN.finditer(template):
        token = match.group(0)
        if token in ("{{", "}}"):
            continue
        name = match.group(1)
        if name is None:
            found.append((f"unmatched '{token}' at character {match.start() + 1}",
                          "write {{ or }} for a literal brace"))
        elif name not in NAMES:
            close = difflib.get_close_matches(name, NAMES, n=1)
            hint = f"did you mean {{{close[0]}}}?" if close else f"placeholders are {_known()}"
            found.append((f"unknown placeholder {{{name}}}", hint + "; write {{ and }} for literal braces"))
    return found


def render(template: str, **values: object) -> str:
    """``template`` with every ``{name}`` replaced by ``str(values[name])`` and ``{{``/``}}`` by braces."""

    def substitute(match: re.Match[str]) -> str:
        token = match.group(0)
        if token in ("{{", "}}"):
            return token[0]
        name = match.group(1)
        if name is None or name not in NAMES:
            raise DuetError(f"bad placeholder {token!r} in {template!r}", hint=f"placeholders are {_known()}")
        if name not in values:
            raise DuetError(f"placeholder {{{name}}} in {template!r} has no value here")
        return str(values[name])

    return _TOKEN.sub(substitute, template)


def _known() -> str:
    return ", ".join("{" + n + "}" for n in NAMES)
