"""When and where each invocation runs: CPU assignment and start order, randomized with a recorded seed.

Randomizing which CPU each side gets and which side is launched first, per pair, turns any fixed
asymmetry (one vCPU busier than the other, the first-launched side starting earlier) into noise that
averages out, instead of a bias (docs/notes/duet_on_2cpus.md, point 3). The sequential method interleaves A
and B in a random order in every round: RMIT (Abedi & Brecht 2017; Drozdík 2023 §3).

The CPU assignment has two adversaries, and each pair's draw is made so that neither can bias a short
comparison (`cpu_blocks`): a CPU that is slower throughout (the slow side is whoever sits on it), and a
CPU hog that the scheduler moves onto the CPU the faster side has just left idle (then the side that gets
that CPU in the next pair is slowed). Against the first, each side must sit on each CPU equally often;
against the second, the pairs where the sides swap CPUs must be as frequent as those where they stay.
"""
from __future__ import annotations

import random

import msgspec

SIDES = ("A", "B")


#: The CPU assignments of four consecutive duet pairs (True: A on the first CPU), one block drawn at random
#: at a time. In each, A sits on each CPU twice *and* the sides swap CPUs between pairs as often as they
#: stay, counting the swap into the next block, which always starts afresh (`placement_balance`): so
#: neither a slower CPU nor a hog that moves to the CPU the faster side left can put one side at a
#: disadvantage in more than two pairs net, at any number of pairs. (Blocks of two opposite flips, used
#: before, always swap within a block: a following hog then slowed the same side in 75 % of consecutive
#: pairs, and two real A/A comparisons beside a hog stopped at 5 pairs with B/A 1.51 and 0.63.)
CPU_BLOCKS: tuple[tuple[bool, bool, bool, bool], ...] = (
    (True, True, False, False), (False, False, True, True), (True, False, False, True), (False, True, True, False))



def placement_balance(flips: list[bool]) -> tuple[int, int]:
    """The largest imbalances over every prefix of a CPU assignment sequence (True: A on the first CPU):
    against a slower CPU (Σ ±1 of the assignment) and against a hog that follows the faster side (Σ ±1
    of the side it slows, which changes whenever the sides stay on their CPUs). Both are at most 2 for
    the blocks drawn here, whatever the number of pairs."""
    fixed = following = worst_fixed = worst_following = 0
    hog = 1
    for k, flip in enumerate(flips):
        if k > 0 and flip == flips[k - 1]:
            hog = -hog  # the sides stayed: the faster side's CPU, which the hog moved to, is its again
        fixed += 1 if flip else -1
        following += hog
        worst_fixed, worst_following = max(worst_fixed, abs(fixed)), max(worst_following, abs(following))
    return worst_fixed, worst_following


class PairPlacement(msgspec.Struct, frozen=True):
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
        each choice has occurred equally often, so a fixed asymmetry cannot bias the ratio however early
        the adaptive stop comes."""
        if not pending:
            pending += [True, False] if self._rng.random() < 0.5 else [False, True]
        return pending.pop()

    def _cpu_flip(self) -> bool:
        if not self._cpu_flips:
            self._cpu_flips += reversed(self._rng.choice(CPU_BLOCKS))
        return self._cpu_flips.pop()

    def next_duet_pair(self) -> PairPlacement:
        """CPU of each side and launch order of one duet pair."""
        first_cpu, second_cpu = self.cpus if self._cpu_flip() else self.cpus[::-1]
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
    sides = side_cpus(usable, 1)
    return None if sides is None else (sides[0][0], sides[1][0])


def cpu_count(cpus_per_command: int | str, usable: int) -> int:
    """A `--cpus-per-command` / `cpus_per_command` value as a count where `usable` CPUs may be used
    ("all": that many)."""
    return usable if cpus_per_command == "all" else int(cpus_per_command)


def side_cpus(usable: list[int], per_command: int) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """The CPUs of each side of a duet whose commands get `per_command` CPUs each (--cpus-per-command):
    two disjoint runs of the highest-numbered usable CPUs, as `choose_cpus`; None where fewer than twice
    `per_command` are usable (then only the sequential method is possible)."""
    if per_command < 1 or len(usable) < 2 * per_command:
        return None
    top = usable[len(usable) - 2 * per_command:]
    return tuple(top[:per_command]), tuple(top[per_command:])


def keyed_cpu_sets(usable: list[int], per_command: int) -> dict[int, tuple[int, ...]]:
    """The CPUs each CPU of a campaign's plan stands for where each command gets `per_command` of them
    (a campaign's `cpus_per_command`): its plan names a side's CPU as `choose_cpus` picks it (the first
    usable CPU twice where there is one), and this maps those keys onto `side_cpus`' sets, or both onto
    the highest `per_command` CPUs where no duet of that size fits (its sequential runs take turns on
    them). Empty for one CPU per command: each key is its CPU."""
    if per_command <= 1:
        return {}
    pair = choose_cpus(usable)
    keys = pair if pair is not None else (usable[0], usable[0])
    sides = side_cpus(usable, per_command)
    if sides is None:
        own = tuple(usable[len(usable) - per_command:])
        return {key: own for key in keys}
    return {keys[0]: sides[0], keys[1]: sides[1]}


class Placement(msgspec.Struct, frozen=True):
    """Where a comparison's commands run: `cpus` keys each side's CPU (a duet: one each; sequential: the
    same twice: the runner's `RunSettings.cpus`), `cpu_sets` all CPUs of a key that has several, and
    whether a duet is possible at all with `per_command` CPUs per command."""

    cpus: tuple[int, int]
    cpu_sets: dict[int, tuple[int, ...]]
    per_command: int
    duet_possible: bool


def place(usable: list[int], per_command: int) -> Placement:
    """The CPUs of a comparison whose commands get `per_command` CPUs each: a duet's two disjoint sets
    (`side_cpus`) where the machine has them; else the highest `per_command` CPUs, which A and B take in
    turn (sequential). A sequential comparison on a machine that has the CPUs for a duet runs on the
    second side's set, as one command would (usecases/single.py)."""
    if not 1 <= per_command <= len(usable):
        raise ValueError(f"{per_command} CPUs per command, {len(usable)} usable")
    sides = side_cpus(usable, per_command)
    if sides is None:
        own = tuple(usable[len(usable) - per_command:])
        return Placement((own[0], own[0]), {own[0]: own} if per_command > 1 else {}, per_command, False)
    return Placement((sides[0][0], sides[1][0]), {s[0]: s for s in sides if per_command > 1}, per_command, True)
