"""``--export-csv``: one row per invocation (a comparison, a scan) or per benchmark and method (a campaign).

Text cells go through `csv_row`: no spreadsheet runs a name as a formula."""
from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from duetbench.report.exporters import TextExporter, described, to_stdout, write_atomically
from duetbench.report.safe_text import csv_row

if TYPE_CHECKING:
    from duetbench.report.exporters import Subject
    from duetbench.report.model import CampaignReport, ComparisonReport, ScanReport


def _table(columns: list[str], rows: Iterable[dict[str, Any]]) -> str:
    out = io.StringIO(newline="")
    writer = csv.DictWriter(out, fieldnames=columns)
    writer.writeheader()
    for row in rows:
        writer.writerow(csv_row(row))
    return out.getvalue()


def _invocation_columns() -> list[str]:
    from duetbench.model.invocation import Invocation

    return list(Invocation.__struct_fields__)


def comparison_csv(report: ComparisonReport) -> str:
    # The method, and why --method auto chose it, on every row: a CSV has no header block to hold them.
    auto = report.options.get("auto")
    reason = auto.get("reason", "") if isinstance(auto, dict) else ""
    return _table(["comparison_id", "method", "method_reason", "name", *_invocation_columns()],
                  ({"comparison_id": report.id, "method": report.method, "method_reason": reason,
                    "name": report.names[inv.side], **inv.to_dict()} for inv in report.invocations))


def scan_csv(scan: ScanReport) -> str:
    """As a comparison's, with a column per parameter first, named as the parameter; one named as a column
    of ours (`-L side 1,2`, `-L index ...`) is ``parameter_NAME``, hyperfine's name for it: else the
    invocation's value overwrote the parameter's under a header naming the column twice."""
    ours = ["comparison_id", "name", *_invocation_columns()]
    column = {name: f"parameter_{name}" if name in ours else name for name in scan.parameter_names}
    return _table([*column.values(), *ours],
                  ({**{column[k]: v for k, v in e.parameters.items()}, "comparison_id": e.report.id,
                    "name": e.report.names[inv.side], **inv.to_dict()}
                   for e in scan.entries for inv in e.report.invocations))


def campaign_csv(campaign: CampaignReport) -> str:
    from duetbench.report.analysis import COLUMNS, row_dict

    def rows() -> Iterable[dict[str, Any]]:
        for row in campaign.rows:
            data = row_dict(row)
            data["notes"] = " | ".join(data["notes"])
            yield data

    return _table(list(COLUMNS), rows())


def studies_path(path: Path) -> Path:
    """Where a campaign's method studies go beside its CSV: NAME.studies.csv (to standard output after it,
    where the CSV goes there)."""
    return path if to_stdout(path) else path.with_name(path.stem + ".studies.csv")


class CsvExporter(TextExporter, frozen=True):
    def write(self, subject: Subject, path: Path) -> None:
        super().write(subject, path)
        studies = getattr(subject, "studies_result", None)
        if studies is not None:
            from duetbench.report.studies import studies_csv

            write_atomically(studies_path(path), studies_csv(studies), "method studies' CSV export")


EXPORTER = CsvExporter(**described("csv"), comparison=comparison_csv, scan=scan_csv, campaign=campaign_csv)
