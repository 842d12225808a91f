"""What the table formats (Markdown, AsciiDoc, Org) say, written once: a small document of headings,
paragraphs and tables built from a subject, which each format's module only spells in its markup (a
`Markup`, made an exporter by `document_exporter`).

Text in the document is plain (names from outside included); the format's renderer escapes all of it.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING

from duetbench.report.exporters import TextExporter
from duetbench.report.model import measured_count, runs_measured, stopped_by
from duetbench.report.units import ci_width, p_value, time_scale

if TYPE_CHECKING:
    from duetbench.report.model import CampaignReport, ComparisonReport, ScanReport


@dataclass(frozen=True)
class Strong:
    text: str


@dataclass(frozen=True)
class Code:
    """Our own literal text (an option name), shown as code."""

    text: str


Inline = str | Strong | Code


@dataclass(frozen=True)
class Heading:
    text: str


@dataclass(frozen=True)
class Paragraph:
    parts: tuple[Inline, ...]


@dataclass(frozen=True)
class Table:
    header: tuple[str, ...]
    #: Per column: aligned right (numbers) or left.
    right: tuple[bool, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Warnings:
    """Warnings the reader must see, one per line."""

    lines: tuple[str, ...]


@dataclass(frozen=True)
class Bullets:
    items: tuple[str, ...]


@dataclass(frozen=True)
class Footer:
    """Small print: tool version, seed, host."""

    text: str


Block = Heading | Paragraph | Table | Warnings | Bullets | Footer
Document = list[Block]


class Markup(ABC):
    """How one format spells each block of a document. Every method gets plain text (from outside too) and
    escapes it; `render` joins the blocks."""

    @abstractmethod
    def text(self, value: str) -> str:
        """`value` escaped so that nothing in it is markup, on one line."""

    @abstractmethod
    def strong(self, value: str) -> str: ...

    @abstractmethod
    def code(self, value: str) -> str:
        """Our own literal text (an option name)."""

    @abstractmethod
    def heading(self, value: str) -> str: ...

    @abstractmethod
    def table(self, table: Table) -> str: ...

    @abstractmethod
    def warnings(self, lines: tuple[str, ...]) -> str: ...

    @abstractmethod
    def bullets(self, items: tuple[str, ...]) -> str: ...

    @abstractmethod
    def footer(self, value: str) -> str: ...

    def inline(self, part: Inline) -> str:
        if isinstance(part, Strong):
            return self.strong(part.text)
        if isinstance(part, Code):
            return self.code(part.text)
        return self.text(part)

    def block(self, block: Block) -> str:
        if isinstance(block, Heading):
            return self.heading(block.text)
        if isinstance(block, Paragraph):
            return "".join(self.inline(p) for p in block.parts)
        if isinstance(block, Table):
            return self.table(block)
        if isinstance(block, Warnings):
            return self.warnings(block.lines)
        if isinstance(block, Bullets):
            return self.bullets(block.items)
        if isinstance(block, Footer):
            return self.footer(block.text)
        raise TypeError(block)

    def render(self, doc: Document) -> str:
        return "\n\n".join(self.block(b) for b in doc) + "\n"


def document_exporter(markup: Markup, *, name: str, label: str, help: str) -> TextExporter:
    """The exporter of a table format: every kind of subject as its document (below), spelled by `markup`."""
    return TextExporter(
        name=name, label=label, help=help,
        comparison=lambda report: markup.render(comparison_document(report)),
        scan=lambda scan: markup.render(scan_document(scan)),
        campaign=lambda campaign: markup.render(campaign_document(campaign)),
    )


def percent_change(x: float) -> str:
    return "unbounded" if x == float("inf") else f"{(x - 1) * 100:+.2f}%"


def _footer(report: ComparisonReport) -> Footer:
    host = f"{report.host.get('hostname', '?')} ({report.host.get('cpu_model', '?')})"
    return Footer(f"duetbench {report.tool_version}, seed {report.seed}, host {host}")


def _unit_of(report: ComparisonReport) -> tuple[float, str, int]:
    """(seconds per unit, symbol, decimals) of a one-command table: -u, else chosen from the mean."""
    b = report.benchmark
    return time_scale(b.mean if b is not None else 0.0, report.time_unit)


def _times(unit: tuple[float, str, int], *seconds: float) -> tuple[str, ...]:
    scale, _, decimals = unit
    return tuple(f"{s / scale:.{decimals}f}" if s == s else "–" for s in seconds)


def _no_statistics(report: ComparisonReport) -> Paragraph:
    """Why there is no table: the analysis's reason, and the invocation that ended the comparison."""
    why = report.analysis_error or "no run finished"
    ended = stopped_by(report)
    return Paragraph((Strong("No statistics"), f": {why}" + (f"; {ended}" if ended else "") + "."))


def single_document(report: ComparisonReport) -> Document:
    """One command benchmarked on its own (`duet compare CMD`), as hyperfine's table of it: mean ± σ, min and
    max in one unit, with the CPU time and the runs; below, the mean's CI and the command's noise."""
    label = report.subject
    status = "" if report.status == "complete" else f" ({report.status})"
    doc: Document = [Heading(f"duetbench: {label}{status}")]
    if label != report.commands["A"]:
        doc.append(Paragraph(("Command: ", report.commands["A"])))
    b = report.benchmark
    if b is None:
        doc.append(_no_statistics(report))
    else:
        unit = _unit_of(report)
        mean, sd, low, high, user, system, fastest, slowest = _times(
            unit, b.mean, b.stdev, b.low, b.high, b.user, b.system, b.min, b.max)
        symbol = unit[1]
        doc.append(Table(
            ("Command", f"Mean [{symbol}]", f"Min [{symbol}]", f"Max [{symbol}]", f"User [{symbol}]",
             f"System [{symbol}]", "Runs"),
            (False, True, True, True, True, True, True),
            ((label, f"{mean} ± {sd}" if b.stdev == b.stdev else mean, fastest, slowest, user, system, str(b.runs)),)))
        facts = f"{b.metric} time, {b.runs} runs"
        if b.low == b.low:
            facts += (f"; the mean's {b.confidence * 100:g}% CI is {low} … {high} {symbol} "
                      f"(± {b.relative_half_width:.2%})")
        if b.aa_resolution == b.aa_resolution:
            facts += (f"; compared with itself at {b.runs} runs each, a comparison would resolve about "
                      f"±{b.aa_resolution:.2%}")
        doc.append(Paragraph((facts + ".",)))
    if report.warnings:
        doc.append(Warnings(tuple(report.warnings)))
    doc.append(_footer(report))
    return doc


def comparison_document(report: ComparisonReport) -> Document:
    """A short table for a pull-request comment: the verdict, then per metric the means, B/A, CI and verdict."""
    from duetbench.analyze.verdicts import describe_change

    if report.method == "single":
        return single_document(report)
    a, b = report.names["A"], report.names["B"]
    # Not "complete": a pull-request comment must not pass off a failed or cut-short run as a finished one.
    status = "" if report.status == "complete" else f", {report.status}"
    doc: Document = [Heading(f"duetbench: {b} vs {a} ({report.method}{status})")]
    if not report.results:
        return [*doc, _no_statistics(report), *([Warnings(tuple(report.warnings))] if report.warnings else []),
                _footer(report)]
    primary = report.primary
    if primary is not None:
        kind = {"anytime": ", anytime-valid CI (stopped once the difference was evident)",
                "bootstrap": ", percentile bootstrap CI"}.get(primary.ratio.interval, "")
        # The runs measured, and how many of them the robust filter set aside: "9 runs" after `--runs 10`
        # reads as a run lost.
        aside = primary.outliers_removed
        runs = runs_measured(primary) + (f" ({aside} outlier pair{'s' if aside != 1 else ''} set aside)"
                                         if aside else "")
        doc.append(Paragraph((Strong(describe_change(primary.ratio, a, b)),
                              f" — {primary.metric} time, {runs}{kind}.")))
    auto = report.options.get("auto")
    if isinstance(auto, dict) and auto.get("reason"):
        doc.append(Paragraph(("Method chosen by ", Code("--method auto"), f": {auto['reason']}.")))
    level = int(round((primary.ratio.confidence_level if primary else 0.99) * 100))
    # One unit for the table's means: -u, else chosen from the primary metric's mean of A (ms below a second).
    scale, symbol, decimals = time_scale(primary.a.mean if primary else 0.0, report.time_unit)

    def mean(seconds: float) -> str:
        return f"{seconds / scale:.{decimals}f} {symbol}"

    doc.append(Table(
        ("metric", f"{a} mean", f"{b} mean", f"{b}/{a}", f"{level}% CI", "verdict", "U-test p"),
        (False, True, True, True, False, False, True),
        tuple((metric, mean(r.a.mean), mean(r.b.mean), f"{r.ratio.estimate:.4f}",
               f"{percent_change(r.ratio.low)} … {percent_change(r.ratio.high)}", r.verdict, p_value(r.u_test_p, ".3g"))
              for metric, r in report.results.items())))
    if report.warnings:
        doc.append(Warnings(tuple(report.warnings)))
    doc.append(_footer(report))
    return doc


def scan_document(scan: ScanReport) -> Document:
    """One row per comparison of a parameter scan: its values, B/A, CI, verdict, runs."""
    entries = scan.entries
    if not entries:
        return [Heading("duetbench parameter scan: no comparison finished")]
    first = entries[0].report
    names = scan.parameter_names
    if all(e.report.method == "single" for e in entries):
        return _single_scan_document(scan)
    level = next((e.report.primary.ratio.confidence_level for e in entries if e.report.primary), 0.99)
    rows = []
    for e in entries:
        p = e.report.primary
        values = tuple(e.parameters.values())
        if p is None:
            rows.append((*values, "–", "–", "no statistics", "0"))
        else:
            rows.append((*values, f"{p.ratio.estimate:.4f}",
                         f"{percent_change(p.ratio.low)} … {percent_change(p.ratio.high)}", p.verdict,
                         measured_count(p)))
    if scan.of_commands:
        others = ", ".join(e.report.names["B"] for e in entries)
        heading = f"duetbench: {others} against {first.names['A']} ({first.method})"
    else:
        heading = f"duetbench: {first.names['B']} vs {first.names['A']} ({first.method}), scanning {', '.join(names)}"
    return [
        Heading(heading),
        Table((*names, "B/A", f"{level:.0%} CI", "verdict", "runs"), (True,) * len(names) + (True, False, False, True),
              tuple(rows)),
        Footer(f"duetbench {first.tool_version}, {first.primary_metric} time, seed {first.seed}"),
    ]


def _single_scan_document(scan: ScanReport) -> Document:
    """A scan of one command: per combination of values, the command as run, its mean ± σ, min, max and runs,
    in one unit (-u, else chosen from the first mean), as hyperfine's table of a scan."""
    first = scan.entries[0].report
    names = scan.parameter_names
    unit = _unit_of(next((e.report for e in scan.entries if e.report.benchmark is not None), first))
    symbol = unit[1]
    rows = []
    for e in scan.entries:
        values = (*e.parameters.values(), e.report.subject)
        b = e.report.benchmark
        if b is None:
            rows.append((*values, "no statistics", "–", "–", "0"))
            continue
        mean, sd, fastest, slowest = _times(unit, b.mean, b.stdev, b.min, b.max)
        rows.append((*values, f"{mean} ± {sd}" if b.stdev == b.stdev else mean, fastest, slowest, str(b.runs)))
    return [
        Heading(f"duetbench: one command, scanning {', '.join(names)}"),
        Table((*names, "Command", f"Mean [{symbol}]", f"Min [{symbol}]", f"Max [{symbol}]", "Runs"),
              (True,) * len(names) + (False, True, True, True, True), tuple(rows)),
        Footer(f"duetbench {first.tool_version}, {first.primary_metric} time, seed {first.seed}"),
    ]


def campaign_document(campaign: CampaignReport) -> Document:
    """A table for a pull-request comment or $GITHUB_STEP_SUMMARY: per benchmark and method, the change in
    words, the verdict, the CI width; the duet's synchronization; the --fail-if-slower outcome."""
    from duetbench.analyze.verdicts import describe_change
    from duetbench.report.analysis import slower_than
    from duetbench.report.campaign import duration, runs_column

    rows = []
    for row in campaign.rows:
        r = row.result
        if r is None:
            rows.append((row.benchmark, row.method, runs_column(row), "", row.problem, "", ""))
            continue
        icon = {"slower": "🔴", "faster": "🟢"}.get(r.verdict, "⚪")
        rows.append((row.benchmark, row.method, runs_column(row), f"{duration(r.a.median)} / {duration(r.b.median)}",
                     describe_change(r.ratio, "A", "B"), f"{icon} {r.verdict}", ci_width(r.relative_ci_width)))
    doc: Document = [
        Heading(f"duetbench: campaign {campaign.name}"),
        Table(("benchmark", "method", "runs", "A / B per iteration (median)", "B vs A", "verdict", "CI width"),
              (False, False, True, True, False, False, True), tuple(rows)),
    ]
    stated = [row for row in campaign.rows if row.sync and row.result is not None]
    if stated:
        doc.append(Bullets(tuple(f"{row.benchmark} · {row.method}: {row.sync}" for row in stated)))
    threshold = campaign.threshold_pct
    if threshold is not None:
        over = slower_than(campaign.rows, threshold)
        doc.append(Paragraph((Strong(f"{len(over)} benchmark(s) slower by more than {threshold:g}%"),) if over else
                             (f"No benchmark is slower by more than {threshold:g}% (with the stated confidence).",)))
    return doc
