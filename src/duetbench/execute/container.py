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

import resource
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from duetbench.errors import DuetError
from duetbench.host.cgroup import SideCgroup

ENGINES = ("podman", "docker")


@dataclass(frozen=True)
class ContainerEngine:
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
        raise DuetError(f"--executor {name}: '{name} info' failed: {exc}", hint="check the engine's installation") from None
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


def container_argv(engine: ContainerEngine, container: object, argv: list[str], *, cpu: int, cwd: Path,
                   env: dict[str, str], mounts: list[Path], cgroup: SideCgroup | None, name: str) -> list[str]:
    """The engine command line that runs `argv` in the side's container."""
    image: str = container.image  # type: ignore[attr-defined]
    options: list[str] = list(getattr(container, "options", []))
    cmd = [engine.binary, "run", "--rm", "--name", name]
    if engine.runtime:
        cmd += ["--runtime", engine.runtime]
    cmd += ["--cpuset-cpus", str(cpu), "--ipc", "host", "-v", "/dev/shm:/dev/shm"]
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


def remove_container(engine: ContainerEngine, name: str) -> None:
    """Make sure a container is gone even if its client was killed (timeout, interrupt)."""
    subprocess.run([engine.binary, "rm", "-f", "--ignore", name] if engine.name == "podman"
                   else [engine.binary, "rm", "-f", name],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120, check=False)
