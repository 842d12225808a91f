"""Stopping criteria of Laaber et al. 2020 §4: hand-computed windows, KLD, known shapes."""
from __future__ import annotations

import math

import numpy as np
import pytest

from duetbench.analyze.kld import kld_similarity, silverman_bandwidth
from duetbench.analyze.stopping import (
    StoppingParams,
    cv_criterion,
    kld_criterion,
    pair_warmup_end,
    pair_warmup_step,
    ratio_precision_stop,
    rciw_criterion,
    run_step,
    run_stop,
    warmup_end,
    warmup_step,
)
from duetbench.errors import DuetError


def cv(x: list[float]) -> float:
    return float(np.std(x, ddof=1) / np.mean(x))


# --- parameters ---------------------------------------------------------------------------------

def test_defaults_are_the_papers() -> None:
    p = StoppingParams()
    assert (p.criterion, p.cv_threshold, p.rciw_threshold, p.kld_threshold) == ("kld", 0.01, 0.03, 0.99)
    assert (p.wi_min, p.wi_max, p.mi, p.f_min, p.f_max, p.window_runs) == (5, 50, 50, 2, 5, 2)
    assert p.iteration_window == 6 and p.min_warmup_iterations == 6 and p.threshold == 0.99
    q = StoppingParams(criterion="cv", wi_min=2)
    assert q.iteration_window == 5 and q.min_warmup_iterations == 5 and q.threshold == 0.01


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"criterion": "median"}, "unknown stopping criterion"),
        ({"kld_threshold": 1.5}, "kld_threshold"),
        ({"cv_threshold": -1}, "cv_threshold"),
        ({"wi_max": 3}, "wi_max=3 is below"),
        ({"f_min": 4, "f_max": 3}, "f_max=3 is below f_min=4"),
        ({"mi": 0}, "mi must be a positive integer"),
        ({"window_runs": 1}, "window_runs"),
    ],
)
def test_bad_parameters_are_one_line_duet_errors(kwargs: dict, words: str) -> None:
    with pytest.raises(DuetError, match=words) as info:
        StoppingParams(**kwargs)
    assert "\n" not in str(info.value)


def test_bad_steps_are_named() -> None:
    with pytest.raises(ValueError, match="step 3"):
        cv_criterion([1.0, 2.0, -1.0])
    with pytest.raises(ValueError, match="step 2"):
        cv_criterion([1.0, [], 2.0])


# --- CV / RCIW windows, by hand ----------------------------------------------------------------

def test_cv_window_basis_by_hand() -> None:
    # Paper Eq. (1): unions start at the window's first step; CV of one value is undefined.
    tr = cv_criterion([1, 2, 3, 4, 5], window=3, threshold=0.05, outlier_factor=None)
    c3 = tr.checks[2]
    assert math.isnan(c3.vector[0])
    assert c3.vector[1:] == pytest.approx((cv([1, 2]), cv([1, 2, 3])))
    assert c3.variability == pytest.approx(cv([1, 2, 3]) - cv([1, 2]))  # 0.0286
    assert tr.checks[3].variability == pytest.approx(cv([2, 3, 4]) - cv([2, 3]))  # 0.0505
    assert math.isnan(tr.variability[1]) and not tr.stable[1]  # window not full yet
    assert list(tr.stable) == [False, False, True, False, True]  # 0.0286, 0.0505, 0.0488 vs 0.05
    assert tr.first_stable == 3


def test_cv_cumulative_basis_by_hand() -> None:
    # Paper Eq. (2): unions from step 1; variability = max − min over the window.
    tr = cv_criterion([1, 2, 3, 4], window=3, threshold=1.0, basis="cumulative", outlier_factor=None)
    c = tr.checks[3]
    assert c.vector == pytest.approx((cv([1, 2]), cv([1, 2, 3]), cv([1, 2, 3, 4])))
    assert c.variability == pytest.approx(max(c.vector) - min(c.vector))


def test_cv_of_runs_pools_their_iterations() -> None:
    runs = [[1.0, 1.1], [1.2, 0.9, 1.0]]
    c = cv_criterion(runs, window=2, threshold=1.0, basis="cumulative", outlier_factor=None).checks[1]
    assert c.vector == pytest.approx((cv([1.0, 1.1]), cv([1.0, 1.1, 1.2, 0.9, 1.0])))


def test_rciw_matches_normal_theory_and_is_seeded() -> None:
    rng = np.random.default_rng(3)
    x = 100.0 * (1.0 + 0.05 * rng.standard_normal(2000))
    tr = rciw_criterion([x], window=2, confidence_level=0.99, n_resamples=2000, random_state=5)
    # The stability value of one big step: 2·z(0.995)·sd/√n/mean.
    h = x[:1000]
    expected = 2 * 2.5758 * h.std(ddof=1) / math.sqrt(h.size) / h.mean()
    tr2 = rciw_criterion([x[:1000], x[1000:]], window=2, n_resamples=2000, random_state=5)
    assert tr2.checks[1].vector[0] == pytest.approx(expected, rel=0.1)  # union of step 1 alone
    assert tr.checks[0].vector == ()
    again = rciw_criterion([x[:1000], x[1000:]], window=2, n_resamples=2000, random_state=5)
    assert again.checks[1].vector == tr2.checks[1].vector


def test_rciw_hierarchical_sees_run_effects() -> None:
    # Runs with a large run-to-run effect: the two-level bootstrap's interval reflects the spread
    # of run means, far wider than pooling all iterations as if independent would give.
    rng = np.random.default_rng(4)
    runs = [m * (1 + 0.001 * rng.standard_normal(200)) for m in (0.9, 1.1, 0.95, 1.05, 1.0, 0.92)]
    c = rciw_criterion(runs, window=2, basis="cumulative", n_resamples=2000).checks[-1]
    pooled_width = 2 * 2.5758 * np.concatenate(runs).std(ddof=1) / math.sqrt(1200)
    assert c.vector[-1] > 5 * pooled_width


# --- KLD ---------------------------------------------------------------------------------------

def test_kld_identical_and_shifted() -> None:
    rng = np.random.default_rng(5)
    x = rng.normal(10.0, 1.0, 2000)
    assert kld_similarity(x, x) == pytest.approx(1.0)
    assert kld_similarity(x, rng.normal(10.0, 1.0, 2000)) > 0.97
    assert kld_similarity(x, x + 3.0) < 0.05
    assert 0.0 < kld_similarity(x, x + 0.5) < 0.9
    assert kld_similarity(np.full(5, 2.0), np.full(7, 2.0)) == 1.0
    assert math.isnan(kld_similarity(np.array([1.0]), x))


def test_silverman_bandwidth() -> None:
    x = np.arange(1.0, 101.0)
    sd = x.std(ddof=1)
    iqr = np.percentile(x, 75) - np.percentile(x, 25)
    assert silverman_bandwidth(x) == pytest.approx(1.06 * min(sd, iqr / 1.34) * 100 ** -0.2)


def test_kld_window_is_mean_of_consecutive_similarities() -> None:
    rng = np.random.default_rng(6)
    steps = [rng.normal(10.0, 1.0, 300) for _ in range(6)]
    c = kld_criterion(steps, window=6, outlier_factor=None).checks[5]
    want = [kld_similarity(np.concatenate(steps[:x - 1]), np.concatenate(steps[:x])) for x in range(2, 7)]
    assert c.vector == pytest.approx(tuple(want))
    assert c.variability == pytest.approx(np.mean(want))
    assert c.stable == (np.mean(want) > 0.99)


# --- known shapes ------------------------------------------------------------------------------

N = 50
I = np.arange(N)
EXCESS = 2.0 * np.exp(-I / 5.0)  # warmup: 3× slower at first, decaying to the plateau 1.0


def warming(rng: np.random.Generator, per_step: int, noise: float) -> list[np.ndarray]:
    return [(1.0 + e) * (1.0 + noise * rng.standard_normal(per_step)) for e in EXCESS]


@pytest.mark.parametrize("criterion", ["cv", "rciw", "kld"])
@pytest.mark.parametrize("seed", [1, 2])
def test_warmup_end_near_the_knee_not_before(criterion: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    d = warmup_end(warming(rng, 200, 0.02), StoppingParams(criterion=criterion))
    assert d.done and d.stable and d.warning is None
    assert d.iteration is not None and d.measurement_end == d.iteration + 50
    excess_at_end = EXCESS[d.iteration - 1]
    # Not before the knee: the steep part (excess > 10%, iterations < 15) is over; near it: within
    # 6% of the plateau (the decay started 200% above it). The variability criteria judge that
    # the series levels off, not that it is flat, so they end while a few % of decay remain.
    assert excess_at_end < 0.06, (d.iteration, excess_at_end)
    assert d.iteration >= 15


@pytest.mark.parametrize("criterion", ["cv", "rciw"])
def test_warmup_end_with_one_time_per_iteration(criterion: str) -> None:
    rng = np.random.default_rng(7)
    values = list((1.0 + EXCESS) * (1.0 + 0.003 * rng.standard_normal(N)))
    d = warmup_end(values, StoppingParams(criterion=criterion))
    assert d.stable and 15 <= d.iteration <= 30


@pytest.mark.parametrize("criterion", ["cv", "rciw", "kld"])
def test_stationary_noise_stops_at_the_minimum(criterion: str) -> None:
    rng = np.random.default_rng(8)
    p = StoppingParams(criterion=criterion)
    d = warmup_end([1.0 + 0.02 * rng.standard_normal(500) for _ in range(N)], p)
    assert d.stable and d.iteration is not None and d.iteration <= p.min_warmup_iterations + 2


@pytest.mark.parametrize("criterion", ["cv", "rciw", "kld"])
def test_trend_reaches_max_with_a_warning(criterion: str) -> None:
    rng = np.random.default_rng(9)
    p = StoppingParams(criterion=criterion, wi_max=30)
    steps = [math.exp(0.05 * k) * (1.0 + 0.02 * rng.standard_normal(200)) for k in range(30)]
    d = warmup_end(steps, p)
    assert d.done and not d.stable and d.iteration is None
    assert d.warmup_iterations == 30 and d.reason == "max reached without stability"
    assert d.warning is not None and "wi_max=30" in d.warning and "\n" not in d.warning
    # Before the maximum it is simply undecided.
    early = warmup_end(steps[:20], p)
    assert not early.done and early.warning is None and early.reason == "not yet stable"


def test_live_steps_agree_with_the_scan() -> None:
    rng = np.random.default_rng(10)
    steps = warming(rng, 100, 0.02)
    p = StoppingParams(criterion="rciw")
    batch = warmup_end(steps, p, random_state=3)
    live = next(i for i in range(1, N + 1) if warmup_step(steps[:i], p, random_state=3).done)
    assert live == batch.iteration


def test_pair_warmup_waits_for_both_sides() -> None:
    rng = np.random.default_rng(11)
    p = StoppingParams(criterion="cv")
    fast = [1.0 + 0.02 * rng.standard_normal(200) for _ in range(N)]
    slow = warming(rng, 200, 0.02)
    alone = warmup_end(fast, p).iteration
    pair = pair_warmup_end(fast, slow, p)
    assert alone is not None and pair.iteration is not None
    assert pair.iteration == warmup_end(slow, p).iteration > alone
    assert pair_warmup_end(slow, fast, p).iteration == pair.iteration
    live = next(i for i in range(1, N + 1) if pair_warmup_step(fast[:i], slow[:i], p).done)
    assert live == pair.iteration


def test_run_stop() -> None:
    rng = np.random.default_rng(12)
    p = StoppingParams(criterion="cv")
    stable_runs = [1.0 + 0.02 * rng.standard_normal(50) for _ in range(5)]
    d = run_stop(stable_runs, p)
    assert d.stop and d.stable and d.runs == 2 and d.warning is None
    assert run_step(stable_runs[:1], p).stop is False  # below f_min: never judged
    drifting = [1.0 + 0.2 * k + 0.02 * rng.standard_normal(50) for k in range(5)]
    d = run_stop(drifting, p)
    assert d.stop and not d.stable and d.runs is None and "f_max=5" in (d.warning or "")
    assert not run_stop(drifting[:3], p).stop


# --- ratio precision ---------------------------------------------------------------------------

def test_ratio_precision_stop_rules() -> None:
    assert ratio_precision_stop(0.008, 0.01, 10, 5, 30, 100.0, None).reason == "precision"
    assert ratio_precision_stop(0.008, 0.01, 3, 5, 30, 30.0, None).reason == "min_runs"
    assert not ratio_precision_stop(0.02, 0.01, 10, 5, 30, 100.0, None).stop
    assert not ratio_precision_stop(math.nan, 0.01, 10, 5, 30, 100.0, None).stop
    m = ratio_precision_stop(0.02, 0.01, 30, 5, 30, 300.0, None)
    assert m.stop and m.reason == "max_runs" and "2.00%" in (m.warning or "")
    # 10 runs in 100 s: an 11th would end at ~110 s, past a 105 s budget.
    b = ratio_precision_stop(0.02, 0.01, 10, 5, 30, 100.0, 105.0)
    assert b.stop and b.reason == "budget"
    assert not ratio_precision_stop(0.02, 0.01, 10, 5, 30, 100.0, 115.0).stop
    with pytest.raises(DuetError, match="target"):
        ratio_precision_stop(0.02, 0.0, 10, 5, 30, 100.0, None)
    with pytest.raises(DuetError, match="min_runs"):
        ratio_precision_stop(0.02, 0.01, 10, 5, 3, 100.0, None)
