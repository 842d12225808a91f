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


def test_a_longer_duet_gives_every_invocation_its_windows_record(duet, tmp_path: Path) -> None:
    """Past ACTIVITY_EVERY_PAIR_UP_TO pairs a window spans several pairs and closes beside a pair's later
    side; the records of the pairs stored before it closed are written afterwards. All arrive."""
    result = duet("compare", "sleep 0.002", "sleep 0.003", "--method", "duet", "--runs", "40", "--no-progress")
    assert result.returncode == 0, result.stdout + result.stderr
    with sqlite3.connect(tmp_path / ".duet" / "results.db") as conn:
        rows = conn.execute("SELECT activity FROM invocations").fetchall()
    assert len(rows) >= 80 and all(activity is not None for (activity,) in rows)


def test_a_window_spans_enough_pairs_to_keep_snapshots_cheap_per_pair(monkeypatch: pytest.MonkeyPatch) -> None:
    """A snapshot costs ~2 ms; at most ACTIVITY_MAX_PER_PAIR_S of it per pair means a window of ten or more
    pairs even when the pairs are long (100 ms commands closed one every other pair at 1 % of the time)."""
    from duetbench.execute import noise

    clock = [0.0]
    snaps = []

    def fake_snapshot() -> object:
        clock[0] += 0.002  # each snapshot takes 2 ms
        snaps.append(clock[0])
        return object()

    monkeypatch.setattr(noise, "snapshot", fake_snapshot)
    monkeypatch.setattr(noise.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(noise, "activity_delta", lambda before, after: [])
    windows = noise.NoiseWindows(None)
    for _ in range(100):  # 100 pairs of 100 ms
        windows.open()
        clock[0] += 0.1
        windows.add([])
    per_window = 100 / (len(snaps) - 1)
    assert per_window >= 0.002 / noise.ACTIVITY_MAX_PER_PAIR_S, snaps
    assert len(snaps) >= 3  # still closes: the attribution stays per window of pairs, not per comparison
