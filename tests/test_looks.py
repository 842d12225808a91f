"""The live looks' schedule (analyze/looks.py): where it looks, and that it is late by at most its growth."""
from __future__ import annotations

import copy
import math

import pytest

from duetbench.analyze.looks import LOOK_GROWTH, LookSchedule


def looks(min_runs: int, up_to: int, start: int = 1) -> list[int]:
    s = LookSchedule(min_runs)
    return [n for n in range(start, up_to + 1) if s.due(n)]


def test_every_run_up_to_20_then_as_the_runs_grow() -> None:
    seen = looks(10, 100, start=10)
    assert seen[:11] == list(range(10, 21))
    assert seen[11:16] == [21, 23, 25, 27, 29]  # a step of 2 from 21
    assert 41 in seen and 42 not in seen and 43 not in seen and 44 in seen  # of 3 from 41


@pytest.mark.parametrize("min_runs", [2, 10, 30, 57])
def test_a_stop_is_late_by_at_most_the_growth(min_runs: int) -> None:
    # Whatever count a look after every run would have stopped at, the schedule's next look is at most
    # LOOK_GROWTH of the runs later (and one run, below 20).
    seen = looks(min_runs, 5000, start=min(min_runs, 10))
    assert min_runs in seen
    for earlier, later in zip(seen, seen[1:], strict=False):
        assert later - earlier <= max(1, math.ceil(earlier * LOOK_GROWTH))
    assert len(seen) < 200  # ~ln(5000/20)/ln(1.05) + 20, not 5000


@pytest.mark.parametrize("min_runs", [10, 30])
@pytest.mark.parametrize("asked", ["before", "after"])
def test_next_due_is_the_next_look(min_runs: int, asked: str) -> None:
    # The runner queues pairs up to next_due (usecases/compare.py `certain`), asking it both before the
    # stop rule looked at a pair just measured and after: either way it must be the very count at which
    # `due` says yes next. (Asked before, it once answered as if no look were due at that count: one
    # pair at a time between 21 and 40 runs, every other one looked at.)
    s = LookSchedule(min_runs)
    for n in range(9, 400):
        if asked == "after":
            s.due(n)
        probe = copy.deepcopy(s)
        probe.due(n)
        expected = next(m for m in range(n + 1, 1000) if probe.due(m))
        assert s.next_due(n) == expected, (n, s.last)
        s.due(n)
