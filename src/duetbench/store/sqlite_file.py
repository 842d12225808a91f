"""A results database's SQLite file: how every connection to it is set up, with the standard library only.

Shared by the SQLAlchemy engine (store/connect.py) and the direct store of ``duet compare``
(store/direct.py), so both open the file the same way: WAL mode with ``synchronous=NORMAL`` (a
committed transaction survives a killed process), a generous busy timeout (several writers take turns),
and the sqlite3 module's own transaction handling off (the callers' ``BEGIN`` is the transaction).
"""
from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from duetbench.errors import StoreFailed

BUSY_TIMEOUT_MS = 60_000
#: The hint of every failure of a SQLite results database.
SQLITE_HINT = "choose a writable location with --db PATH"


#: Tables every duet results file has (older ones one of them): a file with tables but none of these is
#: another program's database.
DUET_TABLES = frozenset({"schema_migrations", "campaigns", "comparisons"})
#: The columns of duet's ``schema_migrations``. Other programs' migration tools keep a table of that name
#: with a version alone (Rails, golang-migrate, Ecto), whose "version 20240101120000" is no duet schema.
MIGRATION_COLUMNS = frozenset({"version", "name", "applied"})
#: The hint for a file that is no results database: a writable location does not fix it.
NOT_A_DATABASE_HINT = "give --db a results file duet wrote, or a path that does not exist yet (a new one is made there)"


class NotADatabase(StoreFailed):
    """The SQLite file to open is no database (or a damaged one, or another program's): another file given
    by mistake, where `StoreFailed` alone is a place that cannot be used (full, not writable, locked by
    another writer)."""


def refuse_foreign(conn: sqlite3.Connection, where: object) -> None:
    """Refuse the SQLite database on `conn` if it is another program's, before anything writes to it: opened
    as a store, it would get duet's tables (as an old results file does) and a WAL. One query, run before
    the connection is set up (`configure` switches the file to WAL). A file without tables (a new, empty
    one) is a results database to be."""
    tables = [row[0] for row in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite!_%' ESCAPE '!'")]
    ours = set(DUET_TABLES.intersection(tables))
    if "schema_migrations" in ours and not MIGRATION_COLUMNS.issubset(
            row[1] for row in conn.execute('PRAGMA table_info("schema_migrations")')):
        ours.discard("schema_migrations")
    if tables and not ours:
        shown = ", ".join(tables[:5]) + (", ..." if len(tables) > 5 else "")
        raise NotADatabase(f"{where}: an SQLite database of another program (tables: {shown}), not duet results",
                           hint=NOT_A_DATABASE_HINT)


def refuse_foreign_file(path: Path, where: object = None) -> None:
    """`refuse_foreign` for the file at `path`, on a plain connection of its own (the store's connections are
    set up as they open). A missing file, or one that is no database at all, passes: opening it as a store
    creates it, or says what it is."""
    if not path.is_file() or not path.stat().st_size:
        return
    # Not read-only where it can be written: closing the last connection to a WAL database then removes the
    # -wal and -shm files it made, as the program that owns it does.
    mode = "ro" if read_only_file(path) else "rw"
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode={mode}", uri=True)
    except sqlite3.Error:
        return
    try:
        refuse_foreign(conn, path if where is None else where)
    except sqlite3.Error:
        return
    finally:
        conn.close()


def not_a_database(reason: str) -> bool:
    """Whether a SQLite failure (`reason`, the driver's words) says the file is no SQLite database, or a
    damaged one: not a place that cannot be written, nor a lock held by another writer."""
    lower = reason.lower()
    return "not a database" in lower or "malformed" in lower


def sqlite_hint(reason: str) -> str:
    """What to do about a SQLite failure, by its reason (`reason`): a file that is no results database
    is not fixed by a writable location, nor a lock held by another writer."""
    lower = reason.lower()
    if not_a_database(reason):
        return NOT_A_DATABASE_HINT
    if "locked" in lower or "busy" in lower:
        return "another process is writing to it: try again once it is done, or give another file with --db PATH"
    if "full" in lower or "no space" in lower:
        return "free some space there, or choose another location with --db PATH"
    return SQLITE_HINT


def reason(exc: BaseException) -> str:
    """A driver's failure on one line (store/connect.py `describe` for SQLite)."""
    return " ".join(str(exc).split()) or type(exc).__name__


def read_only_file(path: Path | None) -> bool:
    """Whether a SQLite file can only be read: it, or its directory (where SQLite makes its -wal and -shm
    files), is not writable — a read-only mount, another user's results."""
    return path is not None and path.exists() and not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK))


def configure(dbapi_connection: Any) -> None:
    """Set up a new writable connection (SQLAlchemy's "connect" event, or the direct store's own)."""
    dbapi_connection.isolation_level = None  # no implicit transactions: the caller's BEGIN is the one
    dbapi_connection.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    _switch_to_wal(dbapi_connection)
    dbapi_connection.execute("PRAGMA synchronous=NORMAL")


@contextmanager
def immediate_transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction on a connection set up by `configure`: ``BEGIN IMMEDIATE`` (waits for other
    writers up front) … ``COMMIT``, rolled back if anything raises before the commit.

    BEGIN runs inside the ``try``: a Ctrl-C that lands just after it returns would otherwise leave the
    transaction open, and the interrupted run's own closing write then fails with "cannot start a
    transaction within a transaction" instead of exiting 130 with what it measured."""
    committed = False
    try:
        conn.execute("BEGIN IMMEDIATE")
        yield conn
        conn.execute("COMMIT")
        committed = True
    finally:
        if not committed and conn.in_transaction:
            conn.execute("ROLLBACK")


def _switch_to_wal(dbapi_connection: Any) -> None:
    """Switching a new file to WAL needs it exclusively, and SQLite answers "database is locked" at
    once, without its busy handler, while another process is doing the same (several Slurm tasks or
    writers opening one new file): try again for up to the busy timeout."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    delay = 0.005
    while True:
        try:
            dbapi_connection.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.2)
