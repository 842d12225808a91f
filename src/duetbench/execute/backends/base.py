"""The execution-backend interface: where and how a campaign's planned runs are measured.

`duet run` has one start-up path (usecases/campaign.py): read the campaign, choose the seed once,
make the plan, record the campaign (its source hash computed once), print a dry run, resume, and
after measuring: the summary. A backend does none of that. It is handed a recorded campaign and its
plan (`CampaignJob`) and only executes the planned runs, so that every measured run ends up in the
job's store; the use case then reads the results back from there.

Two kinds of backend exist:
- in-process (`local`, `container`): the runs are measured on this machine by the campaign's
  per-run loop (`CampaignJob.loop`, given by the use case: launch, parse, store, stop rules);
- remote (`slurm`): the runs are measured elsewhere by workers which re-enter the same loop there
  (`usecases.campaign.worker_loop`) and store into a database the backend then collects from.

A new backend subclasses `Backend`, implements `execute`, and is named in `registry.BACKENDS`.
"""
from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from duetbench.plan.campaign import PlannedRun

if TYPE_CHECKING:
    from rich.console import Console

    from duetbench.config.campaign_model import Campaign
    from duetbench.execute.container import ContainerEngine
    from duetbench.store.campaigns import CampaignStore
    from duetbench.store.location import StoreLocation

#: How a backend's execution ended. "finished": every run it was given was attempted (a run may have
#: failed, or a worker may not have stored its share: the use case compares plan and store);
#: "stopped": the time budget ran out; "interrupted": Ctrl-C or SIGTERM.
STATUSES = ("finished", "stopped", "interrupted")


class RunLoop(Protocol):
    """The campaign's per-run loop, bound to one store and campaign: measures the runs of `runs` that
    are not stored yet, in order, storing each as it finishes; returns one of `STATUSES`.
    `engine`: run the sides in containers of that engine (None: as local processes)."""

    def __call__(self, runs: Sequence[PlannedRun], *, engine: ContainerEngine | None) -> str: ...


@dataclass
class CampaignJob:
    """What the start-up path hands a backend: a recorded campaign and where its results go."""

    campaign: Campaign
    campaign_id: int
    uid: str
    #: `CampaignStore.begin`'s keyword arguments as recorded (plan and run_dir included): a worker
    #: with its own database records the same campaign (same uid) from them.
    recorded: dict[str, Any]
    plan: list[PlannedRun]
    #: The keys stored when execution began (resuming: the earlier runs; else empty).
    done: set[str]
    run_root: Path
    store: CampaignStore
    location: StoreLocation
    #: The run options as JSON (`RunOptions.to_json`), for workers in other processes.
    run_options: dict[str, Any]
    loop: RunLoop
    console: Console
    progress: bool = True

    @property
    def todo(self) -> list[PlannedRun]:
        return [p for p in self.plan if p.key not in self.done]


@dataclass(frozen=True)
class Outcome:
    status: str  # one of STATUSES
    #: Why runs may be missing although the backend finished (e.g. which workers failed), for the user.
    detail: str = ""


class Backend(ABC):
    """Executes a campaign's planned runs. Constructed once per `duet run` with the campaign (already
    checked), the `--executor` asked for and the backend's own command-line settings."""

    name: ClassVar[str]
    #: Backends of one family may resume each other's campaigns (local ↔ container: the executor decides).
    family: ClassVar[str]
    #: In "N of M runs left to …" of a resumed dry run.
    verb: ClassVar[str] = "measure"

    def __init__(self, campaign: Campaign, executor: str, settings: Mapping[str, Any]) -> None:
        self.campaign = campaign
        self.executor = executor
        self.settings = dict(settings)

    @classmethod
    def for_campaign(cls, campaign: Campaign, executor: str, settings: Mapping[str, Any]) -> Backend:
        """The backend to use for this campaign (a subclass may choose another, e.g. local → container)."""
        return cls(campaign, executor, settings)

    def plan_cpus(self) -> tuple[int, int]:
        """The CPU pair written into the plan (where each side runs). Raises DuetError when the campaign
        cannot run here (a duet with one CPU)."""
        from duetbench.execute.backends.local import measured_cpus

        return measured_cpus(self.campaign)

    def dry_run_text(self, plan: Sequence[PlannedRun]) -> str:
        return f"dry run: nothing was measured ({len(plan)} runs planned)"

    def check(self) -> None:  # noqa: B027 -- an optional hook: most backends have nothing to check
        """Before the campaign is recorded: fail now (DuetError) if this backend cannot run it here."""

    def reserve(self, label: str) -> contextlib.AbstractContextManager[object]:
        """Held while the campaign is recorded and executed: in-process backends take the machine's
        measurement lock (execute/lock.py), remote ones need nothing on this host."""
        return contextlib.nullcontext()

    def run_root(self, store_dir: Path, campaign_id: int, uid: str) -> Path:
        """Where the runs' raw outputs go (`store_dir`: the database file's directory).

        Called once, for a campaign just recorded: a directory already there belongs to another database
        in `store_dir` (or to one deleted and made anew), which numbers its campaigns from 1 too. Its
        outputs are kept as they are: this campaign's directory then also carries its uid."""
        root = (store_dir / "campaigns" / f"{campaign_id}-{self.campaign.name}").resolve()
        return root.with_name(f"{campaign_id}-{uid[:8]}-{self.campaign.name}") if root.exists() else root

    def recorded_options(self) -> dict[str, Any]:
        """Stored with the campaign's options (what a resume needs to continue the same way)."""
        return {"backend": self.family}

    def resume_args(self) -> str:
        """The command-line arguments that resume with this backend, for the messages."""
        return "" if self.family == "local" else f" --backend {self.family}"

    def collect(self, job: CampaignJob) -> None:  # noqa: B027 -- an optional hook: local results are already in the store
        """Resuming, before the runs left are counted: bring results measured elsewhere into the store."""

    @abstractmethod
    def execute(self, job: CampaignJob) -> Outcome:
        """Measure `job.todo` (in plan order) so that each measured run ends up in `job.store`. Raise
        KeyboardInterrupt only after stopping cleanly; DuetError when nothing could be started."""
