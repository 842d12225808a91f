"""`duet merge` from the command line: what a failed merge leaves behind."""
from __future__ import annotations

import json
from pathlib import Path


def test_a_merge_failing_before_copying_anything_leaves_no_new_database(tmp_path: Path, duet) -> None:
    # The destination was created (an empty store) before the first source was found not to be a database.
    (tmp_path / "results.json").write_text(json.dumps({"results": []}))
    r = duet("merge", "results.json", "--db", "merged.db")
    assert r.returncode == 2 and "results.json: file is not a database" in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]
    # A destination that already held something is left as it was.
    (tmp_path / "hf.json").write_text(json.dumps({"results": [{"command": "a", "times": [0.1, 0.2]},
                                                              {"command": "b", "times": [0.3, 0.4]}]}))
    assert duet("import", "hyperfine", "hf.json", "--db", "merged.db").returncode == 0
    assert duet("merge", "results.json", "--db", "merged.db").returncode == 2
    assert (tmp_path / "merged.db").exists()
    assert "hyperfine:hf.json" in duet("analyze", "--db", "merged.db").stdout


def test_an_sqlite_file_of_another_program_is_refused_untouched(tmp_path: Path, duet) -> None:
    # It was opened as a store: duet's tables were added to it, and "0 campaign(s) added" reported.
    import sqlite3
    from contextlib import closing

    other = tmp_path / "other.sqlite"
    with closing(sqlite3.connect(other)) as conn:
        conn.execute("CREATE TABLE notes (text TEXT)")
        conn.commit()
    before = other.read_bytes()
    r = duet("merge", "other.sqlite", "--db", "merged.db")
    assert r.returncode == 2
    assert "other.sqlite: an SQLite database of another program (tables: notes), not duet results" in r.stderr
    assert other.read_bytes() == before and not (tmp_path / "merged.db").exists()
