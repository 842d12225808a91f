"""The plan of a campaign: every run of every benchmark and method, in the order it will execute.

A *run* is one launch of a harness: for a duet both sides at once, for the sequential method one
side alone (a sequential repetition is an A run and a B run, scheduled independently). The plan is
made once, from a recorded seed, and stored before anything is measured, so that `--resume` (and a
cluster backend later) executes exactly the same runs in exactly the same order.

Schedules:
- ``rmit``: randomized multiple interleaved trials (Abedi & Brecht 2017; seed 004 §3) across the
  whole campaign: all runs of all benchmarks and methods are shuffled together, so a slow period of
  the machine spreads over everything instead of landing on one benchmark or one method.
- ``ordered``: benchmarks in file order, methods in the order sequential, duet, aduet, repetitions
  in order (useful to debug a campaign; not recommended for measuring).
In both, each duet run draws which CPU each side gets and which side is launched first, and each
sequential run draws its CPU, so fixed asymmetries become noise rather than bias.
"""
from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import asdict, dataclass

from duetbench.plan.schedule import SIDES

METHOD_ORDER = ("sequential", "duet", "aduet")


@dataclass(frozen=True)
class PlannedRun:
    position: int  # 0-based place in the execution order
    benchmark: str
    method: str  # "sequential" | "duet" | "aduet"
    repetition: int  # 0-based, per benchmark and method
    sides: tuple[str, ...]  # launch order: ("A", "B"), ("B", "A"), or one side for sequential
    cpus: dict[str, int]

    @property
    def key(self) -> str:
        """Stable identity of the run inside its campaign (what --resume matches on)."""
        side = f"/{self.sides[0]}" if self.method == "sequential" else ""
        return f"{self.benchmark}/{self.method}/{self.repetition}{side}"

    def to_json(self) -> dict[str, object]:
        data = asdict(self)
        data["sides"] = list(self.sides)
        return data

    @classmethod
    def from_json(cls, data: dict[str, object]) -> "PlannedRun":
        return cls(position=int(data["position"]), benchmark=str(data["benchmark"]),  # type: ignore[arg-type]
                   method=str(data["method"]), repetition=int(data["repetition"]),  # type: ignore[arg-type]
                   sides=tuple(data["sides"]),  # type: ignore[arg-type]
                   cpus={str(k): int(v) for k, v in dict(data["cpus"]).items()})  # type: ignore[call-overload]


@dataclass(frozen=True)
class RunRequest:
    """What a benchmark asks for: how many runs of each method."""

    benchmark: str
    methods: dict[str, int]


def make_plan(requests: Iterable[RunRequest], *, schedule: str, seed: int, cpus: tuple[int, int]) -> list[PlannedRun]:
    """Expand benchmarks × methods × repetitions into the ordered list of runs (pure; seeded)."""
    if schedule not in ("rmit", "ordered"):
        raise ValueError(f"schedule must be 'rmit' or 'ordered', got {schedule!r}")
    rng = random.Random(seed)
    units: list[tuple[str, str, int, str | None]] = []  # benchmark, method, repetition, side (sequential)
    for request in requests:
        for method in METHOD_ORDER:
            for rep in range(request.methods.get(method, 0)):
                if method == "sequential":
                    first, second = SIDES if rng.random() < 0.5 else SIDES[::-1]
                    units += [(request.benchmark, method, rep, first), (request.benchmark, method, rep, second)]
                else:
                    units.append((request.benchmark, method, rep, None))
    if schedule == "rmit":
        rng.shuffle(units)
    plan = []
    for position, (benchmark, method, rep, side) in enumerate(units):
        if side is not None:
            sides: tuple[str, ...] = (side,)
            placement = {side: cpus[rng.randrange(2)]}
        else:
            sides = SIDES if rng.random() < 0.5 else SIDES[::-1]
            first_cpu, second_cpu = cpus if rng.random() < 0.5 else cpus[::-1]
            placement = {"A": first_cpu, "B": second_cpu}
        plan.append(PlannedRun(position, benchmark, method, rep, sides, placement))
    return plan
