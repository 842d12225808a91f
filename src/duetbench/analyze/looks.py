"""When an adaptive comparison looks at its data: the schedule of live looks (`monitor.watch`) that
`duet compare` and `duet measure` follow. Pure Python (no numpy): a fixed count of runs asks it too,
before anything statistical is imported.

Looking after every run is what the stopping rules' simulations assume as the worst case
(`honesty.adaptive(looks="every")`); the schedule looks at a subset of those counts, which
`honesty.adaptive(looks="schedule")` simulates as the CLI runs it. A look costs 2-4 ms between two
pairs on a 2-vCPU VM (and, for queued pairs, ends a batch; docs/notes/overhead.md, twelfth pass), so
looking after every run of a long comparison costs more machine time than the stop it could advance.
The growth rule bounds that: a stop comes at most LOOK_GROWTH of the runs later than with a look
after every run (Chow & Robbins 1965 analyse the precision rule looked at after every run; a
confidence sequence is valid at any look, Howard et al. 2021; full references in docs/methods.md).
"""
from __future__ import annotations

import math

#: A look once the runs grew by this share since the last one (at least one run).
LOOK_GROWTH = 0.05

#: Fewest units before the evidence rule may stop. The sequence is valid at any n for normal noise, but
#: a CPU hog that lands on one side of a pair at random makes the noise two-valued, and 5 pairs all hit
#: on the same side (1 in 16) look like a tight 1.5x difference: a real A/A comparison beside a hog
#: stopped so at B/A 1.51 (bench/results/trust.md). At 10 the adaptive stop's false alarms beside such
#: a hog fall from 8 % to 2 % by simulation (`honesty.hog_adaptive`, follow=0.5), and an evident
#: difference between 10 ms commands still stops within half a second.
EVIDENCE_MIN_UNITS = 10


def first_look(min_runs: int, evidence: bool) -> int:
    """The first count the adaptive stop looks at: the evidence rule's first (EVIDENCE_MIN_UNITS), when
    that rule is on and comes before `min_runs`; else `min_runs`, the precision rule's first."""
    return min(min_runs, EVIDENCE_MIN_UNITS) if evidence else min_runs


class LookSchedule:
    """The counts at which the live statistics are computed: every run up to 20, then whenever the runs
    grew by LOOK_GROWTH (rounded up: a step of 2 from 21, of 3 from 41, ...), and at `min_runs`.
    Between two looks the progress line shows the last CI and nothing stops. Asked with growing counts;
    `due` remembers the last look."""

    def __init__(self, min_runs: int) -> None:
        self.min_runs = min_runs
        self.last = 0

    def due(self, n: int) -> bool:
        """Look at `n` runs? (Yes at most once per count.)"""
        if n != self.last and self._looks_at(n, self.last):
            self.last = n
            return True
        return False

    def next_due(self, n: int) -> int:
        """The first count after `n` at which `due` would say yes, `due(n)` asked or not yet (the runner
        asks how far it may queue before the stop rule has looked at a pair it has just measured, and
        after). Changes nothing."""
        last = n if self._looks_at(n, self.last) else self.last
        later = max(n + 1, last + self._step(last))
        return min(later, self.min_runs) if n < self.min_runs else later

    def _looks_at(self, n: int, last: int) -> bool:
        """Is `n` a count looked at, the last look having been at `last` (`n` itself: yes)?"""
        return n == last or n == self.min_runs or n >= last + self._step(last)

    @staticmethod
    def _step(last: int) -> int:
        # Rounded up, so every run only up to 20; rounded down (as until 2026-11-27) it was every run
        # up to 40: 20 more looks and single-pair batches, for no stop more than one run sooner.
        return max(1, math.ceil(last * LOOK_GROWTH))
