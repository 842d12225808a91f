"""``--export-FORMAT PATH`` for a command, generated from the exporters' registry (report/exporters/):
a command gets the option of every format that can write what it produces."""
from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from duetbench.report.exporters import formats_for, is_database, option_name, to_stdout

F = TypeVar("F", bound=Callable[..., Any])


def writable_target(ctx: click.Context, param: click.Parameter, value: str | Path | None) -> Path | None:
    """Refuse, before anything is measured, a path the export could not be written to at the end: no file
    name (``''``, ``out/``: a file ``out`` was written), one under a file, in a directory that cannot be
    written, or a database it would destroy. Directories that do not exist yet are made when it is written
    (`--export-json .duet/r.json` before the first comparison has made `.duet`); a device or a pipe is
    written straight through."""
    if value is None:
        return None
    if isinstance(value, str):  # as typed: Path("out/") is Path("out"), Path("") is Path(".")
        if not value or value.endswith(os.sep):
            raise click.BadParameter(f"{value!r} names no file: give a file name, e.g. {value}results.json",
                                     ctx=ctx, param=param)
        value = Path(value)
    if to_stdout(value):
        return value
    try:
        existing = os.stat(value)
    except OSError:
        existing = None
    if existing is not None and not stat.S_ISREG(existing.st_mode) and not stat.S_ISDIR(existing.st_mode):
        if not os.access(value, os.W_OK):
            raise click.BadParameter(f"{value} cannot be written", ctx=ctx, param=param)
        return value
    if existing is not None and stat.S_ISREG(existing.st_mode) and is_database(value):
        raise click.BadParameter(f"{value} is an SQLite database, such as the results (--db): it would be replaced",
                                 ctx=ctx, param=param)
    directory = value.parent
    while not directory.exists() and directory != directory.parent:
        directory = directory.parent
    if not directory.is_dir():
        raise click.BadParameter(f"{directory} is not a directory", ctx=ctx, param=param)
    if not os.access(directory, os.W_OK | os.X_OK):
        raise click.BadParameter(f"the directory {directory} cannot be written", ctx=ctx, param=param)
    return value


def export_options(*kinds: str) -> Callable[[F], F]:
    """Decorate a click command with --export-FORMAT for every format writing one of `kinds`
    ("comparison", "scan", "campaign"). The command receives them as keyword arguments export_FORMAT;
    `Exports.from_options` collects them."""

    def decorate(func: F) -> F:
        for fmt in reversed(formats_for(*kinds)):  # the table only: no exporter module is imported
            func = click.option(f"--export-{fmt.name}", option_name(fmt.name),
                                type=click.Path(dir_okay=False), metavar="PATH",
                                callback=writable_target,
                                help=f"{fmt.help} Replaces PATH if it exists; '-' prints it after the "
                                     "report.")(func)
        return func

    return decorate
