"""Tables printed whole when output goes to a file or a CI log."""
from __future__ import annotations

from rich.console import Console
from rich.table import Table

#: Wider than any table: a table that does not expand is laid out at its natural width within it.
_UNBOUNDED = 100_000


def print_table(console: Console, table: Table) -> None:
    """Print `table`; on a terminal as rich fits it, elsewhere at its natural width.

    Piped, rich assumes 80 (or a fixed) columns and cuts cells ("seque…") to fit; a log has no width,
    and a long benchmark name (JMH's are package-qualified) must not hide the method or the verdict. So
    it is printed within an unbounded width, where rich lays it out at its natural width, as wide as its
    widest cells (measuring it first to print within exactly that width measured it twice: ~7 ms of a
    compare's report on a 2-vCPU VM, issue 17)."""
    if console.is_terminal or table.expand:
        console.print(table)
        return
    width = console.width
    console.width = max(width, _UNBOUNDED)  # print(width=) cannot exceed the console's own width
    try:
        console.print(table)
    finally:
        console.width = width
