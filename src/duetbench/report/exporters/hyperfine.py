"""``--export-hyperfine``: A's and B's times in hyperfine's ``--export-json`` format, for tools that read it
(Bencher's hyperfine adapter, hyperfine's plot scripts, CI dashboards).

One entry per command with the keys hyperfine writes: ``command``, ``mean``, ``stddev`` (null below two
runs), ``median``, ``user``, ``system``, ``min``, ``max``, ``times``, ``exit_codes``, ``parameters`` in a
parameter scan, and (hyperfine 1.20 on) ``memory_usage_byte``: each run's peak resident set size, from
the same `ru_maxrss` hyperfine reads (KiB on Linux, times 1024). Times are the measured (non-warm-up)
invocations' elapsed seconds, as hyperfine's are its timing runs. What hyperfine has no key for — the
pairing, the ratio's CI, the verdict — is in our own ``--export-json``. A campaign's harness iterations
are no command's timing runs: this format writes comparisons and scans only.
"""
from __future__ import annotations

import json
import statistics
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from duetbench.report.exporters import TextExporter, described

if TYPE_CHECKING:
    from duetbench.report.model import ComparisonReport


def _entry(report: ComparisonReport, side: str, parameters: Mapping[str, str]) -> dict[str, Any]:
    runs = [i for i in report.invocations if i.side == side and not i.warmup]
    times = [i.wall_s for i in runs]
    entry: dict[str, Any] = {
        "command": report.commands[side],
        "mean": statistics.fmean(times) if times else None,
        "stddev": statistics.stdev(times) if len(times) > 1 else None,
        "median": statistics.median(times) if times else None,
        "user": statistics.fmean(i.user_s for i in runs) if runs else None,
        "system": statistics.fmean(i.sys_s for i in runs) if runs else None,
        "min": min(times) if times else None,
        "max": max(times) if times else None,
        "times": times,
        "exit_codes": [i.exit_code for i in runs],
        "memory_usage_byte": [i.maxrss_kb * 1024 for i in runs],
    }
    if parameters:
        entry["parameters"] = dict(parameters)
    return entry


def to_hyperfine_json(reports: Sequence[tuple[Mapping[str, str], ComparisonReport]]) -> dict[str, Any]:
    """``{"results": [...]}`` with A then B of every comparison (in a scan, of every combination); one
    command benchmarked on its own (no B) has one entry."""
    return {"results": [_entry(report, side, params) for params, report in reports for side in ("A", "B")
                        if report.commands.get(side)]}


def _dump(reports: Sequence[tuple[Mapping[str, str], ComparisonReport]]) -> str:
    return json.dumps(to_hyperfine_json(reports), indent=2) + "\n"


EXPORTER = TextExporter(
    **described("hyperfine"),
    comparison=lambda report: _dump([({}, report)]),
    scan=lambda scan: _dump([(e.parameters, e.report) for e in scan.entries]),
)
