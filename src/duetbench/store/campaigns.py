"""Campaigns in the results database: the plan first, then each run atomically as it finishes.

A run is written in one transaction together with both sides' process measurements and all their
iterations, so the database never holds half a run: after a crash, a run is either stored (and
`--resume` skips it) or absent (and `--resume` runs it again).
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from duetbench.execute.invocation import Invocation
from duetbench.store.db import Store

if TYPE_CHECKING:
    from duetbench.analyze.table import IterationTable

_SIDE_COLUMNS = [f.name for f in fields(Invocation)]


@dataclass
class CampaignRecord:
    id: int
    name: str
    path: str
    source_sha256: str
    source_text: str
    created: float
    finished: float | None
    status: str
    seed: int
    schedule: str
    plan: list[dict[str, Any]]
    run_dir: str
    options: dict[str, Any]
    host: dict[str, Any]
    artifacts: dict[str, str]
    tool_version: str


@dataclass(frozen=True)
class StoredIteration:
    side: str
    seq: int
    name: str
    value_s: float
    start_ns: int | None
    end_ns: int | None
    warmup: bool


@dataclass
class RunRecord:
    id: int
    key: str
    position: int
    benchmark: str
    method: str
    repetition: int
    launch_order: str
    status: str  # "ok" | "failed" | "interrupted"
    error: str
    started: float
    finished: float
    run_dir: str
    clock: str  # timestamps' clock for this run's iterations: monotonic | epoch | none
    notes: list[str]
    sides: dict[str, Invocation]
    iterations: list[StoredIteration]


class CampaignStore:
    def __init__(self, store: Store) -> None:
        self.conn = store.conn

    def begin(self, *, name: str, path: str, source_sha256: str, source_text: str, seed: int, schedule: str,
              plan: list[dict[str, Any]], run_dir: str, options: dict[str, Any], host: dict[str, Any],
              tool_version: str) -> int:
        cur = self.conn.execute(
            "INSERT INTO campaigns (name, path, source_sha256, source_text, created, status, seed, schedule, plan, "
            "run_dir, options, host, artifacts, tool_version) VALUES (?, ?, ?, ?, ?, 'running', ?, ?, ?, ?, ?, ?, "
            "'{}', ?)",
            (name, path, source_sha256, source_text, time.time(), seed, schedule, json.dumps(plan), run_dir,
             json.dumps(options), json.dumps(host), tool_version))
        return int(cur.lastrowid or 0)

    def set_artifacts(self, campaign_id: int, artifacts: dict[str, str]) -> None:
        self.conn.execute("UPDATE campaigns SET artifacts=? WHERE id=?", (json.dumps(artifacts), campaign_id))

    def set_status(self, campaign_id: int, status: str) -> None:
        finished = time.time() if status != "running" else None
        self.conn.execute("UPDATE campaigns SET status=?, finished=? WHERE id=?", (status, finished, campaign_id))

    def add_run(self, campaign_id: int, run: RunRecord) -> int:
        """Store a finished run with its sides and iterations, all or nothing."""
        with self.conn:  # one transaction (the connection is in autocommit mode otherwise)
            self.conn.execute("BEGIN")
            cur = self.conn.execute(
                "INSERT INTO runs (campaign_id, key, position, benchmark, method, repetition, launch_order, status, "
                "error, started, finished, run_dir, clock, notes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (campaign_id, run.key, run.position, run.benchmark, run.method, run.repetition, run.launch_order,
                 run.status, run.error, run.started, run.finished, run.run_dir, run.clock, json.dumps(run.notes)))
            run_id = int(cur.lastrowid or 0)
            columns = ", ".join(f'"{c}"' for c in _SIDE_COLUMNS)
            marks = ", ".join("?" for _ in _SIDE_COLUMNS)
            for inv in run.sides.values():
                self.conn.execute(f"INSERT INTO run_sides (run_id, {columns}) VALUES (?, {marks})",
                                  (run_id, *[getattr(inv, c) for c in _SIDE_COLUMNS]))
            self.conn.executemany(
                "INSERT INTO iterations (run_id, side, seq, name, value_s, start_ns, end_ns, warmup) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(run_id, it.side, it.seq, it.name, it.value_s, it.start_ns, it.end_ns, int(it.warmup))
                 for it in run.iterations])
        return run_id

    # -- reading -----------------------------------------------------------------------------------
    def campaign(self, campaign_id: int) -> CampaignRecord | None:
        row = self.conn.execute("SELECT * FROM campaigns WHERE id=?", (campaign_id,)).fetchone()
        return _campaign(row) if row else None

    def campaigns(self, name: str | None = None, limit: int = 50) -> list[CampaignRecord]:
        if name is None:
            rows = self.conn.execute("SELECT * FROM campaigns ORDER BY id DESC LIMIT ?", (limit,)).fetchall()
        else:
            rows = self.conn.execute("SELECT * FROM campaigns WHERE name=? ORDER BY id DESC LIMIT ?",
                                     (name, limit)).fetchall()
        return [_campaign(r) for r in rows]

    def done_keys(self, campaign_id: int) -> set[str]:
        rows = self.conn.execute("SELECT key FROM runs WHERE campaign_id=?", (campaign_id,)).fetchall()
        return {r[0] for r in rows}

    def runs(self, campaign_id: int, *, with_iterations: bool = True) -> list[RunRecord]:
        rows = self.conn.execute(
            "SELECT id, key, position, benchmark, method, repetition, launch_order, status, error, started, "
            "finished, run_dir, clock, notes FROM runs WHERE campaign_id=? ORDER BY position", (campaign_id,)
        ).fetchall()
        runs = {r[0]: RunRecord(*r[:13], notes=json.loads(r[13]), sides={}, iterations=[]) for r in rows}
        if not runs:
            return []
        columns = ", ".join(f's."{c}"' for c in _SIDE_COLUMNS)
        for row in self.conn.execute(
                f"SELECT s.run_id, {columns} FROM run_sides s JOIN runs r ON r.id = s.run_id WHERE r.campaign_id=?",
                (campaign_id,)):
            data = dict(zip(_SIDE_COLUMNS, row[1:]))
            data["warmup"] = bool(data["warmup"])
            runs[row[0]].sides[data["side"]] = Invocation(**data)
        if with_iterations:
            for row in self.conn.execute(
                    "SELECT i.run_id, i.side, i.seq, i.name, i.value_s, i.start_ns, i.end_ns, i.warmup "
                    "FROM iterations i JOIN runs r ON r.id = i.run_id WHERE r.campaign_id=? "
                    "ORDER BY i.run_id, i.side, i.seq", (campaign_id,)):
                runs[row[0]].iterations.append(StoredIteration(row[1], row[2], row[3], row[4], row[5], row[6],
                                                               bool(row[7])))
        return list(runs.values())


def _campaign(row: tuple[Any, ...]) -> CampaignRecord:
    (id_, name, path, sha, text, created, finished, status, seed, schedule, plan, run_dir, options, host, artifacts,
     version) = row
    return CampaignRecord(id_, name, path, sha, text, created, finished, status, seed, schedule, json.loads(plan),
                          run_dir, json.loads(options), json.loads(host), json.loads(artifacts), version)


def iteration_table(store: CampaignStore, campaign_id: int, *, include_failed: bool = False) -> "IterationTable":
    """Every stored iteration of a campaign's runs as an IterationTable (analyze/table.py).

    A harness run that holds several benchmarks (a JMH jar, a pyperf suite) becomes one benchmark per
    harness-internal name, "<campaign benchmark>/<name>". Failed runs are left out unless asked for."""
    import numpy as np

    from duetbench.analyze.table import NO_TIME, IterationTable

    status = "" if include_failed else "AND r.status = 'ok'"
    rows = store.conn.execute(
        "SELECT r.benchmark, r.method, r.repetition, i.side, i.seq, i.name, i.value_s, i.start_ns, i.end_ns, "
        f"i.warmup FROM iterations i JOIN runs r ON r.id = i.run_id WHERE r.campaign_id = ? {status} "
        "ORDER BY r.position, i.side, i.seq", (campaign_id,)).fetchall()
    names: dict[str, set[str]] = {}
    for bench, *_, name, _v, _s, _e, _w in rows:
        names.setdefault(bench, set()).add(name)
    qualified = [f"{b}/{n}" if len(names[b]) > 1 and n else b for b, *_rest, n, _v, _s, _e, _w in rows]
    if not rows:
        return IterationTable.from_columns(benchmark=[], method=[], run=[], side=[], value=[])
    _, method, rep, side, seq, _, value, start, end, warm = zip(*rows)
    return IterationTable.from_columns(
        benchmark=qualified, method=method, run=rep, side=side, index=seq, value=value,
        start_ns=[NO_TIME if s is None else s for s in start], end_ns=[NO_TIME if e is None else e for e in end],
        warmup=np.array(warm, dtype=bool))


def process_cpu_table(store: CampaignStore, campaign_id: int) -> "IterationTable":
    """One row per run side: the process tree's CPU time (user+sys, wait4 with subreaper) of the whole
    run — the `cpu` metric of a campaign. Harness iterations have no CPU time of their own."""
    from duetbench.analyze.table import IterationTable

    rows = store.conn.execute(
        "SELECT r.benchmark, r.method, r.repetition, s.side, s.cpu_s, s.start_ns, s.end_ns FROM run_sides s "
        "JOIN runs r ON r.id = s.run_id WHERE r.campaign_id = ? AND r.status = 'ok' ORDER BY r.position, s.side",
        (campaign_id,)).fetchall()
    if not rows:
        return IterationTable.from_columns(benchmark=[], method=[], run=[], side=[], value=[])
    bench, method, rep, side, cpu, start, end = zip(*rows)
    return IterationTable.from_columns(benchmark=bench, method=method, run=rep, side=side, value=cpu,
                                       start_ns=start, end_ns=end)
