"""``duet compare``'s store on a SQLite file, through Python's sqlite3 module instead of SQLAlchemy.

Why hand-written SQL here, against the project's rule of well-kept libraries over own code: every
``duet compare`` paid for SQLAlchemy before it could store its first pair, and that was the largest part
of its fixed cost (issue 17). Measured on the 2-CPU VM (CPU time in a fresh process, 7 runs each):
importing SQLAlchemy with store/db.py and opening a current database (engine, version check, the
dead-orchestrator check) 124–137 ms; importing this module (sqlite3 included) and opening the same file
10–12 ms. A whole 3-pair compare of `true` went from 471 to 330 ms of the orchestrator's CPU (median of
7). No way of using SQLAlchemy avoids importing it, and the import is the cost.

What keeps the hand-written SQL from drifting from the schema, whose only source stays the SQLAlchemy
metadata (store/schema.py) and its migrations:

- It runs only on a database whose recorded schema version is the current one (`sqlite_schema.HEAD`),
  or on a new, empty file, which it creates with the DDL generated from the metadata
  (store/sqlite_schema.py, checked against the metadata by tests/store/test_direct.py). Anything else
  (an older database to migrate, a newer one to refuse, a read-only file, a PostgreSQL URL) goes
  through `store.db.Store`, unchanged: `open_comparison_store` decides.
- Its statements are built from the generated column lists, and the test prepares every one of them
  on a database made by the SQLAlchemy metadata.
- Each pair is one committed transaction (``BEGIN IMMEDIATE`` … ``COMMIT``), as in `Store`, so a
  ``kill -9`` keeps every finished pair; failures become the same one-line `DuetError` as there.
"""
from __future__ import annotations

import json
import sqlite3
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from duetbench.errors import DuetError, StoreFailed
from duetbench.model.invocation import Invocation
from duetbench.store import sqlite_schema
from duetbench.store.location import is_url, scrub_credentials
from duetbench.store.records import ComparisonRecord, invocation_from_row
from duetbench.store.sqlite_file import (
    configure,
    immediate_transaction,
    read_only_file,
    reason,
    refuse_foreign,
    sqlite_hint,
)

if TYPE_CHECKING:
    from duetbench.store.db import Store


def open_comparison_store(where: Path | str) -> DirectStore | Store:
    """The store a comparison writes to: the direct one where it may be used, else `Store`."""
    direct = DirectStore.open(where)
    if direct is not None:
        return direct
    from duetbench.store.db import Store

    return Store(where)


def _quoted(name: str) -> str:
    return f'"{name}"'  # every identifier quoted: "index" is an SQL keyword


def _insert(table: str, columns: Sequence[str]) -> str:
    return (f"INSERT INTO {_quoted(table)} ({', '.join(map(_quoted, columns))}) "
            f"VALUES ({', '.join('?' for _ in columns)})")


def _select(table: str, columns: Sequence[str], where: str, order: str = "") -> str:
    return f"SELECT {', '.join(map(_quoted, columns))} FROM {_quoted(table)} WHERE {where}{order}"


_COMPARISON = sqlite_schema.COLUMNS["comparisons"]
_INVOCATION = sqlite_schema.COLUMNS["invocations"]
#: The Invocation fields the invocations table stores (= store.db.process_columns()).
PROCESS_COLUMNS = [name for name in Invocation.__struct_fields__ if name in _INVOCATION]
_BEGUN = [c for c in _COMPARISON if c not in ("id", "finished")]
_INSERTED = ["comparison_id", "seq", *PROCESS_COLUMNS]
_BATCH = 500  # `index IN (…)` per statement: within SQLite's limit on bound parameters


def _activity(n: int) -> str:
    """Set the activity of `n` invocations of one side (the sqlite3 module caches one per length)."""
    return ('UPDATE "invocations" SET "activity" = ? WHERE "comparison_id" = ? AND "side" = ? '
            f'AND "index" IN ({", ".join("?" * n)})')


#: Every statement, by name (tests/store/test_direct.py prepares each on a database the metadata made).
SQL: dict[str, str] = {
    "version": "SELECT max(version) FROM schema_migrations",
    "migrated": _insert("schema_migrations", ("version", "name", "applied")),
    "begin": _insert("comparisons", _BEGUN),
    "insert": _insert("invocations", _INSERTED),
    "count": 'SELECT count(*) FROM "invocations" WHERE "comparison_id" = ?',
    "warmup": 'UPDATE "invocations" SET "warmup" = 1 WHERE "comparison_id" = ?',
    **{f"activity{n}": _activity(n) for n in (1, _BATCH)},
    "finish": 'UPDATE "comparisons" SET "status" = ?, "finished" = ? WHERE "id" = ?',
    "finish_method": 'UPDATE "comparisons" SET "method" = ? WHERE "id" = ?',
    "finish_options": 'UPDATE "comparisons" SET "options" = ? WHERE "id" = ?',
    "comparison": _select("comparisons", _COMPARISON, '"id" = ?'),
    "invocations": _select("invocations", PROCESS_COLUMNS, '"comparison_id" = ?', ' ORDER BY "seq"'),
    **{f"running_{t}": _select(t, ("id", "options"), "\"status\" = 'running'") for t in ("comparisons", "campaigns")},
    **{f"died_{t}": f"UPDATE {_quoted(t)} SET \"status\" = ?, \"finished\" = ? WHERE \"id\" = ? "
                    "AND \"status\" = 'running'" for t in ("comparisons", "campaigns")},
}


class DirectStore:
    """What `duet compare` does with a `Store`, on one sqlite3 connection kept for the store's life."""

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self._conn = conn
        self._seq: dict[int, int] = {}

    @classmethod
    def open(cls, where: Path | str) -> DirectStore | None:
        """The store at a SQLite path if its schema is current (a new file is created current); None
        where `Store` must open it (a URL, a read-only file, a schema to migrate or refuse)."""
        text = str(where)
        if is_url(text):
            return None
        path = Path(text)
        if read_only_file(path):
            return None
        new = not path.exists()
        with _errors(path):
            path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(path, check_same_thread=False)
            try:
                refuse_foreign(conn, path)  # before `configure` switches the file to WAL
                configure(conn)
                current = _current(conn)
            except BaseException:
                conn.close()
                if new:
                    _remove_if_empty(path)
                raise
        if not current:
            conn.close()
            return None
        store = cls(path, conn)
        store._tell_dead_orchestrators()
        return store

    def __repr__(self) -> str:
        return f"DirectStore({str(self.path)!r})"

    def close(self) -> None:
        self._conn.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, committed when the block ends, rolled back if it raises."""
        with _errors(self.path), immediate_transaction(self._conn) as conn:
            yield conn

    def _tell_dead_orchestrators(self) -> None:
        """As `Store._tell_dead_orchestrators`."""
        import sys

        from duetbench.store.orchestrators import DIED, mark_dead_records

        def running(table: str) -> list[tuple[int, str | None]]:
            return [(int(r[0]), r[1]) for r in self._conn.execute(SQL[f"running_{table}"]).fetchall()]

        def mark(table: str, record_id: int) -> bool:
            with self._write() as conn:
                return conn.execute(SQL[f"died_{table}"], (DIED, time.time(), record_id)).rowcount > 0

        try:
            marked = mark_dead_records(running, mark)
        except (sqlite3.Error, OSError, DuetError):
            return  # nothing else depends on it (as in Store)
        for what in marked:
            sys.stderr.write(f"note: {what}: marked '{DIED}' in {self.path}; everything it finished is kept\n")

    # -- writing: as `Store`'s methods of the same names -------------------------------------------
    def begin_comparison(self, *, method: str, name_a: str, name_b: str, command_a: str, command_b: str,
                         seed: int, options: dict[str, Any], host: dict[str, Any], tool_version: str,
                         uid: str | None = None) -> int:
        values = dict(created=time.time(), status="running", method=method, name_a=name_a, name_b=name_b,
                      command_a=command_a, command_b=command_b, seed=seed,
                      options=json.dumps(scrub_credentials(options)), host=json.dumps(scrub_credentials(host)),
                      tool_version=tool_version, uid=uid or str(uuid.uuid4()))
        with self._write() as conn:
            comparison_id = conn.execute(SQL["begin"], [values[c] for c in _BEGUN]).lastrowid
        assert comparison_id is not None
        self._seq[comparison_id] = 0
        return comparison_id

    def add_invocation(self, comparison_id: int, inv: Invocation) -> None:
        self.add_invocations(comparison_id, [inv])

    def add_invocations(self, comparison_id: int, invocations: list[Invocation]) -> None:
        """Invocations measured together (a duet's pair) in one transaction, committed before it returns."""
        seq = self._seq.get(comparison_id)
        rows = []
        with self._write() as conn:
            if seq is None:
                seq = int(conn.execute(SQL["count"], (comparison_id,)).fetchone()[0] or 0)
            for k, inv in enumerate(invocations):
                values = {"comparison_id": comparison_id, "seq": seq + k, **msgspec.structs.asdict(inv)}
                rows.append([values.get(c) for c in _INSERTED])
            conn.executemany(SQL["insert"], rows)
        self._seq[comparison_id] = seq + len(invocations)

    def keep_as_warmup(self, comparison_id: int) -> None:
        with self._write() as conn:
            conn.execute(SQL["warmup"], (comparison_id,))

    def set_activity(self, comparison_id: int, invocations: list[Invocation]) -> None:
        groups: dict[tuple[str | None, str], list[int]] = {}
        for inv in invocations:
            groups.setdefault((inv.activity, inv.side), []).append(inv.index)
        with self._write() as conn:
            for (activity, side), indices in groups.items():
                for start in range(0, len(indices), _BATCH):
                    batch = indices[start:start + _BATCH]
                    conn.execute(_activity(len(batch)), (activity, comparison_id, side, *batch))

    def finish_comparison(self, comparison_id: int, status: str, options: dict[str, Any] | None = None,
                          method: str | None = None) -> None:
        with self._write() as conn:
            conn.execute(SQL["finish"], (status, time.time(), comparison_id))
            if method is not None:
                conn.execute(SQL["finish_method"], (method, comparison_id))
            if options is not None:
                conn.execute(SQL["finish_options"], (json.dumps(scrub_credentials(options)), comparison_id))

    # -- reading -----------------------------------------------------------------------------------
    def comparison(self, comparison_id: int) -> ComparisonRecord | None:
        with _errors(self.path):
            row = self._conn.execute(SQL["comparison"], (comparison_id,)).fetchone()
        if row is None:
            return None
        values = dict(zip(_COMPARISON, row, strict=True))
        values["options"], values["host"] = json.loads(values["options"]), json.loads(values["host"])
        values["uid"] = values["uid"] or ""
        return ComparisonRecord(**values)

    def invocations(self, comparison_id: int) -> list[Invocation]:
        with _errors(self.path):
            rows = self._conn.execute(SQL["invocations"], (comparison_id,)).fetchall()
        return [invocation_from_row(dict(zip(PROCESS_COLUMNS, row, strict=True))) for row in rows]


def _remove_if_empty(path: Path) -> None:
    """A new database that could not be set up (a full disk) is left as an empty file, which would be taken
    for a results database the next time: remove it and its WAL files while they hold nothing."""
    wal, shm = Path(f"{path}-wal"), Path(f"{path}-shm")
    try:
        if path.stat().st_size or (wal.exists() and wal.stat().st_size):
            return  # something was written after all (by another process too): keep it
        for part in (wal, shm, path):
            part.unlink(missing_ok=True)
    except OSError:
        pass


def _current(conn: sqlite3.Connection) -> bool:
    """Whether the database's schema is current, creating it on a new, empty file."""
    try:
        version = conn.execute(SQL["version"]).fetchone()[0]
    except sqlite3.OperationalError as exc:
        if "no such table" not in str(exc):
            raise
        return _create_if_empty(conn)
    return version == sqlite_schema.HEAD


def _create_if_empty(conn: sqlite3.Connection) -> bool:
    """Create the current schema, as the migrations would on a new database, unless the file already
    holds tables (an older database, or another process was first): then False, and `Store` decides."""
    # BEGIN IMMEDIATE excludes other migrating processes, as migrations.migrate does
    with immediate_transaction(conn):
        if conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
            return False
        for statement in sqlite_schema.DDL:
            conn.execute(statement)
        now = time.time()
        conn.executemany(SQL["migrated"], [(version, name, now) for version, name in sqlite_schema.MIGRATIONS])
        conn.execute(f"PRAGMA user_version={sqlite_schema.HEAD}")  # what older duetbench versions read
    return True


@contextmanager
def _errors(path: Path) -> Iterator[None]:
    """The one-line `DuetError` that `Store` gives for the same failure (store/connect.py `database_errors`):
    operational failures (locked, disk full, not a database, unwritable); a misuse of SQL stays a bug."""
    try:
        yield
    except (sqlite3.IntegrityError, sqlite3.ProgrammingError, sqlite3.NotSupportedError):
        raise
    except (sqlite3.Error, OSError) as exc:
        raise StoreFailed(f"cannot use the results database {path}: {reason(exc)}",
                        hint=sqlite_hint(reason(exc))) from None
