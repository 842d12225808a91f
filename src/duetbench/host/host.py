"""Facts about the machine recorded with every comparison (pyperf-style metadata)."""
from __future__ import annotations

import os
import platform
import sys
from pathlib import Path

from duetbench import __version__


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def _cpu_model() -> str | None:
    text = _read("/proc/cpuinfo") or ""
    for line in text.splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return None


def _virtualized() -> bool:
    return " hypervisor" in (_read("/proc/cpuinfo") or "")


def usable_cpus() -> list[int]:
    """CPUs this process may run on, sorted."""
    return sorted(os.sched_getaffinity(0))


def host_facts() -> dict[str, object]:
    governor = _read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
    return {
        "hostname": os.uname().nodename,
        "kernel": platform.release(),
        "machine": platform.machine(),
        "cpu_model": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "usable_cpus": usable_cpus(),
        "virtualized": _virtualized(),
        "clocksource": _read("/sys/devices/system/clocksource/clocksource0/current_clocksource"),
        # In VMs without a cpufreq driver, frequency scaling is not observable, which is not "off".
        "cpu_governor": governor if governor is not None else "not observable",
        "python": sys.version.split()[0],
        "duetbench": __version__,
    }
