"""The container backend: measured on this machine like the local one, each side in a podman or docker
container of its benchmark's image (execute/container.py: CPU, barrier page and outputs passed through)."""
from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import msgspec

from duetbench.errors import DuetError
from duetbench.execute.backends.base import Backend, CampaignJob, Outcome
from duetbench.execute.backends.local import LocalBackend, with_images
from duetbench.execute.container import (
    ENGINES,
    MISSING,
    ContainerEngine,
    find_engine,
    find_image,
    pull_image,
    user_key,
)
from duetbench.execute.container_user import grant, grantee, image_user, run_as

if TYPE_CHECKING:
    from duetbench.config.campaign_model import BenchmarkSpec, Campaign


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
        """Find an engine that can run containers here (`--executor auto`: podman, else docker), and make
        sure it has every image the campaign names."""
        from duetbench.config.campaign import setting_error

        for bench in self.campaign.benchmarks:
            unshared = _unshared_result(bench)
            if unshared:
                raise setting_error(self.campaign, bench.name, "results",
                                    f"{unshared!r} is outside the side's cwd and {{outdir}}, the only host "
                                    "directories its container shares: the harness cannot write it there",
                                    hint="write it under the cwd or {outdir} (e.g. '{outdir}/result.json')")
        self.engine = self._find_engine()
        images: dict[str, str] = {}  # image -> the first benchmark that names it
        for bench in self.campaign.benchmarks:
            for side in bench.sides.values():
                if side.container is not None:
                    images.setdefault(side.container.image, bench.name)
        problems = {image: find_image(self.engine, image) for image in images}
        missing = [image for image, problem in problems.items() if problem == MISSING]
        if missing and not any(p not in (None, MISSING) for p in problems.values()):
            # A pull is no measurement, but would disturb one: it waits for the machine like one.
            with self.reserve(f"duet run {self.campaign.name}: pulling container images"):
                for image in missing:
                    problems[image] = pull_image(self.engine, image)
                    if problems[image]:
                        break
        for image, problem in problems.items():
            if problem:
                raise setting_error(self.campaign, images[image], "container",
                                    f"{self.engine.name} cannot run image {image!r}: {problem}",
                                    hint=f"check the name ('{self.engine.name} images' lists this machine's), "
                                         "or pull, load or import it first")
        self.engine = msgspec.structs.replace(self.engine, users=self._container_users())

    def _container_users(self) -> dict[str, int]:
        """The host uid of each side's container user that is not root (container_user.py), checked to be
        one the barrier page can be given to; each image's USER is asked for once."""
        from duetbench.config.campaign import setting_error

        assert self.engine is not None
        image_users: dict[str, str] = {}
        uids: dict[str, int | None] = {}
        page_ok: dict[int, bool] = {}
        for bench in self.campaign.benchmarks:
            for side in bench.sides.values():
                spec = side.container
                if spec is None:
                    continue
                if spec.image not in image_users:
                    image_users[spec.image] = image_user(self.engine, spec.image)
                key = user_key(spec)
                if key not in uids:
                    uids[key] = grantee(self.engine, spec.image, list(spec.options), image_users[spec.image])
                uid = uids[key]
                # (only a synchronous duet gives its harness the page; `auto` may choose one)
                if uid is None or not {"duet", "auto"} & set(bench.methods):
                    continue
                if uid not in page_ok:
                    page_ok[uid] = _can_grant_page(uid)
                if not page_ok[uid]:
                    user = run_as(list(spec.options), image_users[spec.image])
                    raise setting_error(self.campaign, bench.name, "container",
                                        f"image {spec.image!r} runs its command as user {user!r} (host uid {uid}), "
                                        "which cannot be given the duet's barrier page in /dev/shm (no ACLs "
                                        "there): its harness could not synchronize",
                                        hint=f"run it as root: container: {{image: {spec.image}, options: "
                                             '["--user=0"]}, or run duet as root')
        return {key: uid for key, uid in uids.items() if uid is not None}

    def _find_engine(self) -> ContainerEngine:
        if self.executor in ENGINES:
            return find_engine(self.executor)
        problems = []
        for name in ENGINES:
            try:
                return find_engine(name)
            except DuetError as exc:
                problems.append(str(exc))
        raise DuetError(f"benchmark {with_images(self.campaign)[0]} needs a container engine and none works here: "
                        + "; ".join(problems), hint="install podman (apt-get install podman runc)")

    def execute(self, job: CampaignJob) -> Outcome:
        if self.engine is None:
            self.check()
        return Outcome(job.loop(job.plan, engine=self.engine))


def _can_grant_page(uid: int) -> bool:
    """Whether a barrier page in /dev/shm can be given to `uid` (container_user.grant), tried on a file there."""
    import tempfile

    try:
        fd, name = tempfile.mkstemp(prefix="duetbench-probe-", dir="/dev/shm")
    except OSError:
        return True  # no page in /dev/shm at all: BarrierPage says so at the first run
    os.close(fd)
    try:
        return grant(Path(name), uid) is not None
    finally:
        os.unlink(name)


def _unshared_result(bench: BenchmarkSpec) -> str | None:
    """A result file a side in a container would write outside what is mounted (its cwd and {outdir}):
    it stays in the container, and every run would fail with the file not found."""
    for side in bench.sides.values():
        if side.container is None:
            continue
        for declared in bench.results:
            if declared.startswith("{outdir}"):
                continue
            if not Path(os.path.normpath(side.cwd / declared)).is_relative_to(side.cwd):
                return declared
    return None
