"""`--method auto`'s judgement (analyze.choice) and its honesty: the pilot never enters the interval."""
from __future__ import annotations

import numpy as np
import pytest

from duetbench.analyze import honesty
from duetbench.analyze.choice import (
    SEQUENTIAL_MARGIN,
    Candidate,
    choose,
    choose_from_runs,
    conditions_changed,
    duet_candidate,
    robust_variance,
    sequential_candidate,
)


def test_cost_is_variance_times_seconds() -> None:
    quiet_duet = Candidate("duet", 6, 0.01, 0.02)
    quiet_seq = Candidate("sequential", 6, 0.003, 0.04)  # 3.3x less spread at twice the time per unit
    c = choose(quiet_duet, quiet_seq)
    assert c.method == "sequential"
    assert "pair ratios of the duet varied 1.00%, sequential rounds 0.30%" in c.reason
    assert "2.4× narrower" in c.reason  # sqrt(0.01² · 0.02 / (0.003² · 0.04))
    steal = Candidate("sequential", 6, 0.15, 0.04)
    assert choose(quiet_duet, steal).method == "duet"


def test_a_pilot_that_did_not_vary_is_said_so_not_inf_times_narrower() -> None:
    still = Candidate("duet", 6, 0.0, 0.02)  # identical pair ratios (a harness without iterations, say)
    c = choose(still, Candidate("sequential", 6, 0.01, 0.04))
    assert c.method == "duet" and "inf" not in c.reason and "did not vary at all" in c.reason, c.reason


def test_sequential_needs_the_margin_in_duet_compare() -> None:
    # The pilot flatters sequential (its rounds do not yet meet the drift of seconds), so `duet compare`
    # keeps the duet unless sequential promises SEQUENTIAL_MARGIN times narrower, and says why.
    duet = Candidate("duet", 6, 0.01, 0.02)
    looks_better = Candidate("sequential", 6, 0.0047, 0.04)  # 1.5x narrower
    c = choose(duet, looks_better, sequential_margin=SEQUENTIAL_MARGIN)
    assert c.method == "duet" and "sequential CI is about 1.5× narrower" in c.reason
    assert "less than the 2× a short pilot must show" in c.reason
    assert choose(duet, looks_better).method == "sequential"  # campaigns: no margin
    clearly = Candidate("sequential", 6, 0.003, 0.04)  # 2.4x narrower
    assert choose(duet, clearly, sequential_margin=SEQUENTIAL_MARGIN).method == "sequential"


def test_sequential_pilot_spread_counts_its_outliers() -> None:
    # Fieller's interval over the invocations meets every value, so one slow round widens the sequential
    # candidate as it will widen its interval; the duet's robust filter sets an isolated pair aside.
    a = np.array([1.0, 1.001, 0.999, 1.0005, 0.9995, 1.3])
    b = a.copy()
    assert sequential_candidate(a, b, 0.24).unit_sd > 0.1
    assert duet_candidate(a, a * np.array([1.0, 1.001, 0.999, 1.0, 1.0, 1.3]), 0.12).unit_sd < 0.01


def test_candidates_from_pilot_values() -> None:
    rng = np.random.default_rng(0)
    shared = rng.normal(0, 0.2, 6)  # whole-machine interference: cancels in the duet's pairs only
    a = np.exp(shared + rng.normal(0, 0.01, 6))
    b = 1.05 * np.exp(shared + rng.normal(0, 0.01, 6))
    d = duet_candidate(a, b, 0.12)
    s = sequential_candidate(a, b, 0.24)
    assert d.unit_sd < 0.05 < s.unit_sd and d.seconds_per_unit == pytest.approx(0.02)
    assert choose(d, s).method == "duet"


def test_robust_variance_ignores_one_outlier() -> None:
    x = np.array([0.0, 0.01, -0.01, 0.005, -0.005, 3.0])
    assert robust_variance(x) < 0.001 < float(x.var(ddof=1))
    assert robust_variance(np.zeros(5)) == 0.0


def test_cpu_hint_only_when_far_more_precise() -> None:
    d, s = Candidate("duet", 6, 0.05, 0.02), Candidate("sequential", 6, 0.05, 0.04)
    cpu = (Candidate("duet", 6, 0.001, 0.02), Candidate("sequential", 6, 0.002, 0.04))
    assert "more precisely" in (choose(d, s, cpu=cpu).cpu_hint or "")
    assert choose(d, s, metric="cpu", cpu=cpu).cpu_hint is None
    assert choose(d, s, cpu=(d, s)).cpu_hint is None


@pytest.mark.parametrize("shared", [0.0, 0.2])
def test_auto_stays_honest(shared: float) -> None:
    # The pilot's data never enter the final interval, so choosing on them cannot bend it: the chosen
    # method's adaptive interval keeps its level whichever method won (simulated end to end).
    rate, chosen = honesty.auto(sigma=0.005, shared_sigma=shared, sims=400, seed=4, max_units=60)
    assert rate.rate <= 0.02, (rate, chosen)
    if shared:  # whole-machine interference: only the duet cancels it, and the pilot sees that
        assert chosen["duet"] >= 0.95 * 400, chosen


def test_auto_decides_again_and_stays_honest_when_a_neighbour_arrives() -> None:
    # From the 30th unit on a neighbour lands on one side of each duet pair: the re-decision check sees the
    # duet's pairs spread, a new pilot chooses sequential, which starts afresh; the final interval (the
    # re-decision path included, simulated as the CLI runs it) keeps its level.
    rate, chosen = honesty.auto(sigma=0.005, shared_sigma=0.0, neighbour_after=30, neighbour_sigma=0.1, sims=400,
                                seed=5, max_units=80)
    assert rate.rate <= 0.02, (rate, chosen)
    assert chosen["redecisions"] >= 200 and chosen["sequential"] >= 200, chosen
    # Without a neighbour the pilot is rarely run again.
    quiet, calm = honesty.auto(sigma=0.005, shared_sigma=0.0, sims=400, seed=5, max_units=80)
    assert calm["redecisions"] <= 20 and quiet.rate <= 0.02, (quiet, calm)


def test_campaign_choice_from_one_run_of_each() -> None:
    rng = np.random.default_rng(1)
    n = 30
    # A CPU hog beside the duet: its two sides disturb each other, pair ratios spread 5 %; sequential 0.5 %.
    duet = (np.exp(rng.normal(0, 0.035, n)), np.exp(rng.normal(0, 0.035, n)))
    seq = (np.exp(rng.normal(0, 0.0035, n)), np.exp(rng.normal(0, 0.0035, n)))
    c = choose_from_runs([duet], 1.0, [seq], 2.0)
    assert c.method == "sequential" and c.candidates[0].units == n
    # Interference both sides of the duet meet alike: it cancels in the duet's pairs only.
    shared = rng.normal(0, 0.05, n)
    duet = (np.exp(shared + rng.normal(0, 0.002, n)), np.exp(shared + rng.normal(0, 0.002, n)))
    seq = (np.exp(rng.normal(0, 0.05, n)), np.exp(rng.normal(0, 0.05, n)))
    assert choose_from_runs([duet], 1.0, [seq], 2.0).method == "duet"
    # Several benchmarks in one harness run (a JMH jar): variances averaged, units counted over all.
    c = choose_from_runs([duet, duet], 1.0, [seq, seq], 2.0)
    assert c.candidates[0].units == 2 * n


@pytest.mark.parametrize("runs", [5, 10, 30])
@pytest.mark.parametrize("duet_sigma", [0.005, 0.01, 0.02])
def test_campaign_auto_keeps_the_level(runs: int, duet_sigma: float) -> None:
    """The chosen method's pilot run stays in its interval; at the defaults both methods cost about the same
    at duet_sigma 0.01, so the choice flips most and would bend the interval most if it could."""
    rate, chosen = honesty.campaign_auto(runs, 20, duet_sigma=duet_sigma, noise="outliers", sims=2000, seed=runs)
    assert rate.misses / rate.sims <= 0.02, (rate, chosen)
    assert min(chosen.values()) > 0 or duet_sigma != 0.01  # the choice really varies where it matters


def test_conditions_changed_only_when_the_other_method_would_now_win() -> None:
    duet = Candidate("duet", 6, 0.002, 0.02)
    seq = Candidate("sequential", 6, 0.01, 0.04)  # sd 1 %, twice the time: the duet wins by 7x in width
    # The duet's pairs spread 3x more than in its pilot (0.6 %): still far better than sequential.
    assert not conditions_changed(duet, seq, [0.006, 0.006], sequential_margin=SEQUENTIAL_MARGIN)
    # A neighbour started: the pairs spread 10 %; sequential (with its 2x margin) would now win.
    assert conditions_changed(duet, seq, [0.10, 0.10], sequential_margin=SEQUENTIAL_MARGIN)
    # Sequential chosen beside a hog (the duet's pilot spread 30 %): rounds at 2 % change nothing, 40 % do.
    hog_duet = Candidate("duet", 6, 0.30, 0.02)
    assert not conditions_changed(seq, hog_duet, [0.02, 0.02])
    assert conditions_changed(seq, hog_duet, [0.40, 0.40])
    # Below the floor, never.
    assert not conditions_changed(duet, Candidate("sequential", 6, 0.0001, 0.04), [0.004, 0.004])


def test_one_noisy_window_is_not_a_change_of_conditions() -> None:
    """A burst that spreads one window of pairs passes; a change that persists over every window counts."""
    duet = Candidate("duet", 6, 0.002, 0.02)
    seq = Candidate("sequential", 6, 0.01, 0.04)
    assert not conditions_changed(duet, seq, [0.002, 0.10], sequential_margin=SEQUENTIAL_MARGIN)
    assert not conditions_changed(duet, seq, [0.10, 0.002], sequential_margin=SEQUENTIAL_MARGIN)
    assert not conditions_changed(duet, seq, [], sequential_margin=SEQUENTIAL_MARGIN)
