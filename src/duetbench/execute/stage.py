"""What the runners of one comparison share: scratch directory, launchers, release gate, cgroups."""
from __future__ import annotations

import os
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from duetbench.execute.invocation import LauncherServer, ReleaseGate, forget_cgroup_usage
from duetbench.execute.scratch import scratch_directory
from duetbench.host.activity import Snapshot
from duetbench.host.cgroup import SideCgroup

if TYPE_CHECKING:
    from duetbench.execute.runner import RunSettings


class RunnerStage:
    """What the runners of one comparison share: the scratch directory, the launchers (one per CPU) and
    their release gate, the sides' cgroups, and the last noise-attribution snapshot. `--method auto`
    runs four runners in its pilot before the measured one; each made and ended all of these itself,
    ~17 ms per switch of which ~11 went to that (docs/notes/overhead.md, twelfth pass). A runner given no
    stage makes one for its own run. Ended (launchers, gate, scratch, cgroups) on exit."""

    def __init__(self) -> None:
        self.servers: dict[int, LauncherServer] = {}
        self.gate: ReleaseGate | None = None
        self.workdir: Path | None = None
        #: The snapshot that closed the last runner's noise window (`execute/noise.NoiseWindows.hand_on`).
        self.noise: tuple[Snapshot, float, float] | None = None
        self._groups: dict[str, SideCgroup | None] = {}
        self._stderr_files: set[Path] = set()
        self._tag = f"duetbench-{os.getpid()}"
        self._ends = ExitStack()

    def __enter__(self) -> RunnerStage:
        forget_cgroup_usage()
        # Ended in reverse: the launchers and their gate, then the scratch directory, then the cgroups.
        self._ends.callback(self._remove_cgroups)
        self.workdir = Path(self._ends.enter_context(scratch_directory("run")))
        self.gate = ReleaseGate()
        self._ends.callback(self._end_launchers)
        return self

    def __exit__(self, *exc: Any) -> None:
        self._ends.__exit__(*exc)

    def _end_launchers(self) -> None:
        for server in self.servers.values():
            server.close()
        self.servers.clear()
        if self.gate is not None:
            self.gate.close()
            self.gate = None

    def _remove_cgroups(self) -> None:
        for group in self._groups.values():
            if group is not None:
                group.remove()
        self._groups = {}

    def queued_stderr(self, cpu: int, slot: int) -> Path:
        """The file the stderr of queued request `slot` on `cpu`'s launcher goes to, made here the first
        time (later batches reuse it; the child empties it). Made by the child instead, between two pairs
        while both CPUs were busy, a new file on ext4 took ~0.2 ms (0.16-0.33) of the gap on a 2-vCPU
        Intel Xeon VM, an existing one ~11 us; made here, before the batch, ~15 us (issue 17). One that
        cannot be made here (a full disk) is left to the child, whose failure to open it is reported as
        the command's ("cannot set up the command's output ...")."""
        assert self.workdir is not None
        path = self.workdir / f"queued-{cpu}-{slot}.stderr"
        if path not in self._stderr_files:
            try:
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o644))
            except OSError:
                return path
            self._stderr_files.add(path)
        return path

    def cgroups_for(self, settings: RunSettings) -> dict[str, SideCgroup | None]:
        """The cgroups a runner of `settings` measures its sides in, made on first use: one per side and
        CPU for a duet (queued pairs swap CPUs between them, and the launcher that ends a side's
        invocation empties and reads that side's cgroup while the other launcher may have started the
        side's next one; each launcher then only touches its own cgroups), else one per side."""
        if not settings.use_cgroups:
            return {side: None for side in settings.argv}
        if settings.method == "duet":
            names = {cgroup_key(side, cpu): f"{self._tag}-{side}-cpu{cpu}"
                     for side in settings.argv for cpu in sorted(set(settings.cpus))}
        else:
            names = {side: f"{self._tag}-{side}" for side in settings.argv}
        for key, name in names.items():
            if key not in self._groups:
                self._groups[key] = SideCgroup.create(name)
        return {key: self._groups[key] for key in names}


def cgroup_key(side: str, cpu: int) -> str:
    return f"{side}@{cpu}"


def ensured(group: SideCgroup | None) -> SideCgroup | None:
    # A compare's cgroups live for all its invocations; if one vanished, launching into it would fail.
    return group.ensure() if group is not None else None
