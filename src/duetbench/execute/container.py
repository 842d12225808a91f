"""Running a side inside a container (podman or docker), with what a duet needs passed through.

The container gets the side's CPU (``--cpuset-cpus``), the host's /dev/shm and IPC namespace (the
barrier page lives there), the side's output directory and working directory mounted at the same
paths (so ``{outdir}`` and ``DUET_ITERATION_LOG`` mean the same inside and out), and the side's
environment. CLOCK_MONOTONIC is not namespaced, so the iteration logs of two containers compare.

Machine facts (docs/notes/machine_probe.md §8): podman's default runtime crun refuses hybrid cgroup
layouts, runc works, so podman uses runc when it is installed; the engine's default ulimits exceed
what an unprivileged sandbox may set, so we pass the limits this process has.
"""
from __future__ import annotations

import os
import re
import resource
import shutil
import subprocess
from pathlib import Path

import msgspec

from duetbench.errors import DuetError
from duetbench.execute.owner import page_tag, tag_is_dead
from duetbench.host.cgroup import SideCgroup

ENGINES = ("podman", "docker")


class ContainerEngine(msgspec.Struct, frozen=True):
    name: str  # "podman" | "docker"
    binary: str
    runtime: str | None = None


def find_engine(name: str) -> ContainerEngine:
    """The engine, checked to be able to run containers here (not just installed)."""
    if name not in ENGINES:
        raise DuetError(f"unknown container executor {name!r}", hint=f"use one of: {', '.join(ENGINES)}")
    binary = shutil.which(name)
    if binary is None:
        raise DuetError(f"--executor {name}: {name} is not installed",
                        hint=f"install it (Debian: apt-get install {name}{' runc' if name == 'podman' else ''})")
    try:
        probe = subprocess.run([binary, "info"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise DuetError(f"--executor {name}: '{name} info' failed: {exc}",
                        hint="check the engine's installation") from None
    if probe.returncode != 0:
        reason = (probe.stderr.strip().splitlines() or ["no output"])[-1]
        raise DuetError(f"--executor {name}: the engine cannot run containers here: {reason}",
                        hint="start its daemon or use the local executor")
    runtime = "runc" if name == "podman" and shutil.which("runc") else None
    return ContainerEngine(name, binary, runtime)


#: Engines ask the runtime for large process limits by default (nofile 1048576 with podman), which an
#: unprivileged or sandboxed host may refuse ("setrlimit ... operation not permitted"). We pass this
#: process's own limits instead, capping nproc where hosts were seen to refuse more
#: (docs/notes/machine_probe.md §8: 32768 passed, 50000 failed). A campaign's own --ulimit options come later
#: on the command line and win.
NPROC_CAP = 32768


def _ulimits() -> list[str]:
    args = []
    for flag, limit, cap in (("nofile", resource.RLIMIT_NOFILE, None), ("nproc", resource.RLIMIT_NPROC, NPROC_CAP)):
        soft, hard = resource.getrlimit(limit)
        if hard == resource.RLIM_INFINITY:
            hard = cap or soft
        if soft == resource.RLIM_INFINITY or soft > hard:
            soft = hard
        if cap is not None:
            soft, hard = min(soft, cap), min(hard, cap)
        if hard != resource.RLIM_INFINITY:
            args += ["--ulimit", f"{flag}={soft}:{hard}"]
    return args


def container_argv(engine: ContainerEngine, container: object, argv: list[str], *, cpu: int | tuple[int, ...],
                   cwd: Path, env: dict[str, str], mounts: list[Path], cgroup: SideCgroup | None,
                   name: str) -> list[str]:
    """The engine command line that runs `argv` in the side's container, on its CPU (or CPUs)."""
    image: str = container.image  # type: ignore[attr-defined]
    options: list[str] = list(getattr(container, "options", []))
    cmd = [engine.binary, "run", "--rm", "--name", name]
    if engine.runtime:
        cmd += ["--runtime", engine.runtime]
    cpus = ",".join(map(str, cpu)) if isinstance(cpu, tuple) else str(cpu)
    cmd += ["--cpuset-cpus", cpus, "--ipc", "host", "-v", "/dev/shm:/dev/shm"]
    for path in {*mounts, cwd}:
        cmd += ["-v", f"{path}:{path}"]
    cmd += ["-w", str(cwd)]
    for key, value in env.items():
        cmd += ["--env", f"{key}={value}"]
    if engine.name == "podman":
        cmd += _ulimits()
        if cgroup is not None:
            # The container's processes then count in the side's cgroup (whole-tree CPU time).
            cmd += [f"--cgroup-parent=/{cgroup.path.name}"]
    return cmd + options + [image, *argv]


#: A live orchestrator's containers, one file per orchestrator in /dev/shm (like its barrier pages):
#: "<engine binary>\t<container name>" per line. `sweep_stale_containers` (run by every `duet` command)
#: removes the containers of an orchestrator that was killed (`kill -9` skips `remove_container`, and a
#: killed `podman run` client leaves its container running).
MARKER_PREFIX = "duetbench-containers-"
_MARKER = re.compile(rf"^{MARKER_PREFIX}(\d+)-(\d+)$")


def marker_path(directory: str = "/dev/shm") -> Path:
    return Path(directory, f"{MARKER_PREFIX}{page_tag()}")


def note_container(engine: ContainerEngine, name: str, directory: str = "/dev/shm") -> None:
    """Record a container before it is started, so that a killed orchestrator's can be found."""
    try:
        with open(marker_path(directory), "a", encoding="utf-8") as f:
            f.write(f"{engine.binary}\t{name}\n")
    except OSError:
        pass  # no /dev/shm: the container is still removed by this orchestrator's own clean-up


def forget_containers(directory: str = "/dev/shm") -> None:
    """This orchestrator has removed all its containers: drop its marker."""
    try:
        marker_path(directory).unlink()
    except OSError:
        pass


def sweep_stale_containers(directory: str = "/dev/shm") -> list[str]:
    """Remove the containers of orchestrators that no longer run, then their markers; the names removed.
    Costs a directory listing unless a dead orchestrator left a marker (no engine is started otherwise)."""
    removed: list[str] = []
    try:
        names = os.listdir(directory)
    except OSError:
        return removed
    for file in names:
        match = _MARKER.match(file)
        if match is None or not tag_is_dead(int(match.group(1)), int(match.group(2))):
            continue
        path = Path(directory, file)
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError:
            continue
        for line in lines:
            binary, _, name = line.partition("\t")
            if name and Path(binary).is_absolute():
                _remove(binary, name)
                removed.append(name)
        try:
            path.unlink()
        except OSError:
            pass
    return removed


def _remove(binary: str, name: str) -> None:
    try:
        subprocess.run([binary, "rm", "-f", name], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=120, check=False)
    except (OSError, subprocess.TimeoutExpired):
        pass


def remove_container(engine: ContainerEngine, name: str) -> None:
    """Make sure a container is gone even if its client was killed (timeout, interrupt)."""
    subprocess.run([engine.binary, "rm", "-f", "--ignore", name] if engine.name == "podman"
                   else [engine.binary, "rm", "-f", name],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120, check=False)
