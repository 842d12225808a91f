"""What a PostgreSQL results database needs beyond SQLAlchemy's engine (store/connect.py `open_engine`).

A server is shared and lives apart from the measurement: it may go away for a while (a restart, a
failover, a network blip), another session may hold a lock on duet's tables, and its text cannot hold the
NUL character that SQLite's can. Each of those would end or hang a measurement, or lose what it measured.
"""
from __future__ import annotations

import os
import sys
import time
from typing import Any

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Connection, Engine

from duetbench.store.connect import describe
from duetbench.store.location import StoreLocation
from duetbench.store.sqlite_file import BUSY_TIMEOUT_MS

#: libpq's connection parameters where the URL (or the environment variable named) gives none, which
#: connect_args would override: an unreachable host fails in seconds, not after the OS's TCP timeout
#: (connect_timeout); a server whose host died, or whose network dropped the connection without a word, is
#: noticed within a minute, not after TCP's ~15 minutes of retransmissions or the 2 hours before its first
#: keepalive (tcp_user_timeout, keepalives_*). A slow server is not cut short: its kernel acknowledges.
_DEFAULTS: dict[str, tuple[int, str | None]] = {
    "connect_timeout": (10, "PGCONNECT_TIMEOUT"), "tcp_user_timeout": (60_000, None),
    "keepalives_idle": (30, None), "keepalives_interval": (10, None), "keepalives_count": (3, None)}


def open_postgres(location: StoreLocation) -> Engine:
    """An engine to the PostgreSQL database at `location`, with the handling this module describes."""
    given = location.url.query
    defaults = {name: value for name, (value, variable) in _DEFAULTS.items()
                if name not in given and not (variable and os.environ.get(variable))}
    engine = create_engine(location.url, pool_pre_ping=True, connect_args=defaults)
    event.listen(engine, "before_cursor_execute", _nul_free_parameters, retval=True)
    event.listen(engine, "do_connect", _Reconnecting(location))
    event.listen(engine, "connect", _set_lock_timeout)
    return engine


def _set_lock_timeout(dbapi_connection: Any, _record: Any) -> None:
    """A lock that another session holds on duet's tables (a psql left in a transaction, a DBA's ALTER) would
    make a write wait for it without end and hang the measurement: give up after as long as a SQLite store
    waits for its busy file (a one-line error), unless the URL or the server set a lock_timeout of their own."""
    with dbapi_connection.cursor() as cur:
        cur.execute("SHOW lock_timeout")
        row = cur.fetchone()
        if row is not None and row[0] == "0":
            cur.execute(f"SET lock_timeout = {BUSY_TIMEOUT_MS}")
    dbapi_connection.commit()


#: How long a store that was connected waits for its server to come back (a restart, a failover, a network
#: blip) before a write fails: failing would lose the run in hand and end the measurement.
RECONNECT_WAIT_S = 60.0
#: Connection failures a server that went away gives until it is back; not a wrong password, a missing database.
_GONE = ("connection refused", "the database system is", "server closed the connection", "timeout expired",
         "could not receive data", "connection reset", "no such file or directory", "too many clients",
         "remaining connection slots")


class _Reconnecting:
    """The engine's ``do_connect``: the first connection fails at once (a wrong URL is told in seconds);
    once connected, a new connection waits up to `RECONNECT_WAIT_S` for a server that went away. The pool
    pings each connection before a transaction, so the wait comes between transactions, never inside one.
    Once given up (or interrupted), never again: the command ends then, and each of its last writes would
    wait as long."""

    def __init__(self, location: StoreLocation) -> None:
        self.location = location
        #: Whether a connection failing as a server that went away does is waited for.
        self.connected = False

    def __call__(self, dialect: Any, _record: Any, cargs: list[Any], cparams: dict[str, Any]) -> Any:
        waiting_since: float | None = None
        while True:
            try:
                conn = dialect.connect(*cargs, **cparams)
            except dialect.loaded_dbapi.OperationalError as exc:
                now = time.monotonic()
                if waiting_since is not None and now - waiting_since >= RECONNECT_WAIT_S:
                    self.connected = False
                if not self.connected or not any(s in str(exc).lower() for s in _GONE):
                    raise
                if waiting_since is None:
                    waiting_since = now
                    sys.stderr.write(f"note: the results database {self.location} cannot be reached "
                                     f"({describe(exc, self.location)[0]}); waiting up to {RECONNECT_WAIT_S:.0f} s "
                                     "for it\n")
                try:
                    time.sleep(1.0)
                except KeyboardInterrupt:  # Ctrl-C: the user waits no longer, for this write nor the last ones
                    self.connected = False
                    raise
                continue
            if waiting_since is not None:
                sys.stderr.write(f"note: the results database {self.location} is back after "
                                 f"{time.monotonic() - waiting_since:.0f} s\n")
            self.connected = True
            return conn


def _nul_free_parameters(_conn: Connection, _cursor: Any, statement: str, parameters: Any, _context: Any,
                         _executemany: bool) -> tuple[str, Any]:
    """PostgreSQL's text cannot hold a NUL character, which SQLite's can, and a command may print one into
    the stderr tail or a parsed iteration name: stored as U+FFFD, as undecodable output bytes are."""
    return statement, without_nul(parameters)


def without_nul(value: Any) -> Any:
    """A JSON-like value as a PostgreSQL store keeps it: with every NUL in its strings replaced."""
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd")
    if isinstance(value, dict):
        return {k: without_nul(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(without_nul(v) for v in value)
    return value
