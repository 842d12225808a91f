"""What tests of queued duet pairs share: a stop rule of a fixed count of pairs that queues them, and a record
of the batches the runner sends."""
from __future__ import annotations

import pytest

from duetbench.execute.runner import CertainRuns, Runner, StopRule
from duetbench.model.invocation import Invocation


def fixed_pairs(pairs: int) -> tuple[StopRule, CertainRuns]:
    """A stop rule of a fixed count of pairs (rounds), and how many more it is sure to ask for."""
    def go_on(measured: list[Invocation], elapsed: float) -> bool:
        return len(measured) < 2 * pairs

    def certain(measured: list[Invocation], elapsed: float) -> int:
        return max(1, pairs - len(measured) // 2)

    return go_on, certain


def record_batches(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """(first pair, count) of every queued batch the runner sends, as it sends them."""
    seen: list[tuple[int, int]] = []
    original = Runner._run_queued

    def record(self: Runner, first: int, count: int, *args: object) -> tuple[Invocation | None, int]:
        seen.append((first, count))
        return original(self, first, count, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(Runner, "_run_queued", record)
    return seen
