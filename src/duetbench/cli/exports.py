"""``--export-FORMAT PATH`` for a command, generated from the exporters' registry (report/exporters/):
a command gets the option of every format that can write what it produces."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from duetbench.report.exporters import formats_for, option_name

F = TypeVar("F", bound=Callable[..., Any])


def export_options(*kinds: str) -> Callable[[F], F]:
    """Decorate a click command with --export-FORMAT for every format writing one of `kinds`
    ("comparison", "scan", "campaign"). The command receives them as keyword arguments export_FORMAT;
    `Exports.from_options` collects them."""

    def decorate(func: F) -> F:
        for fmt in reversed(formats_for(*kinds)):  # the table only: no exporter module is imported
            func = click.option(f"--export-{fmt.name}", option_name(fmt.name),
                                type=click.Path(dir_okay=False, path_type=Path), metavar="PATH",
                                help=f"{fmt.help} Replaces PATH if it exists.")(func)
        return func

    return decorate
