"""The results database: every invocation is committed the moment it is measured.

SQLite in WAL mode with one transaction per invocation, so a process killed at any moment (even with
SIGKILL) leaves every finished invocation on disk. Schema changes go through ``_MIGRATIONS``.
"""
from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from duetbench.errors import DuetError
from duetbench.execute.invocation import Invocation

DEFAULT_DB = Path(".duet/results.db")

_INVOCATION_COLUMNS = [f.name for f in fields(Invocation)]

_MIGRATIONS: list[str] = [
    """
    CREATE TABLE comparisons (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        created REAL NOT NULL,
        finished REAL,
        status TEXT NOT NULL,
        method TEXT NOT NULL,
        name_a TEXT NOT NULL,
        name_b TEXT NOT NULL,
        command_a TEXT NOT NULL,
        command_b TEXT NOT NULL,
        seed INTEGER NOT NULL,
        options TEXT NOT NULL,
        host TEXT NOT NULL,
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
    """,
    # Campaigns (`duet run`): the plan is stored before measuring; a run and everything it measured
    # (both sides, all iterations) are committed in one transaction when the run finishes.
    """
    CREATE TABLE campaigns (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        name TEXT NOT NULL,
        path TEXT NOT NULL,
        source_sha256 TEXT NOT NULL,
        source_text TEXT NOT NULL,
        created REAL NOT NULL,
        finished REAL,
        status TEXT NOT NULL,
        seed INTEGER NOT NULL,
        schedule TEXT NOT NULL,
        plan TEXT NOT NULL,
        run_dir TEXT NOT NULL,
        options TEXT NOT NULL,
        host TEXT NOT NULL,
        artifacts TEXT NOT NULL,
        tool_version TEXT NOT NULL
    );
    CREATE TABLE runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
        key TEXT NOT NULL,
        position INTEGER NOT NULL,
        benchmark TEXT NOT NULL,
        method TEXT NOT NULL,
        repetition INTEGER NOT NULL,
        launch_order TEXT NOT NULL,
        status TEXT NOT NULL,
        error TEXT NOT NULL,
        started REAL NOT NULL,
        finished REAL NOT NULL,
        run_dir TEXT NOT NULL,
        clock TEXT NOT NULL,
        notes TEXT NOT NULL,
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
        run_id INTEGER NOT NULL REFERENCES runs(id),
        side TEXT NOT NULL,
        seq INTEGER NOT NULL,
        name TEXT NOT NULL,
        value_s REAL NOT NULL,
        start_ns INTEGER,
        end_ns INTEGER,
        warmup INTEGER NOT NULL,
        PRIMARY KEY (run_id, side, seq)
    );
    CREATE INDEX runs_by_campaign ON runs (campaign_id, benchmark, method);
    """,
]


@dataclass
class ComparisonRecord:
    id: int
    created: float
    finished: float | None
    status: str
    method: str
    name_a: str
    name_b: str
    command_a: str
    command_b: str
    seed: int
    options: dict[str, Any]
    host: dict[str, Any]
    tool_version: str


class Store:
    def __init__(self, path: Path | str = DEFAULT_DB) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.conn = sqlite3.connect(self.path, isolation_level=None)
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            self._migrate()
        except (OSError, sqlite3.Error) as exc:
            raise DuetError(f"cannot use the results database {self.path}: {exc}",
                            hint="choose a writable location with --db PATH") from None
        self._seq: dict[int, int] = {}

    def _migrate(self) -> None:
        version = self.conn.execute("PRAGMA user_version").fetchone()[0]
        for number, script in enumerate(_MIGRATIONS[version:], start=version + 1):
            self.conn.executescript(f"BEGIN; {script}; PRAGMA user_version={number}; COMMIT;")

    def close(self) -> None:
        self.conn.close()

    # -- writing -----------------------------------------------------------------------------------
    def begin_comparison(self, *, method: str, name_a: str, name_b: str, command_a: str, command_b: str,
                         seed: int, options: dict[str, Any], host: dict[str, Any], tool_version: str) -> int:
        cur = self.conn.execute(
            "INSERT INTO comparisons (created, status, method, name_a, name_b, command_a, command_b, seed, "
            "options, host, tool_version) VALUES (?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (time.time(), method, name_a, name_b, command_a, command_b, seed, json.dumps(options),
             json.dumps(host), tool_version),
        )
        comparison_id = int(cur.lastrowid or 0)
        self._seq[comparison_id] = 0
        return comparison_id

    def add_invocation(self, comparison_id: int, inv: Invocation) -> None:
        seq = self._seq.get(comparison_id)
        if seq is None:
            seq = self.conn.execute("SELECT COUNT(*) FROM invocations WHERE comparison_id=?",
                                    (comparison_id,)).fetchone()[0]
        values = [getattr(inv, c) for c in _INVOCATION_COLUMNS]
        columns = ", ".join(f'"{c}"' for c in _INVOCATION_COLUMNS)
        marks = ", ".join("?" for _ in _INVOCATION_COLUMNS)
        self.conn.execute(f"INSERT INTO invocations (comparison_id, seq, {columns}) VALUES (?, ?, {marks})",
                          (comparison_id, seq, *values))
        self._seq[comparison_id] = seq + 1

    def finish_comparison(self, comparison_id: int, status: str) -> None:
        self.conn.execute("UPDATE comparisons SET status=?, finished=? WHERE id=?",
                          (status, time.time(), comparison_id))

    # -- reading -----------------------------------------------------------------------------------
    def comparisons(self, limit: int = 50) -> list[ComparisonRecord]:
        rows = self.conn.execute("SELECT * FROM comparisons ORDER BY id DESC LIMIT ?", (limit,)).fetchall()
        return [self._record(r) for r in rows]

    def comparison(self, comparison_id: int) -> ComparisonRecord | None:
        row = self.conn.execute("SELECT * FROM comparisons WHERE id=?", (comparison_id,)).fetchone()
        return self._record(row) if row else None

    def invocations(self, comparison_id: int) -> list[Invocation]:
        columns = ", ".join(f'"{c}"' for c in _INVOCATION_COLUMNS)
        rows = self.conn.execute(f"SELECT {columns} FROM invocations WHERE comparison_id=? ORDER BY seq",
                                 (comparison_id,)).fetchall()
        result = []
        for row in rows:
            data = dict(zip(_INVOCATION_COLUMNS, row))
            data["warmup"] = bool(data["warmup"])
            result.append(Invocation(**data))
        return result

    @staticmethod
    def _record(row: tuple[Any, ...]) -> ComparisonRecord:
        (id_, created, finished, status, method, name_a, name_b, command_a, command_b, seed, options, host,
         version) = row
        return ComparisonRecord(id_, created, finished, status, method, name_a, name_b, command_a, command_b,
                                seed, json.loads(options), json.loads(host), version)
