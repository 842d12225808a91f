"""The ``--db`` command-line type: a SQLite file path, or a database URL.

A path converts to a `Path` (as ``click.Path(dir_okay=False)`` did, so callers are unchanged); a URL
to a `StoreLocation`, which offers the little of `Path` that callers use (``parent``, ``exists()``,
``str`` with the password masked).
"""
from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import click

from duetbench.errors import DuetError
from duetbench.store.location import StoreLocation, is_url, mask_credentials


class DatabaseParam(click.ParamType):
    name = "PATH|URL"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, (Path, StoreLocation)):
            return value
        text = str(value)
        if is_url(text):
            try:
                location = StoreLocation.parse(text)
            except DuetError as exc:
                self.fail(str(exc).removeprefix("--db "), param, ctx)
            return location if location.is_server else location.path
        path = Path(text)
        if path.is_dir():
            self.fail(f"{mask_credentials(text)} is a directory; --db takes a database file (or a URL)", param, ctx)
        return path


#: ``type=DB_PATH_OR_URL`` in a ``--db`` option.
DB_PATH_OR_URL = DatabaseParam()


class SourceDatabaseParam(click.ParamType):
    """An existing SQLite file to read from (``duet merge`` sources). A URL given here is refused with its
    password masked: click's own "does not exist" would print it as typed."""

    name = "FILE"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, Path):
            return value
        text = str(value)
        if is_url(text):
            self.fail(f"{mask_credentials(text)} is a URL; the databases to merge are SQLite files",
                      param, ctx)
        path = Path(text)
        if not path.exists():
            self.fail(f"no such file: {text}", param, ctx)
        if path.is_dir():
            self.fail(f"{text} is a directory, not a database file", param, ctx)
        return path


#: ``type=SOURCE_DB`` for databases that are only read and must exist.
SOURCE_DB = SourceDatabaseParam()


def db_argument(db: object) -> str:
    """`` --db DB`` for a command printed as a hint (so that it works when run as printed), or "" for the
    default database. A URL's password stays masked: it is never printed, so such a hint needs it added."""
    from duetbench.store.db import DEFAULT_DB

    text = str(db)
    return "" if Path(text) == DEFAULT_DB and not is_url(text) else f" --db {shlex.quote(text)}"


#: A stored record's id: the databases' ids are 64-bit signed integers.
RECORD_ID = click.IntRange(1, 2**63 - 1)
