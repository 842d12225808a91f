"""``--export-hyperfine``: A's and B's times in hyperfine's ``--export-json`` format, for tools that read it
(Bencher's hyperfine adapter, hyperfine's plot scripts, CI dashboards).

One entry per command that has timing runs, with the keys hyperfine writes: ``command``, ``mean``,
``stddev`` (null below two runs), ``median``, ``user``, ``system``, ``min``, ``max``, ``times``,
``exit_codes``, ``parameters`` in a parameter scan, and (hyperfine 1.20 on) ``memory_usage_byte``: each
run's peak resident set size, from the same `ru_maxrss` hyperfine reads (KiB on Linux, times 1024).
``duet compare REF X Y`` lists each command once, in the order given, as ``hyperfine REF X Y`` does.
Times are the elapsed seconds of the invocations our statistics count, as hyperfine's are its timing runs.
What hyperfine has no key for — the pairing, the ratio's CI, the verdict — is in our own
``--export-json``. A campaign's harness iterations are no command's timing runs: this format writes
comparisons and scans only.
"""
from __future__ import annotations

import json
import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from duetbench.model.invocation import usable
from duetbench.report.exporters import TextExporter, described

if TYPE_CHECKING:
    from duetbench.model.invocation import Invocation
    from duetbench.report.model import ComparisonReport, ScanReport


def _runs(report: ComparisonReport, side: str) -> list[Invocation]:
    """The side's timing runs: those our statistics count (`usable`: a timed-out, killed or unlaunched
    invocation, with no time of the command's own, is none)."""
    return [i for i in usable(report.invocations) if i.side == side]


def _entry(command: str, runs: list[Invocation], parameters: Mapping[str, str]) -> dict[str, Any] | None:
    """A command's entry; None without a timing run: hyperfine never writes one (its mean, median, min,
    max are numbers, never null, for every reader that parses them as such)."""
    if not runs:
        return None
    times = [i.wall_s for i in runs]
    entry: dict[str, Any] = {
        "command": command,
        "mean": statistics.fmean(times),
        "stddev": statistics.stdev(times) if len(times) > 1 else None,
        "median": statistics.median(times),
        "user": statistics.fmean(i.user_s for i in runs),
        "system": statistics.fmean(i.sys_s for i in runs),
        "min": min(times),
        "max": max(times),
        "times": times,
        "exit_codes": [i.exit_code for i in runs],
        "memory_usage_byte": [i.maxrss_kb * 1024 for i in runs],
    }
    if parameters:
        entry["parameters"] = dict(parameters)
    return entry


def _results(entries: Iterable[dict[str, Any] | None]) -> dict[str, Any]:
    return {"results": [e for e in entries if e is not None]}


def to_hyperfine_json(reports: Sequence[tuple[Mapping[str, str], ComparisonReport]]) -> dict[str, Any]:
    """``{"results": [...]}`` with A then B of every comparison (in a scan, of every combination); one
    command benchmarked on its own (no B) has one entry."""
    return _results(_entry(report.commands[side], _runs(report, side), params)
                    for params, report in reports for side in ("A", "B") if report.commands.get(side))


def of_commands_json(scan: ScanReport) -> dict[str, Any]:
    """`duet compare REF X Y` as `hyperfine REF X Y` writes it: each command once, in the order given, with
    no parameters (the "command" its scan is over is none of the user's); the reference with its runs of
    every comparison, since each measured it."""
    reports = [e.report for e in scan.entries]
    reference = _entry(reports[0].commands["A"], [i for r in reports for i in _runs(r, "A")], {})
    return _results([reference, *(_entry(r.commands["B"], _runs(r, "B"), {}) for r in reports)])


def _scan(scan: ScanReport) -> str:
    data = of_commands_json(scan) if scan.entries and scan.of_commands else \
        to_hyperfine_json([(e.parameters, e.report) for e in scan.entries])
    return json.dumps(data, indent=2) + "\n"


def _dump(reports: Sequence[tuple[Mapping[str, str], ComparisonReport]]) -> str:
    return json.dumps(to_hyperfine_json(reports), indent=2) + "\n"


EXPORTER = TextExporter(
    **described("hyperfine"),
    comparison=lambda report: _dump([({}, report)]),
    scan=_scan,
)
