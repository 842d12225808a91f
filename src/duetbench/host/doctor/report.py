"""Running every check on one machine (or a copy of its /proc and /sys), and snapshotting what they read."""
from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from duetbench.errors import DuetError
from duetbench.host.doctor import (
    activity,
    clock_checks,
    cpu_checks,
    facilities,
    kernel_checks,
)
from duetbench.host.doctor.live import LiveProbe, SystemProbe, probe_for
from duetbench.host.doctor.model import Check, Setting
from duetbench.host.doctor.sysroot import SysRoot

#: A copy of /proc and /sys may hold a second snapshot of /proc taken later (sampling checks), here:
LATER = "later"


@dataclass
class DoctorReport:
    root: str
    interval_s: float
    checks: list[Check]

    @property
    def settings(self) -> list[Setting]:
        return [s for c in self.checks for s in c.settings]

    def to_dict(self) -> dict[str, object]:
        counts = {status: sum(1 for c in self.checks if c.status == status)
                  for status in ("ok", "warn", "bad", "info", "not-observable")}
        return {"root": self.root, "interval_s": self.interval_s, "summary": counts,
                "checks": [c.to_dict() for c in self.checks]}


def static_checks(root: SysRoot, probe: LiveProbe) -> list[Check]:
    return [
        cpu_checks.check_virtualization(root),
        cpu_checks.check_frequency(root),
        cpu_checks.check_turbo(root),
        cpu_checks.check_smt(root),
        cpu_checks.check_isolation(root),
        cpu_checks.check_irq_affinity(root),
        cpu_checks.check_cpuidle(root),
        cpu_checks.check_power(root),
        clock_checks.check_clocksource(root),
        clock_checks.check_ntp(root, probe),
        kernel_checks.check_kernel(root),
        kernel_checks.check_aslr(root),
        kernel_checks.check_perf_sampling(root),
    ]


def facility_checks(root: SysRoot, probe: LiveProbe) -> list[Check]:
    return [facilities.check_cgroups(root), facilities.check_perf_counters(root, probe),
            facilities.check_taskstats(root, probe), facilities.check_containers(root, probe)]


def run_checks(root: Path = Path("/"), interval_s: float = 1.0, probe: LiveProbe | None = None,
               sleep: Callable[[float], None] = time.sleep, sysroot: SysRoot | None = None) -> DoctorReport:
    """All checks, machine first, then activity, then facilities. On the live machine the sampling checks
    compare two /proc snapshots ``interval_s`` apart; for a copy, the second one is ``<root>/later``."""
    sr = sysroot or SysRoot(root)
    probe = probe if probe is not None else probe_for(root)
    exclude = frozenset({os.getpid()}) if sr.is_live else frozenset()
    started = time.monotonic()
    before = activity.take_snapshot(sr, exclude)
    machine = static_checks(sr, probe)
    tools = facility_checks(sr, probe)
    after: activity.ProcSnapshot | None = None
    if sr.is_live:
        # The other checks took part of the interval already; sleep only the rest.
        sleep(max(0.0, interval_s - (time.monotonic() - started)))
        after = activity.take_snapshot(sr, exclude)
    elif (Path(root) / LATER).is_dir():
        after = activity.take_snapshot(SysRoot(Path(root) / LATER))
    sampling = [activity.check_load(before, after),
                activity.check_daemons(before, after, hidden=activity.hidden_processes(sr)),
                activity.check_steal(before, after)]
    measured = 0.0
    if after is not None and after.uptime_s is not None and before.uptime_s is not None:
        measured = after.uptime_s - before.uptime_s
    return DoctorReport(root=str(root), interval_s=round(measured, 3), checks=machine + sampling + tools)


def snapshot(dest: Path, interval_s: float = 1.0) -> Path:
    """Copy every file the checks read on this machine into ``dest`` (a new fixture), with the live answers
    in ``live.json`` and a second /proc snapshot under ``later/``."""
    if dest.exists() and any(dest.iterdir()):
        raise DuetError(f"{dest} is not empty", hint="give a new directory for the snapshot")
    try:
        return _snapshot(dest, interval_s)
    except OSError as exc:
        raise DuetError(f"cannot write the snapshot into {dest}: {exc.strerror or exc}"
                        + (f" ({exc.filename})" if exc.filename else ""),
                        hint="give a new directory in a writable place") from None


def _snapshot(dest: Path, interval_s: float) -> Path:
    first = SysRoot(Path("/"))
    probe = SystemProbe()
    run_checks(Path("/"), interval_s=0.0, probe=probe, sysroot=first)
    _copy(first, dest)
    time.sleep(interval_s)
    later = SysRoot(Path("/"))
    activity.take_snapshot(later)
    _copy(later, dest / LATER)
    record = probe.record()
    record["machine"] = platform.machine()
    (dest / "live.json").write_text(json.dumps(record, indent=2) + "\n")
    return dest


def _copy(sr: SysRoot, dest: Path) -> None:
    for absolute in sorted(sr.read_paths):
        src = Path(absolute)
        if not src.is_file():
            continue
        target = dest / absolute.lstrip("/")
        try:
            text = src.read_bytes()
        except OSError:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text)
    for absolute in sr.listed_dirs:
        src = Path(absolute)
        if not src.is_dir():
            continue
        for name in os.listdir(src):
            # Leftover cgroups are counted by name only: keep each with its (empty) cgroup.procs,
            # since version control drops empty directories.
            if name.startswith("duetbench-") and (src / name).is_dir():
                kept = dest / absolute.lstrip("/") / name
                kept.mkdir(parents=True, exist_ok=True)
                (kept / "cgroup.procs").write_text("")
