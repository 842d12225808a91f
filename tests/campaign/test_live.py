"""Following iteration logs while a run runs (dynamic warmup): the decision, from a log written line by line."""
from __future__ import annotations

import math
import os
import select
from pathlib import Path

from duetbench.analyze.stopping import StoppingParams
from duetbench.execute.live import Inotify, LiveWarmup


def line(side: str, i: int, start: int, duration_ns: int) -> str:
    return f"{side} {i} {start} {start + duration_ns} m\n"


def test_decides_warmup_then_waits_for_mi_iterations(tmp_path: Path) -> None:
    logs = {s: tmp_path / f"{s}.log" for s in "AB"}
    live = LiveWarmup(StoppingParams(criterion="cv", mi=10, wi_max=40), logs)
    t = 0
    stop_at = None
    for i in range(200):
        for side, f in logs.items():
            d = int(1e6 * (1 + 3 * math.exp(-i / 3)))  # warming up, then flat
            with f.open("a") as out:
                out.write(line(side, i, t, d))
        t += 2_000_000
        if live.update():
            stop_at = i + 1
            break
    assert live.decision is not None and live.decision.stable
    assert 5 <= live.decision.warmup_iterations <= 40
    assert stop_at == live.decision.warmup_iterations + 10
    assert "adaptive warmup (cv)" in live.note()


def test_partial_lines_wait_for_their_newline(tmp_path: Path) -> None:
    log = tmp_path / "A.log"
    live = LiveWarmup(StoppingParams(criterion="cv", mi=5), {"A": log})
    log.write_text("A 0 100 200 m\nA 1 300 4")
    live.update()
    assert live.followers["A"].values == [1e-7]
    with log.open("a") as f:
        f.write("00 m\n")
    live.update()
    assert live.followers["A"].values == [1e-7, 1e-7]


def test_inotify_wakes_on_log_writes_only(tmp_path: Path) -> None:
    log, other = tmp_path / "iterations.log", tmp_path / "stdout.txt"
    other.write_text("")  # the harness's stdout exists from the start, as in a run
    watch = Inotify([log])
    if watch.fd is None:
        return  # no inotify here: the live wait falls back to a 100 ms poll (tested through duet run)
    poller = select.poll()
    poller.register(watch.fd, select.POLLIN)
    with other.open("a") as f:
        f.write("iteration 0: 0.1 s\n")
    assert poller.poll(50) == []  # the harness writing its stdout does not wake us
    log.write_text("A 0 1 2 m\n")  # creation
    assert poller.poll(500)
    watch.drain()
    with log.open("a") as f:
        f.write("A 1 3 4 m\n")
    assert poller.poll(500)
    watch.close()
    assert os.path.exists(log)
