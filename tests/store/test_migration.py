"""A SQLite results file written by duetbench before the SQLAlchemy store (schema in PRAGMA user_version)
opens, is migrated in place, and loses nothing."""
from __future__ import annotations

import sqlite3
import uuid
from pathlib import Path

import pytest

from duetbench.errors import DuetError
from duetbench.store.campaigns import CampaignStore, iteration_table
from duetbench.store.db import Store
from duetbench.store.migrations import HEAD

# The DDL of duetbench's store before this port, verbatim (user_version 1, then 2).
OLD_V1 = """
CREATE TABLE comparisons (
    id INTEGER PRIMARY KEY AUTOINCREMENT, created REAL NOT NULL, finished REAL, status TEXT NOT NULL,
    method TEXT NOT NULL, name_a TEXT NOT NULL, name_b TEXT NOT NULL, command_a TEXT NOT NULL,
    command_b TEXT NOT NULL, seed INTEGER NOT NULL, options TEXT NOT NULL, host TEXT NOT NULL,
    tool_version TEXT NOT NULL
);
CREATE TABLE invocations (
    comparison_id INTEGER NOT NULL REFERENCES comparisons(id),
    seq INTEGER NOT NULL,
    side TEXT NOT NULL, "index" INTEGER NOT NULL, pair INTEGER NOT NULL, warmup INTEGER NOT NULL,
    status TEXT NOT NULL, exit_code INTEGER, signal INTEGER,
    start_ns INTEGER, end_ns INTEGER, wall_s REAL, cpu_s REAL, user_s REAL, sys_s REAL,
    cgroup_cpu_s REAL, maxrss_kb INTEGER, nvcsw INTEGER, nivcsw INTEGER, minflt INTEGER, majflt INTEGER,
    cpu_requested INTEGER, cpu_seen INTEGER, orphans_reaped INTEGER, steal_s REAL,
    error TEXT, stderr_tail TEXT,
    PRIMARY KEY (comparison_id, seq)
);
"""
OLD_V2 = """
CREATE TABLE campaigns (
    id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, path TEXT NOT NULL, source_sha256 TEXT NOT NULL,
    source_text TEXT NOT NULL, created REAL NOT NULL, finished REAL, status TEXT NOT NULL, seed INTEGER NOT NULL,
    schedule TEXT NOT NULL, plan TEXT NOT NULL, run_dir TEXT NOT NULL, options TEXT NOT NULL, host TEXT NOT NULL,
    artifacts TEXT NOT NULL, tool_version TEXT NOT NULL
);
CREATE TABLE runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT, campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
    key TEXT NOT NULL, position INTEGER NOT NULL, benchmark TEXT NOT NULL, method TEXT NOT NULL,
    repetition INTEGER NOT NULL, launch_order TEXT NOT NULL, status TEXT NOT NULL, error TEXT NOT NULL,
    started REAL NOT NULL, finished REAL NOT NULL, run_dir TEXT NOT NULL, clock TEXT NOT NULL, notes TEXT NOT NULL,
    UNIQUE (campaign_id, key)
);
CREATE TABLE run_sides (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    side TEXT NOT NULL, "index" INTEGER NOT NULL, pair INTEGER NOT NULL, warmup INTEGER NOT NULL,
    status TEXT NOT NULL, exit_code INTEGER, signal INTEGER,
    start_ns INTEGER, end_ns INTEGER, wall_s REAL, cpu_s REAL, user_s REAL, sys_s REAL,
    cgroup_cpu_s REAL, maxrss_kb INTEGER, nvcsw INTEGER, nivcsw INTEGER, minflt INTEGER, majflt INTEGER,
    cpu_requested INTEGER, cpu_seen INTEGER, orphans_reaped INTEGER, steal_s REAL,
    error TEXT, stderr_tail TEXT,
    PRIMARY KEY (run_id, side)
);
CREATE TABLE iterations (
    run_id INTEGER NOT NULL REFERENCES runs(id), side TEXT NOT NULL, seq INTEGER NOT NULL, name TEXT NOT NULL,
    value_s REAL NOT NULL, start_ns INTEGER, end_ns INTEGER, warmup INTEGER NOT NULL,
    PRIMARY KEY (run_id, side, seq)
);
CREATE INDEX runs_by_campaign ON runs (campaign_id, benchmark, method);
"""
SIDE = ("A", 0, 0, 0, "ok", 0, 0, 1_700_000_000_000_000_000, 1_700_000_000_100_000_000, 0.1, 0.09, 0.08, 0.01,
        None, 12000, 1, 2, 300, 0, 0, 0, 0, None, "", "tail")


def old_database(path: Path, version: int) -> None:
    """A results file as the old store wrote it: its DDL and its INSERT statements."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(f"BEGIN; {OLD_V1}; PRAGMA user_version=1; COMMIT;")
    for n in range(2):
        conn.execute("INSERT INTO comparisons (created, status, method, name_a, name_b, command_a, command_b, seed, "
                     "options, host, tool_version) VALUES (?, 'complete', 'duet', 'a', 'b', 'x', 'y', ?, ?, '{}', "
                     "'0.0.9')", (1.0 + n, 7 + n, '{"runs": 3}'))
        for seq in range(4):
            conn.execute('INSERT INTO invocations VALUES (?, ?, ' + ", ".join("?" * len(SIDE)) + ")",
                         (n + 1, seq, *SIDE))
    if version >= 2:
        conn.executescript(f"BEGIN; {OLD_V2}; PRAGMA user_version=2; COMMIT;")
        for c in range(2):
            conn.execute("INSERT INTO campaigns (name, path, source_sha256, source_text, created, status, seed, "
                         "schedule, plan, run_dir, options, host, artifacts, tool_version) VALUES (?, 'c.yml', 'ab', "
                         "'campaign: c', 1.0, 'finished', 3, 'rmit', '[]', '/r', '{}', '{}', '{}', '0.0.9')",
                         (f"c{c}",))
            for r in range(3):
                cur = conn.execute("INSERT INTO runs (campaign_id, key, position, benchmark, method, repetition, "
                                   "launch_order, status, error, started, finished, run_dir, clock, notes) VALUES "
                                   "(?, ?, ?, 'fib', 'duet', ?, 'AB', 'ok', '', 1.0, 2.0, '/r', 'monotonic', '[]')",
                                   (c + 1, f"fib/duet/{r}", r, r))
                for side in "AB":
                    conn.execute("INSERT INTO run_sides VALUES (?, " + ", ".join("?" * len(SIDE)) + ")",
                                 (cur.lastrowid, side, *SIDE[1:]))
                    conn.executemany("INSERT INTO iterations VALUES (?, ?, ?, '', ?, ?, ?, ?)",
                                     [(cur.lastrowid, side, i, 0.1 + i, 10 * i, 10 * i + 5, int(i == 0))
                                      for i in range(5)])
    conn.close()


def columns(path: Path, table: str) -> list[str]:
    with sqlite3.connect(path) as conn:
        return [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]


def test_a_version_2_file_is_migrated_without_loss(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    old_database(path, 2)
    store = Store(path)
    try:
        campaigns = CampaignStore(store)
        assert [c.name for c in campaigns.campaigns()] == ["c1", "c0"]
        uids = [c.uid for c in campaigns.campaigns()] + [c.uid for c in store.comparisons()]
        assert len(set(uids)) == 4 and all(str(uuid.UUID(u)) == u for u in uids)
        runs = campaigns.runs(1)
        assert [r.key for r in runs] == ["fib/duet/0", "fib/duet/1", "fib/duet/2"]
        assert runs[0].sides["B"].start_ns == SIDE[7] and runs[0].sides["A"].warmup is False
        assert [i.warmup for i in runs[0].iterations if i.side == "A"] == [True, False, False, False, False]
        assert len(iteration_table(campaigns, 2).value) == 3 * 2 * 5
        invocations = store.invocations(2)
        assert len(invocations) == 4 and invocations[0].maxrss_kb == 12000 and invocations[0].stderr_tail == "tail"
        assert store.comparison(1).options == {"runs": 3}  # type: ignore[union-attr]
        # and it takes new data in the new shape
        new = campaigns.begin(name="new", path="n.yml", source_sha256="x", source_text="", seed=1, schedule="rmit",
                              plan=[], run_dir="", options={}, host={}, tool_version="0.1.0")
        assert new == 3
    finally:
        store.close()
    assert "activity" in columns(path, "invocations") and "activity" in columns(path, "run_sides")
    assert "uid" in columns(path, "campaigns") and "uid" in columns(path, "comparisons")
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == HEAD
        assert [r[0] for r in conn.execute("SELECT version FROM schema_migrations ORDER BY version")] == list(range(1, HEAD + 1))
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    again = Store(path)  # opening again keeps the uids: merging depends on them being stable
    try:
        kept = [c.uid for c in CampaignStore(again).campaigns() if c.name != "new"]
        assert kept + [c.uid for c in again.comparisons()] == uids
    finally:
        again.close()


def test_a_version_1_file_gains_the_campaign_tables(tmp_path: Path) -> None:
    path = tmp_path / "v1.db"
    old_database(path, 1)
    store = Store(path)
    try:
        assert len(store.comparisons()) == 2 and len(store.invocations(1)) == 4
        campaigns = CampaignStore(store)
        cid = campaigns.begin(name="n", path="n.yml", source_sha256="x", source_text="", seed=1, schedule="rmit",
                              plan=[], run_dir="", options={}, host={}, tool_version="0.1.0")
        assert campaigns.campaign(cid).uid  # type: ignore[union-attr]
    finally:
        store.close()


def test_a_database_from_a_newer_duetbench_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    Store(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO schema_migrations VALUES (?, 'from the future', 0)", (HEAD + 1,))
    with pytest.raises(DuetError, match="newer than this duetbench"):
        Store(path)


def test_an_unusable_file_is_one_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "not-a-db.db"
    bad.write_bytes(b"this is not a database, just text" * 100)
    with pytest.raises(DuetError, match="cannot use the results database") as info:
        Store(bad)
    assert info.value.hint and "--db" in info.value.hint
    # Not "choose a writable location": the file is writable, it is just not a results database.
    assert "results file duet wrote" in info.value.hint and "writable" not in info.value.hint
