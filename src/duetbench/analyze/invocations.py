"""From stored invocations to statistics: selects what enters the analysis and calls ``analyze``.

Kept apart from ``analyze`` (pure functions on arrays) and from the runner, because the live progress,
the final report and ``duet show`` must all judge the same invocations the same way.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from duetbench.analyze.comparison import ComparisonResult, compare
from duetbench.execute.invocation import Invocation

METRICS = ("wall", "cpu")


@dataclass(frozen=True)
class Samples:
    a: np.ndarray
    b: np.ndarray
    a_start: np.ndarray | None = None
    a_end: np.ndarray | None = None
    b_start: np.ndarray | None = None
    b_end: np.ndarray | None = None


def _value(inv: Invocation, metric: str) -> float:
    return inv.wall_s if metric == "wall" else inv.cpu_s


def usable(invocations: list[Invocation]) -> list[Invocation]:
    """Measured (not warmup) invocations that completed; failures kept with --ignore-failure count too,
    since the user asked to time them anyway."""
    return [i for i in invocations if not i.warmup and i.status in ("ok", "failed") and i.wall_s > 0]


def samples(method: str, invocations: list[Invocation], metric: str) -> Samples:
    good = usable(invocations)
    if method == "duet":
        by_pair: dict[int, dict[str, Invocation]] = {}
        for inv in good:
            by_pair.setdefault(inv.pair, {})[inv.side] = inv
        pairs = [p for _, p in sorted(by_pair.items()) if "A" in p and "B" in p]
        return Samples(np.array([_value(p["A"], metric) for p in pairs]),
                       np.array([_value(p["B"], metric) for p in pairs]))
    a = [i for i in good if i.side == "A"]
    b = [i for i in good if i.side == "B"]
    if method == "aduet":
        return Samples(np.array([_value(i, metric) for i in a]), np.array([_value(i, metric) for i in b]),
                       np.array([i.start_ns for i in a], dtype=np.int64), np.array([i.end_ns for i in a], dtype=np.int64),
                       np.array([i.start_ns for i in b], dtype=np.int64), np.array([i.end_ns for i in b], dtype=np.int64))
    return Samples(np.array([_value(i, metric) for i in a]), np.array([_value(i, metric) for i in b]))


def measured_runs(method: str, invocations: list[Invocation]) -> int:
    """Completed runs so far: pairs for a duet, the smaller side's count otherwise."""
    s = samples(method, invocations, "wall")
    return int(min(len(s.a), len(s.b)))


def evaluate(method: str, invocations: list[Invocation], metric: str, *, confidence_level: float,
             n_resamples: int, seed: int, min_overlap_rate: float = 0.4,
             robust: bool = True, u_test: bool = True, interval: str = "t") -> ComparisonResult:
    s = samples(method, invocations, metric)
    return compare(method, s.a, s.b, metric=metric, a_start=s.a_start, a_end=s.a_end, b_start=s.b_start,
                   b_end=s.b_end, confidence_level=confidence_level, n_resamples=n_resamples,
                   random_state=seed, min_overlap_rate=min_overlap_rate, robust=robust, u_test=u_test,
                   interval=interval)
