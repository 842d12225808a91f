"""What this machine lets duetbench measure with: cgroups and cpu.stat, hardware counters, taskstats, containers.

Layouts differ (pure cgroup v2, v1, or hybrid with v2 at /sys/fs/cgroup/unified), so they are read
from the mount table, never assumed (docs/notes/machine_probe.md §2).
"""
from __future__ import annotations

import errno as errno_mod
import os

from duetbench.host.doctor.live import LiveProbe
from duetbench.host.doctor.model import Check, Status
from duetbench.host.doctor.sysroot import SysRoot


def cgroup_mounts(root: SysRoot) -> list[tuple[str, str, str]]:
    """(mount point, type, options) of every cgroup/cgroup2 mount."""
    text = root.read("/proc/self/mounts") or root.read("/proc/mounts") or ""
    mounts = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[2] in ("cgroup", "cgroup2"):
            mounts.append((parts[1], parts[2], parts[3]))
    return mounts


def check_cgroups(root: SysRoot) -> Check:
    title = "cgroups"
    mounts = cgroup_mounts(root)
    if not mounts:
        return Check("cgroups", title, "warn", ("no cgroup filesystem mounted",),
                     "CPU time of processes that escape the launcher is counted only through the subreaper; "
                     "mount cgroup2 (mount -t cgroup2 none /sys/fs/cgroup) for whole-tree cpu.stat.")
    v2 = [m for m in mounts if m[1] == "cgroup2"]
    v1 = [m for m in mounts if m[1] == "cgroup"]
    layout = "hybrid (v1 + v2)" if v1 and v2 else ("v2 (unified)" if v2 else "v1 (legacy)")
    evidence = [f"layout: {layout}"]
    if v1:
        controllers = sorted({o for _, _, opts in v1 for o in opts.split(",")
                              if o in ("cpu", "cpuacct", "cpuset", "memory", "pids", "blkio", "freezer")})
        evidence.append(f"v1 controllers: {', '.join(controllers) or 'none'}")
    status: Status = "ok"
    fix = None
    if v2:
        mount = v2[0][0]
        ctrl = root.read(f"{mount}/cgroup.controllers")
        has_stat = root.exists(f"{mount}/cpu.stat")
        # On the live machine: only where this user may make the sides' cgroups is anything measured there.
        usable, ours = _usable_by_us(mount) if root.is_live and has_stat else (True, None)
        evidence.append(f"v2 at {mount}: controllers {ctrl or 'none'}; cpu.stat "
                        + (("present (whole-tree CPU time is measured)" if usable else "present") if has_stat
                           else "missing"))
        pressure = root.exists(f"{mount}/cpu.pressure")
        evidence.append("cpu.pressure " + ("present" if not usable else
                                           "present (each side's run-queue wait is measured: a duet tells a side held "
                                           "off its CPU from one that sleeps)" if pressure else
                                           "missing (no PSI: a duet tells a side held off its CPU by wall - CPU time, "
                                           "which sleeping and I/O fill too)"))
        if ours is not None:
            evidence.append(ours)
        leftovers = [n for n in root.listdir(mount) if n.startswith("duetbench-")]
        if leftovers:
            evidence.append(f"{len(leftovers)} leftover duetbench-* cgroups under {mount} (from interrupted runs)")
            status = "warn"
            fix = (f"The next duet run removes the empty ones whose orchestrator is gone; any left (a process still "
                   f"inside, or named without a pid by an old version): rmdir {mount}/duetbench-*")
        if not has_stat:
            status = "warn"
            fix = "cgroup v2 cpu.stat is missing (kernel older than 4.15?): whole-tree CPU time falls back to wait4"
        elif not usable:
            status = "warn"
            fix = ("Without a side's run-queue wait a short duet cannot tell a command that sleeps or waits for I/O "
                   "from one held off its CPU by another process, and may leave the wall-time ratio unbounded. Run "
                   "duet in a cgroup delegated to you: systemd-run --user --scope -p Delegate=yes duet compare … "
                   "(or as root).")
    else:
        status = "info"
        fix = "No cgroup v2: whole-tree CPU time comes from wait4 with a subreaper (also exact for descendants)."
    return Check("cgroups", title, status, tuple(evidence), fix)


def _usable_by_us(mount: str) -> tuple[bool, str | None]:
    """Whether this user may make the sides' cgroups (host/cgroup.py `find_cgroup2_root`), and a line of
    evidence where it is not root's way: an ordinary user may not make children under the mount, and
    measures nothing there unless it runs in a cgroup delegated to it."""
    from duetbench.host.cgroup import find_cgroup2_root

    parent = find_cgroup2_root()
    user = f"uid {os.geteuid()}"
    if parent is None:
        return False, (f"this user ({user}) may not make cgroups under {mount}, and runs in no cgroup delegated to "
                       "it: the sides run without cgroups (their CPU time comes from wait4 alone, which still "
                       "counts daemonized children; their run-queue wait is not measured)")
    if str(parent) != mount:
        return True, f"this user ({user}) makes the sides' cgroups in its delegated cgroup {parent}"
    return True, None


_PMU_DIRS = ("cpu", "cpu_core", "cpu_atom", "armv8_pmuv3", "armv8_pmuv3_0")


def check_perf_counters(root: SysRoot, probe: LiveProbe) -> Check:
    title = "Hardware counters"
    # Reading each source's type (not only listing it) is what lets a snapshot keep the directory.
    devices = [d for d in root.listdir("/sys/bus/event_source/devices")
               if root.read(f"/sys/bus/event_source/devices/{d}/type") is not None]
    pmus = [d for d in devices if d in _PMU_DIRS or d.startswith("armv8_")]
    paranoid = root.read("/proc/sys/kernel/perf_event_paranoid")
    evidence = [f"event sources: {', '.join(devices) or 'none'}"
                + ("" if pmus else " (no CPU PMU)")]
    if paranoid is not None:
        evidence.append(f"perf_event_paranoid = {paranoid}")
    result = probe.perf_hw_cycles()
    if result is not None:
        if result.ok:
            evidence.append("perf_event_open(cycles) succeeded")
        else:
            name = errno_mod.errorcode.get(result.errno, str(result.errno))
            meaning = {errno_mod.ENOENT: "no such hardware event (no PMU, typical in VMs)",
                       errno_mod.EOPNOTSUPP: "the PMU cannot count this event",
                       errno_mod.EACCES: "not permitted (perf_event_paranoid)",
                       errno_mod.EPERM: "not permitted (perf_event_paranoid or a seccomp filter)",
                       errno_mod.ENODEV: "no such PMU device",
                       errno_mod.ENOSYS: "perf events not built into the kernel",
                       }.get(result.errno, os.strerror(result.errno))
            evidence.append(f"perf_event_open(cycles) failed: {name}, {meaning}")
        available = result.ok
    elif devices:
        available = bool(pmus)
        evidence.append("perf_event_open not tried (not the live machine)")
    else:
        return Check("perf-counters", title, "not-observable", tuple(evidence))
    if available:
        return Check("perf-counters", title, "ok", tuple(evidence))
    return Check("perf-counters", title, "info", tuple(evidence),
                 "Cycles and instructions cannot be counted here; duetbench measures time (wall, process time) "
                 "and does not need them.")


def check_taskstats(root: SysRoot, probe: LiveProbe) -> Check:
    title = "taskstats"
    family = probe.taskstats_family()
    delayacct = root.read("/proc/sys/kernel/task_delayacct")
    extra = (f"task_delayacct = {delayacct}",) if delayacct is not None else ()
    if family is False:
        return Check("taskstats", title, "not-observable", ("the netlink TASKSTATS family could not be asked",
                                                           *extra))
    if family is None:
        return Check("taskstats", title, "info", ("no TASKSTATS generic-netlink family (CONFIG_TASKSTATS off)",
                                                  *extra),
                     "Per-task exit records are unavailable; wait4 and cgroup cpu.stat are used instead.")
    return Check("taskstats", title, "ok", (f"TASKSTATS generic-netlink family id {family}", *extra))


def check_containers(root: SysRoot, probe: LiveProbe) -> Check:
    title = "Container engines"
    engines = probe.container_engines()
    if engines is None:
        return Check("containers", title, "not-observable",
                     ("container engines can be asked only on the live machine",))
    evidence = []
    for e in engines:
        if e.path is None:
            evidence.append(f"{e.name}: not installed")
        else:
            reach = "engine reachable, " if e.reachable else "engine not reachable: "
            evidence.append(f"{e.name}: {e.path}, {reach}{e.detail}")
    if any(e.reachable for e in engines):
        return Check("containers", title, "ok", tuple(evidence))
    return Check("containers", title, "info", tuple(evidence),
                 "Only needed for campaigns with --executor podman/docker: install podman (apt-get install podman) "
                 "or start the docker daemon.")
