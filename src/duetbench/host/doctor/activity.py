"""What else runs on the machine: load, busy daemons with their CPU use, steal time (EMP §4.1).

Two snapshots of /proc taken an interval apart. Per-process CPU time comes from every thread's
``schedstat`` (ns run time): ``/proc/<pid>/stat`` counts 10 ms ticks and misses short bursts of
kworkers and daemons (docs/notes/machine_probe.md §7). Time is /proc/uptime, so a copy of /proc works too.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass

from duetbench.errors import DuetError
from duetbench.host.activity import Snapshot, activity_delta, snapshot
from duetbench.host.doctor.model import Check
from duetbench.host.doctor.sysroot import SysRoot


@dataclass
class ProcSnapshot:
    uptime_s: float | None
    cpu_ticks: dict[str, list[int]]  # "cpu", "cpu0", ...: user nice system idle iowait irq softirq steal ...
    loadavg: tuple[float, float, float] | None
    procs_running: int | None
    #: Every thread's schedstat, read the way runs record their noise (measure.activity).
    processes: Snapshot


def _numbers(fields: list[str], kind: type[int] | type[float], count: int | None = None) -> list | None:
    """The fields as numbers, or None when they are too few or not numbers: a copy of /proc (--root) may be
    damaged or hand-made, and a check then says "not observable" instead of failing."""
    if count is not None and len(fields) < count:
        return None
    try:
        values = [kind(v) for v in fields[:count]]
    except ValueError:
        return None
    return values if all(math.isfinite(v) for v in values) else None


def take_snapshot(root: SysRoot, exclude: frozenset[int] = frozenset()) -> ProcSnapshot:
    uptime_fields = _numbers((root.read("/proc/uptime") or "").split(), float, 1)
    uptime = uptime_fields[0] if uptime_fields else None
    cpu_ticks: dict[str, list[int]] = {}
    running = None
    for line in (root.read("/proc/stat") or "").splitlines():
        parts = line.split()
        if parts and parts[0].startswith("cpu"):
            ticks = _numbers(parts[1:], int)
            if ticks:
                cpu_ticks[parts[0]] = ticks
        elif parts and parts[0] == "procs_running":
            count = _numbers(parts[1:], int, 1)
            running = count[0] if count else None
    load = _numbers((root.read("/proc/loadavg") or "").split(), float, 3)
    loadavg = (load[0], load[1], load[2]) if load else None
    # On a copy of another machine our own pid means nothing, so nothing is excluded as "ours".
    try:
        processes = snapshot(exclude, include_self=not root.is_live, files=root)
    except ValueError as exc:  # only a damaged copy: the kernel writes numbers there
        raise DuetError(f"{root.root}: a /proc/<pid>/schedstat file of this copy is not numbers ({exc})",
                        hint="make the copy again with duet doctor --snapshot DIR") from None
    return ProcSnapshot(uptime, cpu_ticks, loadavg, running, processes)


def _cpus(snapshot: ProcSnapshot) -> int:
    return max(1, sum(1 for k in snapshot.cpu_ticks if k != "cpu"))


def check_load(before: ProcSnapshot, after: ProcSnapshot | None) -> Check:
    title = "System load"
    snap = after or before
    if snap.loadavg is None:
        return Check("load", title, "not-observable", ("no /proc/loadavg",))
    cpus = _cpus(snap)
    l1, l5, l15 = snap.loadavg
    evidence = [f"load average {l1:.2f} / {l5:.2f} / {l15:.2f} (1/5/15 min) on {cpus} CPUs"]
    busy = _busy_share(before, after)
    if busy is not None:
        span = _interval(before, after)
        evidence.append(f"CPUs busy {busy:.1%} of the last " + (f"{span:.1f} s" if span is not None else "interval")
                        + " (all processes)")
    per_cpu = max(l1, busy * cpus if busy is not None else 0.0) / cpus
    fix = ("Other work competes for the CPUs: wait for it to finish or stop it (see 'Busy processes'). "
           "Load on one side of a duet is not cancelled by the ratio.")
    return _graded("load", title, per_cpu, warn_at=0.2, bad_at=0.75, evidence=evidence, fix=fix)


def _graded(name: str, title: str, value: float, *, warn_at: float, bad_at: float, evidence: list[str],
            fix: str) -> Check:
    """ok below `warn_at`, warn from it, bad from `bad_at`; the fix is given only when not ok."""
    if value >= bad_at:
        return Check(name, title, "bad", tuple(evidence), fix)
    if value >= warn_at:
        return Check(name, title, "warn", tuple(evidence), fix)
    return Check(name, title, "ok", tuple(evidence))


def _busy_share(before: ProcSnapshot, after: ProcSnapshot | None) -> float | None:
    if after is None or "cpu" not in before.cpu_ticks or "cpu" not in after.cpu_ticks:
        return None
    # The first 8 columns are summed; a kernel that prints more (guest, guest_nice) adds to both rows alike.
    delta = [a - b for a, b in zip(after.cpu_ticks["cpu"], before.cpu_ticks["cpu"], strict=False)]
    total = sum(delta[:8])
    if total <= 0 or len(delta) < 4:
        return None
    idle = delta[3] + (delta[4] if len(delta) > 4 else 0)
    steal = delta[7] if len(delta) > 7 else 0
    return max(0.0, (total - idle - steal) / total)


def _interval(before: ProcSnapshot, after: ProcSnapshot | None) -> float | None:
    """Seconds between the two snapshots by /proc/uptime; None without two readable uptimes."""
    if after is None or before.uptime_s is None or after.uptime_s is None:
        return None
    return after.uptime_s - before.uptime_s


def hidden_processes(root: SysRoot) -> str | None:
    """A line of evidence where /proc hides other users' processes (mounted with hidepid=1/2, as shared
    servers often are): this user then sees, and a measurement's noise attribution (EMP) counts, only its
    own. None where nothing is hidden, or from root, who sees them all."""
    for line in (root.read("/proc/self/mounts") or "").splitlines():
        parts = line.split()
        if len(parts) < 4 or parts[2] != "proc" or parts[1] != "/proc":
            continue
        option = next((o for o in parts[3].split(",") if o.startswith("hidepid=")), None)
        if option is None or option.split("=", 1)[1] in ("0", "off") or (root.is_live and os.geteuid() == 0):
            return None
        return (f"/proc is mounted with {option}: other users' processes are hidden from this user, so neither "
                "this check nor a measurement's noise attribution sees their CPU use (run as root, or ask for "
                "the group that may see them: mount option gid=)")
    return None


def check_daemons(before: ProcSnapshot, after: ProcSnapshot | None, top: int = 5, hidden: str | None = None) -> Check:
    title = "Busy processes"
    interval = _interval(before, after)
    if after is None or interval is None:
        return Check("daemons", title, "not-observable",
                     ("only one snapshot of /proc: no interval to measure" if after is None
                      else "no readable /proc/uptime in both snapshots: no interval to measure",))
    if interval <= 0:
        return Check("daemons", title, "not-observable", ("the two /proc snapshots have the same uptime",))
    used = [(a.cpu_ns / 1e9, a.pid, a.comm) for a in activity_delta(before.processes, after.processes) if a.cpu_ns > 0]
    total = sum(u for u, _, _ in used)
    share = total / interval  # in CPUs
    evidence = [f"other processes used {total * 1000:.0f} ms of CPU in {interval:.2f} s "
                f"({share:.1%} of one CPU; {len(after.processes.processes)} processes)"]
    busy = [(u, pid, comm) for u, pid, comm in used[:top] if u / interval >= 0.001]
    if busy:
        evidence.append("top: " + ", ".join(f"{comm} (pid {pid}) {u / interval:.1%}" for u, pid, comm in busy))
    if hidden is not None:
        evidence.append(hidden)
    names = ", ".join(sorted({comm for _, _, comm in busy[:3]}))
    fix = (f"Stop or pause what is busy while measuring ({names}); EMP §4.1 traces long outliers to daemons. "
           "The cpu metric (process time) is far less affected than wall.")
    return _graded("daemons", title, share, warn_at=0.02, bad_at=0.25, evidence=evidence, fix=fix)


def check_steal(before: ProcSnapshot, after: ProcSnapshot | None) -> Check:
    title = "Steal time"
    snap = after or before
    total_row = snap.cpu_ticks.get("cpu")
    if total_row is None or len(total_row) < 8:
        return Check("steal", title, "not-observable", ("/proc/stat has no steal column",))
    since_boot = total_row[7] / max(1, sum(total_row[:8]))
    evidence = [f"since boot: {since_boot:.2%} of CPU time stolen by the hypervisor"]
    shares: dict[str, float] = {}
    if after is not None:
        for cpu, ticks in after.cpu_ticks.items():
            prior = before.cpu_ticks.get(cpu)
            if cpu == "cpu" or prior is None or min(len(ticks), len(prior)) < 8:
                continue
            delta = [a - b for a, b in zip(ticks, prior, strict=False)]
            if sum(delta[:8]) > 0:
                shares[cpu] = delta[7] / sum(delta[:8])
        if shares:
            top = max(shares, key=lambda c: shares[c])
            evidence.append(f"during the sample: up to {shares[top]:.1%} on {top}"
                            f" (mean over {len(shares)} CPUs {sum(shares.values()) / len(shares):.1%})")
    worst = max([since_boot, *shares.values()])
    fix = ("The hypervisor runs other guests on this VM's CPUs. Steal hits wall time, not process time: "
           "compare with --metric cpu, use the duet method, or move to a dedicated instance.")
    return _graded("steal", title, worst, warn_at=0.005, bad_at=0.05, evidence=evidence, fix=fix)
