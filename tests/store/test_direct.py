"""`duet compare`'s direct SQLite store (store/direct.py) against the SQLAlchemy one it stands in for:
the same schema (generated from the metadata), the same rows, the same errors."""
from __future__ import annotations

import msgspec
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import text

from duetbench.errors import DuetError
from duetbench.execute.owner import Owner
from duetbench.store import generate_sqlite_schema, schema, sqlite_schema
from duetbench.store.db import Store, process_columns
from duetbench.store.direct import PROCESS_COLUMNS, SQL, DirectStore, _activity, open_comparison_store
from duetbench.store.migrations import HEAD, MIGRATIONS
from store_samples import invocation


def _begin(store: DirectStore | Store, **changes: object) -> int:
    values: dict[str, object] = dict(method="duet", name_a="a", name_b="b", command_a="x 1", command_b="y 2",
                                     seed=2**40, options={"runs": 3, "url": "postgresql://u:secret@h/d"},
                                     host={"cpus": 2}, tool_version="0.1.0")
    values.update(changes)
    return store.begin_comparison(**values)  # type: ignore[arg-type]


def _master(path: Path) -> list[tuple[str, str, str, str]]:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name").fetchall()


def test_the_generated_schema_is_what_the_metadata_generates() -> None:
    assert Path(sqlite_schema.__file__).read_text() == generate_sqlite_schema.render(), \
        "run: python -m duetbench.store.generate_sqlite_schema"
    assert sqlite_schema.HEAD == HEAD
    assert sqlite_schema.MIGRATIONS == tuple((m.version, m.name) for m in MIGRATIONS)
    assert sqlite_schema.COLUMNS == {t.name: tuple(t.columns.keys()) for t in schema.metadata.sorted_tables}
    assert PROCESS_COLUMNS == process_columns()


def test_a_new_database_is_the_one_the_migrations_make(tmp_path: Path) -> None:
    direct = DirectStore.open(tmp_path / "direct.db")
    assert direct is not None
    direct.close()
    Store(tmp_path / "migrated.db").close()
    assert _master(tmp_path / "direct.db") == _master(tmp_path / "migrated.db")
    for name in ("direct.db", "migrated.db"):
        with sqlite3.connect(tmp_path / name) as conn:
            assert conn.execute("SELECT version, name FROM schema_migrations ORDER BY version").fetchall() == \
                [(m.version, m.name) for m in MIGRATIONS]
            assert conn.execute("PRAGMA user_version").fetchone()[0] == HEAD
            assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_every_statement_prepares_on_a_database_the_metadata_made(tmp_path: Path) -> None:
    Store(tmp_path / "r.db").close()
    with sqlite3.connect(tmp_path / "r.db") as conn:
        for sql in [*SQL.values(), _activity(7)]:
            conn.execute(f"EXPLAIN {sql}", [None] * sql.count("?"))  # fails on an unknown table or column


def test_rows_written_directly_read_the_same_through_sqlalchemy_and_back(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    direct = open_comparison_store(path)
    assert isinstance(direct, DirectStore)
    cid = _begin(direct)
    written = [invocation(side, i, wall=0.1 + i / 100, warmup=i == 0) for i in range(3) for side in "AB"]
    direct.add_invocations(cid, written[:2])
    for inv in written[2:]:
        direct.add_invocation(cid, inv)
    marked = [msgspec.structs.replace(inv, activity=json.dumps({"k": inv.index})) for inv in written[2:]]
    direct.set_activity(cid, marked)
    direct.finish_comparison(cid, "complete", options={"runs": 3, "stopped_by": "x"}, method="sequential")
    other = _begin(direct, uid="given")
    direct.add_invocation(other, written[0])
    direct.keep_as_warmup(other)
    through_direct = (direct.comparison(cid), direct.invocations(cid), direct.invocations(other))
    direct.close()

    store = Store(path)
    assert (store.comparison(cid), store.invocations(cid), store.invocations(other)) == through_direct
    record = store.comparison(cid)
    assert record is not None and record.method == "sequential" and record.status == "complete"
    assert record.options == {"runs": 3, "stopped_by": "x"} and record.finished is not None
    assert store.invocations(cid) == written[:2] + marked
    assert [i.warmup for i in store.invocations(other)] == [True]
    assert store.comparison_by_uid("given") is not None
    # ... and what SQLAlchemy writes reads the same directly (the sequence continues where it was).
    third = _begin(store)
    store.add_invocations(third, written[:2])
    store.close()
    again = DirectStore.open(path)
    assert again is not None
    again.add_invocation(third, written[2])
    assert again.invocations(third) == written[:3] and again.comparison(third) is not None
    assert again.comparison(third).options["url"] == "postgresql://u:***@h/d"  # type: ignore[union-attr]
    again.close()


def test_what_is_not_current_goes_through_sqlalchemy(tmp_path: Path) -> None:
    assert DirectStore.open("postgresql://user:pw@localhost/db") is None  # never connects
    old = tmp_path / "old.db"
    Store(old).close()
    with sqlite3.connect(old) as conn:
        conn.execute("DELETE FROM schema_migrations WHERE version = ?", (HEAD,))
    assert DirectStore.open(old) is None
    upgraded = open_comparison_store(old)
    assert isinstance(upgraded, Store)  # which migrated it: the next open is direct
    upgraded.close()
    reopened = DirectStore.open(old)
    assert reopened is not None
    reopened.close()
    newer = tmp_path / "newer.db"
    Store(newer).close()
    with sqlite3.connect(newer) as conn:
        conn.execute("INSERT INTO schema_migrations VALUES (?, 'future', 0)", (HEAD + 1,))
    with pytest.raises(DuetError, match="newer than this duetbench"):
        open_comparison_store(newer)
    legacy = tmp_path / "legacy.db"  # tables, but no schema_migrations: an older duetbench's file
    with sqlite3.connect(legacy) as conn:
        conn.execute("CREATE TABLE comparisons (id INTEGER PRIMARY KEY)")
    assert DirectStore.open(legacy) is None


def _message(call: object, argument: object) -> str:
    with pytest.raises(DuetError) as info:
        call(argument)  # type: ignore[operator]
    return f"{info.value} | {info.value.hint}"


def test_failures_are_the_same_one_line_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"not a database at all" * 100)
    blocker = tmp_path / "file"
    blocker.write_text("")
    for where in (garbage, blocker / "sub" / "r.db"):
        assert _message(DirectStore.open, where) == _message(Store, where)
    # A lock held past the busy timeout, while storing a pair:
    monkeypatch.setattr("duetbench.store.sqlite_file.BUSY_TIMEOUT_MS", 50)
    path = tmp_path / "r.db"
    direct, store = DirectStore.open(path), Store(path)
    assert direct is not None
    cid = _begin(direct)
    locker = sqlite3.connect(path, isolation_level=None)
    locker.execute("BEGIN EXCLUSIVE")
    assert _message(lambda inv: direct.add_invocation(cid, inv), invocation("A", 0)) == \
        _message(lambda inv: store.add_invocation(cid, inv), invocation("A", 0)) == \
        f"cannot use the results database {path}: database is locked — another process is writing to it: try again once it is done, or give another file with --db PATH" \
        " | another process is writing to it: try again once it is done, or give another file with --db PATH"
    locker.execute("ROLLBACK")
    direct.add_invocation(cid, invocation("A", 0))  # the failed transaction was rolled back
    assert len(direct.invocations(cid)) == 1
    direct.close()
    store.close()


def test_a_dead_orchestrators_comparison_is_marked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "r.db"
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = msgspec.structs.replace(Owner.me(), pid=int(gone.stdout))
    store = DirectStore.open(path)
    assert store is not None
    cid = _begin(store, options={"orchestrator": dead.to_json()})
    alive = _begin(store, options={"orchestrator": Owner.me().to_json()})
    store.close()
    again = DirectStore.open(path)
    assert again is not None
    assert again.comparison(cid).status == "orchestrator died"  # type: ignore[union-attr]
    assert again.comparison(alive).status == "running"  # type: ignore[union-attr]
    assert f"comparison #{cid} (its duet process {dead.pid} ended without finishing it)" in capsys.readouterr().err
    again.close()
    store = Store(path)
    with store.engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM comparisons WHERE status = 'running'")).scalar() == 1
    store.close()


class _InterruptedAfterBegin(sqlite3.Connection):
    """A connection on which Ctrl-C lands the moment BEGIN returns, once: the window the CI hit
    ("cannot start a transaction within a transaction" instead of exit 130)."""
    armed = False

    def execute(self, sql: str, *args: object) -> sqlite3.Cursor:  # type: ignore[override]
        cursor = super().execute(sql, *args)
        if sql == "BEGIN IMMEDIATE" and type(self).armed:
            type(self).armed = False
            raise KeyboardInterrupt
        return cursor


def test_ctrl_c_just_after_begin_leaves_no_transaction_open(tmp_path: Path) -> None:
    DirectStore.open(tmp_path / "r.db").close()  # type: ignore[union-attr]
    conn = sqlite3.connect(tmp_path / "r.db", factory=_InterruptedAfterBegin, isolation_level=None)
    store = DirectStore(tmp_path / "r.db", conn)
    comparison_id = _begin(store)
    _InterruptedAfterBegin.armed = True
    with pytest.raises(KeyboardInterrupt):
        store.add_invocations(comparison_id, [invocation(side="A", index=0)])
    assert not conn.in_transaction
    store.finish_comparison(comparison_id, "interrupted")  # the interrupted run's own closing write
    assert store.comparison(comparison_id).status == "interrupted"  # type: ignore[union-attr]
    assert store.invocations(comparison_id) == []
    store.close()
