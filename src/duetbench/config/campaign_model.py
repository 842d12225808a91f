"""A campaign as the rest of duetbench sees it: every setting inherited and defaulted, nothing left to look up.

Templates (commands, result paths, environment values) still hold their ``{placeholders}``; they are filled
in per run with :func:`duetbench.config.placeholders.render`.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from duetbench.analyze.stopping import StoppingParams

Schedule = Literal["rmit", "ordered"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ContainerSpec(_Frozen):
    image: str
    options: list[str] = []
    """Extra arguments for the container engine, e.g. ``--memory=2g``."""


class SideSpec(_Frozen):
    """How to start one side (A or B) of a benchmark."""

    command: str
    shell: bool
    """True: run by ``/bin/sh -c``; False: split like a shell would and exec'd directly."""
    cwd: Path
    """Absolute."""
    env: dict[str, str]
    """Added to (not replacing) the environment duet run passes on."""
    container: ContainerSpec | None


class ParserSpec(_Frozen):
    name: str
    options: dict[str, Any] = {}


class Warmup(_Frozen):
    """Iterations to discard at the start of every run: a fixed count, or a fraction of the run's iterations."""

    count: int | None = None
    fraction: float | None = None

    def discard(self, n_iterations: int) -> int:
        """How many of a run's ``n_iterations`` are warmup."""
        if self.fraction is not None:
            # Fraction of the decimal text, so that 29% of 100 is 29 and not floor(28.999999999999996).
            return math.floor(Fraction(repr(self.fraction)) * n_iterations)
        return min(self.count or 0, n_iterations)


class BenchmarkSpec(_Frozen):
    name: str
    sides: dict[str, SideSpec]
    """Keys "A" and "B"."""
    aa: bool
    """B was not given: it is a copy of A (an A/A benchmark, which measures the noise floor)."""
    methods: dict[str, int]
    """Method -> runs, only methods with at least one run, in the order of METHODS; or {"auto": runs}."""
    parser: ParserSpec
    results: list[str]
    """Files the harness writes (templates); relative ones are relative to each side's cwd."""
    warmup: Warmup
    timeout_s: float
    barrier_timeout_s: float
    stopping: dict[str, Any] = {}
    """Adaptive measurement settings as written (the `stopping` mapping; empty: none)."""
    cpus_per_command: int | str = 1
    """CPUs each side's command may use: a count, or "all" (every CPU `duet run` may use)."""


def cpus_given(bench: object, usable: int) -> int:
    """A benchmark's `cpus_per_command` as a count where `usable` CPUs may be used ("all": that many; a
    benchmark-like object without the setting: 1)."""
    from duetbench.plan.schedule import cpu_count

    return cpu_count(getattr(bench, "cpus_per_command", 1), usable)


#: The `stopping` keys that are parameters of the criteria (the others choose criteria and targets).
STOPPING_PARAMETERS = ("mi", "wi_min", "wi_max", "f_min", "cv_threshold", "rciw_threshold", "kld_threshold",
                       "window_iterations", "window_runs")


def stopping_params(criterion: str, stopping: Mapping[str, Any]) -> StoppingParams:
    """The parameters of one criterion from a benchmark's `stopping` settings; DuetError when they do not fit
    together. f_max is the method's planned runs, known only when runs are judged: here at least f_min."""
    from duetbench.analyze.stopping import StoppingParams, criterion_named

    params = {k: stopping[k] for k in STOPPING_PARAMETERS if k in stopping}
    f_max = max(StoppingParams.f_max, params.get("f_min", StoppingParams.f_min))
    return StoppingParams(criterion=criterion_named(criterion), f_max=f_max, **params)


class Campaign(_Frozen):
    name: str
    path: Path
    """The campaign file, absolute."""
    seed: int | None
    """None: the runner draws one and records it."""
    schedule: Schedule
    artifacts: dict[str, str]
    """Name -> shell command, run once per campaign to record facts about the host."""
    benchmarks: list[BenchmarkSpec]
    """In file order."""
    source_text: str
    """The campaign file's text, stored with the results so that a campaign can be re-run as it was."""

    def benchmark(self, name: str) -> BenchmarkSpec:
        for spec in self.benchmarks:
            if spec.name == name:
                return spec
        raise KeyError(name)
