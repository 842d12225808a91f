"""The container backend: measured on this machine like the local one, each side in a podman or docker
container of its benchmark's image (execute/container.py: CPU, barrier page and outputs passed through)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from duetbench.errors import DuetError
from duetbench.execute.backends.base import Backend, CampaignJob, Outcome
from duetbench.execute.backends.local import LocalBackend, with_images
from duetbench.execute.container import ENGINES, ContainerEngine, find_engine

if TYPE_CHECKING:
    from duetbench.config.campaign_model import Campaign


class ContainerBackend(LocalBackend):
    name: ClassVar[str] = "container"
    #: Resumable by `--backend local` and the other way round: `--executor` chooses between them.
    family: ClassVar[str] = "local"

    def __init__(self, campaign: Campaign, executor: str, settings: Mapping[str, Any]) -> None:
        super().__init__(campaign, executor, settings)
        self.engine: ContainerEngine | None = None

    @classmethod
    def for_campaign(cls, campaign: Campaign, executor: str, settings: Mapping[str, Any]) -> Backend:
        if executor == "local":
            raise DuetError("the container backend runs sides in containers, but --executor local was given",
                            hint="use --executor auto, podman or docker")
        if not with_images(campaign):
            asked = "--backend container" if executor == "auto" else f"--executor {executor}"
            raise DuetError(f"{asked}: no benchmark in the campaign names a container image",
                            hint="add 'container: IMAGE' to the campaign or a benchmark")
        return cls(campaign, executor, settings)

    def check(self) -> None:
        """Find an engine that can run containers here (`--executor auto`: podman, else docker)."""
        if self.executor in ENGINES:
            self.engine = find_engine(self.executor)
            return
        problems = []
        for name in ENGINES:
            try:
                self.engine = find_engine(name)
                return
            except DuetError as exc:
                problems.append(str(exc))
        raise DuetError(f"benchmark {with_images(self.campaign)[0]} needs a container engine and none works here: "
                        + "; ".join(problems), hint="install podman (apt-get install podman runc)")

    def execute(self, job: CampaignJob) -> Outcome:
        if self.engine is None:
            self.check()
        return Outcome(job.loop(job.plan, engine=self.engine))
