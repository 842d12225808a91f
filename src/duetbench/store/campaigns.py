"""Campaigns in the results database: the plan first, then each run atomically as it finishes.

A run is written in one transaction together with both sides' process measurements and all their
iterations, so the database never holds half a run: after a crash, a run is either stored (and
`--resume` skips it) or absent (and `--resume` runs it again). An import stores its runs many to a
transaction (`add_runs`), each of them whole.
"""
from __future__ import annotations

import itertools
import json
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from duetbench.errors import DuetError
from duetbench.model.invocation import Invocation
from duetbench.store import schema
from duetbench.store.connect import inserted_id, write_transaction
from duetbench.store.db import Store, invocation_from_row, process_columns
from duetbench.store.location import scrub_credentials
from duetbench.store.postgres import without_nul

if TYPE_CHECKING:
    from duetbench.model.table import IterationTable

class RunAlreadyStored(DuetError):
    """`CampaignStore.add_run` of a run key the campaign already has."""


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
    uid: str = ""


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
    #: "ok" | "failed" | "interrupted" | "skipped" | "pilot" (measured to choose the method, never analysed) |
    #: "retried" (failed, then run again by --retry-failed: kept, never counted)
    status: str
    error: str
    started: float
    finished: float
    run_dir: str
    clock: str  # timestamps' clock for this run's iterations: monotonic | epoch | none
    notes: list[str]
    sides: dict[str, Invocation]
    iterations: list[StoredIteration]
    #: How dynamic warmup ended the run (`LiveWarmup.outcome`: criterion, outcome, iteration); None: it was off.
    adaptive_warmup: dict[str, Any] | None = None


#: Runs per transaction of `CampaignStore.add_runs`. A transaction per run (`add_run`: SQLAlchemy's cost per
#: statement and transaction) made storing the runs of a hyperfine export take 9.6 s for 20 000 runs and
#: 82 s for 200 000; in transactions of this many runs, each table one executemany, 1.3 s and 10 s (2-CPU
#: VM; the whole `duet import`, with importers/store.py `_runs` made faster too, 8.2 -> 1.9 s and 77 -> 16 s).
#: Not one transaction for the whole import: while it is open every other writer of the file (a `duet run`
#: storing a finished run) waits for the write lock, and gives up after the busy timeout; a transaction of
#: this size holds it ~0.1 s.
_RUNS_PER_TRANSACTION = 2000


class CampaignStore:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.engine = store.engine

    def begin(self, *, name: str, path: str, source_sha256: str, source_text: str, seed: int, schedule: str,
              plan: list[dict[str, Any]], run_dir: str, options: dict[str, Any], host: dict[str, Any],
              tool_version: str, uid: str | None = None) -> int:
        with self.store.errors(), write_transaction(self.engine) as conn:
            result = conn.execute(schema.campaigns.insert(), dict(
                name=name, path=path, source_sha256=source_sha256, source_text=source_text, created=time.time(),
                status="running", seed=seed, schedule=schedule, plan=json.dumps(plan), run_dir=run_dir,
                options=json.dumps(scrub_credentials(options)), host=json.dumps(scrub_credentials(host)),
                artifacts="{}", tool_version=tool_version, uid=uid or str(uuid.uuid4())))
            return inserted_id(result)

    def _update(self, campaign_id: int, **values: Any) -> None:
        t = schema.campaigns
        with self.store.errors(), write_transaction(self.engine) as conn:
            conn.execute(t.update().where(t.c.id == campaign_id).values(**values))

    def set_artifacts(self, campaign_id: int, artifacts: dict[str, str]) -> None:
        self._update(campaign_id, artifacts=json.dumps(artifacts))

    def set_run_dir(self, campaign_id: int, run_dir: str) -> None:
        self._update(campaign_id, run_dir=run_dir)

    def set_status(self, campaign_id: int, status: str) -> None:
        self._update(campaign_id, status=status, finished=time.time() if status != "running" else None)

    def set_auto_choice(self, campaign_id: int, benchmark: str, choice: dict[str, Any]) -> None:
        """Record `methods: {auto: N}`'s choice for a benchmark in the campaign's options (under "auto")."""
        record = self.campaign(campaign_id)
        assert record is not None
        options = dict(record.options)
        options["auto"] = {**options.get("auto", {}), benchmark: choice}
        self._update(campaign_id, options=json.dumps(scrub_credentials(options)))

    def set_pilot(self, campaign_id: int, keys: list[str]) -> None:
        """Mark the runs with these keys as a pilot of the method auto did not choose: kept, never analysed
        (iteration_table reads status "ok" only)."""
        t = schema.runs
        with self.store.errors(), write_transaction(self.engine) as conn:
            conn.execute(t.update().where((t.c.campaign_id == campaign_id) & t.c.key.in_(keys) & (t.c.status == "ok"))
                         .values(status="pilot"))

    def mark_retried(self, campaign_id: int) -> int:
        """`duet run --resume --retry-failed`: the failed runs are kept, as status "retried" under a key of their
        own, so that the plan's key is free to be run again. Returns how many."""
        t = schema.runs
        failed = (t.c.campaign_id == campaign_id) & (t.c.status == "failed")
        with self.store.errors(), write_transaction(self.engine) as conn:
            ids = [row[0] for row in conn.execute(select(t.c.id).where(failed))]
            for run_id in ids:
                conn.execute(t.update().where(t.c.id == run_id)
                             .values(status="retried", key=t.c.key + f"#retried-{run_id}"))
        return len(ids)

    def add_run(self, campaign_id: int, run: RunRecord) -> int:
        """Store a finished run with its sides and iterations, all or nothing."""
        return self._add(campaign_id, [run])[0]

    def add_runs(self, campaign_id: int, runs: Iterable[RunRecord]) -> list[int]:
        """Store many finished runs at once (`duet import`); return their ids in order.

        Each run is stored whole, `_RUNS_PER_TRANSACTION` runs per transaction, so a failure or Ctrl-C
        leaves the runs of the transactions already committed: the caller removes the campaign then."""
        it = iter(runs)
        ids: list[int] = []
        while chunk := list(itertools.islice(it, _RUNS_PER_TRANSACTION)):
            ids += self._add(campaign_id, chunk)
        return ids

    def _add(self, campaign_id: int, runs: list[RunRecord]) -> list[int]:
        """`runs` with their sides and iterations in one transaction, each table in one executemany (a run
        per transaction through SQLAlchemy costs ~0.5 ms: see `_RUNS_PER_TRANSACTION`)."""
        r = schema.runs
        try:
            with self.store.errors(), write_transaction(self.engine) as conn:
                if len(runs) == 1:
                    ids = [inserted_id(conn.execute(r.insert(), _run_row(campaign_id, runs[0])))]
                else:
                    # An executemany reports no ids: the runs' keys are unique within their campaign.
                    conn.execute(r.insert(), [_run_row(campaign_id, run) for run in runs])
                    # Compared as PostgreSQL stores them: an imported name may hold a NUL (store/postgres.py).
                    by_key = {without_nul(key): id_ for key, id_ in conn.execute(select(r.c.key, r.c.id).where(
                        (r.c.campaign_id == campaign_id) & r.c.key.in_([run.key for run in runs]))).all()}
                    ids = [by_key[without_nul(run.key)] for run in runs]
                columns = process_columns()
                sides = [{"run_id": run_id, **{c: getattr(inv, c) for c in columns}}
                         for run_id, run in zip(ids, runs, strict=True) for inv in run.sides.values()]
                if sides:
                    conn.execute(schema.run_sides.insert(), sides)
                iterations = [{"run_id": run_id, "side": it.side, "seq": it.seq, "name": it.name, "value_s": it.value_s,
                               "start_ns": it.start_ns, "end_ns": it.end_ns, "warmup": bool(it.warmup)}
                              for run_id, run in zip(ids, runs, strict=True) for it in run.iterations]
                if iterations:
                    conn.execute(schema.iterations.insert(), iterations)
        except IntegrityError:
            stored = self.done_keys(campaign_id)
            again = next((run.key for run in runs if run.key in stored), None)
            if again is None:
                raise
            raise RunAlreadyStored(f"run {again} of campaign #{campaign_id} is already stored in "
                                   f"{self.store.location}",
                            hint="each run is stored once: resume the campaign (--resume) instead of "
                                 "running its runs again") from None
        return ids

    # -- reading -----------------------------------------------------------------------------------
    def _rows(self, statement: Any) -> list[Any]:
        return self.store._read(statement)

    def campaign(self, campaign_id: int) -> CampaignRecord | None:
        rows = self._rows(select(*_CAMPAIGN_COLUMNS).where(schema.campaigns.c.id == campaign_id))
        return _campaign(rows[0]) if rows else None

    def by_uid(self, uid: str) -> CampaignRecord | None:
        rows = self._rows(select(*_CAMPAIGN_COLUMNS).where(schema.campaigns.c.uid == uid))
        return _campaign(rows[0]) if rows else None

    def campaigns(self, name: str | None = None, limit: int = 50) -> list[CampaignRecord]:
        t = schema.campaigns
        query = select(*_CAMPAIGN_COLUMNS)
        if name is not None:
            query = query.where(t.c.name == name)
        return [_campaign(r) for r in self._rows(query.order_by(t.c.id.desc()).limit(limit))]

    def done_keys(self, campaign_id: int) -> set[str]:
        t = schema.runs
        return {r[0] for r in self._rows(select(t.c.key).where(t.c.campaign_id == campaign_id))}

    def runs(self, campaign_id: int, *, with_iterations: bool = True) -> list[RunRecord]:
        r, s, i = schema.runs, schema.run_sides, schema.iterations
        rows = self._rows(select(*_RUN_COLUMNS).where(r.c.campaign_id == campaign_id).order_by(r.c.position, r.c.id))
        runs = {row[0]: _run(row) for row in rows}
        if not runs:
            return []
        columns = process_columns()
        for row in self._rows(select(s.c.run_id, *[s.c[c] for c in columns]).join(r, r.c.id == s.c.run_id)
                              .where(r.c.campaign_id == campaign_id).order_by(s.c.run_id, s.c.side)):
            if row[0] in runs:  # a run committed by another writer after the first query is not in this view
                inv = invocation_from_row(dict(zip(columns, row[1:], strict=True)))
                runs[row[0]].sides[inv.side] = inv
        if with_iterations:
            for row in self._rows(select(i.c.run_id, i.c.side, i.c.seq, i.c.name, i.c.value_s, i.c.start_ns,
                                         i.c.end_ns, i.c.warmup).join(r, r.c.id == i.c.run_id)
                                  .where(r.c.campaign_id == campaign_id).order_by(i.c.run_id, i.c.side, i.c.seq)):
                if row[0] in runs:
                    runs[row[0]].iterations.append(StoredIteration(row[1], row[2], row[3], row[4], row[5], row[6],
                                                                   bool(row[7])))
        return list(runs.values())


_CAMPAIGN_COLUMNS = [schema.campaigns.c[name] for name in (
    "id", "name", "path", "source_sha256", "source_text", "created", "finished", "status", "seed", "schedule", "plan",
    "run_dir", "options", "host", "artifacts", "tool_version", "uid")]
_RUN_COLUMNS = [schema.runs.c[name] for name in (
    "id", "key", "position", "benchmark", "method", "repetition", "launch_order", "status", "error", "started",
    "finished", "run_dir", "clock", "notes", "adaptive_warmup")]


def _run_row(campaign_id: int, run: RunRecord) -> dict[str, Any]:
    """A run's row in the runs table (its sides and iterations are rows of their own)."""
    return dict(campaign_id=campaign_id, key=run.key, position=run.position, benchmark=run.benchmark,
                method=run.method, repetition=run.repetition, launch_order=run.launch_order, status=run.status,
                error=run.error, started=run.started, finished=run.finished, run_dir=run.run_dir, clock=run.clock,
                notes=json.dumps(run.notes),
                adaptive_warmup=None if run.adaptive_warmup is None else json.dumps(run.adaptive_warmup))


def _run(row: Sequence[Any]) -> RunRecord:
    """A run of `_RUN_COLUMNS`, without its sides and iterations (added by the caller)."""
    (id_, key, position, benchmark, method, repetition, launch_order, status, error, started, finished, run_dir,
     clock, notes, adaptive_warmup) = row
    return RunRecord(id_, key, position, benchmark, method, repetition, launch_order, status, error, started,
                     finished, run_dir, clock, notes=json.loads(notes), sides={}, iterations=[],
                     adaptive_warmup=None if adaptive_warmup is None else json.loads(adaptive_warmup))


def _campaign(row: Any) -> CampaignRecord:
    (id_, name, path, sha, text, created, finished, status, seed, schedule, plan, run_dir, options, host, artifacts,
     version, uid) = row
    return CampaignRecord(id_, name, path, sha, text, created, finished, status, seed, schedule, json.loads(plan),
                          run_dir, json.loads(options), json.loads(host), json.loads(artifacts), version, uid or "")


def iteration_table(store: CampaignStore, campaign_id: int, *, include_failed: bool = False) -> IterationTable:
    """Every stored iteration of a campaign's runs as an IterationTable (analyze/table.py).

    A harness run that holds several benchmarks (a JMH jar, a pyperf suite) becomes one benchmark per
    harness-internal name, "<campaign benchmark>/<name>". Failed runs are left out unless asked for."""
    import numpy as np

    from duetbench.model.table import NO_TIME, IterationTable

    r, i = schema.runs, schema.iterations
    query = (select(r.c.benchmark, r.c.method, r.c.repetition, i.c.side, i.c.seq, i.c.name, i.c.value_s, i.c.start_ns,
                    i.c.end_ns, i.c.warmup).join(r, r.c.id == i.c.run_id).where(r.c.campaign_id == campaign_id)
             .order_by(r.c.position, r.c.id, i.c.side, i.c.seq))
    if not include_failed:
        query = query.where(r.c.status == "ok")
    rows = [tuple(row) for row in store._rows(query)]
    names: dict[str, set[str]] = {}
    for bench, *_, name, _v, _s, _e, _w in rows:
        names.setdefault(bench, set()).add(name)
    qualified = [f"{b}/{n}" if len(names[b]) > 1 and n else b for b, *_rest, n, _v, _s, _e, _w in rows]
    if not rows:
        return IterationTable.from_columns(benchmark=[], method=[], run=[], side=[], value=[])
    _, method, rep, side, seq, _, value, start, end, warm = zip(*rows, strict=True)
    return IterationTable.from_columns(
        benchmark=qualified, method=method, run=rep, side=side, index=seq, value=value,
        start_ns=[NO_TIME if s is None else s for s in start], end_ns=[NO_TIME if e is None else e for e in end],
        warmup=np.array(warm, dtype=bool))


def process_cpu_table(store: CampaignStore, campaign_id: int) -> IterationTable:
    """One row per run side: the process tree's CPU time (user+sys, wait4 with subreaper) of the whole
    run — the `cpu` metric of a campaign. Harness iterations have no CPU time of their own."""
    from duetbench.model.table import IterationTable

    r, s = schema.runs, schema.run_sides
    rows = store._rows(select(r.c.benchmark, r.c.method, r.c.repetition, s.c.side, s.c.cpu_s, s.c.start_ns, s.c.end_ns)
                       .join(r, r.c.id == s.c.run_id).where(r.c.campaign_id == campaign_id, r.c.status == "ok")
                       .order_by(r.c.position, r.c.id, s.c.side))
    if not rows:
        return IterationTable.from_columns(benchmark=[], method=[], run=[], side=[], value=[])
    bench, method, rep, side, cpu, start, end = zip(*rows, strict=True)
    return IterationTable.from_columns(benchmark=bench, method=method, run=rep, side=side, value=cpu,
                                       start_ns=start, end_ns=end)
