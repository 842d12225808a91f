"""table_analysis: the estimators of `duet analyze` on seeded simulations with a known ratio."""
from __future__ import annotations

import msgspec
import numpy as np
import pytest

from duetbench.analyze.tables import AnalysisOptions, analyze_table
from duetbench.model.table import IterationTable, discard_leading

TRUTH = 1.04


def simulated(seed: int, runs: int = 12, iterations: int = 25) -> IterationTable:
    """duet, aduet and sequential runs of one benchmark: run effects, interference shared by duet pairs."""
    rng = np.random.default_rng(seed)
    cols: dict[str, list] = {k: [] for k in ("benchmark", "method", "run", "side", "index", "value", "start_ns",
                                             "end_ns", "warmup")}

    def add(method: str, run: int, side: str, values: np.ndarray, starts: np.ndarray) -> None:
        n = values.size
        cols["benchmark"] += ["b"] * n
        cols["method"] += [method] * n
        cols["run"] += [run] * n
        cols["side"] += [side] * n
        cols["index"] += list(range(n))
        cols["value"] += list(values)
        cols["start_ns"] += list(starts)
        cols["end_ns"] += list(starts + (values * 1e9).astype(np.int64))
        cols["warmup"] += [False] * n

    for r in range(runs):
        for method in ("duet", "aduet"):
            level = rng.lognormal(0, 0.05)
            shared = rng.lognormal(0, 0.1, iterations)
            a = 0.01 * level * shared * rng.lognormal(0, 0.01, iterations)
            b = 0.01 * TRUTH * level * shared * rng.lognormal(0, 0.01, iterations)
            # both sides start each iteration together (sync duet) / run back to back (aduet, similar lengths)
            starts_a = np.cumsum(np.r_[0, (np.maximum(a, b) * 1e9).astype(np.int64)[:-1] + 1000]) if method == "duet" \
                else np.cumsum(np.r_[0, (a * 1e9).astype(np.int64)[:-1]])
            starts_b = starts_a if method == "duet" else np.cumsum(np.r_[0, (b * 1e9).astype(np.int64)[:-1]])
            add(method, r, "A", a, starts_a)
            add(method, r, "B", b, starts_b)
        for side, scale in (("A", 1.0), ("B", TRUTH)):
            values = 0.01 * scale * rng.lognormal(0, 0.03) * rng.lognormal(0, 0.05, iterations)
            add("sequential", r, side, values, np.full(iterations, -1))
    return IterationTable.from_columns(**cols)


@pytest.mark.parametrize("estimator", ["auto", "run-means", "hierarchical", "merged"])
def test_every_estimator_covers_the_truth(estimator: str) -> None:
    rows = analyze_table(simulated(1), AnalysisOptions(estimator=estimator, n_resamples=4000, seed=1))
    assert [(r.benchmark, r.method) for r in rows] == [("b", "sequential"), ("b", "duet"), ("b", "aduet")]
    for row in rows:
        assert row.result is not None, row.problem
        assert row.result.ratio.low < TRUTH < row.result.ratio.high, (row.method, row.result.ratio)
    duet = next(r for r in rows if r.method == "duet").result
    seq = next(r for r in rows if r.method == "sequential").result
    assert duet.relative_ci_width < seq.relative_ci_width  # the shared interference cancels in the pairs


def test_merged_is_narrower_than_run_means_when_runs_differ() -> None:
    t = simulated(2)
    merged = analyze_table(t, AnalysisOptions(estimator="merged", methods=("sequential",), n_resamples=4000))[0]
    runs = analyze_table(t, AnalysisOptions(estimator="run-means", methods=("sequential",), n_resamples=4000))[0]
    assert merged.result.relative_ci_width < runs.result.relative_ci_width


def test_filters_warmup_and_winsorize() -> None:
    t = simulated(3, runs=4, iterations=10)
    rows = analyze_table(t, AnalysisOptions(methods=("duet",), warmup_fraction=0.2, winsorize=True, n_resamples=1000))
    assert len(rows) == 1 and rows[0].iterations_a == 4 * 8
    assert analyze_table(t, AnalysisOptions(benchmarks=("x*",))) == []
    marked = discard_leading(t, count=3)
    assert int(marked.warmup.sum()) == 3 * 4 * 2 * 3  # 3 per run side: 4 runs x 2 sides x 3 methods


def test_aduet_without_timestamps_is_a_problem_not_a_crash() -> None:
    t = simulated(4, runs=3, iterations=6)
    no_time = msgspec.structs.replace(t, start_ns=np.full(len(t), -1), end_ns=np.full(len(t), -1))
    rows = {r.method: r for r in analyze_table(no_time, AnalysisOptions(n_resamples=1000))}
    assert rows["aduet"].result is None and "timestamps" in rows["aduet"].problem
    assert rows["duet"].result is not None


def test_bad_options() -> None:
    with pytest.raises(ValueError, match="estimator"):
        analyze_table(simulated(5, 2, 4), AnalysisOptions(estimator="bayes"))
    with pytest.raises(ValueError, match="method"):
        analyze_table(simulated(5, 2, 4), AnalysisOptions(methods=("parallel",)))


def test_duet_pairs_by_iteration_index_when_one_side_lost_an_iteration() -> None:
    """Iteration k of A goes with iteration k of B of the same run (the barrier started them together);
    a lost A iteration costs one pair, it does not shift the rest (duet analyze and the studies agree)."""
    a = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    rows: dict[str, list] = {"benchmark": [], "method": [], "run": [], "side": [], "index": [], "value": []}
    for run in range(3):
        for side, values in (("A", a), ("B", 1.1 * a)):
            keep = [i for i in range(a.size) if not (run == 0 and side == "A" and i == 1)]
            rows["benchmark"] += ["b"] * len(keep)
            rows["method"] += ["duet"] * len(keep)
            rows["run"] += [run] * len(keep)
            rows["side"] += [side] * len(keep)
            rows["index"] += keep
            rows["value"] += [values[i] for i in keep]
    [row] = analyze_table(IterationTable.from_columns(**rows), AnalysisOptions(n_resamples=500, robust=False))
    assert row.result is not None, row.problem
    # Every pair's ratio is exactly 1.1; pairing by position would mix iterations 2..4 of A with 1..3 of B.
    assert row.result.ratio.estimate == pytest.approx(1.1)
    assert row.result.ratio.low == pytest.approx(1.1) and row.result.ratio.high == pytest.approx(1.1)
