"""Dividing a campaign's plan among the tasks of an array job (pure functions)."""
from __future__ import annotations

from collections.abc import Sequence

from duetbench.plan.campaign import PlannedRun

SPLITS = ("slices", "benchmark")


def split_plan(plan: Sequence[PlannedRun], tasks: int, how: str = "slices") -> list[list[PlannedRun]]:
    """The runs each task executes, every run in exactly one task, each share in plan order.

    ``slices``: ``tasks`` contiguous slices of the planned order, sizes differing by at most one. The
    plan is already shuffled (RMIT), so each slice is a random sample of all benchmarks and methods,
    in the order the plan chose. ``benchmark``: one task per benchmark (``tasks`` is ignored): every run
    of a benchmark on the same node, so its A and B runs of the sequential method are comparable even
    when the nodes are not identical. Empty shares are dropped.
    """
    if how not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {how!r}")
    runs = sorted(plan, key=lambda r: r.position)
    if how == "benchmark":
        shares: dict[str, list[PlannedRun]] = {}
        for run in runs:
            shares.setdefault(run.benchmark, []).append(run)
        return list(shares.values())
    if tasks < 1:
        raise ValueError(f"tasks must be at least 1, got {tasks}")
    size, extra = divmod(len(runs), tasks)
    out: list[list[PlannedRun]] = []
    start = 0
    for k in range(tasks):
        end = start + size + (1 if k < extra else 0)
        if end > start:
            out.append(runs[start:end])
        start = end
    return out
