"""Machine- and reviewer-readable exports: JSON (the contract), CSV (one row per invocation), Markdown."""
from __future__ import annotations

import csv
import json
import math
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from duetbench.errors import DuetError
from duetbench.execute.invocation import Invocation
from duetbench.report.model import ComparisonReport
from duetbench.report.safe_text import csv_row, markdown_text

if TYPE_CHECKING:
    from duetbench.analyze.comparison import ComparisonResult
    from duetbench.report.scan import ScanEntry

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
    from duetbench.analyze.verdict import describe_change

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
        "difference": asdict(result.difference) if result.difference is not None else None,
        "notes": list(result.notes),
        "a": {"name": report.names["A"], "command": report.commands["A"], **asdict(result.a)},
        "b": {"name": report.names["B"], "command": report.commands["B"], **asdict(result.b)},
    }


def to_json_dict(report: ComparisonReport) -> dict[str, Any]:
    return clean_json({
        "version": JSON_FORMAT_VERSION,
        "tool": {"name": "duetbench", "version": report.tool_version},
        "id": report.id,
        "status": report.status,
        "method": report.method,
        "seed": report.seed,
        "options": report.options,
        "host": report.host,
        "comparisons": [_comparison_dict(report, r) for r in report.results.values()],
        # One command benchmarked on its own (method "single"): its statistics, else null.
        "benchmark": asdict(report.benchmark) if report.benchmark is not None else None,
        "warnings": report.warnings,
        "analysis_error": report.analysis_error,
        "invocations": [i.to_dict() for i in report.invocations],
    })


def write_text(path: Path, text: str, what: str) -> None:
    try:
        path.write_text(text)
    except OSError as exc:
        raise DuetError(f"cannot write the {what} export to {path}: {exc.strerror}",
                        hint="choose a writable path") from None


def write_json(report: ComparisonReport, path: Path) -> None:
    write_text(path, json.dumps(to_json_dict(report), indent=2) + "\n", "JSON")


def write_csv(report: ComparisonReport, path: Path) -> None:
    # The method, and why --method auto chose it, on every row: a CSV has no header block to hold them.
    columns = ["comparison_id", "method", "method_reason", "name", *[f.name for f in fields(Invocation)]]
    auto = report.options.get("auto")
    reason = auto.get("reason", "") if isinstance(auto, dict) else ""
    try:
        with open(path, "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=columns)
            writer.writeheader()
            for inv in report.invocations:
                writer.writerow(csv_row({"comparison_id": report.id, "method": report.method,
                                         "method_reason": reason, "name": report.names[inv.side], **inv.to_dict()}))
    except OSError as exc:
        raise DuetError(f"cannot write the CSV export to {path}: {exc.strerror}", hint="choose a writable path") from None


def percent_change(x: float) -> str:
    return f"{(x - 1) * 100:+.2f}%"


def to_markdown(report: ComparisonReport) -> str:
    """A short table for a pull-request comment."""
    from duetbench.analyze.verdict import describe_change

    names = {side: markdown_text(name) for side, name in report.names.items()}
    lines = [f"### duetbench: {names['B']} vs {names['A']} ({report.method})", ""]
    primary = report.primary
    if primary is not None:
        kind = {"anytime": ", anytime-valid CI (stopped once the difference was evident)",
                "bootstrap": ", percentile bootstrap CI"}.get(primary.ratio.interval, "")
        lines += [f"**{markdown_text(describe_change(primary.ratio, report.names['A'], report.names['B']))}** — "
                  f"{primary.metric} time, {primary.runs} runs{kind}.", ""]
    auto = report.options.get("auto")
    if isinstance(auto, dict) and auto.get("reason"):
        lines += [f"Method chosen by `--method auto`: {markdown_text(str(auto['reason']))}.", ""]
    lines += ["| metric | " + f"{names['A']} mean | {names['B']} mean | {names['B']}/{names['A']} | "
              f"{int(round((primary.ratio.confidence_level if primary else 0.99) * 100))}% CI | verdict | U-test p |",
              "|---|---:|---:|---:|---|---|---:|"]
    for metric, r in report.results.items():
        lines.append(f"| {metric} | {r.a.mean * 1000:.2f} ms | {r.b.mean * 1000:.2f} ms | {r.ratio.estimate:.4f} | "
                     f"{percent_change(r.ratio.low)} … {percent_change(r.ratio.high)} | {r.verdict} | {r.u_test_p:.3g} |")
    if report.warnings:
        lines += ["", *[f"> ⚠ {markdown_text(w)}" for w in report.warnings]]
    host = markdown_text(f"{report.host.get('hostname', '?')} ({report.host.get('cpu_model', '?')})")
    lines += ["", f"<sub>duetbench {report.tool_version}, seed {report.seed}, host {host}</sub>", ""]
    return "\n".join(lines)


def write_markdown(report: ComparisonReport, path: Path) -> None:
    write_text(path, to_markdown(report), "Markdown")


@dataclass
class Exports:
    """The files a user asked for with --export-*: of one comparison (`write`), or of a parameter
    scan's comparisons together (`write_scan`)."""

    json: Path | None = None
    csv: Path | None = None
    markdown: Path | None = None
    hyperfine: Path | None = None

    def write(self, report: ComparisonReport) -> None:
        if self.json:
            write_json(report, self.json)
        if self.csv:
            write_csv(report, self.csv)
        if self.markdown:
            write_markdown(report, self.markdown)
        if self.hyperfine:
            from duetbench.report.hyperfine_json import write_hyperfine_json

            write_hyperfine_json([({}, report)], self.hyperfine)

    def write_scan(self, entries: list[ScanEntry]) -> None:
        from duetbench.report import scan
        from duetbench.report.hyperfine_json import write_hyperfine_json

        if self.json:
            write_text(self.json, json.dumps(scan.to_scan_json(entries), indent=2) + "\n", "JSON")
        if self.csv:
            scan.write_scan_csv(entries, self.csv)
        if self.markdown:
            write_text(self.markdown, scan.to_scan_markdown(entries), "Markdown")
        if self.hyperfine:
            write_hyperfine_json([(e.parameters, e.report) for e in entries], self.hyperfine)
