"""The summary of ``duet compare A B C ...``, in hyperfine's shape ("quick ran 2.10 times faster than
slow") and in duet's terms: each command was measured against one reference, so every factor is a ratio
of times with its confidence interval, either measured (against the reference) or derived from two
comparisons with the reference (`analyze.ratio.ratio_of_ratios`)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from rich.console import Console
from rich.markup import escape

from duetbench.analyze.ratio import RatioResult, ratio_of_ratios
from duetbench.analyze.verdicts import verdict
from duetbench.report.model import ScanEntry
from duetbench.report.units import ratio_interval

#: hyperfine's --sort (its choices: cli/main.py): "auto" orders the summary by time (and tables as the
#: commands were given), "command" everything as the commands were given, "mean-time" everything by time.
Sort = Literal["auto", "command", "mean-time"]
#: Whom the summary is about: the fastest command (hyperfine without --reference), or the reference.
RelativeTo = Literal["fastest", "reference"]


@dataclass(frozen=True)
class SpeedRow:
    """One other command in the summary: its time over the head's (> 1: the head ran faster)."""

    name: str
    ratio: RatioResult | None  # None: its comparison gave no statistics
    #: The reference both were measured against, when the factor is derived from their two comparisons.
    via: str | None


@dataclass(frozen=True)
class SpeedSummary:
    head: str  # the command every row is relative to: the fastest, or the reference
    relative_to: RelativeTo
    reference: str
    rows: list[SpeedRow]
    metric: str
    confidence_level: float


def _usable(ratio: RatioResult) -> bool:
    return (not any(math.isnan(v) for v in (ratio.low, ratio.high)) and math.isfinite(ratio.estimate)
            and ratio.estimate > 0)


def _inverse(ratio: RatioResult) -> RatioResult:
    """Y/X from X/Y: the same interval, turned over (an unbounded end becomes 0, and 0 unbounded)."""
    def inv(v: float) -> float:
        return 1.0 / v if v > 0 else math.inf

    return RatioResult(estimate=inv(ratio.estimate), low=inv(ratio.high), high=inv(ratio.low),
                       confidence_level=ratio.confidence_level, n=ratio.n, interval=ratio.interval)


def speed_summary(entries: list[ScanEntry], names: list[str], reference: str, *, relative_to: RelativeTo,
                  sort: Sort) -> SpeedSummary | None:
    """The summary of the comparisons in `entries` (each of one command against `reference`), over the
    commands `names` in the order given. The fastest is the command with the smallest time relative to
    the reference (the reference's own being 1): the estimates of the paired ratios, the numbers the
    comparisons judged. None when no comparison finished."""
    if not entries:
        return None
    against: dict[str, RatioResult] = {}  # command → its time over the reference's, as measured
    for e in entries:
        p = e.report.primary
        if p is not None and _usable(p.ratio):
            against[e.report.names["B"]] = p.ratio
    level = next((r.confidence_level for r in against.values()), 0.99)
    head = reference
    if not against:  # nothing to rank: no claim that the reference was the fastest
        relative_to = "reference"
    if relative_to == "fastest":
        # On a tie the reference (then the earlier command) stays the head: min keeps the first minimum.
        head = min((reference, *(n for n in names if n in against)),
                   key=lambda n: against[n].estimate if n in against else 1.0)

    def relative(name: str) -> RatioResult | None:
        """name's time over the head's."""
        if head == reference:
            return against.get(name)
        if name == reference:
            return _inverse(against[head])
        return ratio_of_ratios(against[name], against[head]) if name in against else None

    finished = {reference} | {e.report.names["B"] for e in entries}
    rows = [SpeedRow(name, relative(name), via=reference if reference not in (head, name) else None)
            for name in names if name != head and name in finished]
    if sort in ("auto", "mean-time"):
        # By time, the fastest first, as hyperfine lists them; commands without statistics last.
        rows.sort(key=lambda row: (row.ratio is None, row.ratio.estimate if row.ratio is not None else 0.0))
    return SpeedSummary(head=head, relative_to=relative_to, reference=reference, rows=rows,
                        metric=entries[0].report.primary_metric, confidence_level=level)


def render_speed_summary(summary: SpeedSummary | None, console: Console) -> None:
    """hyperfine's summary in our terms: how many times faster (or slower) the head ran than each other
    command, with the confidence interval of that factor; "no difference detected" when it includes 1."""
    if summary is None:
        return
    head = escape(summary.head)
    if summary.relative_to == "fastest":
        about = f"{head} was the fastest"
    else:
        about = f"against the reference {head}"
    console.print(f"[bold]Summary[/bold] [dim]({summary.metric} time, {summary.confidence_level * 100:g}% CI)[/dim]: "
                  f"{about}")
    console.print(f"  [bold]{head}[/bold] ran")
    for row in summary.rows:
        other = escape(row.name)
        via = f", via {escape(row.via)}" if row.via else ""
        r = row.ratio
        if r is None:
            console.print(f"    [yellow]no statistics[/yellow] against {other}")
            continue
        judged = verdict(r.low, r.high)
        if judged == "slower":  # the other took longer: the head ran other/head times faster
            console.print(f"    [green]{r.estimate:.2f}[/green] times faster than {other} "
                          f"[dim](CI {ratio_interval(r.low, r.high, '.3f')}{via})[/dim]")
        elif judged == "faster":
            s = _inverse(r)
            console.print(f"    [red]{s.estimate:.2f}[/red] times slower than {other} "
                          f"[dim](CI {ratio_interval(s.low, s.high, '.3f')}{via})[/dim]")
        else:
            console.print(f"    as fast as {other}: no difference detected [dim]({other}/{head} = "
                          f"{r.estimate:.3f}, CI {ratio_interval(r.low, r.high, '.3f')}{via})[/dim]")
    if any(row.via and row.ratio is not None for row in summary.rows):
        reference = escape(summary.reference)
        console.print(f"  [dim]via {reference}: every command was measured against {reference}; a factor between two "
                      "others combines their two comparisons (wider than measuring them against each other).[/dim]")
