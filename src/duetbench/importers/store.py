"""Writing imported iterations into the results database as a campaign, so `duet analyze --campaign ID`
and every other campaign analysis work on them exactly as on a `duet run` campaign.

Runs are stored the way `duet run` stores them (plan/campaign.py): a duet/aduet run is one record with
both sides; a sequential run is one record per side. Imported runs have no process measurements, so
the sides' Invocation fields other than times are zero and every run says so in its notes.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from sqlalchemy import select

from duetbench import __version__
from duetbench.model.invocation import Invocation
from duetbench.model.table import NO_TIME, IterationTable
from duetbench.plan.campaign import PlannedRun
from duetbench.store import schema
from duetbench.store.campaigns import CampaignStore, RunRecord, StoredIteration
from duetbench.store.connect import write_transaction
from duetbench.store.db import Store

from ._table import Imported

NOTE = "imported: no process measurements (CPU time, RSS, context switches) were recorded by the source"


def _sha256(files: tuple[str, ...]) -> str:
    digest = hashlib.sha256()
    for f in files:
        try:
            digest.update(Path(f).read_bytes())
        except OSError:
            digest.update(f.encode())
    return digest.hexdigest()


def _side(side: str, run: int, values: np.ndarray, start: list[int], end: list[int]) -> Invocation:
    timed = [(a, b) for a, b in zip(start, end, strict=True) if a != NO_TIME and b != NO_TIME]
    return Invocation(side=side, index=run, pair=run, warmup=False, status="ok", exit_code=0, signal=0,
                      start_ns=min(a for a, _ in timed) if timed else 0,
                      end_ns=max(b for _, b in timed) if timed else 0,
                      wall_s=float(values.sum()), cpu_s=0.0, user_s=0.0, sys_s=0.0, cgroup_cpu_s=None, maxrss_kb=0,
                      nvcsw=0, nivcsw=0, minflt=0, majflt=0, cpu_requested=-1, cpu_seen=-1, orphans_reaped=0)


def _runs(table: IterationTable, now: float) -> tuple[list[PlannedRun], Iterator[RunRecord]]:
    """The plan (stored first, whole) and the runs it plans, built one by one as they are stored: all at
    once, a 200 000-run hyperfine export held ~600 MB of records before the first was written."""
    sequential = table.method == "sequential"
    # One stored run per (benchmark, method, run), and per side too for sequential runs.
    unit = np.where(sequential, table.side, "AB")
    by_key: dict[tuple[str, str, int, str], list[int]] = {}
    for i, k in enumerate(zip(table.benchmark.tolist(), table.method.tolist(), table.run.tolist(), unit.tolist(),
                              strict=True)):
        by_key.setdefault(k, []).append(i)
    # The columns as lists, read run by run: indexing the arrays run by run made this 9.4 s for a 200 000-run
    # hyperfine export, 4.7 s so (2-CPU VM). The sides' sums stay numpy's (its rounding, as before).
    side, index = table.side.tolist(), table.index.tolist()
    plans = []
    for position, ((bench, method, run, sides), rows) in enumerate(by_key.items()):
        rows.sort(key=lambda i: (side[i] == "B", index[i]))  # A's iterations, then B's, each in order
        present = tuple(dict.fromkeys(side[i] for i in rows)) if method != "sequential" else (sides,)
        plans.append(PlannedRun(position=position, benchmark=bench, method=method, repetition=run, sides=present,
                                cpus={}))
    return plans, _records(table, now, plans, list(by_key.values()))


def _records(table: IterationTable, now: float, plans: list[PlannedRun], grouped: list[list[int]]
             ) -> Iterator[RunRecord]:
    side, index, start_ns, end_ns = (table.side.tolist(), table.index.tolist(), table.start_ns.tolist(),
                                     table.end_ns.tolist())
    value, warmup = table.value, table.warmup.tolist()
    for plan, rows in zip(plans, grouped, strict=True):
        start, end = [start_ns[i] for i in rows], [end_ns[i] for i in rows]
        clock = "epoch" if all(a != NO_TIME and b != NO_TIME for a, b in zip(start, end, strict=True)) else "none"
        iterations = [StoredIteration(side=side[i], seq=index[i], name="", value_s=float(value[i]),
                                      start_ns=None if clock == "none" else a, end_ns=None if clock == "none" else b,
                                      warmup=warmup[i])
                      for i, a, b in zip(rows, start, end, strict=True)]
        side_records = {}
        for s in plan.sides:
            mine = [k for k, i in enumerate(rows) if side[i] == s]
            side_records[s] = _side(s, plan.repetition, value[[rows[k] for k in mine]], [start[k] for k in mine],
                                    [end[k] for k in mine])
        yield RunRecord(id=0, key=plan.key, position=plan.position, benchmark=plan.benchmark, method=plan.method,
                        repetition=plan.repetition, launch_order="".join(plan.sides), status="ok", error="",
                        started=now, finished=now, run_dir="", clock=clock, notes=[NOTE], sides=side_records,
                        iterations=iterations)


def _forget(store: Store, campaign_id: int) -> None:
    """Delete a campaign and everything stored for it, in one transaction."""
    runs = select(schema.runs.c.id).where(schema.runs.c.campaign_id == campaign_id).scalar_subquery()
    with store.errors(), write_transaction(store.engine) as conn:
        conn.execute(schema.iterations.delete().where(schema.iterations.c.run_id.in_(runs)))
        conn.execute(schema.run_sides.delete().where(schema.run_sides.c.run_id.in_(runs)))
        conn.execute(schema.runs.delete().where(schema.runs.c.campaign_id == campaign_id))
        conn.execute(schema.campaigns.delete().where(schema.campaigns.c.id == campaign_id))


def store_imported(db: Path | str | Store, imported: Imported, *, name: str, command: str = "") -> int:
    """Store `imported` as a new finished campaign named `name`; return its id.

    `command` (the import command line) is kept as the campaign's source text, so the campaign says
    how it was made."""
    store = db if isinstance(db, Store) else Store(db)
    try:
        campaigns = CampaignStore(store)
        now = time.time()
        plans, runs = _runs(imported.table, now)
        source = {"format": imported.format, "files": list(imported.files), "metadata": imported.metadata,
                  "notes": list(imported.notes), "command": command}
        campaign_id = campaigns.begin(
            name=name, path=" ".join(imported.files), source_sha256=_sha256(imported.files),
            source_text=json.dumps(source, indent=1, default=str), seed=0, schedule="imported",
            plan=[p.to_json() for p in plans], run_dir="", options={"imported": imported.format},
            host={"imported_from": imported.format}, tool_version=__version__)
        try:
            campaigns.add_runs(campaign_id, runs)
            campaigns.set_status(campaign_id, "finished")
        except BaseException:
            # Ctrl-C (or a full disk) halfway: A's runs without B's would be the latest campaign, analysed by
            # `duet analyze` as if it were the import. Nothing was printed for it, so nothing refers to it.
            # Its own failure (the disk still full) must not hide why the import stopped.
            with contextlib.suppress(Exception):
                _forget(store, campaign_id)
            raise
        return campaign_id
    finally:
        if not isinstance(db, Store):
            store.close()
