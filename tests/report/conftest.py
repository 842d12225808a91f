"""Synthetic campaigns for the HTML report tests: iteration tables shaped like `duet run` stores them."""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest

from duetbench.analyze.comparison import ComparisonResult
from duetbench.model.table import IterationTable
from duetbench.report.html import _estimate

Rows = list[tuple[str, str, ComparisonResult | None, str]]


def synthetic_table(benchmarks: Sequence[str], methods: Sequence[str] = ("sequential", "duet", "aduet"), *,
                    runs: int = 6, iterations: int = 30, ratio: float = 1.05, warmup: int = 2,
                    seed: int = 1) -> IterationTable:
    """Lognormal iterations with a per-run effect shared by both sides of a duet run and B = A·ratio.

    Timestamps follow the methods: duet iterations of A and B start together (the barrier), aduet
    ones drift apart, sequential sides run one after the other."""
    rng = np.random.default_rng(seed)
    cols: dict[str, list] = {k: [] for k in ("benchmark", "method", "run", "side", "index", "value", "start_ns",
                                             "end_ns", "warmup")}
    clock = 1_000_000_000_000
    for b_i, bench in enumerate(benchmarks):
        base = 0.002 * (1 + b_i % 5)
        for method in methods:
            for run in range(runs):
                effect = rng.lognormal(0, 0.05)
                shared = rng.lognormal(0, 0.03, iterations)  # synchronized interference hits both sides
                values = {side: base * effect * (ratio if side == "B" else 1.0) * shared
                          * rng.lognormal(0, 0.02, iterations) for side in ("A", "B")}
                ns = {side: (v * 1e9).astype(np.int64) for side, v in values.items()}
                gap = 20_000
                if method == "duet":  # the barrier: iteration i of both sides starts when both finished i-1
                    step = np.maximum(ns["A"], ns["B"]) + gap
                    starts = {side: clock + np.r_[0, np.cumsum(step)[:-1]] for side in ("A", "B")}
                else:
                    offset = {"A": 0, "B": 7_000 if method == "aduet" else int(ns["A"].sum() + 50 * gap)}
                    starts = {side: clock + offset[side] + np.r_[0, np.cumsum(ns[side] + gap)[:-1]]
                              for side in ("A", "B")}
                for side in ("A", "B"):
                    cols["benchmark"] += [bench] * iterations
                    cols["method"] += [method] * iterations
                    cols["run"] += [run] * iterations
                    cols["side"] += [side] * iterations
                    cols["index"] += list(range(iterations))
                    cols["value"] += values[side].tolist()
                    cols["start_ns"] += starts[side].tolist()
                    cols["end_ns"] += (starts[side] + ns[side]).tolist()
                    cols["warmup"] += [i < warmup for i in range(iterations)]
                clock = int(max(cols["end_ns"][-1], cols["end_ns"][-1 - iterations])) + 10_000_000
    return IterationTable.from_columns(**cols)


def results_for(table: IterationTable) -> Rows:
    """(benchmark, method, result, problem) as `duet report` gets them."""
    out: Rows = []
    for bench, method, rows in table.measured().groups():
        try:
            out.append((bench, method, _estimate(method, rows, 0.99, 2000, u_test=True), ""))
        except ValueError as exc:
            out.append((bench, method, None, str(exc)))
    return out


@pytest.fixture()
def make_table() -> Callable[..., IterationTable]:
    return synthetic_table


@pytest.fixture()
def make_results() -> Callable[[IterationTable], Rows]:
    return results_for
