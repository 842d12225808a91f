"""Async duet: overlap pairing on hand-made and random timelines, and the aduet ratio CI."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from duetbench.analyze.overlap import OverlapPairs, aduet_ratio_ci, overlap_pairs, overlap_pairs_by_run


def _as_tuples(p: OverlapPairs) -> list[tuple[int, int, float, float]]:
    rows = zip(p.a_index, p.b_index, p.overlap_ns, p.overlap_rate, strict=True)
    return [(int(i), int(j), float(o), float(r)) for i, j, o, r in rows]


def _intervals(spans: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    return np.array([s for s, _ in spans], dtype=np.int64), np.array([e for _, e in spans], dtype=np.int64)


# --- hand-made timelines -------------------------------------------------------------------

def test_aligned_iterations_pair_one_to_one_and_touching_ones_do_not_overlap() -> None:
    a = _intervals([(0, 10), (10, 20), (20, 30)])
    p = overlap_pairs(*a, *a)
    assert _as_tuples(p) == [(0, 0, 10, 1.0), (1, 1, 10, 1.0), (2, 2, 10, 1.0)]
    assert p.overlap_ns.dtype == np.int64


def test_shifted_timeline_and_the_rate_threshold() -> None:
    a = _intervals([(0, 10), (10, 20), (20, 30)])
    b = _intervals([(3, 13), (13, 23), (23, 33)])
    assert _as_tuples(overlap_pairs(*a, *b)) == [(0, 0, 7, 0.7), (1, 1, 7, 0.7), (2, 2, 7, 0.7)]
    loose = overlap_pairs(*a, *b, min_overlap_rate=0.2)
    assert _as_tuples(loose) == [(0, 0, 7, 0.7), (1, 0, 3, 0.3), (1, 1, 7, 0.7), (2, 1, 3, 0.3), (2, 2, 7, 0.7)]
    assert len(overlap_pairs(*a, *b, min_overlap_rate=0.7)) == 0  # rate must exceed m


def test_unequal_counts() -> None:
    # One long A iteration against three short B ones: each overlap is 10, rate min(10/30, 10/10).
    a = _intervals([(0, 30)])
    b = _intervals([(0, 10), (10, 20), (20, 30)])
    assert len(overlap_pairs(*a, *b)) == 0
    p = overlap_pairs(*a, *b, min_overlap_rate=0.3)
    assert p.a_index.tolist() == [0, 0, 0] and p.b_index.tolist() == [0, 1, 2]
    assert p.overlap_rate == pytest.approx([1 / 3] * 3)
    # Five A, two B, with gaps; B's second iteration starts while A's fourth runs.
    a = _intervals([(0, 4), (5, 9), (10, 14), (15, 19), (20, 24)])
    b = _intervals([(1, 8), (16, 30)])
    assert _as_tuples(overlap_pairs(*a, *b, min_overlap_rate=0.0)) == [
        (0, 0, 3, 3 / 7), (1, 0, 3, 3 / 7), (3, 1, 3, 3 / 14), (4, 1, 4, 4 / 14)
    ]


def test_no_overlap_and_empty_sides() -> None:
    p = overlap_pairs(*_intervals([(0, 10)]), *_intervals([(20, 30)]))
    assert len(p) == 0 and p.a_index.size == p.b_index.size == 0
    assert len(overlap_pairs([], [], [0], [5])) == 0


def test_unsorted_input_maps_back_to_caller_indices() -> None:
    a_start, a_end = np.array([20, 0, 10]), np.array([30, 10, 20])
    b_start, b_end = np.array([10, 20, 0]), np.array([20, 30, 10])
    p = overlap_pairs(a_start, a_end, b_start, b_end)
    assert list(zip(p.a_index.tolist(), p.b_index.tolist(), strict=True)) == [(0, 1), (1, 2), (2, 0)]


def test_float_timestamps_are_accepted() -> None:
    p = overlap_pairs([0.0, 1.0], [1.0, 2.0], [0.5], [1.5], min_overlap_rate=0.0)
    assert p.overlap_ns == pytest.approx([0.5, 0.5])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (([0, 10], [10, 10], [0], [5]), "a iteration 1 ends"),
        (([0, 5], [10, 15], [0], [5]), "a iterations 0 and 1 overlap each other"),
        (([0], [10, 20], [0], [5]), "equal length"),
        (([0.0], [float("nan")], [0], [5]), "non-finite"),
    ],
)
def test_bad_timelines(args: tuple[list[float], ...], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        overlap_pairs(*args)


# --- random timelines against a brute-force reference --------------------------------------

def _timeline(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    spans = draw(st.lists(st.tuples(st.integers(0, 6), st.integers(1, 12)), max_size=12))
    start, end, t = [], [], draw(st.integers(0, 10))
    for gap, length in spans:
        t += gap
        start.append(t)
        end.append(t + length)
        t += length
    order = draw(st.permutations(range(len(start))))
    return np.array(start, dtype=np.int64)[list(order)], np.array(end, dtype=np.int64)[list(order)]


@st.composite
def timelines(draw: st.DrawFn) -> tuple[np.ndarray, ...]:
    return (*_timeline(draw), *_timeline(draw))


@settings(max_examples=300, deadline=None)
@given(timelines(), st.sampled_from([0.0, 0.2, 0.4, 0.7]))
def test_matches_brute_force(t: tuple[np.ndarray, ...], m: float) -> None:
    a_s, a_e, b_s, b_e = t
    expected = []
    for i in range(a_s.size):
        for j in range(b_s.size):
            ov = min(a_e[i], b_e[j]) - max(a_s[i], b_s[j])
            if ov > 0:
                rate = min(ov / (a_e[i] - a_s[i]), ov / (b_e[j] - b_s[j]))
                if rate > m:
                    expected.append((i, j, float(ov), rate))
    got = _as_tuples(overlap_pairs(a_s, a_e, b_s, b_e, min_overlap_rate=m))
    assert [g[:3] for g in got] == [e[:3] for e in expected]
    assert [g[3] for g in got] == pytest.approx([e[3] for e in expected])


# --- the aduet ratio -----------------------------------------------------------------------

def _async_run(rng: np.random.Generator, ratio: float, n: int = 40) -> tuple[np.ndarray, ...]:
    """A and B run back to back, unsynchronized, through shared bursts of interference.

    Iteration time = nominal × (1 + burst at its start) × 1% own noise; B's nominal is `ratio`
    times A's, so B drifts and the pairing must come from the overlaps.
    """
    horizon = 3 * n * 100.0 * max(ratio, 1.0)
    bursts = np.sort(rng.uniform(0, horizon, 12))

    def slowdown(t: float) -> float:
        k = np.searchsorted(bursts, t) - 1
        return 1.0 + (0.5 if k >= 0 and t - bursts[k] < 150.0 else 0.0)

    def side(nominal: float, offset: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        t, starts, ends = offset, [], []
        for _ in range(n):
            d = nominal * slowdown(t) * rng.lognormal(0.0, 0.01)
            starts.append(t)
            ends.append(t + d)
            t += d + rng.uniform(0.0, 1.0)
        s, e = np.array(starts), np.array(ends)
        return e - s, s, e

    a, a_s, a_e = side(100.0, rng.uniform(0, 20))
    b, b_s, b_e = side(100.0 * ratio, rng.uniform(0, 20))
    return a, b, a_s, a_e, b_s, b_e


@pytest.mark.parametrize("estimator", ["paired", "weighted"])
def test_aduet_recovers_a_known_ratio_over_runs(estimator: str) -> None:
    rng = np.random.default_rng(40)
    truth = 1.03
    parts = [_async_run(rng, truth) for _ in range(15)]
    a = np.concatenate([p[0] for p in parts])
    b = np.concatenate([p[1] for p in parts])
    ids_a = np.repeat(np.arange(15), [p[0].size for p in parts])
    ids_b = np.repeat(np.arange(15), [p[1].size for p in parts])
    stamps = [np.concatenate([p[k] for p in parts]) for k in (2, 3, 4, 5)]
    pairs, run_ids = overlap_pairs_by_run(*stamps, ids_a, ids_b)
    assert len(pairs) > 0.8 * a.size
    r = aduet_ratio_ci(a, b, pairs, run_ids=run_ids, estimator=estimator, n_resamples=2000, random_state=1)  # type: ignore[arg-type]
    assert r.n == 15
    assert r.low < truth < r.high
    assert r.estimate == pytest.approx(truth, abs=0.01)


def test_aduet_over_pairs_without_run_ids() -> None:
    a, b, *stamps = _async_run(np.random.default_rng(41), 0.97, n=60)
    pairs = overlap_pairs(*stamps)
    r = aduet_ratio_ci(a, b, pairs, n_resamples=2000, random_state=2)
    assert r.n == len(pairs)
    assert r.low < 0.97 < r.high


def test_aduet_closed_forms() -> None:
    pairs = OverlapPairs(np.array([0, 1, 2]), np.array([0, 1, 2]), np.array([10, 30, 30]), np.ones(3))
    a = np.array([1.0, 2.0, 4.0])
    r = aduet_ratio_ci(a, 1.1 * a, pairs, n_resamples=100)
    assert (r.estimate, r.low, r.high) == pytest.approx((1.1, 1.1, 1.1))
    # Weighted: weights 10, 30, 30 on log ratios log 1.1, 0, 0 → exp(10·log 1.1 / 70).
    b = np.array([1.1, 2.0, 4.0])
    w = aduet_ratio_ci(a, b, pairs, estimator="weighted", n_resamples=100)
    assert w.estimate == pytest.approx(math.exp(10 * math.log(1.1) / 70))
    p = aduet_ratio_ci(a, b, pairs, n_resamples=100)
    assert p.estimate == pytest.approx(1.1 ** (1 / 3))
    # Per run: run "x" = pair 0 (log 1.1), run "y" = pairs 1, 2 (0, 0): mean over runs of run means.
    pr = aduet_ratio_ci(a, b, pairs, run_ids=["x", "y", "y"], n_resamples=100)
    assert pr.estimate == pytest.approx(1.1 ** 0.5)
    assert pr.n == 2


def test_aduet_bad_input() -> None:
    pairs = OverlapPairs(np.array([0, 1]), np.array([0, 1]), np.array([5, 5]), np.ones(2))
    with pytest.raises(ValueError, match="at least 2 overlap pairs"):
        aduet_ratio_ci([1.0, 1.0], [1.0, 1.0], pairs.subset([0]))
    with pytest.raises(ValueError, match="outside"):
        aduet_ratio_ci([1.0], [1.0, 1.0], pairs)
    with pytest.raises(ValueError, match="estimator"):
        aduet_ratio_ci([1.0, 1.0], [1.0, 1.0], pairs, estimator="median")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="at least 2 runs"):
        aduet_ratio_ci([1.0, 1.0], [1.0, 1.0], pairs, run_ids=[0, 0])
    with pytest.raises(ValueError, match="times must be > 0"):
        aduet_ratio_ci([1.0, 0.0], [1.0, 1.0], pairs)
