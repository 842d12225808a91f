"""The local backend: every planned run measured on this machine as local processes, one after another."""
from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from duetbench.errors import DuetError
from duetbench.execute.backends.base import Backend, CampaignJob, Outcome
from duetbench.execute.lock import MeasurementLock
from duetbench.host.host import usable_cpus
from duetbench.plan.schedule import choose_cpus

if TYPE_CHECKING:
    from duetbench.config.campaign_model import Campaign

#: `--executor`: how the sides of a run are started on the measuring machine.
EXECUTORS = ("auto", "local", "podman", "docker")


def cpus_per_command(bench: object, usable: list[int]) -> int:
    """A benchmark's `cpus_per_command` as a count on this machine ("all": every usable CPU); more than
    are usable is a clear error, as is a duet that would need more than twice that."""
    per, problem = _cpus_problem(bench, usable)
    if problem:
        raise DuetError(f"benchmark {getattr(bench, 'name', '?')}: {problem[0]}", hint=problem[1])
    return per


def _cpus_problem(bench: object, usable: list[int]) -> tuple[int, tuple[str, str] | None]:
    """The count, and what is wrong with it here (message, hint)."""
    from duetbench.config.campaign_model import cpus_given

    per = cpus_given(bench, len(usable))
    if per > len(usable):
        return per, (f"{per} CPUs per command, but this process may use only {len(usable)} CPU(s)",
                     f"give at most {len(usable)}, or all")
    duets = [m for m in getattr(bench, "methods", {}) if m in ("duet", "aduet", "auto")]
    if per > 1 and duets and 2 * per > len(usable):
        return per, (f"a {duets[0]} of {per} CPUs per command needs {2 * per} CPUs, this process may use "
                     f"{len(usable)}",
                     "give it methods: {sequential: N} (A and B take turns on the CPUs), or fewer cpus_per_command")
    return per, None


def measured_cpus(campaign: Campaign) -> tuple[int, int]:
    """The two CPUs of this machine the sides run on (one CPU twice when only the sequential method is asked for)."""
    from duetbench.config.campaign import setting_error

    usable = usable_cpus()
    pair = choose_cpus(usable)
    for bench in campaign.benchmarks:
        _, problem = _cpus_problem(bench, usable)
        if problem:
            # before anything runs, so named like the file's other bad settings: at the line that sets it
            raise setting_error(campaign, bench.name, "cpus_per_command", *problem)
    needs_two = any(m in ("duet", "aduet") for b in campaign.benchmarks for m in b.methods)
    if pair is None:
        if needs_two:
            raise DuetError(f"the duet methods need two CPUs, this process may use only {usable}",
                            hint="use 'sequential' only in methods:, or run on a machine with 2+ CPUs")
        return usable[0], usable[0]
    return pair


def with_images(campaign: Campaign) -> list[str]:
    """The benchmarks that name a container image."""
    return [b.name for b in campaign.benchmarks if any(s.container for s in b.sides.values())]


class LocalBackend(Backend):
    name: ClassVar[str] = "local"
    family: ClassVar[str] = "local"

    @classmethod
    def for_campaign(cls, campaign: Campaign, executor: str, settings: Mapping[str, Any]) -> Backend:
        """Local processes, or containers when the executor or the campaign asks for them."""
        if executor not in EXECUTORS:
            raise DuetError(f"unknown executor {executor!r}", hint=f"use one of: {', '.join(EXECUTORS)}")
        images = with_images(campaign)
        if executor == "local":
            if images:
                raise DuetError(f"benchmark {images[0]} names a container image, but --executor local was given",
                                hint="use --executor podman or docker, or remove 'container:' from the campaign")
            return cls(campaign, executor, settings)
        if executor != "auto" or images:
            from duetbench.execute.backends.container import ContainerBackend

            return ContainerBackend.for_campaign(campaign, executor, settings)
        return cls(campaign, executor, settings)

    def reserve(self, label: str) -> contextlib.AbstractContextManager[object]:
        return MeasurementLock(label)

    def execute(self, job: CampaignJob) -> Outcome:
        return Outcome(job.loop(job.plan, engine=None))
