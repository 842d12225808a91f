"""Running a side inside a container (podman or docker), with what a duet needs passed through.

The container gets the side's CPU (``--cpuset-cpus``), the host's /dev/shm and IPC namespace (the
barrier page lives there), the side's output directory and working directory mounted at the same
paths (so ``{outdir}`` and ``DUET_ITERATION_LOG`` mean the same inside and out), and the side's
environment. Images are made present before the first run (`find_image`) and never pulled by a run,
whose time would then include the download. CLOCK_MONOTONIC is not namespaced, so the iteration logs
of two containers compare.

Machine facts (docs/notes/machine_probe.md §8): podman's default runtime crun refuses hybrid cgroup
layouts, runc works, so podman uses runc when it is installed; the engine's default ulimits exceed
what an unprivileged sandbox may set, so we pass the limits this process has.
"""
from __future__ import annotations

import csv
import io
import os
import re
import resource
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import msgspec

from duetbench.errors import DuetError
from duetbench.execute.owner import page_tag, tag_is_dead
from duetbench.host.cgroup import SideCgroup

ENGINES = ("podman", "docker")
#: Debian's packages for each engine (Debian's "docker" package is a system tray, not the engine).
_PACKAGES = {"podman": "podman runc", "docker": "docker.io"}


class ContainerEngine(msgspec.Struct, frozen=True):
    name: str  # "podman" | "docker"
    binary: str
    runtime: str | None = None
    #: podman's cgroup manager ("cgroupfs" | "systemd", from `podman info`): only cgroupfs takes our side's
    #: cgroup as the container's parent; systemd wants a slice there.
    cgroup_manager: str | None = None
    #: The host uid a non-root container user runs as, by `user_key` of the sides' containers that have
    #: one (`ContainerBackend.check`): each run gives it its barrier page and output directories.
    users: dict[str, int] = msgspec.field(default_factory=dict)


def user_key(container: object) -> str:
    """What decides a side's container user: its image and its engine options (a --user there)."""
    return "\0".join([container.image, *getattr(container, "options", [])])  # type: ignore[attr-defined]


def find_engine(name: str) -> ContainerEngine:
    """The engine, checked to be able to run containers here (not just installed)."""
    if name not in ENGINES:
        raise DuetError(f"unknown container executor {name!r}", hint=f"use one of: {', '.join(ENGINES)}")
    binary = shutil.which(name)
    if binary is None:
        raise DuetError(f"--executor {name}: {name} is not installed",
                        hint=f"install it (Debian: apt-get install {_PACKAGES[name]})")
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
    manager = re.search(r"^\s*cgroupManager:\s*(\S+)", probe.stdout, re.MULTILINE) if name == "podman" else None
    return ContainerEngine(name, binary, runtime, manager.group(1) if manager else None)


#: `find_image`'s answer for an image this machine does not have but a registry may.
MISSING = "missing"


def find_image(engine: ContainerEngine, image: str) -> str | None:
    """None if the engine has `image`; MISSING if not (`pull_image` may get it); else why the name cannot
    be one. Images are checked before the first run: a misspelt one fails the campaign once instead of
    every run, and no measured run includes a download (they run with --pull=never)."""
    try:
        here = subprocess.run([engine.binary, "image", "inspect", "--format", "{{.Id}}", "--", image],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{engine.name} failed: {exc}"
    if here.returncode == 0:
        return None
    if "invalid reference format" in here.stderr:  # not a name a registry could have either
        return "invalid reference format (not an image name)"
    return MISSING


def pull_image(engine: ContainerEngine, image: str) -> str | None:
    """Pull `image`: None once done, else why it could not be (the engine's last line)."""
    print(f"container image {image} is not on this machine: pulling it before anything is measured",
          file=sys.stderr, flush=True)
    try:
        # No terminal for it: podman would ask there which registry a short name means, unseen.
        pulled = subprocess.run([engine.binary, "pull", "--", image], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    except OSError as exc:
        return f"{engine.name} failed: {exc}"
    if pulled.returncode == 0:
        return None
    last = (pulled.stderr.strip().splitlines() or [f"{engine.name} pull exited with {pulled.returncode}"])[-1]
    return last.removeprefix("Error: ")


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
    cmd += ["--pull=never", "--cpuset-cpus", cpus, "--ipc", "host", "-v", "/dev/shm:/dev/shm"]
    for path in {*mounts, cwd}:
        cmd += ["--mount", _bind(path)]
    cmd += ["-w", str(cwd)]
    for key, value in env.items():
        cmd += ["--env", f"{key}={value}"]
    if engine.name == "podman":
        cmd += _ulimits()
        if cgroup is not None and engine.cgroup_manager == "cgroupfs":
            # The container's processes then count in the side's cgroup (whole-tree CPU time). The systemd
            # manager refuses a parent that is not a slice ("did not receive systemd slice as cgroup
            # parent"): every run failed there, so its containers go where podman puts them.
            cmd += [f"--cgroup-parent=/{cgroup.path.name}"]
    # The side's command is what runs, as it would outside (an image's ENTRYPOINT would get it as its
    # arguments instead); an --entrypoint among the options still wins.
    return cmd + ["--entrypoint="] + options + [image, *argv]


def end_container_now(cgroup: SideCgroup | None) -> None:
    """End a side's container at once (its processes count in the side's cgroup: `container_argv`), after
    its launcher was told to stop. The launcher alone ends it three wake-ups later (the engine client, then
    conmon, then the cgroup), each waiting for the CPU the harness spins on: the other side's harness ran
    on alone for ~10 ms, logging iterations of its own, and a stopped sync duet read as unsynchronized."""
    if cgroup is None:
        return
    try:
        (cgroup.path / "cgroup.kill").write_text("1")
    except OSError:
        pass  # no cgroup.kill (Linux < 5.14): the launcher still ends it


def exit_reason(code: int) -> str:
    """What a container side's exit code means when the engine made it up: podman and docker answer 128 + N
    when the container's process was killed by signal N (the launcher only sees the engine exit), so
    a local run's "killed by signal 9" reads "exit code 137" from a container. "" for any other code."""
    if not 128 < code <= 128 + 64:
        return ""
    number = code - 128
    try:
        name = f" ({signal.Signals(number).name})"
    except ValueError:
        name = ""
    oom = ": out of memory, if the container has a memory limit" if number == signal.SIGKILL else ""
    return f"the command in the container was killed by signal {number}{name}{oom}"


def _bind(path: Path) -> str:
    """A --mount bind of `path` at the same path. Not `-v SRC:DST`, which cannot name a path with a colon;
    both engines read --mount as one CSV record, so a comma or quote in the path is quoted."""
    out = io.StringIO()
    csv.writer(out, lineterminator="").writerow(["type=bind", f"src={path}", f"dst={path}"])
    return out.getvalue()


def remove_container_cgroups(name: str, root: Path = Path("/sys/fs/cgroup"), patience_s: float = 1.0) -> None:
    """Remove the cgroups podman made for a removed container under ``--cgroup-parent=/name``: with the
    cgroupfs manager it makes that parent in every hierarchy (cgroup v1 controllers as well as the side's
    own) and leaves it behind, with its ``conmon`` and, after an interrupted run, ``libpod-<id>`` child
    inside: 20 directories per run otherwise, until the next `duet` command sweeps them. Children first;
    processes still exiting (conmon) are given `patience_s`."""
    try:
        tops = [root / name] + [Path(e.path, name) for e in os.scandir(root) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return
    deadline = time.monotonic() + patience_s
    while tops:
        tops = [top for top in tops if not _rmdir_tree(top)]
        if tops and time.monotonic() < deadline:
            time.sleep(0.02)
        else:
            return


def _rmdir_tree(top: Path) -> bool:
    """Remove the empty directories of `top`, children first; whether none is left."""
    gone = True
    for dirpath, _, _ in sorted(os.walk(top), key=lambda w: -w[0].count(os.sep)):
        try:
            os.rmdir(dirpath)
        except FileNotFoundError:
            pass
        except OSError:
            gone = False
    return gone


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
        lines = _own_marker_lines(path)
        if lines is None:
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


def _own_marker_lines(path: Path) -> list[str] | None:
    """A marker's lines if it is a regular file of this user's, else None. The engine binary a marker
    names is run, and anyone may put a file (a link, a FIFO) into /dev/shm: root would run a user's
    program. Another user's containers are not ours to remove anyway (rootless podman has its own)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, encoding="utf-8", errors="replace") as f:
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode) or found.st_uid != os.geteuid():
            return None
        try:
            return f.read().splitlines()
        except OSError:
            return None


def _remove(binary: str, name: str) -> None:
    try:
        subprocess.run([binary, "rm", "-f", name], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=120, check=False)
    except (OSError, subprocess.TimeoutExpired):
        pass


#: How long `remove_container` waits for the engine (one stuck on its storage lock may never answer).
REMOVE_TIMEOUT_S = 120.0


def remove_container(engine: ContainerEngine, name: str) -> bool:
    """Make sure a container is gone even if its client was killed (timeout, interrupt); whether it is.
    An engine that fails or does not answer is not this run's failure: what was measured is kept, and the
    container is left to `sweep_stale_containers`."""
    try:
        # (docker's exit code says "no such container" too, after --rm: not a failure)
        subprocess.run([engine.binary, "rm", "-f", "--ignore", name] if engine.name == "podman"
                       else [engine.binary, "rm", "-f", name], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=REMOVE_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return True
