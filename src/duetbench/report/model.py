"""Everything a report shows, gathered once; the renderers (terminal, report/exporters/) only format it:
one comparison, a parameter scan's comparisons, or a campaign's analysis."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from duetbench.model.invocation import Invocation

if TYPE_CHECKING:
    # numpy: imported by whoever makes the results, not by whoever only names the type
    from duetbench.analyze.comparison import ComparisonResult
    from duetbench.analyze.single import Benchmark
    from duetbench.analyze.tables import AnalysisRow
    from duetbench.model.table import IterationTable


class ComparisonReport(msgspec.Struct):
    id: int
    status: str  # "complete" | "interrupted" | "failed" | "running"
    method: str
    names: dict[str, str]
    commands: dict[str, str]
    seed: int
    options: dict[str, Any]
    host: dict[str, Any]
    tool_version: str
    primary_metric: str
    results: dict[str, ComparisonResult]
    invocations: list[Invocation]
    warnings: list[str] = msgspec.field(default_factory=list)
    analysis_error: str | None = None
    #: One command benchmarked on its own (method "single"): its statistics; then `results` is empty.
    benchmark: Benchmark | None = None
    #: -u/--time-unit (None: automatic), so the table exports show times as the terminal did.
    time_unit: str | None = None

    @property
    def primary(self) -> ComparisonResult | None:
        return self.results.get(self.primary_metric)

    @property
    def subject(self) -> str:
        """What it is of: "B vs A"; one command benchmarked on its own by its -n name, else by its text (as
        hyperfine names it: the default name "A" says nothing without a B)."""
        if self.method == "single":
            return self.commands["A"] if self.names["A"] == "A" else self.names["A"]
        return f"{self.names['B']} vs {self.names['A']}"


def stopped_by(report: ComparisonReport) -> str | None:
    """What ended a comparison that produced no statistics, from the invocation that did (`duet compare`
    said it when it happened; the store keeps only the invocation): "B was killed by signal 9 (invocation
    0)". None where no invocation failed (interrupted, or too few runs)."""
    if report.results or report.benchmark is not None:
        return None
    for inv in reversed(report.invocations):
        if inv.status != "ok":
            who = report.names.get(inv.side) or inv.side
            if report.method == "single" and who == "A":  # no B: "A" names nothing
                who = "the command"
            return f"{who} {inv.ending()} (invocation {inv.index})"
    return None


def cpus_per_command(options: dict[str, Any]) -> int:
    """The CPUs each command of a stored comparison was given (its options hold the count; comparisons
    stored before --cpus-per-command: 1)."""
    value = options.get("cpus_per_command", 1)
    return value if isinstance(value, int) and value >= 1 else 1


def runs_measured(result: ComparisonResult) -> str:
    """The runs measured per side, as hyperfine counts them, for every report that names them (terminal,
    `duet show`, the table exports). `result.runs` is what the interval is over: the robust pair filter's
    outliers are set aside there, and the report says how many; a sequential comparison cut short between
    A and B has one run more of A."""
    return f"{measured_count(result)} runs"


def measured_count(result: ComparisonResult) -> str:
    """`runs_measured` without the word: "50", or "12 + 11" when the sides differ (a table's runs column)."""
    a, b = result.a.n, result.b.n
    return f"{a}" if a == b else f"{a} + {b}"


class ScanEntry(msgspec.Struct, frozen=True):
    """One comparison of a parameter scan, with the values its placeholders took."""

    parameters: dict[str, str]
    report: ComparisonReport


class ScanReport(msgspec.Struct):
    """A parameter scan's comparisons, in the order they ran (those that finished)."""

    entries: list[ScanEntry]

    @property
    def parameter_names(self) -> list[str]:
        return list(self.entries[0].parameters) if self.entries else []

    @property
    def of_commands(self) -> bool:
        """`duet compare REF X Y ...` (usecases/many.py): a "scan" over the compared command's name, each
        entry one other command (B) against the same reference (A)."""
        entries = self.entries
        return (self.parameter_names == ["command"] and len({e.report.names["A"] for e in entries}) == 1
                and all(e.parameters["command"] == e.report.names["B"] for e in entries))


class CampaignReport(msgspec.Struct):
    """A campaign's analysis, as `duet analyze` and `duet run` show it: one row per benchmark and method.

    `table` (the iteration table) is what the HTML export plots; `studies` the method studies as a dict
    (JSON, HTML) and `studies_result` as computed (its own CSV), when they were asked for."""

    campaign_id: int
    name: str
    rows: list[AnalysisRow]
    #: Written as they are at the top of the JSON export (campaign, name, options, studies).
    meta: dict[str, Any]
    #: --fail-if-slower, stated under the Markdown table.
    threshold_pct: float | None = None
    table: IterationTable | None = None
    environment: dict[str, Any] = msgspec.field(default_factory=dict)
    studies: dict[str, Any] | None = None
    studies_result: Any = None
    #: For the HTML report (report/campaign_context.py): what identifies the campaign, each benchmark's
    #: commands per side, and the campaign file as it was run.
    facts: dict[str, str] = msgspec.field(default_factory=dict)
    commands: dict[str, dict[str, str]] = msgspec.field(default_factory=dict)
    source: str = ""
    #: The campaign's state ("finished", "interrupted", "running"): a report of an unfinished one says so.
    status: str = "finished"
