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

BUSY_TIMEOUT_MS = 60_000
#: The hint of every failure of a SQLite results database.
SQLITE_HINT = "choose a writable location with --db PATH"


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
        return "give --db a results file duet wrote, or a path that does not exist yet (a new one is made there)"
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
