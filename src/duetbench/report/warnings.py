"""Warnings that teach: what in this measurement deserves doubt, why, and what to do about it."""
from __future__ import annotations

import json
import math
import statistics
from typing import Any

from duetbench.analyze.comparison import ComparisonResult
from duetbench.analyze.interference import NOTE_MARK
from duetbench.model.invocation import Invocation
from duetbench.model.method import PAIRED_METHODS
from duetbench.report.units import fmt_time

HIGH_CV = 0.05
SHORT_INVOCATION_S = 0.005
STEAL_FRACTION = 0.01
# Other processes' CPU during the slowest runs above this share of those runs' wall time is named.
NOISE_SHARE = 0.05
NOISE_MIN_MS = 1.0
# A duet's wall-time CI this many times wider than its CPU-time CI means noise that hits one side only.
ASYMMETRIC_NOISE_FACTOR = 3.0
# A command on a CPU for less than this share of its wall time (its runs' median) mostly waits.
ON_CPU_SHARE = 0.5
# A command that kept its CPU this busy (CPU time / wall time) while its own tasks waited for that CPU at
# least SELF_WAIT_SHARE of its wall time runs several threads at once (on one CPU they queue).
BUSY_SHARE = 0.8
SELF_WAIT_SHARE = 0.25


def _duration(seconds: float, time_unit: str | None) -> str:
    """A time a warning names: whole milliseconds, or in the unit -u gave (as the report's other times)."""
    return f"{seconds * 1000:.0f} ms" if time_unit in (None, "auto") else fmt_time(seconds, time_unit)


def teaching_warnings(method: str, results: dict[str, ComparisonResult], invocations: list[Invocation],
                      *, names: dict[str, str], usable_cpus: int, fell_back: bool = False,
                      time_unit: str | None = None, per_command: int = 1) -> list[str]:
    """The report's warnings. `per_command`: the CPUs each command was given (--cpus-per-command)."""
    out: list[str] = []
    measured = [i for i in invocations if not i.warmup]
    if fell_back and per_command > 1:
        out.append(f"Each command was given {per_command} CPUs (--cpus-per-command) and {usable_cpus} are "
                   "available to this process, so A and B cannot run side by side: ran the sequential method "
                   f"instead. A duet needs {2 * per_command} CPUs.")
    elif fell_back:
        out.append(f"Only {usable_cpus} CPU is available to this process, so A and B cannot run side by side: "
                   "ran the sequential method instead. Give the process at least two CPUs for a duet.")
    failed = [i for i in measured if i.status == "failed"]
    if failed:
        sides = sorted({names[i.side] for i in failed})
        killed = sum(1 for i in failed if i.signal > 0)
        how = ("exited non-zero" if not killed else "were killed by a signal" if killed == len(failed)
               else "exited non-zero or were killed by a signal")
        out.append(f"{', '.join(sides)}: {len(failed)} invocation(s) {how} and were timed anyway "
                   "(--ignore-failure): a failing command may be doing different work than a passing one.")
    for side in ("A", "B"):
        walls = [i.wall_s for i in measured if i.side == side and i.ok]
        if walls and sorted(walls)[len(walls) // 2] < SHORT_INVOCATION_S:
            out.append(f"{names[side]} takes under {_duration(SHORT_INVOCATION_S, time_unit)} per invocation: "
                       "process start-up and scheduling dominate what is measured. Make the work per invocation "
                       "longer, or benchmark it with an in-process harness (duet run).")
    off_cpu = off_cpu_warning(measured, names)
    if off_cpu:
        out.append(off_cpu)
    parallel = parallel_warning(measured, names, per_command=per_command, usable_cpus=usable_cpus)
    if parallel:
        out.append(parallel)
    moved = moved_cpu_warning(measured, names, method=method, per_command=per_command)
    if moved:
        out.append(moved)
    wall = results.get("wall")
    cpu = results.get("cpu")
    if wall is not None:
        for side, summary in (("A", wall.a), ("B", wall.b)):
            if summary.n >= 3 and summary.cv > HIGH_CV:
                out.append(f"{names[side]}'s wall times vary a lot (CV {summary.cv:.1%}): something else is "
                           "competing for this machine, or the command's own work varies. Look at the CPU-time "
                           "column, close other programs, or use more runs.")
    total_wall = sum(i.wall_s for i in measured)
    total_steal = sum(i.steal_s or 0.0 for i in measured)
    if total_wall > 0 and total_steal / total_wall > STEAL_FRACTION:
        stolen = _duration(total_steal, time_unit)
        out.append(f"The hypervisor stole {stolen} of CPU ({total_steal / total_wall:.1%} of "
                   "the measured time): this VM shares its host with others. A duet cancels such interference "
                   "when it hits both sides alike; sequential results will be noisier.")
    noise = slowest_runs_noise(measured, time_unit=time_unit)
    if noise:
        out.append(f"During the slowest runs other processes were busy: {noise}. EMP (Suh et al.) attributes "
                   "outliers to such daemons; `duet measure` removes the samples they disturbed.")
    if wall is not None:
        # A short duet whose pairs one side's neighbour disturbed so often that its wall ratio is unbounded
        # (analyze/interference.py), in words; a few such pairs are only a note in the exports.
        out += [note[0].upper() + note[1:] + "." for note in wall.notes
                if NOTE_MARK in note and not math.isfinite(wall.ratio.high)]
    if method in PAIRED_METHODS and wall is not None and cpu is not None:
        wall_width = wall.ratio.high - wall.ratio.low
        cpu_width = cpu.ratio.high - cpu.ratio.low
        if cpu_width > 0 and math.isfinite(wall_width) and wall_width > ASYMMETRIC_NOISE_FACTOR * cpu_width \
                and wall.relative_ci_width > 0.01:
            out.append(f"The wall-time ratio is {wall_width / cpu_width:.0f}x noisier than the CPU-time ratio: "
                       "other activity on this machine lands on one side of the duet at a time (with few CPUs, "
                       "none is spare for it), which a duet does not cancel. For CPU-bound commands use "
                       "--metric cpu; otherwise --method sequential is likely more precise here.")
    return out


def _cpu_shares(measured: list[Invocation], side: str) -> tuple[float, float | None] | None:
    """A side's medians over its finished runs: CPU time / wall time, and the time its cgroup's tasks waited
    for a CPU / wall time (None where no cgroup recorded it). None for no runs, or runs shorter than
    SHORT_INVOCATION_S (the start-up warning speaks for those)."""
    runs = [i for i in measured if i.side == side and i.ok and i.wall_s > 0]
    if not runs or statistics.median([i.wall_s for i in runs]) < SHORT_INVOCATION_S:
        return None
    waits = [i.cgroup_wait_s / i.wall_s for i in runs if i.cgroup_wait_s is not None]
    return statistics.median([i.cpu_s / i.wall_s for i in runs]), statistics.median(waits) if waits else None


def _sides(found: list[tuple[str, str]]) -> tuple[str, str, bool]:
    """The names and shares of the sides a warning is about, "A and B", "12% and 15%"; and whether one."""
    return " and ".join(n for n, _ in found), " and ".join(v for _, v in found), len(found) == 1


def off_cpu_warning(measured: list[Invocation], names: dict[str, str]) -> str | None:
    """The commands that spent most of their wall time off any CPU (median CPU time / wall time of their
    measured runs below ON_CPU_SHARE): they slept or were blocked (I/O, a lock, a timer, a child they wait
    for) or waited for a CPU, and their wall time (and its ratio) counts that waiting as well as their work:
    often not what was meant (hyperfine#898 asks hyperfine for this warning). Where the side's cgroup
    recorded its CPU pressure, the share spent runnable but waiting for a CPU is named apart. Shares only,
    no times: the report's table shows those, in the unit -u chose. Commands shorter than
    SHORT_INVOCATION_S are left to the start-up warning. None if no command qualifies."""
    found: list[tuple[str, str]] = []
    for side in ("A", "B"):
        shares = _cpu_shares(measured, side)
        if shares is None or shares[0] >= ON_CPU_SHARE:
            continue
        busy, wait = shares
        waiting = f" ({wait:.0%} waiting for a CPU)" if wait is not None and wait >= 0.05 else ""
        found.append((names[side], f"{busy:.0%}{waiting}"))
    if not found:
        return None
    who, values, one = _sides(found)
    its = "its" if one else "their"
    return (f"{who} ran on a CPU for only {values} of {its} wall time (median over {its} runs): the rest went "
            "to sleeping or being blocked (I/O, a lock, a timer, a child process) or to waiting for a CPU, and "
            "wall time (and a ratio of wall times) counts that waiting as well as the work. To measure the work "
            "alone, use --metric cpu; if the waiting is what you measure, look at what the command waits for.")


def moved_cpu_warning(measured: list[Invocation], names: dict[str, str], *, method: str,
                      per_command: int = 1) -> str | None:
    """The commands whose measured runs started on another CPU than the one duet pinned them to (the launcher
    reads the CPU, `cpu_seen`, just before the command starts). A command that moved its launcher (`taskset -p
    -c 0 $PPID`, sched_setaffinity on its parent) moved its side's later runs, until the launcher pinned itself
    again for each (native/launcher.c); a program that re-pins processes, or a CPU taken offline, still can.
    Unknown CPUs (-1: imported runs) are left out, and so are commands given several CPUs (--cpus-per-command):
    any of them is theirs, and only the lowest is recorded. None if every run was where it was meant to be."""
    if per_command > 1:
        return None
    found: list[tuple[str, str]] = []
    for side in ("A", "B"):
        runs = [i for i in measured if i.side == side and i.cpu_seen >= 0 and i.cpu_requested >= 0]
        moved = sum(1 for i in runs if i.cpu_seen != i.cpu_requested)
        if moved:
            found.append((names[side], f"{moved} of {len(runs)}"))
    if not found:
        return None
    who, _, one = _sides(found)
    counts = " and ".join(f"{name}: {count}" for name, count in found) if not one else found[0][1]
    why = ("a duet's sides are meant to run each on a CPU of its own, so that interference hits both alike and "
           "cancels in their ratio; moved, a side may have shared its partner's CPU and slowed it, and the ratio "
           "measured that instead" if method in PAIRED_METHODS else
           "runs are meant to stay on one CPU (A and B taking turns on it), so that every run meets the same CPU "
           "and neighbours; a moved run met others")
    return (f"{who} ran on another CPU than the one duet pinned {'it' if one else 'them'} to "
            f"({counts} measured runs): {why}. Something changed the CPU affinity of the command's launcher "
            "(`taskset -p` or sched_setaffinity on the command's parent process) or re-pinned it: leave the "
            "parent's affinity alone (pin the command itself if it must be), stop whatever re-pins processes, "
            "and measure again.")


#: How a comparison gives its commands every CPU (parallel_warning's way out; a campaign has its own).
COMPARE_REMEDY = ("--cpus-per-command all gives each command all {usable} CPUs duet may use (A and B then take "
                  "turns on them, unless the machine has twice as many).")
CAMPAIGN_REMEDY = ("cpus_per_command: all on the benchmark gives each side all {usable} CPUs duet may use (with "
                   "methods: {{sequential: N}} unless the machine has twice as many).")


def parallel_warning(measured: list[Invocation], names: dict[str, str], *, per_command: int = 1,
                     usable_cpus: int | None = None, remedy: str = COMPARE_REMEDY) -> str | None:
    """The commands that run more threads (or processes) at once than the `per_command` CPUs they were given
    (--cpus-per-command): their parallel speed beyond those CPUs is not what is compared. The sign, from
    the side's cgroup: its tasks waited for a CPU (cpu.pressure "some", `cgroup_wait_s`) for at least
    SELF_WAIT_SHARE of its wall time while its own CPU time kept its CPUs busy (at least BUSY_SHARE of
    `per_command` × the wall time): the waiting was behind its own tasks, not behind another process, which
    would have taken the CPU time instead (then `off_cpu_warning` speaks). Measured (2 vCPUs): a 4-thread
    CPU-bound program on one CPU waited 98 % of its wall time at 100 % CPU, its 1-thread version 0.3 %;
    hyperfine, unpinned, found the 4-thread one 1.8× faster, the duet no difference. Where this process
    may use more CPUs than each command got (`usable_cpus`; None: not known), the warning ends with
    `remedy` (its {usable}: that count). None if no command qualifies, no cgroup recorded the pressure,
    or each command was given every CPU this process may use (more threads than CPUs is then the
    program's own doing, and an unpinned run, hyperfine's, would measure the same)."""
    found: list[tuple[str, str]] = []
    for side in ("A", "B"):
        shares = _cpu_shares(measured, side)
        if (shares is not None and shares[1] is not None and shares[0] >= BUSY_SHARE * per_command
                and shares[1] >= SELF_WAIT_SHARE):
            found.append((names[side], f"{shares[1]:.0%}"))
    if not found or (usable_cpus is not None and per_command >= usable_cpus):
        return None
    who, values, one = _sides(found)
    its = "its" if one else "their"
    cpus, it = ("CPU", "it") if per_command == 1 and one else ("CPUs", "them")
    given = "one CPU" if per_command == 1 else f"{per_command} CPUs"
    text = (f"{who} kept {its} {cpus} busy and still had tasks waiting for {it} {values} of {its} wall time "
            f"(median over {its} runs): {'it runs' if one else 'they run'} "
            f"more threads or processes at once than the {given} each command was given, so what is compared is "
            f"the work done on {given}: a change in how well a command runs in parallel beyond that does not "
            "show here.")
    if usable_cpus is not None and usable_cpus > per_command:
        text += " " + remedy.format(usable=usable_cpus)
    return text


def slowest_runs_noise(invocations: list[Invocation], fraction: float = 0.1, top: int = 3,
                       time_unit: str | None = None) -> str:
    """Names the busiest other processes during the slowest ``fraction`` of runs (by wall time), from the
    activity recorded with each run, with their CPU time (whole milliseconds; in `time_unit` where -u gave
    one); "" when nothing was recorded or they used little CPU."""
    recorded = [i for i in invocations if i.activity and i.wall_s is not None and i.start_ns is not None]
    if not recorded:
        return ""
    slow = sorted(recorded, key=lambda i: -(i.wall_s or 0.0))[:max(1, int(len(recorded) * fraction))]
    seen: set[tuple[int, int]] = set()  # a duet's two sides share one record: count it once
    total: dict[str, float] = {}
    for inv in slow:
        key = (inv.pair, (inv.start_ns or 0) // 10**9)
        if key in seen:
            continue
        seen.add(key)
        try:
            for proc in json.loads(inv.activity or "[]"):
                total[str(proc["comm"])] = total.get(str(proc["comm"]), 0.0) + float(proc["cpu_ms"])
        except (ValueError, KeyError, TypeError):
            continue
    wall_ms = sum(i.wall_s or 0.0 for i in slow) * 1000
    busiest = sorted(total.items(), key=lambda kv: -kv[1])[:top]
    # Below a millisecond the attribution window's own launch overhead dominates: nothing to name.
    busiest = [(name, ms) for name, ms in busiest if ms >= NOISE_MIN_MS]
    if not busiest or wall_ms <= 0 or busiest[0][1] < NOISE_SHARE * wall_ms:
        return ""
    named = ", ".join(f"{name} {_duration(ms / 1e3, time_unit)}" for name, ms in busiest)
    return f"{named} (in the {len(slow)} slowest runs)"


def _row_sides(row: Any, runs: list[Any]) -> list[Invocation]:
    """The processes of a campaign row's finished runs (a row has ``benchmark`` and ``method``; a harness
    run may hold several benchmarks, named "<run benchmark>/<inner>")."""
    return [inv for run in runs if run.method == row.method and run.status == "ok"
            and (row.benchmark == run.benchmark or row.benchmark.startswith(run.benchmark + "/"))
            for inv in run.sides.values()]


def name_parallel(rows: list[Any], runs: list[Any], per_command: dict[str, int], usable_cpus: int | None) -> None:
    """Append `parallel_warning` to each campaign row whose harness ran more threads at once than the CPUs
    its sides were given (`per_command`: by the run's benchmark name, 1 where absent). Measured: a Google
    Benchmark ->Threads(4) side waited 99 % of its wall time for its one CPU, a single-threaded one 0.1-0.7 %;
    JMH -t 4 97 %, a single-threaded JMH benchmark 8 % (its JIT and GC threads), below SELF_WAIT_SHARE."""
    for row in rows:
        given = next((n for name, n in per_command.items()
                      if row.benchmark == name or row.benchmark.startswith(name + "/")), 1)
        text = parallel_warning(_row_sides(row, runs), {"A": "A", "B": "B"}, per_command=given,
                                usable_cpus=usable_cpus, remedy=CAMPAIGN_REMEDY)
        if text:
            row.notes.append(text)


def name_noise(rows: list[Any], runs: list[Any]) -> None:
    """Append to each row's ``notes`` the other processes that were busy during that benchmark's slowest
    runs (EMP, Suh et al. (EMP) §3.3), from the activity stored with every campaign run. A row has ``benchmark``,
    ``method`` and ``notes``; a harness run may hold several benchmarks, named "<run benchmark>/<inner>"."""
    for row in rows:
        noise = slowest_runs_noise(_row_sides(row, runs))
        if noise:
            row.notes.append(f"other processes busy during the slowest runs: {noise}")
