"""The analysis on data a statistician would worry about: zero variance, ties, two or three runs, values
from 1 ns to 1000 s, levels near 1. Whatever the data, a row is a result with low <= estimate <= high (an
unbounded end is inf, never NaN) and a verdict that agrees with it, or a one-line problem without "nan";
and no numpy warning reaches the user's terminal. The statistics themselves are checked by simulation
elsewhere (test_interval_simulation.py); here only their edges."""
from __future__ import annotations

import math
import warnings

import numpy as np
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from duetbench.analyze.choice import choose_from_runs
from duetbench.analyze.interval import fieller_ratio
from duetbench.analyze.ratio import RatioResult
from duetbench.analyze.tables import AnalysisOptions, analyze_table
from duetbench.analyze.verdicts import describe_change, verdict
from duetbench.model.table import IterationTable

TIMES = st.one_of(st.sampled_from([1e-9, 1e-3, 0.01, 0.010000001, 1.0, 1e3]),
                  st.floats(min_value=1e-9, max_value=1e3, allow_nan=False, allow_infinity=False))


def table(method: str, a_runs: list[list[float]], b_runs: list[list[float]]) -> IterationTable:
    """A's and B's runs (lists of iteration times) of one benchmark; the k-th iterations of A and B of a run
    start together (a duet's pairs; the async duet pairs them by these times)."""
    cols: dict[str, list] = {k: [] for k in ("benchmark", "method", "run", "side", "index", "value", "start_ns",
                                             "end_ns")}
    for side, runs in (("A", a_runs), ("B", b_runs)):
        for r, values in enumerate(runs):
            start = 10**13 * (r + 1)
            for i, v in enumerate(values):
                for key, x in (("benchmark", "b"), ("method", method), ("run", r), ("side", side), ("index", i),
                               ("value", v), ("start_ns", start), ("end_ns", start + max(1, int(v * 1e9)))):
                    cols[key].append(x)
                start += 2 * 10**12
    return IterationTable.from_columns(**cols)


@st.composite
def campaigns(draw: st.DrawFn) -> IterationTable:
    method = draw(st.sampled_from(["sequential", "duet", "aduet"]))
    runs, iterations = draw(st.integers(1, 6)), draw(st.integers(1, 4))
    constant = draw(st.sampled_from([None, draw(TIMES)]))

    def side() -> list[list[float]]:
        return [[constant if constant is not None else draw(TIMES) for _ in range(iterations)] for _ in range(runs)]

    return table(method, side(), side())


def check_rows(rows: list) -> None:  # type: ignore[type-arg]
    for row in rows:
        if row.result is None:
            assert row.problem and "nan" not in row.problem.lower(), row.problem
            continue
        q = row.result.ratio
        assert not any(math.isnan(x) for x in (q.estimate, q.low, q.high)), q
        assert 0 <= q.low <= q.estimate <= q.high, q
        assert row.result.verdict == verdict(q.low, q.high)
        assert "nan" not in describe_change(q).lower()


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(campaigns(), st.sampled_from(["auto", "run-means", "hierarchical", "merged"]), st.booleans(),
       st.sampled_from(["t", "bootstrap"]), st.sampled_from([0.5, 0.99, 0.99999]))
# Two duet runs whose pair ratios are 1.0 and 1.2, at 99.999 %: the t interval's upper end is e^5800, which
# math.exp could not make (OverflowError, a traceback of duet analyze); it is an unbounded end.
@example(table("duet", [[0.010], [0.010]], [[0.010], [0.012]]), "auto", False, "t", 0.99999)
def test_every_row_is_an_ordered_interval_or_a_reason(data: IterationTable, estimator: str, winsorize: bool,
                                                      interval: str, level: float) -> None:
    opts = AnalysisOptions(n_resamples=200, estimator=estimator, winsorize=winsorize, interval=interval,
                           confidence_level=level)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_rows(analyze_table(data, opts))


def test_an_interval_beyond_the_float_range_is_unbounded_above() -> None:
    (row,) = analyze_table(table("duet", [[0.010], [0.010]], [[0.010], [0.012]]),
                           AnalysisOptions(confidence_level=0.99999))
    assert row.result is not None and row.result.ratio.high == math.inf
    assert row.result.verdict == "no difference" and "CI unbounded" in describe_change(row.result.ratio)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.5, 2.0), min_size=2, max_size=8), st.lists(st.floats(0.5, 2.0), min_size=2, max_size=8),
       st.sampled_from([1e-170, 1e-9, 1e9, 1e170]))
# Times of 1e-170 s: the squares underflowed to 0, so mean(A) looked no different from 0 and Fieller's
# interval came out unbounded ([0, inf)) for two clearly different samples; above 1e154 they overflowed to
# inf - inf = NaN, and duet analyze said "verdict needs a finite lower CI bound and no NaN, got low=nan".
@example([1.0, 1.01, 0.99, 1.0, 1.02, 0.98], [1.1, 1.11, 1.09, 1.1, 1.12, 1.08], 1e-170)
@example([1.0, 1.01, 0.99, 1.0, 1.02, 0.98], [1.1, 1.11, 1.09, 1.1, 1.12, 1.08], 1e170)
def test_fieller_is_the_same_in_any_unit(a: list[float], b: list[float], scale: float) -> None:
    x, y = np.array(a), np.array(b)
    unit, scaled = fieller_ratio(x, y, 0.99), fieller_ratio(x * scale, y * scale, 0.99)
    for got, want in ((scaled.estimate, unit.estimate), (scaled.low, unit.low), (scaled.high, unit.high)):
        assert got == want or math.isclose(got, want, rel_tol=1e-9), (scaled, unit)


def test_auto_choice_of_runs_of_one_iteration_says_it_could_not_judge() -> None:
    # `duet run` with methods {auto: N} and a harness timing one iteration per run: no pilot had two units.
    # The reason read "pair ratios of the duet varied inf%, sequential rounds inf%; ... narrower (its pilot
    # did not vary at all)", the opposite of what happened.
    one, three = np.array([0.010]), np.array([0.010, 0.011, 0.012])
    neither = choose_from_runs([(one, one)], 1.0, [(one, one)], 2.0)
    assert neither.method == "duet" and "inf" not in neither.reason and "did not vary" not in neither.reason
    assert "no two units" in neither.reason
    only_sequential = choose_from_runs([(one, one)], 1.0, [(three, three[::-1])], 2.0)
    assert only_sequential.method == "sequential" and "inf" not in only_sequential.reason
    assert "did not vary" not in only_sequential.reason and "duet's had fewer than 2 units" in only_sequential.reason


@settings(max_examples=200, deadline=None)
@given(st.floats(0.9, 1.1), st.floats(1e-6, 0.05), st.floats(1e-6, 0.05))
@example(1.007, 1.007 - 0.9996, 1.021 - 1.007)  # "no difference (B/A = 1.007, 99% CI 0.0%…+2.1%)"
def test_the_words_of_a_ci_show_on_which_side_of_1_its_ends_lie(estimate: float, below: float, above: float) -> None:
    low, high = estimate - below, estimate + above
    text = describe_change(RatioResult(estimate, low, high, 0.99, 5))
    if verdict(low, high) == "no difference" and low < 1.0 - 5e-7:  # 4 decimals of a percent show it
        assert "CI \u2212" in text, text
    if verdict(low, high) == "slower":
        shown = text.split("CI ")[1].split("%")[0]
        assert float(shown) > 0 or low - 1.0 < 5e-7, text
