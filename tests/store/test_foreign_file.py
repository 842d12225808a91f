"""An SQLite database of another program given as --db is refused before anything is written to it: opened
as a store, it got duet's tables (as an old results file is brought up to date) and was switched to WAL."""
from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from duetbench.store.db import NotADatabase, Store
from duetbench.store.direct import DirectStore, open_comparison_store

MESSAGE = "other.sqlite: an SQLite database of another program (tables: notes), not duet results"


def _other_program(path: Path, journal: str = "delete") -> bytes:
    with closing(sqlite3.connect(path)) as conn:
        conn.execute(f"PRAGMA journal_mode={journal}")
        conn.execute("CREATE TABLE notes (text TEXT)")
        conn.execute("INSERT INTO notes VALUES ('mine')")
        conn.commit()
    return path.read_bytes()


def _untouched(path: Path, before: bytes) -> None:
    assert path.read_bytes() == before
    assert sorted(p.name for p in path.resolve().parent.iterdir() if p.name.startswith(path.name)) == [path.name]


@pytest.mark.parametrize("journal", ["delete", "wal"])
@pytest.mark.parametrize("opener", [Store, open_comparison_store])
def test_a_store_refuses_another_programs_database_untouched(tmp_path: Path, monkeypatch, opener, journal) -> None:
    monkeypatch.chdir(tmp_path)
    other = Path("other.sqlite")
    before = _other_program(other, journal)
    with pytest.raises(NotADatabase) as refused:
        opener(other)
    assert refused.value.message == MESSAGE and "\n" not in str(refused.value)
    assert "a path that does not exist yet" in str(refused.value.hint)
    _untouched(other, before)


@pytest.mark.parametrize("opener", [Store, open_comparison_store])
def test_an_empty_file_or_a_database_without_tables_is_a_new_store(tmp_path: Path, opener) -> None:
    empty, bare = tmp_path / "empty.db", tmp_path / "bare.db"
    empty.touch()
    with closing(sqlite3.connect(bare)) as conn:
        conn.execute("PRAGMA user_version = 0")  # a database (a page written) with no table
        conn.execute("CREATE TABLE gone (x)")
        conn.execute("DROP TABLE gone")
        conn.commit()
    for path in (empty, bare):
        store = opener(path)
        try:
            cid = store.begin_comparison(method="duet", name_a="a", name_b="b", command_a="x", command_b="y",
                                         seed=1, options={}, host={}, tool_version="0")
            assert store.comparison(cid) is not None
        finally:
            store.close()
    assert isinstance(open_comparison_store(empty), DirectStore)  # made current above: the direct store opens it


def test_every_command_refuses_another_programs_database_in_one_line(tmp_path: Path, duet) -> None:
    other = tmp_path / "other.sqlite"
    before = _other_program(other)
    (tmp_path / "hf.json").write_text(json.dumps({"results": [{"command": "a", "times": [0.1, 0.2]},
                                                              {"command": "b", "times": [0.3, 0.4]}]}))
    for args in (["import", "hyperfine", "hf.json"], ["analyze"], ["show"], ["compare", "true", "true", "--runs", "2"]):
        r = duet(*args, "--db", "other.sqlite")
        assert r.returncode == 2 and MESSAGE in r.stderr, (args, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1, (args, r.stderr)
        _untouched(other, before)


@pytest.mark.parametrize("opener", [Store, open_comparison_store])
def test_another_tools_schema_migrations_is_not_duets(tmp_path: Path, monkeypatch, opener) -> None:
    """Rails, golang-migrate and Ecto keep a ``schema_migrations`` of versions alone: such an application's
    file is another program's, not "a results database at schema version 20240101120000"."""
    monkeypatch.chdir(tmp_path)
    other = Path("app.sqlite3")
    with closing(sqlite3.connect(other)) as conn:
        conn.execute("CREATE TABLE schema_migrations (version VARCHAR PRIMARY KEY)")
        conn.execute("INSERT INTO schema_migrations VALUES ('20240101120000')")
        conn.execute("CREATE TABLE users (id INTEGER)")
        conn.commit()
    before = other.read_bytes()
    with pytest.raises(NotADatabase) as refused:
        opener(other)
    assert refused.value.message == ("app.sqlite3: an SQLite database of another program "
                                     "(tables: schema_migrations, users), not duet results")
    _untouched(other, before)
