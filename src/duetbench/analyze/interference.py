"""Duet pairs in which only one side was held off its CPU by another process: interference the duet's
pairing does not cancel, found from what each invocation already records.

A duet cancels interference that meets both sides of a pair alike. A CPU hog beside a 2-CPU duet meets
one side at a time, and when it wanders between the CPUs at random, a handful of pairs can all be hit
on the same side: the pair ratios are then two-valued, and five or ten of them look like a real
difference (bench/results/honesty.md, "Duet beside a CPU hog"; for real: `--method duet --runs 5` beside
a hog, 3 of 100 A/A comparisons judged a difference, bench/results/trust.md). No interval over so few
pairs can tell; the pair's own records can.

A side was held off its CPU when it spent more of its time off the CPU than its partner (wall − CPU
time) and another process used at least half that much CPU time during the pair (the EMP activity
record, Suh et al. (EMP) §3.3, which a short `duet compare` takes around every pair: execute/noise.py,
ACTIVITY_EVERY_PAIR_UP_TO; longer ones share one record among many pairs, too coarse for this). The
second condition tells a neighbour from a command that contends with itself (a multi-threaded command
pinned to one CPU waits behind its own threads, and nobody else runs).

Wall − CPU time does not tell waiting from sleeping: a command that sleeps or does I/O longer than its
partner, on a machine busy enough that others use half that difference meanwhile, would have its pairs
counted as hit too — at worst an unbounded interval, never a false difference, but no answer for such
commands on a busy machine. (Involuntary context switches, which should tell them apart, did not:
beside a hog the unslowed side of a pair had as many, 4–6 in 20 ms, as the slowed one.) Where each
side's run-queue wait was recorded — the time its cgroup's tasks were runnable but not running, the
"some" total of the cgroup's cpu.pressure (pressure stall information, Linux ≥ 4.20; `cgroup_wait_s`
of an invocation) — a side's time off the CPU is counted as at most that wait: sleeping and I/O drop
out, and waiting for a CPU, which is what a neighbour causes, stays. (At most, because the wait also
holds the launcher's moments before the command starts, which wall time does not.) For a CPU-bound
command the two are the same, so the simulations of this rule (analyze/honesty.py) hold for both. Our
own rule (docs/notes/duet_on_2cpus.md, points 8, 12 and 13); the wait: [Weiner PSI] in docs/methods.md.
"""
from __future__ import annotations

import numpy as np

from ._inputs import FloatArray

#: The off-CPU time of one side must exceed its partner's by this share of the pair's longer side.
OFF_CPU_SHARE = 0.05
#: ... and other processes must have used at least this share of that difference in CPU time.
OTHERS_SHARE = 0.5
#: Fewer clean pairs than this (or than half of them), and the wall-time interval is left unbounded.
MIN_CLEAN_PAIRS = 3
#: The words every note about such pairs holds (the terminal shows those notes as warnings).
NOTE_MARK = "had one side held off its CPU"


def one_sided_pairs(wall_a: FloatArray, cpu_a: FloatArray, wall_b: FloatArray, cpu_b: FloatArray,
                    others_s: FloatArray, wait_a: FloatArray | None = None,
                    wait_b: FloatArray | None = None) -> np.ndarray:
    """Per duet pair, True when one side alone was held off its CPU by another process (module
    docstring). All arrays per pair: each side's wall and CPU time, and the CPU time other processes used
    during the pair (seconds; nan when not recorded, which never flags); `wait_a`/`wait_b`, each side's
    run-queue wait where recorded (nan where not): a pair with both counts each side's time off the CPU
    as at most its wait, so that sleeping and I/O are not taken for being held off."""
    wall_a, wall_b = np.asarray(wall_a, float), np.asarray(wall_b, float)
    off_a = np.maximum(wall_a - np.asarray(cpu_a, float), 0.0)
    off_b = np.maximum(wall_b - np.asarray(cpu_b, float), 0.0)
    if wait_a is not None and wait_b is not None:
        wait_a, wait_b = np.asarray(wait_a, float), np.asarray(wait_b, float)
        both = np.isfinite(wait_a) & np.isfinite(wait_b)
        off_a = np.minimum(off_a, np.where(both, wait_a, np.inf))
        off_b = np.minimum(off_b, np.where(both, wait_b, np.inf))
    gap = np.abs(off_a - off_b)
    others = np.asarray(others_s, float)
    with np.errstate(invalid="ignore"):
        return (gap >= OFF_CPU_SHARE * np.maximum(wall_a, wall_b)) & (others >= OTHERS_SHARE * gap)


def too_few_clean(hit: np.ndarray) -> bool:
    """Whether so many pairs were `hit` (`one_sided_pairs`) that the wall-time interval must be left
    unbounded: fewer clean pairs than half of them, or than MIN_CLEAN_PAIRS. Otherwise every pair stays
    in the interval as it is: a minority of disturbed pairs, on either side, is spread the interval
    meets (and from 10 pairs on the robust pair filter's business). Setting them aside instead cost
    more than it saved on a quiet machine: one pair of ten set aside for a 3 ms hiccup left nine, too
    few for the robust filter, whose first pair — disturbed by our own process, not by another — then
    widened a 5 % slowdown's interval from 1.6 % to 26 %."""
    hit = np.asarray(hit, bool)
    clean = int((~hit).sum())
    return clean < max(MIN_CLEAN_PAIRS, (hit.size + 1) // 2)
