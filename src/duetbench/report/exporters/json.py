"""``--export-json``: the contract for machines — everything a comparison, a scan or an analysis holds."""
from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

import msgspec

from duetbench import __version__
from duetbench.report.exporters import TextExporter, described

if TYPE_CHECKING:
    from duetbench.analyze.comparison import ComparisonResult
    from duetbench.report.model import CampaignReport, ComparisonReport, ScanReport

#: The export's format. Its history (a reader that knows version N reads every file of it; fields are
#: only ever added within a version, never changed or removed):
#:   1 — the comparison, scan and campaign documents; invocations carry every field of
#:       `model.invocation.Invocation` (`cgroup_wait_s`, the side's run-queue wait, added 2026-11-27).
JSON_FORMAT_VERSION = 1


def clean_json(value: Any) -> Any:
    """JSON has no NaN/inf: write them as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: clean_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean_json(v) for v in value]
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        return clean_json(value.item())
    return value


def _comparison_dict(report: ComparisonReport, result: ComparisonResult) -> dict[str, Any]:
    from duetbench.analyze.verdicts import describe_change

    return {
        "method": result.method,
        "metric": result.metric,
        "runs": result.runs,
        "ratio": {"estimate": result.ratio.estimate, "low": result.ratio.low, "high": result.ratio.high,
                  "confidence": result.ratio.confidence_level, "interval": result.ratio.interval},
        "verdict": result.verdict,
        "summary": describe_change(result.ratio, report.names["A"], report.names["B"]),
        "u_test_p": result.u_test_p,
        "relative_ci_width": result.relative_ci_width,
        "ratio_cv": result.ratio_cv,
        "outliers_removed": result.outliers_removed,
        "difference": msgspec.structs.asdict(result.difference) if result.difference is not None else None,
        "notes": list(result.notes),
        "a": {"name": report.names["A"], "command": report.commands["A"], **msgspec.structs.asdict(result.a)},
        "b": {"name": report.names["B"], "command": report.commands["B"], **msgspec.structs.asdict(result.b)},
    }


def _options(report: ComparisonReport) -> dict[str, Any]:
    """The stored options; one command benchmarked on its own has no B, so none of B's (empty) are written."""
    if report.method != "single":
        return report.options
    return {k: v for k, v in report.options.items() if k not in ("name_b", "command_b")}


def _benchmark(report: ComparisonReport) -> dict[str, Any] | None:
    """One command benchmarked on its own (method "single"): its name, command and statistics."""
    if report.benchmark is None:
        return None
    return {"name": report.names["A"], "command": report.commands["A"], **msgspec.structs.asdict(report.benchmark)}


def to_json_dict(report: ComparisonReport) -> dict[str, Any]:
    return clean_json({
        "version": JSON_FORMAT_VERSION,
        "tool": {"name": "duetbench", "version": report.tool_version},
        "id": report.id,
        "status": report.status,
        "method": report.method,
        "seed": report.seed,
        "options": _options(report),
        "host": report.host,
        "comparisons": [_comparison_dict(report, r) for r in report.results.values()],
        "benchmark": _benchmark(report),
        "warnings": report.warnings,
        "analysis_error": report.analysis_error,
        "invocations": [i.to_dict() for i in report.invocations],
    })


def to_scan_json(scan: ScanReport) -> dict[str, Any]:
    return clean_json({
        "version": JSON_FORMAT_VERSION,
        "tool": {"name": "duetbench", "version": __version__},
        "parameters": scan.parameter_names,
        "scan": [{"parameters": e.parameters, **to_json_dict(e.report)} for e in scan.entries],
    })


def to_campaign_json(campaign: CampaignReport) -> dict[str, Any]:
    from duetbench.report.analysis import row_dict

    return {**campaign.meta, "rows": [row_dict(r) for r in campaign.rows]}


EXPORTER = TextExporter(
    **described("json"),
    comparison=lambda report: json.dumps(to_json_dict(report), indent=2) + "\n",
    scan=lambda scan: json.dumps(to_scan_json(scan), indent=2) + "\n",
    # No newline at the end: as `duet analyze` has always written it.
    campaign=lambda campaign: json.dumps(to_campaign_json(campaign), indent=2),
)
