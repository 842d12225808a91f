"""Tables printed whole when output goes to a file or a CI log."""
from __future__ import annotations

from rich.console import Console
from rich.measure import Measurement
from rich.table import Table


def print_table(console: Console, table: Table) -> None:
    """Print `table`; on a terminal as rich fits it, elsewhere at its natural width.

    Piped, rich assumes 80 (or a fixed) columns and cuts cells ("seque…") to fit; a log has no width,
    and a long benchmark name (JMH's are package-qualified) must not hide the method or the verdict."""
    if console.is_terminal:
        console.print(table)
        return
    natural = Measurement.get(console, console.options.update_width(100_000), table).maximum
    width = console.width
    if natural <= width:
        console.print(table)
        return
    console.width = natural  # print(width=) cannot exceed the console's own width
    try:
        console.print(table)
    finally:
        console.width = width
