"""Several processes writing to one store at once: each run its own transaction, no id collisions,
nothing lost; and a new database opened (so migrated) by many processes at the same moment."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import func, select

from duetbench.store import schema
from duetbench.store.campaigns import CampaignStore
from duetbench.store.db import Store
from duetbench.store.migrations import HEAD
from store_samples import begin_campaign

HERE = Path(__file__).resolve().parent
WORKERS = 4


def start_together(db: str, tmp_path: Path, env: dict[str, str], jobs: list[list[str]],
                   while_running: Callable[[], None] | None = None) -> None:
    go = tmp_path / "go"
    env = dict(env, PYTHONPATH=f"{HERE}{os.pathsep}{env['PYTHONPATH']}")
    procs = [subprocess.Popen([sys.executable, str(HERE / "concurrent_writer.py"), db, str(go), *job], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for job in jobs]
    time.sleep(1.5)  # let every interpreter import and reach its wait for the go file
    go.touch()
    while while_running is not None and any(p.poll() is None for p in procs):
        while_running()
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err


def test_many_processes_open_a_new_database_at_once(db_location: str, tmp_path: Path,
                                                    duet_env: dict[str, str]) -> None:
    start_together(db_location, tmp_path, duet_env, [["open"] for _ in range(WORKERS)])
    store = Store(db_location)
    try:
        with store.engine.connect() as conn:
            versions = conn.execute(select(schema.schema_migrations.c.version)).scalars().all()
        assert versions == list(range(1, HEAD + 1))
    finally:
        store.close()


def test_concurrent_writers_of_one_campaign(db_location: str, tmp_path: Path, duet_env: dict[str, str]) -> None:
    count = 25
    store = Store(db_location)
    campaigns = CampaignStore(store)
    cid = begin_campaign(campaigns, "shared", uid="shared-campaign")
    seen: list[int] = []

    def read_meanwhile() -> None:
        """A reader (duet analyze, the Slurm follower) sees only whole runs while others write."""
        runs = campaigns.runs(cid)
        assert all(set(r.sides) == {"A", "B"} and len(r.iterations) == 6 for r in runs)
        seen.append(len(runs))

    try:
        start_together(db_location, tmp_path, duet_env,
                       [["runs", "shared-campaign", str(w), str(count)] for w in range(WORKERS)], read_meanwhile)
        assert seen, "the reader never ran while the writers wrote"
        runs = campaigns.runs(cid)
        assert len(runs) == WORKERS * count and len({r.id for r in runs}) == WORKERS * count
        assert campaigns.done_keys(cid) == {f"w{w}/duet/{i}" for w in range(WORKERS) for i in range(count)}
        for r in runs:  # every side and iteration landed with its own run
            worker, i = int(r.key[1:].split("/")[0]), int(r.key.rsplit("/", 1)[1])
            assert r.position == worker * 1000 + i and r.sides["A"].index == r.position
            assert [it.value_s for it in r.iterations if it.side == "A"] == [worker + 1.0, i + 1.0, 0.5]
        with store.engine.connect() as conn:
            assert conn.execute(select(func.count()).select_from(schema.iterations)).scalar() == WORKERS * count * 6
        if not str(db_location).startswith("postgres"):
            return  # SQLite serializes writers: one that keeps getting the lock may store its runs in a block
        # the writers really overlapped: in id order, their runs interleave instead of coming in blocks
        writers = [int(r.key[1:].split("/")[0]) for r in sorted(runs, key=lambda r: r.id)]
        assert sum(a != b for a, b in zip(writers, writers[1:])) > WORKERS - 1, writers
    finally:
        store.close()
