"""Piped tables are printed whole, at their natural width (report/wide.py)."""
from __future__ import annotations

import io

import pytest
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

from duetbench.report.wide import print_table


def _table(name: str) -> Table:
    table = Table(show_edge=False, header_style="bold", box=None, padding=(0, 1))
    for column in ("benchmark", "method", "ratio", "verdict"):
        table.add_column(column, justify="right" if column == "ratio" else "left")
    table.add_row(name, "sequential", "1.0312", "[bold]slower[/bold]")
    table.add_row("b", "duet", "0.9875", "no difference")
    return table


def _printed(table: Table, width: int, how: str) -> str:
    out = io.StringIO()
    console = Console(file=out, width=width, force_terminal=False, color_system=None)
    if how == "measured first":  # the way it was done before: measure, then print within exactly that width
        natural = Measurement.get(console, console.options.update_width(100_000), table).maximum
        if natural > width:
            console.width = natural
        console.print(table)
    else:
        print_table(console, table)
    return out.getvalue()


@pytest.mark.parametrize("name", ["short", "org.openjdk.jmh.samples.JMHSample_35_Profilers.Maps.test" * 2])
@pytest.mark.parametrize("width", [40, 80, 200])
def test_a_piped_table_is_whole_and_as_it_was_when_measured_first(name: str, width: int) -> None:
    printed = _printed(_table(name), width, "print_table")
    assert printed == _printed(_table(name), width, "measured first")
    assert name in printed and "sequential" in printed and "slower" in printed and "…" not in printed
    assert max(len(line) for line in printed.splitlines()) <= max(width, len(name) + 50)  # no padding to the width


def test_the_console_keeps_its_width_after_a_wide_table() -> None:
    out = io.StringIO()
    console = Console(file=out, width=80, force_terminal=False)
    print_table(console, _table("x" * 300))
    assert console.width == 80
