"""The runner's work beside the warm-up (`RunSettings.during_warmup`) and its reuse of steal readings:
the task runs on a thread while the first warm-up unit runs and is over before anything measured
starts (issue 17: the orchestrator imports the statistics there instead of after the warm-up)."""
from __future__ import annotations

import os
import threading
import time

import pytest

from duetbench.execute import noise
from duetbench.execute.invocation import Invocation
from duetbench.execute.runner import Runner, RunSettings

CPUS = sorted(os.sched_getaffinity(0))


def _settings(method: str, **kw: object) -> RunSettings:
    if method != "sequential" and len(CPUS) < 2:
        pytest.skip(f"a {method} needs two CPUs; this machine lets us use {len(CPUS)}")
    cpus = (CPUS[0], CPUS[1]) if len(CPUS) > 1 else (CPUS[0], CPUS[0])
    # The warm-up lasts ~0.2 s (ample for the thread to start on a loaded machine), the task 0.6 s: it
    # outlives the warm-up, so the join is what keeps the measured units after it.
    argv = {"A": ["sleep", "0.2"], "B": ["sleep", "0.2"]}
    return RunSettings(method=method, argv=argv, cpus=cpus, seed=1, use_cgroups=False, **kw)  # type: ignore[arg-type]


def _run(settings: RunSettings, units: int = 2) -> tuple[str, list[Invocation]]:
    stored: list[Invocation] = []

    def more(measured: list[Invocation], elapsed: float) -> bool:
        return len(measured) < 2 * units

    outcome = Runner(settings, more, stored.append).run()
    return outcome.status, stored


@pytest.mark.parametrize("method", ["duet", "sequential", "aduet"])
def test_the_task_runs_beside_the_warmup_and_ends_before_anything_measured(method: str) -> None:
    seen: list[tuple[str, int, int]] = []

    def task() -> None:
        started = time.monotonic_ns()
        time.sleep(0.6)
        seen.append((threading.current_thread().name, started, time.monotonic_ns()))

    status, stored = _run(_settings(method, warmup=1, during_warmup=task))
    assert status == "complete"
    assert len(seen) == 1, "run once, however many warm-up units"
    name, started, ended = seen[0]
    assert name != threading.main_thread().name
    warmups = [inv for inv in stored if inv.warmup]
    measured = [inv for inv in stored if not inv.warmup]
    assert warmups and measured
    # it began while the first warm-up unit ran (started after it was released, before it ended) ...
    first = min(warmups, key=lambda inv: inv.start_ns)
    assert started < first.end_ns
    # ... and nothing measured started before it was over
    assert min(inv.start_ns for inv in measured) > ended


def test_without_a_warmup_the_task_is_not_run() -> None:
    ran: list[bool] = []
    status, stored = _run(_settings("sequential", warmup=0, during_warmup=lambda: ran.append(True)))
    assert status == "complete" and stored and ran == []


def test_a_failing_task_leaves_the_run_to_finish() -> None:
    def task() -> None:
        raise ImportError("no module named numpy")

    status, stored = _run(_settings("sequential", warmup=1, during_warmup=task))
    assert status == "complete"
    assert sum(not inv.warmup for inv in stored) == 4


def test_steal_is_read_again_unless_the_last_reading_is_fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[int] = []

    def fake() -> dict[int, float]:
        reads.append(1)
        return {0: float(len(reads))}

    clock = [100.0]
    monkeypatch.setattr(noise, "read_steal_seconds", fake)
    monkeypatch.setattr(noise.time, "monotonic", lambda: clock[0])
    steal = noise.StealReadings()
    assert steal.before() == {0: 1.0}  # nothing to reuse yet
    after = steal.after()
    assert after == {0: 2.0}
    clock[0] += noise.StealReadings.REUSE_WITHIN_S / 2
    assert steal.before() is after and len(reads) == 2  # the next unit starts right away: reused
    steal.after()
    clock[0] += noise.StealReadings.REUSE_WITHIN_S * 2
    assert steal.before() == {0: 4.0}  # a hook ran in between, say: read again


def test_what_the_comparisons_import_beside_the_warmup_exists() -> None:
    # Meanwhile swallows a failed import (the orchestrator meets it later itself): a misspelt name
    # here would silently import nothing early.
    import importlib.util

    from duetbench.usecases import compare, single

    for module in (*compare.AFTER_MEASURING, *single.AFTER_MEASURING):
        assert importlib.util.find_spec(module) is not None, module


@pytest.mark.parametrize("at_most", [None, 2])
def test_a_fixed_count_sends_no_pair_ahead_past_its_last(monkeypatch: pytest.MonkeyPatch, at_most: int | None) -> None:
    # The next pair is sent ahead (held at the gate) while the last one's answers are handled; with a
    # fixed count the runner knows there is none after the last, and withdrawing one cost ~3-5 ms (issue 17).
    withdrawn: list[int] = []
    original = Runner._withdraw

    def withdraw(self: Runner, held: object) -> None:
        withdrawn.append(1)
        original(self, held)  # type: ignore[arg-type]

    monkeypatch.setattr(Runner, "_withdraw", withdraw)
    settings = _settings("duet", warmup=1, pairs_at_most=at_most)
    settings.argv = {"A": ["true"], "B": ["true"]}
    status, stored = _run(settings, units=2)
    assert status == "complete"
    assert sum(not inv.warmup for inv in stored) == 4 and sum(inv.warmup for inv in stored) == 2
    assert withdrawn == ([1] if at_most is None else [])
