"""When and where each invocation runs: CPU assignment and start order, randomized with a recorded seed.

Randomizing which CPU each side gets and which side is launched first, per pair, turns any fixed
asymmetry (one vCPU busier than the other, the first-launched side starting earlier) into noise that
averages out, instead of a bias (docs/notes/duet_on_2cpus.md, point 3). The sequential method interleaves A
and B in a random order in every round: RMIT (Abedi & Brecht 2017; Drozdík 2023 §3).
"""
from __future__ import annotations

import random
from dataclasses import dataclass

SIDES = ("A", "B")


@dataclass(frozen=True)
class PairPlacement:
    cpu: dict[str, int]
    order: tuple[str, str]


class Schedule:
    """A seeded, lazily drawn schedule: the number of pairs is not known in advance (adaptive stopping)."""

    def __init__(self, seed: int, cpus: tuple[int, int]) -> None:
        self.seed = seed
        self.cpus = cpus
        self._rng = random.Random(seed)
        self._cpu_flips: list[bool] = []
        self._order_flips: list[bool] = []

    def _balanced_flip(self, pending: list[bool]) -> bool:
        """Coin flips drawn in blocks of two (one of each, random order): after every even number of pairs
        each assignment has occurred equally often, so a slower CPU cannot bias the ratio however early
        the adaptive stop comes."""
        if not pending:
            pending += [True, False] if self._rng.random() < 0.5 else [False, True]
        return pending.pop()

    def next_duet_pair(self) -> PairPlacement:
        """CPU of each side and launch order of one duet pair."""
        first_cpu, second_cpu = self.cpus if self._balanced_flip(self._cpu_flips) else self.cpus[::-1]
        order = SIDES if self._balanced_flip(self._order_flips) else SIDES[::-1]
        return PairPlacement(cpu={"A": first_cpu, "B": second_cpu}, order=order)

    def next_round_order(self) -> tuple[str, str]:
        """Order of A and B within one sequential round."""
        return SIDES if self._rng.random() < 0.5 else SIDES[::-1]

    def aduet_placement(self) -> dict[str, int]:
        """CPU of each side for a whole asynchronous duet (the sides run back to back, not in pairs)."""
        first_cpu, second_cpu = self.cpus if self._rng.random() < 0.5 else self.cpus[::-1]
        return {"A": first_cpu, "B": second_cpu}


def choose_cpus(usable: list[int]) -> tuple[int, int] | None:
    """Two CPUs for the sides of a duet: the highest-numbered ones, leaving CPU 0 (where most
    interrupts and housekeeping land) to the orchestrator when the machine has more than two."""
    if len(usable) < 2:
        return None
    return usable[-2], usable[-1]
