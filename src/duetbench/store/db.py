"""The results database: every invocation is committed the moment it is measured.

One layer for both backends: a SQLite file (the default, for everything on one machine) or a
PostgreSQL database (``postgresql://…``, for many machines writing to one place). Each invocation, and
each campaign run, is one transaction, so a process killed at any moment (even with SIGKILL) leaves
every finished one stored. The schema is in ``schema.py``, its history in ``migrations.py``.
"""
from __future__ import annotations

import json
import sqlite3
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import msgspec
from sqlalchemy import func, select
from sqlalchemy.exc import SQLAlchemyError

from duetbench.errors import DuetError, StoreFailed
from duetbench.model.invocation import Invocation
from duetbench.store import records, schema
from duetbench.store.connect import (
    database_errors,
    describe,
    inserted_id,
    open_engine,
    read_only,
    write_transaction,
)
from duetbench.store.location import StoreLocation, scrub_credentials
from duetbench.store.migrations import migrate, refuse_foreign_database
from duetbench.store.records import ComparisonRecord
from duetbench.store.sqlite_file import NotADatabase, immediate_transaction, not_a_database, refuse_foreign_file

DEFAULT_DB = Path(".duet/results.db")


def process_columns() -> list[str]:
    """The Invocation fields that the process tables store: every field the Struct has and the
    tables know, so a field added on either side first (e.g. `activity`) does not break the other."""
    stored = set(schema.invocations.c.keys())
    return [name for name in Invocation.__struct_fields__ if name in stored]


def invocation_from_row(data: dict[str, Any]) -> Invocation:
    return records.invocation_from_row(data, Invocation)  # this module's Invocation (tests replace it)


class Store:
    """The results database at a path (SQLite) or URL (PostgreSQL); see `StoreLocation`."""

    def __init__(self, path: Path | str | StoreLocation = DEFAULT_DB) -> None:
        self.location = StoreLocation.parse(path)
        #: The SQLite file (None for a server database).
        self.path = self.location.path
        #: Only readable (a read-only mount): shown and analysed as it is, never migrated or marked.
        self.read_only = read_only(self.location)
        if self.path is not None:
            refuse_foreign_file(self.path, self.location)  # before its connections set it up (WAL) or migrate it
        try:
            self.engine = open_engine(self.location)
            if self.read_only:
                self._check_readable_version()
            else:
                if self.location.is_server:
                    refuse_foreign_database(self.engine, self.location)
                migrate(self.engine)
        except (OSError, SQLAlchemyError) as exc:
            reason, hint = describe(exc, self.location)
            failed = NotADatabase if self.location.kind == "sqlite" and not_a_database(reason) else StoreFailed
            raise failed(f"cannot use the results database {self.location}: {reason}", hint=hint) from None
        self._seq: dict[int, int] = {}
        self._raw: _SqliteInserts | None = None
        if not self.read_only:
            self._tell_dead_orchestrators()

    def _check_readable_version(self) -> None:
        from duetbench.store.migrations import HEAD, current_version

        with self.engine.connect() as conn:
            version = current_version(conn)
        if version != HEAD:
            raise DuetError(f"the results database {self.location} is read-only and has schema version {version}, "
                            f"this duetbench reads version {HEAD}",
                            hint="copy it to a writable place and open the copy (it is upgraded there)")

    def _tell_dead_orchestrators(self) -> None:
        """Whatever command opens the store first after a `kill -9` of a duet marks what that duet left
        `running` and says so (store/orchestrators.py)."""
        from duetbench.store.orchestrators import DIED, mark_dead

        try:
            marked = mark_dead(self)
        except (OSError, SQLAlchemyError):
            return  # e.g. a read-only database: the records stay as they are, nothing else depends on it
        for what in marked:
            sys.stderr.write(f"note: {what}: marked '{DIED}' in {self.location}; everything it finished is kept\n")

    def __repr__(self) -> str:
        return f"Store({str(self.location)!r})"

    def close(self) -> None:
        if self._raw is not None:
            self._raw.close()
            self._raw = None
        self.engine.dispose()

    def errors(self, doing: str = "cannot use the results database"):  # type: ignore[no-untyped-def]
        return database_errors(self.location, doing)

    # -- writing -----------------------------------------------------------------------------------
    def begin_comparison(self, *, method: str, name_a: str, name_b: str, command_a: str, command_b: str,
                         seed: int, options: dict[str, Any], host: dict[str, Any], tool_version: str,
                         uid: str | None = None) -> int:
        t = schema.comparisons
        with self.errors(), write_transaction(self.engine) as conn:
            result = conn.execute(t.insert(), dict(
                created=time.time(), status="running", method=method, name_a=name_a, name_b=name_b,
                command_a=command_a, command_b=command_b, seed=seed,
                options=json.dumps(scrub_credentials(options)), host=json.dumps(scrub_credentials(host)),
                tool_version=tool_version, uid=uid or str(uuid.uuid4())))
            comparison_id = inserted_id(result)
        self._seq[comparison_id] = 0
        return comparison_id

    def add_invocation(self, comparison_id: int, inv: Invocation) -> None:
        self.add_invocations(comparison_id, [inv])

    def add_invocations(self, comparison_id: int, invocations: list[Invocation]) -> None:
        """Store invocations measured together (a duet's pair) in one transaction."""
        if self.location.kind == "sqlite" and not self.read_only:
            self._add_sqlite(comparison_id, invocations)
            return
        t = schema.invocations
        with self.errors(), write_transaction(self.engine) as conn:
            seq = self._seq.get(comparison_id)
            if seq is None:
                seq = int(conn.execute(select(func.count()).select_from(t).where(
                    t.c.comparison_id == comparison_id)).scalar() or 0)
            rows = [dict(comparison_id=comparison_id, seq=seq + k, **{c: getattr(inv, c) for c in process_columns()})
                    for k, inv in enumerate(invocations)]
            if rows:
                conn.execute(t.insert(), rows)
        self._seq[comparison_id] = seq + len(invocations)

    def _add_sqlite(self, comparison_id: int, invocations: list[Invocation]) -> None:
        """`add_invocations` on SQLite, called between two pairs: one transaction on a connection kept
        open, with the INSERT compiled once. Through SQLAlchemy (a pooled connection, a statement
        compiled and bound per call) a pair cost ~1 ms of the orchestrator's CPU (issue 17); this is
        the same transaction — committed before the next pair starts, so a killed duet keeps it."""
        if self._raw is None:
            self._raw = _SqliteInserts(self.engine)
        seq = self._seq.get(comparison_id)
        with _sqlite_errors(self.location):
            if seq is None:
                seq = self._raw.count(comparison_id)
            self._raw.insert(comparison_id, seq, invocations)
        self._seq[comparison_id] = seq + len(invocations)

    def keep_as_warmup(self, comparison_id: int) -> None:
        """Mark every invocation stored so far as a warm-up: kept, but no longer analysed (--method auto
        switched methods, and the earlier method's runs cannot enter the new method's interval)."""
        t = schema.invocations
        with self.errors(), write_transaction(self.engine) as conn:
            conn.execute(t.update().where(t.c.comparison_id == comparison_id).values(warmup=True))

    def set_activity(self, comparison_id: int, invocations: list[Invocation]) -> None:
        """Record the other processes' activity of invocations already stored (an aduet segment's, or a
        compare's attribution window). They share their record: one statement per record and side."""
        t = schema.invocations
        groups: dict[tuple[str | None, str], list[int]] = {}
        for inv in invocations:
            groups.setdefault((inv.activity, inv.side), []).append(inv.index)
        with self.errors(), write_transaction(self.engine) as conn:
            for (activity, side), indices in groups.items():
                for start in range(0, len(indices), 500):  # within SQLite's limit on bound parameters
                    conn.execute(t.update().where((t.c.comparison_id == comparison_id) & (t.c.side == side)
                                                  & t.c["index"].in_(indices[start:start + 500]))
                                 .values(activity=activity))

    def finish_comparison(self, comparison_id: int, status: str, options: dict[str, Any] | None = None,
                          method: str | None = None) -> None:
        """Mark a comparison finished; `options` replaces the stored ones where the run decided some
        (how it stopped, and so which interval its result needs), `method` the method where it was
        chosen while measuring (--method auto)."""
        t = schema.comparisons
        values: dict[str, Any] = dict(status=status, finished=time.time())
        if method is not None:
            values["method"] = method
        if options is not None:
            values["options"] = json.dumps(scrub_credentials(options))
        with self.errors(), write_transaction(self.engine) as conn:
            conn.execute(t.update().where(t.c.id == comparison_id).values(**values))

    # -- reading -----------------------------------------------------------------------------------
    def comparisons(self, limit: int = 50) -> list[ComparisonRecord]:
        t = schema.comparisons
        return [_record(r) for r in self._read(select(*_COMPARISON_COLUMNS).order_by(t.c.id.desc()).limit(limit))]

    def comparison_count(self) -> int:
        return int(self._read(select(func.count()).select_from(schema.comparisons))[0][0])

    def comparison(self, comparison_id: int) -> ComparisonRecord | None:
        rows = self._read(select(*_COMPARISON_COLUMNS).where(schema.comparisons.c.id == comparison_id))
        return _record(rows[0]) if rows else None

    def comparison_by_uid(self, uid: str) -> ComparisonRecord | None:
        rows = self._read(select(*_COMPARISON_COLUMNS).where(schema.comparisons.c.uid == uid))
        return _record(rows[0]) if rows else None

    def invocations(self, comparison_id: int) -> list[Invocation]:
        t = schema.invocations
        columns = process_columns()
        rows = self._read(select(*[t.c[c] for c in columns]).where(t.c.comparison_id == comparison_id)
                          .order_by(t.c.seq))
        return [invocation_from_row(dict(zip(columns, row, strict=True))) for row in rows]

    def _read(self, statement: Any) -> list[Sequence[Any]]:
        with self.errors(), self.engine.connect() as conn:
            return list(conn.execute(statement).all())


_COMPARISON_COLUMNS = [schema.comparisons.c[name] for name in (
    "id", "created", "finished", "status", "method", "name_a", "name_b", "command_a", "command_b", "seed",
    "options", "host", "tool_version", "uid")]


def _record(row: Sequence[Any]) -> ComparisonRecord:
    (id_, created, finished, status, method, name_a, name_b, command_a, command_b, seed, options, host,
     version, uid) = row
    return ComparisonRecord(id_, created, finished, status, method, name_a, name_b, command_a, command_b,
                            seed, json.loads(options), json.loads(host), version, uid or "")


class _SqliteInserts:
    """A SQLite connection of the store's pool, kept checked out for inserting invocations: the
    connection's set-up (WAL, busy timeout: store/connect.py) is the pool's, the statement SQLAlchemy's,
    compiled once for the dialect."""

    def __init__(self, engine: Any) -> None:
        t = schema.invocations
        self._columns = ["comparison_id", "seq", *process_columns()]
        compiled = t.insert().compile(dialect=engine.dialect, column_keys=self._columns)
        self._sql = str(compiled)
        # The order in which the compiled statement takes its parameters (SQLite's are positional).
        self._order = list(compiled.positiontup or self._columns)
        self._pooled = engine.raw_connection()
        self._conn: sqlite3.Connection = self._pooled.driver_connection
        self._count_sql = f"SELECT count(*) FROM {t.name} WHERE comparison_id = ?"

    def count(self, comparison_id: int) -> int:
        return int(self._conn.execute(self._count_sql, (comparison_id,)).fetchone()[0] or 0)

    def insert(self, comparison_id: int, seq: int, invocations: list[Invocation]) -> None:
        fields_ = self._order
        rows = []
        for k, inv in enumerate(invocations):
            values = {"comparison_id": comparison_id, "seq": seq + k, **msgspec.structs.asdict(inv)}
            # A field the table knows but this Invocation lacks is stored NULL, as the INSERT leaving it out did.
            rows.append([values.get(c) for c in fields_])
        with immediate_transaction(self._conn) as conn:
            conn.executemany(self._sql, rows)

    def close(self) -> None:
        self._pooled.close()


@contextmanager
def _sqlite_errors(location: StoreLocation) -> Iterator[None]:
    """`database_errors` for the sqlite3 module's own exceptions (not wrapped by SQLAlchemy here)."""
    try:
        yield
    except (sqlite3.OperationalError, OSError) as exc:
        reason, hint = describe(exc, location)
        raise StoreFailed(f"cannot use the results database {location}: {reason}", hint=hint) from None
