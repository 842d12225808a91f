"""Every invocation `duet compare` stores carries the other processes' activity during it (EMP noise
attribution), for every method — the asynchronous duet's per segment, filled in after its
overlapping invocations were stored."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest


@pytest.mark.parametrize("method", ["duet", "sequential", "aduet"])
def test_compare_stores_activity_with_every_invocation(duet, tmp_path: Path, method: str) -> None:
    result = duet("compare", "sleep 0.01", "sleep 0.012", "--method", method, "--runs", "6", "--warmup", "1",
                  "--no-progress")
    assert result.returncode == 0, result.stdout + result.stderr
    with sqlite3.connect(tmp_path / ".duet" / "results.db") as conn:
        rows = conn.execute("SELECT side, \"index\", activity FROM invocations").fetchall()
    assert len(rows) >= 14  # 1 warmup + 6 measured per side (aduet may run a few more)
    for side, index, activity in rows:
        assert activity is not None, (method, side, index)
        top = json.loads(activity)
        assert isinstance(top, list) and all({"pid", "comm", "cpu_ms"} <= set(p) for p in top)
        # our own process tree (the orchestrator, the launchers, the sleeps) is never noise
        assert not any(p["comm"] in ("duet-launch", "sleep") for p in top), top
