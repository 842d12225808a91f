"""What else happened on the machine around the measured invocations: other processes' activity (EMP's noise
attribution, over windows of consecutive pairs) and the CPUs' steal time, read as cheaply as the gaps between
pairs allow (issue 17).
"""
from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence

from duetbench.execute.invocation import Invocation, ServedInvocation
from duetbench.host.activity import Snapshot, activity_delta, snapshot, top_activity
from duetbench.host.procstat import read_steal_seconds

# Reading every other thread's schedstat takes ~1-3 ms, between invocations, where it delays the next
# one and takes CPU from the sides. An attribution window therefore spans as many consecutive pairs (or
# sequential invocations) as keep the snapshots under this share of the elapsed time (hundreds of `true`)
# and under ACTIVITY_MAX_PER_PAIR_S per pair (ten or more of 20 ms or 100 ms commands). At 5% the snapshots
# were most of the orchestrator's CPU for 20 ms commands (issue 17: ~2 ms of ~3 ms per pair).
ACTIVITY_MAX_SHARE = 0.01
# ... and at most this much per pair (or sequential invocation) on average: at 1 % alone, a snapshot
# (~1.7-3.5 ms) fell after every other pair of 100 ms commands, the gaps between pairs alternating
# ~1.2 and ~4.5 ms (a mean of 3.1 ms against 1.2 ms without snapshots; issue 17's goal is 1 ms). Was
# 0.2 ms while a snapshot took ~1.4 ms; reading single-threaded processes' own schedstat brought it to
# ~1.07 ms, and 0.15 ms keeps windows of about the same number of pairs (~7) for less.
ACTIVITY_MAX_PER_PAIR_S = 0.00015
#: A `duet compare --runs N` of at most this many pairs records the activity around every pair instead
#: (~2 ms each, little beside a few pairs' time): its duet analysis counts the pairs one side of which
#: was held off its CPU by another process (analyze/interference.py) and leaves the wall ratio unbounded
#: when too few were clean, since with so few pairs no interval can tell such interference from a
#: difference (a duet forced to 5 or 10 pairs beside a CPU hog: 3 of 100 A/A comparisons judged a
#: difference before, bench/results/trust.md).
ACTIVITY_EVERY_PAIR_UP_TO = 10


class StealReadings:
    """Per-CPU steal before and after each unit (pair or sequential invocation). A unit that starts right
    after the last one ended reuses that reading as its "before": /proc/stat's steal counts whole clock
    ticks (10 ms at USER_HZ 100), so a reading under half a tick old tells nothing a new one would, and
    each read costs ~45 µs between the two units (issue 17)."""

    REUSE_WITHIN_S = 0.005

    def __init__(self) -> None:
        self._last: dict[int, float] = {}
        self._at = -math.inf

    def before(self) -> dict[int, float]:
        if self._last and time.monotonic() - self._at < self.REUSE_WITHIN_S:
            return self._last
        return read_steal_seconds()

    def after(self, ended: Sequence[ServedInvocation] = ()) -> dict[int, float]:
        """The reading after a unit: from the launchers of `ended` where each read its CPU's steal as its
        command was reaped (off the gap between units, where reading /proc/stat cost ~115 µs), else
        /proc/stat read now."""
        ends = [inv.steal_at_end for inv in ended]
        if ends and self._last and all(end is not None for end in ends):
            reading = dict(self._last)
            reading.update(end for end in ends if end is not None)
        else:
            reading = read_steal_seconds()
        self._last = reading
        self._at = time.monotonic()
        return reading


class NoiseWindows:
    """Other processes' activity (EMP noise attribution) over consecutive windows of invocations.

    Windows are chained: one snapshot closes a window and opens the next, so each costs one /proc scan
    instead of two. A window closes after the invocations that end it once it has lasted
    1/ACTIVITY_MAX_SHARE times what its opening snapshot took; every invocation in it gets the window's
    record (before they are stored when the window closes with them, else through ``on_activity``, as
    an aduet segment's). The gap between two pairs, where only the orchestrator runs, falls in a window
    too: what other processes do there is counted, as it would be by a snapshot before each pair."""

    def __init__(self, on_activity: Callable[[list[Invocation]], None] | None, *, every_unit: bool = False) -> None:
        self.on_activity = on_activity
        self.every_unit = every_unit  # a window per pair (invocation), whatever the snapshots cost
        self._before: Snapshot | None = None
        self._opened = 0.0
        self._cost = 0.0
        self._groups = 0  # pairs (or invocations) added since the window opened
        self._pending: list[Invocation] = []
        self._stored: list[Invocation] = []

    def _snapshot(self) -> Snapshot | None:
        t0 = time.monotonic()
        try:
            snap = snapshot()
        except OSError:
            snap = None
        self._opened = time.monotonic()
        self._cost = self._opened - t0
        self._groups = 0
        return snap

    def open(self) -> None:
        """Before an invocation: start a window unless one is open."""
        if self._before is None:
            self._before = self._snapshot()

    def add(self, invocations: Sequence[Invocation], units: int = 1) -> None:
        """After invocations ended (before they are stored): close the window if it lasted long enough, in
        time and in the number of pairs (invocations) it spans. `units`: how many pairs they are (queued
        pairs are added together)."""
        self._pending.extend(invocations)
        self._groups += units
        if self.every_unit or (time.monotonic() - self._opened >= self._cost / ACTIVITY_MAX_SHARE
                               and self._groups >= self._cost / ACTIVITY_MAX_PER_PAIR_S):
            self._close()

    def _close(self) -> None:
        after = self._snapshot() if self._before is not None else None
        noise = None
        if self._before is not None and after is not None:
            noise = json.dumps(top_activity(activity_delta(self._before, after)))
        # The next window starts where this one ended.
        self._before = after
        stored = [inv for inv in self._stored]
        for inv in (*self._pending, *self._stored):
            inv.activity = noise
        self._pending, self._stored = [], []
        if stored and self.on_activity is not None:
            self.on_activity(stored)

    def stored(self) -> None:
        """The pending invocations were stored without their record (the window is still open)."""
        self._stored.extend(inv for inv in self._pending if inv.activity is None)
        self._pending = [inv for inv in self._pending if inv.activity is not None]

    def close(self) -> None:
        """The run ended: close the open window, if any, for the invocations still without a record."""
        self.hand_on()

    def hand_on(self) -> tuple[Snapshot, float, float] | None:
        """`close`, keeping the snapshot that closed the window (or opened the one still empty) for the
        next runner of the comparison to open its first window with (`resume`): one /proc scan (~4 ms)
        less at each switch of --method auto's pilot."""
        if self._pending or self._stored:
            self._close()
        kept = None if self._before is None else (self._before, self._opened, self._cost)
        self._before = None
        return kept

    def resume(self, kept: tuple[Snapshot, float, float] | None) -> None:
        """Open the first window with a snapshot another runner handed on (`hand_on`), if any."""
        if kept is not None and self._before is None:
            self._before, self._opened, self._cost = kept
            self._groups = 0
