"""The duet's CPU placement (plan/schedule.py) against its two adversaries: a CPU slower throughout, and
a CPU hog that the scheduler moves onto the CPU the faster side has just left idle.

The second was found in the real A/A bench (bench/results/trust.md, 100 ms beside a hog): with blocks of
two opposite CPU flips the sides swap CPUs in 3 of 4 consecutive pairs, so a following hog keeps slowing
the same side, and a 5-pair comparison stopped on evidence at B/A 1.51 for identical commands.
"""
from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from duetbench.analyze import honesty, interference
from duetbench.plan import schedule
from duetbench.plan.schedule import CPU_BLOCKS, Schedule, placement_balance


def test_every_block_balances_both_adversaries_at_every_prefix() -> None:
    # Exhaustive over all sequences of six blocks (4096 sequences, 24 pairs each, every prefix checked).
    # Both sums are back to 0 at every block's end, and what else carries into the next block (the side
    # the hog slows, the last assignment) takes its 4 values within these: so this covers any length.
    for blocks in itertools.product(CPU_BLOCKS, repeat=6):
        flips = [f for block in blocks for f in block]
        assert placement_balance(flips) <= (2, 2), blocks


@pytest.mark.parametrize("seed", range(50))
def test_the_schedule_the_runner_uses_stays_balanced(seed: int) -> None:
    s = Schedule(seed, (2, 3))
    placements = [s.next_duet_pair() for _ in range(301)]
    assert all(sorted(p.cpu.values()) == [2, 3] for p in placements)
    fixed, following = placement_balance([p.cpu["A"] == 2 for p in placements])
    assert fixed <= 2 and following <= 2
    # still random: both assignments start comparisons, and not every seed draws the same sequence
    assert {p.order for p in placements} == {("A", "B"), ("B", "A")}


def test_the_schedule_is_not_one_fixed_sequence() -> None:
    def first_eight(seed: int) -> tuple[int, ...]:
        s = Schedule(seed, (0, 1))
        return tuple(s.next_duet_pair().cpu["A"] for _ in range(8))

    sequences = {first_eight(seed) for seed in range(40)}
    assert len(sequences) >= 8 and {seq[0] for seq in sequences} == {0, 1}


def test_blocks_of_opposite_flips_let_a_following_hog_slow_one_side() -> None:
    # What the old placement drew: blocks (T, F) or (F, T). Swapping CPUs at every pair, the hog that
    # follows the faster side stays on one side's CPU: the measure must see that imbalance grow.
    rng = random.Random(0)
    flips: list[bool] = []
    for _ in range(100):
        flips += [True, False] if rng.random() < 0.5 else [False, True]
    fixed, following = placement_balance(flips)
    assert fixed <= 1
    assert following > 10


def test_a_following_hog_cannot_make_a_short_duet_cry_wolf(monkeypatch: pytest.MonkeyPatch) -> None:
    # The simulated duet takes its CPU placement from the real Schedule; 5-pair A/A comparisons beside a
    # hog that slows its side 1.5x and moves to the faster side's CPU after every pair. Two defences hold
    # the t interval's false alarms under the project's 2 % bar, each on its own: the placement, and
    # leaving the interval unbounded when most pairs had one side held off its CPU (analyze/interference).
    old_placement = lambda self: self._balanced_flip(self._cpu_flips)  # noqa: E731
    assert honesty.hog_fixed_n(5, sims=400, seed=3).rate <= 0.02
    monkeypatch.setattr(schedule.Schedule, "_cpu_flip", old_placement)
    assert honesty.hog_fixed_n(5, sims=400, seed=3).rate <= 0.02
    monkeypatch.undo()
    monkeypatch.setattr(interference, "too_few_clean", lambda hit: False)
    assert honesty.hog_fixed_n(5, sims=400, seed=3).rate <= 0.02
    # ... and with neither, they do not (this test can fail).
    monkeypatch.setattr(schedule.Schedule, "_cpu_flip", old_placement)
    assert honesty.hog_fixed_n(5, sims=400, seed=3).rate > 0.10


def test_a_hog_that_lands_at_random_is_covered_once_the_trim_is_symmetric() -> None:
    # A hog that moves after half the pairs slows a random side of each pair: two-valued log ratios.
    # Trimming only the minority's extremes (the filter's one-sided removal) left 4.4 % false alarms at
    # 30 pairs; Yuen's symmetric trim 1.3 % (bench/results/honesty.md has the 2000-run cells).
    assert honesty.hog_fixed_n(30, follow=0.5, sims=1000, seed=3).rate <= 0.02


def test_evidence_needs_ten_pairs() -> None:
    # Nine pairs all slowed on B by a hog (1 in 256 for a hog that lands at random) must not stop a
    # comparison; ten pairs of a steady 1.5x difference are evident.
    from duetbench.analyze.monitor import evident

    rng = np.random.default_rng(0)
    steady = np.log(1.5) + 0.01 * rng.standard_normal(10)
    assert not evident(steady[:9], 0.99)
    assert evident(steady, 0.99)
