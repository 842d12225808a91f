"""``--export-html``: a self-contained HTML page (works offline) with the plots.

A comparison or a scan: the comparisons' report (report/comparisons_html.py); a campaign: the report
``duet report`` writes (report/html.py), with the method studies when they were computed."""
from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from duetbench.errors import DuetError
from duetbench.report.exporters import TextExporter, described

if TYPE_CHECKING:
    from duetbench.report.model import CampaignReport, ComparisonReport, ScanReport


def comparison_html(report: ComparisonReport) -> str:
    from duetbench.report.comparisons_html import render_comparisons_html

    kind = "one command" if report.method == "single" else "comparison"
    return render_comparisons_html(f"duetbench · {kind} #{report.id}: {report.subject}", [(report, {})])


def scan_html(scan: ScanReport) -> str:
    from duetbench.report.comparisons_html import render_comparisons_html

    first = scan.entries[0].report if scan.entries else None
    if first is not None and scan.of_commands:
        # `duet compare A B C`: commands against a reference, as the Markdown export heads it, not "a scan of
        # B vs A over a parameter named command" (whose column only repeated B's).
        others = ", ".join(e.report.names["B"] for e in scan.entries)
        return render_comparisons_html(f"duetbench · {others} against {first.names['A']}",
                                       [(e.report, {}) for e in scan.entries])
    title = "duetbench · parameter scan"
    if first is not None:
        what = "one command" if first.method == "single" else first.subject
        title += f": {what}, scanning {', '.join(scan.parameter_names)}"
    return render_comparisons_html(title, [(e.report, e.parameters) for e in scan.entries])


def campaign_html(campaign: CampaignReport) -> str:
    from duetbench.report.html import render_html_report

    if campaign.table is None:
        raise DuetError("the HTML export of a campaign needs its iterations, which were not loaded")
    # The row's notes (the duet's synchronization first) in place of the estimator's own, which they include;
    # runs that failed (`duet run` counts them) said beside them, as the terminal's "+2 failed" says it.
    results = []
    for r in campaign.rows:
        failed = (f"{r.runs_failed} run{'s' if r.runs_failed != 1 else ''} failed (their exit codes and stderr are "
                  "stored)") if r.runs_failed else ""
        notes = (*r.notes, failed) if failed else tuple(r.notes)
        problem = "; ".join(filter(None, (r.problem, failed if r.result is None else "")))
        results.append((r.benchmark, r.method, msgspec.structs.replace(r.result, notes=notes) if r.result else None,
                        problem))
    # An unfinished campaign says so where the terminal does ("campaign #1 ab (interrupted)"): at the top.
    state = "" if campaign.status == "finished" else f", {campaign.status}"
    return render_html_report(title=f"duetbench · campaign {campaign.name} (#{campaign.campaign_id}{state})",
                              table=campaign.table, results=results, environment=campaign.environment,
                              studies=campaign.studies, facts=campaign.facts, commands=campaign.commands,
                              source=campaign.source)


EXPORTER = TextExporter(**described("html"), comparison=comparison_html, scan=scan_html, campaign=campaign_html)
