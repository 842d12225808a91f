"""Opening a results database, and turning the database's failures into one clear line.

A SQLite connection is set up as store/sqlite_file.py says (WAL, busy timeout; the Python sqlite3
module's own transaction handling off, so that SQLAlchemy's transactions are real SQLite transactions,
DDL included); a write transaction starts with ``BEGIN IMMEDIATE`` so that it waits for other writers
up front instead of failing half-way when upgrading a read lock.
"""
from __future__ import annotations

import os
import re
import sqlite3
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Connection, CursorResult, Engine
from sqlalchemy.exc import DBAPIError, SQLAlchemyError

from duetbench.errors import DuetError, StoreFailed
from duetbench.store.location import StoreLocation, mask_credentials
from duetbench.store.sqlite_file import configure, read_only_file, reason, sqlite_hint

#: Execution option marking a connection whose next transaction writes (see `write_transaction`).
WRITE = "duet_write"


def read_only(location: StoreLocation) -> bool:
    """Whether a SQLite file can only be read (`read_only_file`)."""
    return read_only_file(location.path)


def _read_only_connection(path: str) -> sqlite3.Connection:
    """A read-only connection; ``immutable`` when even that fails (a WAL database whose -shm file cannot
    be made in a read-only directory: nobody can be writing to it there)."""
    uri = "file:" + urllib.parse.quote(os.path.abspath(path))
    try:
        conn = sqlite3.connect(f"{uri}?mode=ro", uri=True, check_same_thread=False)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.OperationalError:
        conn = sqlite3.connect(f"{uri}?mode=ro&immutable=1", uri=True, check_same_thread=False)
    conn.isolation_level = None
    return conn


def open_engine(location: StoreLocation) -> Engine:
    if location.kind == "sqlite" and read_only(location):
        assert location.path is not None
        path = str(location.path)
        engine = create_engine("sqlite://", creator=lambda: _read_only_connection(path))
        event.listen(engine, "begin", _sqlite_begin)
        return engine
    if location.kind == "sqlite":
        assert location.path is not None
        location.path.parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(location.url)
        event.listen(engine, "connect", _sqlite_connect)
        event.listen(engine, "begin", _sqlite_begin)
        return engine
    try:
        import psycopg  # noqa: F401  -- a clear error instead of SQLAlchemy's when the driver is missing
    except ImportError:
        raise DuetError("PostgreSQL results need the psycopg driver, which is not installed",
                        hint="pip install 'psycopg[binary]'") from None
    from duetbench.store.postgres import open_postgres

    return open_postgres(location)


def _sqlite_connect(dbapi_connection: Any, _record: Any) -> None:
    configure(dbapi_connection)


def _sqlite_begin(conn: Connection) -> None:
    conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get(WRITE) else "BEGIN")


@contextmanager
def write_transaction(engine: Engine) -> Iterator[Connection]:
    """One write transaction: committed when the block ends, rolled back if it raises."""
    with engine.connect() as conn:
        conn.execution_options(**{WRITE: True})
        with conn.begin():
            yield conn


def describe(exc: BaseException, location: StoreLocation) -> tuple[str, str]:
    """(reason, hint) for a database failure: the driver's first line, credentials masked."""
    orig = exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc
    # A server's error without its context ("LINE 2: CREATE TABLE ... ^"), which spans lines and says nothing more.
    primary = getattr(getattr(orig, "diag", None), "message_primary", None)
    text = " ".join(primary.split()) if isinstance(primary, str) and primary.strip() else reason(orig)
    if location.password:
        # Where it stands on its own: a short password replaced inside words ("***ort") would show what it is.
        text = re.sub(rf"(?<![^\W_]){re.escape(location.password)}(?![^\W_])", "***", text)
    text = mask_credentials(re.sub(r"^connection failed: ", "", text))
    lower = text.lower()
    if location.kind == "sqlite":
        hint = sqlite_hint(text)
    elif "password authentication failed" in lower or "no password supplied" in lower:
        hint = "check the password in the URL, or in PGPASSWORD or ~/.pgpass"
    elif "database" in lower and "does not exist" in lower:
        hint = f"create the database first (createdb {location.url.database or 'NAME'}) or fix its name in the URL"
    elif "role" in lower and "does not exist" in lower:
        hint = "check the user name in the URL (or PGUSER)"
    elif any(s in lower for s in ("connection refused", "the database system is", "could not translate host",
                                  "timeout expired", "no route to host", "name or service not known",
                                  "no such file or directory")):
        hint = "check that the PostgreSQL server is running and reachable at the URL's host and port"
    elif "permission denied" in lower or "must be owner" in lower:
        hint = ("the user in the URL may not write duet's tables: GRANT it SELECT, INSERT, UPDATE, DELETE on them "
                "and USAGE on their sequences (or CREATE on the schema, for a new database), or use a user that may")
    elif "out of range" in lower:
        hint = ("a number is beyond what the PostgreSQL column takes (an INTEGER: up to 2147483647), e.g. an imported "
                "iteration index: renumber it, or use a SQLite file")
    elif "index row" in lower:
        hint = ("a name (a benchmark's, from its commands) is too long for a PostgreSQL index: shorten it, or use "
                "a SQLite file")
    elif "lock timeout" in lower:
        hint = ("another session holds a lock on duet's tables (pg_locks, pg_stat_activity tell which): end it and "
                "run again")
    elif "read-only transaction" in lower:
        hint = ("the server takes no writes from the user in the URL (a standby, or default_transaction_read_only): "
                "give --db a URL that may write")
    else:
        hint = "check the --db URL and the server's log"
    return text, hint


@contextmanager
def database_errors(location: StoreLocation, doing: str) -> Iterator[None]:
    """Turn an operational database failure (connection lost, disk full, locked) into a DuetError."""
    try:
        yield
    except (DBAPIError, OSError) as exc:
        if isinstance(exc, DBAPIError) and not _operational(exc):
            raise
        reason, hint = describe(exc, location)
        raise StoreFailed(f"{doing} {location}: {reason}", hint=hint) from None
    except SQLAlchemyError as exc:
        if type(exc).__name__ not in ("TimeoutError", "DisconnectionError"):
            raise
        reason, hint = describe(exc, location)
        raise StoreFailed(f"{doing} {location}: {reason}", hint=hint) from None


#: SQLSTATEs of a server that refuses what the user in the URL may not do, or a value SQLite would take
#: (not a mistake in duet's SQL): insufficient privilege, a read-only transaction (a standby,
#: default_transaction_read_only), a number beyond a 32-bit INTEGER column (an imported iteration index).
_REFUSED = frozenset({"42501", "25006", "22003"})


def _operational(exc: DBAPIError) -> bool:
    from sqlalchemy.exc import InterfaceError, OperationalError

    return (isinstance(exc, (OperationalError, InterfaceError)) or exc.connection_invalidated
            or getattr(exc.orig, "sqlstate", None) in _REFUSED)


def inserted_id(result: CursorResult[Any]) -> int:
    """The primary key of the one row an INSERT just wrote."""
    key = result.inserted_primary_key
    if key is None:  # SQLAlchemy leaves it unset only for an executemany, which no caller passes
        raise RuntimeError("the INSERT reported no primary key")
    return int(key[0])
