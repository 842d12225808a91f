"""Comparisons and campaigns whose orchestrator died while they were ``running``.

A record is begun as ``running`` with its orchestrator's identity (`Owner`: pid, start time, host, boot)
in its ``options``; the orchestrator sets the final status as it ends. Killed with SIGKILL it never
does, so every store opened later looks for ``running`` records whose owner is known to be gone and
marks them ``orchestrator died`` (what each one measured stays stored: every invocation and run was
committed as it finished). Records from another host or boot, or without an owner (older versions,
Slurm campaigns followed from elsewhere), are never judged.
"""
from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from duetbench.execute.owner import Owner

if TYPE_CHECKING:
    from duetbench.store.db import Store

OWNER_KEY = "orchestrator"
DIED = "orchestrator died"


def with_owner(options: dict[str, Any]) -> dict[str, Any]:
    """`options` plus this process as the record's orchestrator."""
    return {**options, OWNER_KEY: Owner.me().to_json()}


def mark_dead(store: Store) -> list[str]:
    """Mark the ``running`` records of dead orchestrators; one description per record marked."""
    from sqlalchemy import select

    from duetbench.store import schema
    from duetbench.store.connect import write_transaction

    def running(table_name: str) -> list[tuple[int, str | None]]:
        table = getattr(schema, table_name)
        with store.engine.connect() as conn:
            return [(r[0], r[1]) for r in conn.execute(select(table.c.id, table.c.options)
                                                       .where(table.c.status == "running")).all()]

    def mark(table_name: str, record_id: int) -> bool:
        table = getattr(schema, table_name)
        with write_transaction(store.engine) as conn:
            done = conn.execute(table.update().where((table.c.id == record_id) & (table.c.status == "running"))
                                .values(status=DIED, finished=time.time()))
        return bool(done.rowcount)

    return mark_dead_records(running, mark)


def mark_dead_records(running: Callable[[str], list[tuple[int, str | None]]],
                      mark: Callable[[str, int], bool]) -> list[str]:
    """`mark_dead` on any database: `running(table)` lists a table's ``running`` records (id, options),
    `mark(table, id)` marks one `DIED` unless it is no longer running, and tells whether it did."""
    marked: list[str] = []
    for table_name, what in (("comparisons", "comparison"), ("campaigns", "campaign")):
        for record_id, options in running(table_name):
            try:
                owner = Owner.from_json(json.loads(options or "{}").get(OWNER_KEY))
            except (ValueError, AttributeError):
                continue
            if owner is None or not owner.dead():
                continue
            if mark(table_name, record_id):
                marked.append(f"{what} #{record_id} (its duet process {owner.pid} ended without finishing it)")
    return marked


def claim(store: Store, table_name: str, record_id: int) -> None:
    """Make this process the orchestrator of a record it continues (``duet run --resume``)."""
    from sqlalchemy import select

    from duetbench.store import schema
    from duetbench.store.connect import write_transaction

    table = getattr(schema, table_name)
    with write_transaction(store.engine) as conn:
        options = conn.execute(select(table.c.options).where(table.c.id == record_id)).scalar()
        data = with_owner(json.loads(options or "{}"))
        conn.execute(table.update().where(table.c.id == record_id).values(options=json.dumps(data), status="running",
                                                                         finished=None))
