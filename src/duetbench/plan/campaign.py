"""The plan of a campaign: every run of every benchmark and method, in the order it will execute.

A *run* is one launch of a harness: for a duet both sides at once, for the sequential method one
side alone (a sequential repetition is an A run and a B run, scheduled independently). The plan is
made once, from a recorded seed, and stored before anything is measured, so that `--resume` (and a
cluster backend later) executes exactly the same runs in exactly the same order.

Schedules:
- ``rmit``: randomized multiple interleaved trials (Abedi & Brecht 2017; Drozdík 2023 §3) across the
  whole campaign: all runs of all benchmarks and methods are shuffled together, so a slow period of
  the machine spreads over everything instead of landing on one benchmark or one method.
- ``ordered``: benchmarks in file order, methods in the order sequential, duet, aduet, repetitions
  in order (useful to debug a campaign; not recommended for measuring).
In both, which CPU each side gets and which side is launched first are randomized, balanced per
benchmark and method (see make_plan), so fixed asymmetries cancel instead of biasing the ratio.

A benchmark with ``methods: {auto: N}`` is planned with N duet runs *and* N sequential repetitions; its
*pilot* — duet run 0 and sequential repetition 0 — takes the benchmark's first three places, so that
`duet run` can choose the method before any other run of it, and skip the other method's remaining runs.
"""
from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from duetbench.model.method import AUTO, AUTO_CANDIDATES, METHODS
from duetbench.plan.schedule import SIDES

METHOD_ORDER = METHODS


def is_pilot(run: PlannedRun, methods: dict[str, int]) -> bool:
    """Whether `run` is one of its `auto` benchmark's pilot runs (duet run 0, sequential repetition 0)."""
    return AUTO in methods and run.method in AUTO_CANDIDATES and run.repetition == 0


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
        # asdict's deep copy took 2 s of the 200 000 runs a hyperfine export can plan; this is the same dict
        return {"position": self.position, "benchmark": self.benchmark, "method": self.method,
                "repetition": self.repetition, "sides": list(self.sides), "cpus": dict(self.cpus)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PlannedRun:
        """The run `to_json` wrote (parsed JSON: its values are whatever the file holds)."""
        return cls(position=int(data["position"]), benchmark=str(data["benchmark"]),
                   method=str(data["method"]), repetition=int(data["repetition"]),
                   sides=tuple(data["sides"]),
                   cpus={str(k): int(v) for k, v in dict(data["cpus"]).items()})


@dataclass(frozen=True)
class RunRequest:
    """What a benchmark asks for: how many runs of each method."""

    benchmark: str
    methods: dict[str, int]


def _balanced(n: int, rng: random.Random) -> list[bool]:
    """n coin flips with exactly half heads (one more when n is odd, chosen at random), in random order."""
    heads = n // 2 + (rng.random() < 0.5 if n % 2 else 0)
    flips = [True] * heads + [False] * (n - heads)
    rng.shuffle(flips)
    return flips


def _pilot_first(units: list[tuple[str, str, int, tuple[str, ...], dict[str, int]]], benchmark: str
                 ) -> list[tuple[str, str, int, tuple[str, ...], dict[str, int]]]:
    """The benchmark's pilot runs moved to its earliest places (in their shuffled order), its other runs to
    the places after them (in theirs); other benchmarks' runs keep their places."""
    places = [i for i, u in enumerate(units) if u[0] == benchmark]
    mine = [units[i] for i in places]
    pilot = [u for u in mine if u[1] in AUTO_CANDIDATES and u[2] == 0]
    rest = [u for u in mine if not (u[1] in AUTO_CANDIDATES and u[2] == 0)]
    out = list(units)
    for i, u in zip(places, pilot + rest, strict=True):
        out[i] = u
    return out


def make_plan(requests: Iterable[RunRequest], *, schedule: str, seed: int, cpus: tuple[int, int]) -> list[PlannedRun]:
    """Expand benchmarks × methods × repetitions into the ordered list of runs (pure; seeded).

    CPU assignment and launch order are randomized *balanced* per benchmark and method: in half of the
    runs A gets the first CPU (and launches first), in the other half B does, in random order. Plain
    coin flips would leave, say, all of 3 duet runs with A on the same CPU a quarter of the time, and a
    vCPU that is slower for a while (a busy hyperthread sibling on the host) would then bias the ratio.
    """
    if schedule not in ("rmit", "ordered"):
        raise ValueError(f"schedule must be 'rmit' or 'ordered', got {schedule!r}")
    rng = random.Random(seed)
    units: list[tuple[str, str, int, tuple[str, ...], dict[str, int]]] = []
    auto = {r.benchmark for r in requests if "auto" in r.methods}
    for request in requests:
        wanted = ({m: request.methods["auto"] for m in AUTO_CANDIDATES} if request.benchmark in auto
                  else request.methods)
        for method in METHOD_ORDER:
            n = wanted.get(method, 0)
            if n <= 0:
                continue
            if method == "sequential":
                first_is_a = _balanced(n, rng)
                cpu_of = {side: _balanced(n, rng) for side in SIDES}
                for rep in range(n):
                    order = SIDES if first_is_a[rep] else SIDES[::-1]
                    for side in order:
                        cpu = cpus[0] if cpu_of[side][rep] else cpus[1]
                        units.append((request.benchmark, method, rep, (side,), {side: cpu}))
            else:
                a_first_cpu, a_launches_first = _balanced(n, rng), _balanced(n, rng)
                for rep in range(n):
                    placement = {"A": cpus[0], "B": cpus[1]} if a_first_cpu[rep] else {"A": cpus[1], "B": cpus[0]}
                    units.append((request.benchmark, method, rep, SIDES if a_launches_first[rep] else SIDES[::-1],
                                  placement))
    if schedule == "rmit":
        rng.shuffle(units)
    for name in auto:
        units = _pilot_first(units, name)
    return [PlannedRun(position, benchmark, method, rep, sides, placement)
            for position, (benchmark, method, rep, sides, placement) in enumerate(units)]
