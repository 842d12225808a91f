"""Which method gives the narrowest honest interval per machine-second on this machine, now.

`duet compare --method auto` (the default) measures a short pilot of both candidates — synchronous
duet pairs and sequential rounds, interleaved in blocks — and judges them here. Why it is worth it
(issue 13, measured on 2-vCPU VMs): on a quiet machine sequential's interval was 3.5× narrower than
the duet's at equal machine time, beside a CPU hog 37× narrower, and under whole-machine stops the
duet's was 14× narrower. No fixed method is best everywhere.

The criterion: a ratio's interval half-width after T machine-seconds is ∝ √(v · c / T), with v the
variance of one unit's log ratio and c the machine-seconds one unit takes; so the method with the
smaller v · c wins. v is the spread each method's own interval will meet: for the duet robustly
((1.4826 · MAD)² of its pairs' log ratios: the robust pair filter and Yuen's trimmed interval set isolated
outliers aside), for sequential as var(log A) + var(log B) over its rounds (the delta-method variance of
log(mean B/mean A) per round), plainly, since Fieller's interval over the invocations meets every value.
c is the pilot's own elapsed time per unit, orchestration included.

A short pilot flatters sequential: its rounds span a fraction of a second, and a VM's speed drifts over
seconds, which sequential's interval meets and the duet's pairs cancel. Measured on a 2-vCPU AMD EPYC VM
(20 ms commands): the pilot's sequential spread was 2–4× below the spread of the sequential runs that
followed, while the duet's pilot spread matched its later pairs'; auto chose sequential in 3 of 5 quiet
comparisons where the duet's interval came out 2.8× narrower (bench/results/trust.md). So `duet compare`
chooses sequential only when its pilot promises an interval at least SEQUENTIAL_MARGIN times narrower.

The pilot's invocations never enter the final interval (they are kept, as warm-ups), so choosing on
them cannot bend it: the interval is the chosen method's, over data the choice did not see.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ._inputs import FloatArray
from .quantile import median
from .ratio import MAD_TO_SIGMA

#: CPU time must promise at least this much narrower an interval before the choice says so.
CPU_HINT_FACTOR = 3.0
#: `duet compare`'s pilot must promise a sequential interval this many times narrower than the duet's
#: before sequential is chosen (the pilot underestimates sequential's drift; module docstring).
SEQUENTIAL_MARGIN = 2.0


def robust_variance(x: FloatArray) -> float:
    """(1.4826 · MAD)²: the variance of normal data, unmoved by a few outliers (Hampel 1974, JASA 69(346))."""
    if x.size < 2:
        return math.inf
    mad = median(np.abs(x - median(x)))
    sd = MAD_TO_SIGMA * mad
    # With many identical values the MAD is 0; fall back to the plain spread so a method is never free.
    return sd * sd if sd > 0 else float(x.var(ddof=1))


@dataclass(frozen=True)
class Candidate:
    """One method's pilot: the spread of one unit's log ratio, and the machine-seconds a unit takes."""

    method: str
    units: int
    unit_sd: float  # robust standard deviation of one unit's log ratio
    seconds_per_unit: float

    @property
    def cost(self) -> float:
        """v · c: proportional to the squared interval width per machine-second."""
        return self.unit_sd * self.unit_sd * self.seconds_per_unit


def unit_sd(method: str, a: FloatArray, b: FloatArray, *, robust_sequential: bool = True) -> float:
    """Standard deviation of one unit's log ratio: a duet pair's log(b/a), robust; for a sequential round
    √(var log a + var log b), the delta-method spread of log(mean B/mean A) per round — robust too when
    `robust_sequential` (a campaign's interval meets iterations only through run means), else plain
    (`duet compare`'s Fieller interval meets every invocation, outliers included)."""
    if method == "duet":
        return math.sqrt(robust_variance(np.log(b) - np.log(a)))
    n = min(a.size, b.size)
    la, lb = np.log(a[:n]), np.log(b[:n])
    if robust_sequential:
        return math.sqrt(robust_variance(la) + robust_variance(lb))
    return math.sqrt(_plain_variance(la) + _plain_variance(lb))


def _plain_variance(x: FloatArray) -> float:
    return float(x.var(ddof=1)) if x.size >= 2 else math.inf


def duet_candidate(a: FloatArray, b: FloatArray, seconds: float) -> Candidate:
    """From a pilot of synchronous duet pairs (A's and B's times, and the pilot's elapsed seconds)."""
    return Candidate("duet", int(a.size), unit_sd("duet", a, b), seconds / max(a.size, 1))


def sequential_candidate(a: FloatArray, b: FloatArray, seconds: float) -> Candidate:
    """From a pilot of sequential rounds (A's and B's times, each invocation on its own); the spread is
    plain, as `duet compare`'s sequential interval meets it."""
    n = min(a.size, b.size)
    return Candidate("sequential", n, unit_sd("sequential", a, b, robust_sequential=False), seconds / max(n, 1))


#: Recent spreads below this (0.5 %) are never worth a new pilot.
CHANGE_FLOOR = 0.005
#: Units each recent spread is taken over.
RECENT_UNITS = 8
#: Consecutive windows of RECENT_UNITS that must all show the change before the pilot runs again.
RECENT_WINDOWS = 2
#: How often `duet compare --method auto` may measure both methods again within one comparison.
MAX_REDECISIONS = 2


def conditions_changed(chosen: Candidate, other: Candidate, recent_sds: Sequence[float], *,
                       sequential_margin: float = 1.0) -> bool:
    """True when the chosen method's recent units spread so much that, at that spread, the pilot would
    have chosen the other method (a neighbour started, say): time to measure both again.

    Judged against the other method's pilot, not against the chosen one's own: a spread that grows but
    stays far below what the other method offers changes nothing (on a quiet 2-vCPU VM a rule of "3× the
    own pilot's spread" re-ran the pilot twice in 4 of 5 six-second comparisons, a quarter of their time,
    and chose the same method every time). And every one of `recent_sds` (consecutive windows of
    RECENT_UNITS units, RECENT_WINDOWS of them) must show it: a neighbour that started stays, while the
    robust spread of one window of 8 units is itself noisy enough that, checked every 8 units over a
    comparison of 200, a single window re-ran the pilot in 3 of 5 quiet comparisons and chose the duet
    again each time (bench/results/trust.md, the 5-repetition matrix)."""
    if not recent_sds:
        return False

    def lost(sd: float) -> bool:
        if sd <= CHANGE_FLOOR:
            return False
        cost = sd * sd * chosen.seconds_per_unit
        if chosen.method == "duet":  # sequential would now win, margin included
            return other.cost * sequential_margin**2 < cost
        return cost > other.cost

    return all(lost(sd) for sd in recent_sds)


@dataclass(frozen=True)
class MethodChoice:
    """The chosen method, the evidence in one line, and a note when CPU time would be far more precise."""

    method: str
    reason: str
    candidates: tuple[Candidate, ...]
    cpu_hint: str | None = None

    def to_dict(self) -> dict[str, object]:
        return {"method": self.method, "reason": self.reason, "cpu_hint": self.cpu_hint,
                "candidates": [{"method": c.method, "units": c.units, "unit_sd": c.unit_sd,
                                "seconds_per_unit": c.seconds_per_unit} for c in self.candidates]}


def choose(duet: Candidate, sequential: Candidate, *, metric: str = "wall",
           cpu: tuple[Candidate, Candidate] | None = None, sequential_margin: float = 1.0) -> MethodChoice:
    """The method with the smaller cost (squared width per machine-second); sequential only when its
    interval promises to be `sequential_margin` times narrower (ties go to the duet, whose pairing also
    cancels interference that a short pilot may not have met yet).
    `cpu`: the same candidates judged on CPU time, for the hint when `metric` is wall."""
    if not (math.isfinite(duet.cost) or math.isfinite(sequential.cost)):
        # Runs of one iteration (a command timed once per run): neither pilot has a spread to weigh, and
        # "varied inf%, ... did not vary at all" said the opposite of what happened.
        return MethodChoice("duet", f"duet, by default: the pilot had no two units to compare the methods by "
                            f"({duet.units} pairs and {sequential.units} rounds; a run of one iteration has none)",
                            (duet, sequential))
    seq_wins = sequential.cost * sequential_margin**2 < duet.cost
    best, other = (sequential, duet) if seq_wins else (duet, sequential)
    factor = math.sqrt(other.cost / best.cost) if best.cost > 0 else math.inf

    def spread(c: Candidate) -> str:
        return f"{c.unit_sd:.2%}" if math.isfinite(c.unit_sd) else "unknown (fewer than 2 units)"

    def evidence(narrower: str, factor: float) -> str:
        # A pilot whose units did not vary at all (identical times, a harness without iterations) promises
        # an interval of width 0: "about inf× narrower" said nothing a user could weigh.
        how = (f"about {factor:.1f}× narrower" if math.isfinite(factor)
               else "narrower (its pilot did not vary at all)" if best.cost == 0
               else f"the only one the pilot could judge ({other.method}'s had fewer than 2 units)")
        return (f"pair ratios of the duet varied {spread(duet)}, sequential rounds {spread(sequential)}; "
                f"per machine-second the {narrower} CI is {how} ({duet.units} pairs and "
                f"{sequential.units} rounds tried)")

    reason = f"{best.method}: {evidence(best.method, factor)}"
    if factor < 1.0:  # the duet kept by the margin although sequential looked narrower
        reason = (f"duet: {evidence('sequential', 1.0 / factor)}, less than the {sequential_margin:g}× "
                  "a short pilot must show (sequential's spread grows over seconds, the duet's does not)")
    hint = None
    if cpu is not None and metric == "wall":
        cpu_best = min(c.cost for c in cpu)
        if cpu_best > 0 and best.cost / cpu_best >= CPU_HINT_FACTOR**2:
            hint = (f"CPU time would answer this about {math.sqrt(best.cost / cpu_best):.0f}× more precisely "
                    "(--metric cpu: user+sys of the process tree; right when the commands are CPU-bound)")
    return MethodChoice(best.method, reason, (duet, sequential), hint)



def choose_from_runs(duet: list[tuple[FloatArray, FloatArray]], duet_seconds: float,
                     sequential: list[tuple[FloatArray, FloatArray]], sequential_seconds: float) -> MethodChoice:
    """`duet run` with `methods: {auto: N}`: the choice from one duet run and one sequential repetition.

    The units are iterations: a duet run's measured iterations paired by index (A's k-th with B's k-th,
    as the barrier started them), and the sequential repetition's A and B runs taken as rounds. A run's
    iterations give the choice dozens of degrees of freedom where two or three runs would give one or
    two (an F(1, 1) ratio of variances decides nothing). What the iterations cannot show — how much run
    means vary from run to run (JIT, memory layout) — adds the same to both methods per run; a
    sequential repetition takes two runs' time, so ignoring it can only favour sequential where the duet
    would be at least as good, which is the cheaper mistake (the interval stays honest either way).

    One (A, B) pair of arrays per benchmark inside the harness run (a JMH jar holds several); their
    variances are averaged, the units counted over all. `duet_seconds`: the duet run's elapsed time;
    `sequential_seconds`: A's run plus B's run.

    The chosen method's pilot run stays in its interval: the choice sees only spreads inside runs, not
    the run means the interval is made of; `honesty.campaign_auto` checks by simulation that the interval
    keeps its level (tests/analyze/test_choice.py). The other method's pilot run is kept, never analysed.
    """
    def candidate(method: str, pairs: list[tuple[FloatArray, FloatArray]], seconds: float) -> Candidate:
        cut = [(a[: min(a.size, b.size)], b[: min(a.size, b.size)]) for a, b in pairs]
        cut = [(a, b) for a, b in cut if a.size >= 2]
        units = sum(a.size for a, _ in cut)
        if not cut:
            return Candidate(method, 0, math.inf, math.inf)
        variance = float(np.mean([unit_sd(method, a, b) ** 2 for a, b in cut]))
        return Candidate(method, units, math.sqrt(variance), seconds / units)

    return choose(candidate("duet", duet, duet_seconds), candidate("sequential", sequential, sequential_seconds))
