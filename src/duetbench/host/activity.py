"""CPU activity of every other process on the machine during a run (EMP, Suh et al. (EMP) §3.3, Figure 5).

EMP takes an image of every process before and after each run and keeps the difference, so that a
slow sample can later be explained by the daemons that ran during it. The image here is
``/proc/*/task/*/schedstat`` (run ns, runqueue-wait ns, timeslices per thread): nanosecond run time,
where ``/proc/<pid>/stat`` has 10 ms ticks that miss short daemon bursts (docs/notes/machine_probe.md §7).
``/proc/<pid>/schedstat`` alone covers only the main thread, hence the per-task reads.

Limits, stated because they shape what a report may claim:
* a process that starts *and* exits between the two snapshots is invisible (its time is nowhere in
  /proc once it is reaped);
* a thread that exits between the snapshots contributes nothing after its last reading;
both are flagged on the process (``exited``, ``threads_vanished``) rather than guessed.

Reading /proc is here (``snapshot``); the arithmetic (``activity_delta``) is pure, so that it can be
tested on synthetic snapshots. ``duet doctor`` reads the same way through its ``SysRoot`` (any object
with ``read`` and ``listdir``), so that a copy of another machine's /proc can stand in.
"""
from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

import msgspec

_TICK_NS = 1e9 / os.sysconf("SC_CLK_TCK")


class ThreadReading(msgspec.Struct, frozen=True):
    run_ns: int
    wait_ns: int
    timeslices: int


class ProcessReading(msgspec.Struct, frozen=True):
    pid: int
    comm: str
    ppid: int
    #: Start time in clock ticks after boot (/proc/<pid>/stat field 22): with the pid, it names one
    #: process even when the kernel recycles pids between two snapshots.
    start_ticks: int
    threads: Mapping[int, ThreadReading]


class Snapshot(msgspec.Struct, frozen=True):
    taken_ns: int  # CLOCK_MONOTONIC
    processes: Mapping[int, ProcessReading]
    #: CPU time this process spent reading /proc for the snapshot.
    cost_ns: int = 0
    excluded: frozenset[int] = frozenset()


class ProcessActivity(msgspec.Struct):
    """What one other process did between two snapshots."""

    pid: int
    comm: str
    cpu_ns: int
    wait_ns: int
    timeslices: int
    threads: int
    #: Started after the first snapshot: counted from zero.
    new: bool = False
    #: Gone at the second snapshot: its time after the first snapshot is unknown (counted as zero).
    exited: bool = False
    threads_appeared: int = 0
    threads_vanished: int = 0

    @property
    def cpu_ms(self) -> float:
        return self.cpu_ns / 1e6

    def to_dict(self) -> dict[str, Any]:
        return msgspec.structs.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ProcessActivity:
        return cls(**{k: data[k] for k in cls.__struct_fields__ if k in data})


# -- reading /proc ---------------------------------------------------------------------------------

class ProcFiles(Protocol):
    """Where /proc is read from: this machine (``LIVE``) or a copy (the doctor's ``SysRoot``)."""

    def read(self, absolute: str) -> str | None: ...

    def listdir(self, absolute: str) -> list[str]: ...


_READ_SIZE = 65536


class _LiveProc:
    def read(self, absolute: str) -> str | None:
        # Raw os.open/os.read: a snapshot reads a few hundred tiny files between two invocations, and
        # Python's buffered open() costs about as much again as the system calls (-30% per snapshot).
        try:
            fd = os.open(absolute, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:  # the process or thread exited while we looked
            return None
        try:
            # A /proc file comes whole in one read when it fits: a short read is its end, and the
            # read that would return b"" is one system call of four per file saved.
            chunks = [os.read(fd, _READ_SIZE)]
            while len(chunks[-1]) == _READ_SIZE:
                chunks.append(os.read(fd, _READ_SIZE))
            return b"".join(chunks).decode("utf-8", "replace")
        except OSError:
            return None
        finally:
            os.close(fd)

    def listdir(self, absolute: str) -> list[str]:
        try:
            return os.listdir(absolute)
        except OSError:
            return []


LIVE: ProcFiles = _LiveProc()


def _parse_stat(text: str) -> tuple[str, int, int, int, int] | None:
    """comm, ppid, start time, user+system ticks and the number of threads from /proc/<pid>/stat; comm
    may hold spaces and parentheses."""
    open_, close = text.find("("), text.rfind(")")
    if open_ < 0 or close < 0:
        return None
    rest = text[close + 2:].split()
    try:
        return (text[open_ + 1:close], int(rest[1]), int(rest[19]), int(rest[11]) + int(rest[12]),
                int(rest[17]))
    except (IndexError, ValueError):
        return None


def _schedstat(text: str | None) -> ThreadReading | None:
    parts = text.split() if text else ()
    return ThreadReading(int(parts[0]), int(parts[1]), int(parts[2])) if len(parts) >= 3 else None


def _descendants(roots: Iterable[int], ppid_of: Mapping[int, int]) -> set[int]:
    children: dict[int, list[int]] = {}
    for pid, ppid in ppid_of.items():
        children.setdefault(ppid, []).append(pid)
    out: set[int] = set()
    todo = [r for r in roots]
    while todo:
        pid = todo.pop()
        if pid in out:
            continue
        out.add(pid)
        todo.extend(children.get(pid, ()))
    return out


def snapshot(
    exclude_pids: Iterable[int] = (), *, include_self: bool = False, files: ProcFiles = LIVE
) -> Snapshot:
    """Read every thread's schedstat, except this process's tree and ``exclude_pids`` with their descendants.

    Our own tree (the orchestrator and the measured command) is excluded by default: the measured side
    is reported by wait4, not as noise. A process none of whose threads has a readable schedstat (a
    kernel without schedstats) is read from /proc/<pid>/stat instead: user+system clock ticks, as one
    thread, with no wait time or timeslices."""
    cpu0 = time.thread_time_ns()
    taken = time.monotonic_ns()
    stats: dict[int, tuple[str, int, int, int, int]] = {}
    for name in files.listdir("/proc"):
        if not name.isdigit():
            continue
        text = files.read(f"/proc/{name}/stat")
        parsed = _parse_stat(text) if text else None
        if parsed is not None:
            stats[int(name)] = parsed
    roots = set(exclude_pids)
    if not include_self:
        roots.add(os.getpid())
    excluded = _descendants(roots, {pid: s[1] for pid, s in stats.items()})
    processes: dict[int, ProcessReading] = {}
    for pid, (comm, ppid, start, ticks, nthreads) in stats.items():
        if pid in excluded:
            continue
        threads: dict[int, ThreadReading] = {}
        # Most processes have one thread, whose schedstat is also the process's: one read instead of a
        # directory listing and a read (a snapshot reads a few hundred files between two pairs).
        only = _schedstat(files.read(f"/proc/{pid}/schedstat")) if nthreads == 1 else None
        if only is not None:
            threads[pid] = only
        else:
            tids = files.listdir(f"/proc/{pid}/task")
            if not tids:
                continue  # exited while we looked
            for tid in tids:
                reading = _schedstat(files.read(f"/proc/{pid}/task/{tid}/schedstat"))
                if reading is not None:
                    threads[int(tid)] = reading
        if not threads:
            threads[pid] = ThreadReading(int(ticks * _TICK_NS), 0, 0)
        processes[pid] = ProcessReading(pid, comm, ppid, start, threads)
    return Snapshot(taken, processes, time.thread_time_ns() - cpu0, frozenset(excluded))


# -- pure delta --------------------------------------------------------------------------------------

def activity_delta(before: Snapshot, after: Snapshot, exclude_pids: Iterable[int] = ()) -> list[ProcessActivity]:
    """Per-process CPU (run) and runqueue-wait time between two snapshots, busiest first.

    Processes present in only one snapshot, or whose pid was recycled (different start time), are
    flagged; processes excluded in either snapshot (our own tree) and ``exclude_pids`` are left out.
    Processes that neither ran nor appeared/disappeared are omitted."""
    skip = set(exclude_pids) | set(before.excluded) | set(after.excluded)
    out: list[ProcessActivity] = []
    for pid, now in after.processes.items():
        if pid in skip:
            continue
        then = before.processes.get(pid)
        if then is not None and then.start_ticks != now.start_ticks:
            out.append(_exited(then))  # the pid was recycled: the old process exited, a new one started
            then = None
        run = wait = slices = 0
        appeared = vanished = 0
        for tid, t in now.threads.items():
            prev = then.threads.get(tid) if then is not None else None
            if prev is None:
                appeared += then is not None
                prev = ThreadReading(0, 0, 0)
            run += max(0, t.run_ns - prev.run_ns)
            wait += max(0, t.wait_ns - prev.wait_ns)
            slices += max(0, t.timeslices - prev.timeslices)
        if then is not None:
            vanished = sum(1 for tid in then.threads if tid not in now.threads)
        activity = ProcessActivity(pid, now.comm, run, wait, slices, len(now.threads), new=then is None,
                                   threads_appeared=appeared, threads_vanished=vanished)
        if run or activity.new or vanished or appeared:
            out.append(activity)
    for pid, then in before.processes.items():
        if pid not in after.processes and pid not in skip:
            out.append(_exited(then))
    out.sort(key=lambda a: (-a.cpu_ns, -a.wait_ns, a.pid))
    return out


def _exited(then: ProcessReading) -> ProcessActivity:
    return ProcessActivity(then.pid, then.comm, 0, 0, 0, len(then.threads), exited=True,
                           threads_vanished=len(then.threads))


def top_activity(activity: Iterable[ProcessActivity], limit: int = 10) -> list[dict[str, Any]]:
    """The busiest ``limit`` processes as small JSON-ready records (what a run stores as its noise)."""
    busy = [a for a in activity if a.cpu_ns > 0]
    busy.sort(key=lambda a: -a.cpu_ns)
    return [{"pid": a.pid, "comm": a.comm, "cpu_ms": round(a.cpu_ns / 1e6, 3)} for a in busy[:limit]]


class ActivityWindow(msgspec.Struct):
    """A before-snapshot waiting for its after-snapshot: ``start()`` before a run, ``stop()`` after."""

    exclude_pids: tuple[int, ...] = ()
    before: Snapshot | None = None
    cost_ns: int = 0

    def start(self) -> None:
        self.before = snapshot(self.exclude_pids)
        self.cost_ns = self.before.cost_ns

    def stop(self) -> list[ProcessActivity]:
        if self.before is None:
            return []
        after = snapshot(self.exclude_pids)
        self.cost_ns += after.cost_ns
        return activity_delta(self.before, after)

    def stop_json(self) -> str | None:
        """The busiest other processes since ``start()`` (EMP's procDiff, Suh et al. (EMP) §3.3), as the JSON a
        run stores as its noise; None when /proc could not be read. For aduet the window is a whole segment:
        its invocations overlap."""
        try:
            return json.dumps(top_activity(self.stop()))
        except OSError:
            return None
