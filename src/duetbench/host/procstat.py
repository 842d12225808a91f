"""System-wide counters from /proc that explain a measurement: steal time per CPU.

Steal is time the hypervisor ran something else while this VM's vCPU wanted to run (EMP, Suh et al. (EMP)
§3: the machine's own noise is recorded beside every run so that a result can be explained later).
"""
from __future__ import annotations

import os
from pathlib import Path

_TICK_S = 1.0 / os.sysconf("SC_CLK_TCK")


def read_steal_seconds(path: Path = Path("/proc/stat")) -> dict[int, float]:
    """Cumulative steal time per CPU in seconds (8th value of each ``cpuN`` line), {} if unavailable."""
    steal: dict[int, float] = {}
    try:
        text = path.read_text()
    except OSError:
        return steal
    for line in text.splitlines():
        if line.startswith("cpu") and line[3:4].isdigit():
            fields = line.split()
            if len(fields) > 8:
                steal[int(fields[0][3:])] = int(fields[8]) * _TICK_S
    return steal


def steal_seconds_from_ticks(ticks: object) -> float | None:
    """A steal count in clock ticks as the launcher reports it (``steal_ticks``; -1 or absent: unknown)."""
    return ticks * _TICK_S if isinstance(ticks, int) and ticks >= 0 else None


def steal_delta(before: dict[int, float], after: dict[int, float],
                cpu: int | tuple[int, ...] | None) -> float | None:
    """Steal seconds on ``cpu`` (or summed over a tuple of CPUs: a command given several) between two
    readings; all CPUs summed when ``cpu`` is None."""
    if not before or not after:
        return None
    if cpu is None:
        return sum(after.get(c, 0.0) - v for c, v in before.items())
    cpus = cpu if isinstance(cpu, tuple) else (cpu,)
    if any(c not in before or c not in after for c in cpus):
        return None
    return sum(after[c] - before[c] for c in cpus)
