"""Simulations of known truth that check the intervals and the stopping rules the way `duet compare`
and `duet analyze` apply them: does a nominal 99 % interval cover the true ratio 99 % of the time?

Used by the tests (`tests/analyze/test_interval_simulation.py`, a few thousand simulations per cell)
and by `bench/honesty.py` (the whole grid, ≥ 2000 per cell, written to `bench/results/`).

The model: every time is exp(shared + own) on the log scale, times the true ratio for B. `own`
is each side's noise, drawn from one of `NOISES`; `shared` is interference both sides of a
synchronous duet pair meet (it cancels in the ratio, as the duet intends) and that independent
invocations (sequential, async) meet separately. A and B's noise have the same distribution, so the
true ratio is the same for every estimand: the geometric-mean ratio (duets) and the ratio of means
(sequential).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from duetbench.model.table import IterationTable

from .api import AnalysisOptions, analyze_group
from .choice import MethodChoice
from .comparison import compare
from .looks import LookSchedule, first_look
from .monitor import watch

Noise = Literal["normal", "t3", "outliers", "skewed"]
#: normal; Student t with 3 degrees of freedom (heavy tails); one-sided outliers (10 % of
#: invocations slowed by 1.5–5 σ, the rest N(0, σ/2): interference that hits one side only);
#: skewed (σ·(Exp(1) − 1): slowdowns are longer than speed-ups).
NOISES: tuple[str, ...] = ("normal", "t3", "outliers", "skewed")


def side_noise(kind: str, sigma: float, rng: np.random.Generator, size: int | tuple[int, ...]) -> np.ndarray:
    """One side's own log-scale noise, with standard deviation about `sigma`."""
    if kind == "normal":
        return sigma * rng.standard_normal(size)
    if kind == "t3":
        return sigma * rng.standard_t(3, size) / math.sqrt(3.0)
    if kind == "outliers":
        x = 0.5 * sigma * rng.standard_normal(size)
        hit = rng.random(size) < 0.10
        return x + hit * rng.uniform(1.5, 5.0, size) * sigma
    if kind == "skewed":
        return sigma * (rng.exponential(1.0, size) - 1.0)
    raise ValueError(f"noise must be one of {', '.join(NOISES)}, got {kind!r}")


def following_hog(n: int, ratio: float, sigma: float, slowdown: float, rng: np.random.Generator,
                  seed: int, follow: float = 1.0) -> Sample:
    """n pairs of a synchronous duet beside a CPU hog that the scheduler moves, with probability `follow`
    after each pair, onto the CPU the faster side has just left idle (else it stays where it was; seen in
    the real A/A bench, `bench/results/trust.md`): in each pair the side on the hog's CPU is `slowdown`
    times slower. The CPUs are assigned by the very `plan.schedule.Schedule` the runner uses (seeded with
    `seed`), so what is proven is what runs. Own noise: normal, `sigma`."""
    from duetbench.plan.schedule import Schedule

    schedule = Schedule(seed, (0, 1))
    flips = [schedule.next_duet_pair().cpu["A"] == 0 for _ in range(n)]
    slowed = np.empty(n)
    hog_cpu = 0 if rng.random() < 0.5 else 1
    for k in range(n):
        slowed[k] = 1.0 if (hog_cpu == 0) == flips[k] else -1.0  # +1: A on the hog's CPU
        if rng.random() < follow:
            hog_cpu = 1 - hog_cpu  # to the CPU the faster side (the one without the hog) has left
    hit = math.log(slowdown)
    base_a = np.exp(sigma * rng.standard_normal(n))
    base_b = ratio * np.exp(sigma * rng.standard_normal(n))
    a, b = base_a * np.exp(hit * (slowed > 0)), base_b * np.exp(hit * (slowed < 0))
    # What the runner records with each pair: the slowed side waited (its CPU time is its unslowed time),
    # and the hog used the CPU meanwhile; where the kernel keeps pressure stall information, each side's
    # run-queue wait is recorded too, which for a CPU-bound command is that same wait.
    records = (a, base_a, b, base_b, np.maximum(a - base_a, b - base_b), a - base_a, b - base_b)
    return Sample(a, b, records=records)


def hog_fixed_n(n: int, *, ratio: float = 1.0, sigma: float = 0.01, slowdown: float = 1.5, follow: float = 1.0,
                sims: int = 2000, seed: int = 0, confidence_level: float = 0.99) -> Rate:
    """`duet compare --method duet --runs n` beside a following hog (`following_hog`), repeated; up to
    ACTIVITY_EVERY_PAIR_UP_TO pairs, the interval is unbounded when too many pairs had one side held off
    its CPU by the hog, as `evaluate` judges them (`interference.too_few_clean`)."""
    from duetbench.execute.noise import ACTIVITY_EVERY_PAIR_UP_TO

    from .interference import one_sided_pairs, too_few_clean

    rng = np.random.default_rng(seed)
    misses = 0
    for k in range(sims):
        s = following_hog(n, ratio, sigma, slowdown, rng, seed * 100_003 + k, follow)
        if n <= ACTIVITY_EVERY_PAIR_UP_TO and s.records is not None and too_few_clean(one_sided_pairs(*s.records)):
            continue  # unbounded: it covers every ratio
        r = compare("duet", s.a, s.b, confidence_level=confidence_level, robust=True, u_test=False, interval="t")
        misses += not (r.ratio.low <= ratio <= r.ratio.high)
    return Rate(misses, sims, float(n))


def hog_adaptive(*, ratio: float = 1.0, sigma: float = 0.01, slowdown: float = 1.5, follow: float = 1.0,
                 sims: int = 2000,
                 seed: int = 0, min_units: int = 10, max_units: int = 120, target_rciw: float = 0.01,
                 confidence_level: float = 0.99) -> Rate:
    """`duet compare --method duet` with its adaptive stop (precision and evidence, `monitor.watch` after
    every pair as the CLI calls it) beside a following hog, repeated; the reported interval as the CLI's."""
    rng = np.random.default_rng(seed)
    runs = [_watched("duet", following_hog(max_units, ratio, sigma, slowdown, rng, seed * 100_003 + k, follow),
                     ratio, min_units=min_units, target_rciw=target_rciw, confidence_level=confidence_level,
                     evidence=True, robust=True) for k in range(sims)]
    return Rate(sum(missed for missed, _ in runs), sims, float(np.median([n for _, n in runs])))


def _watched(method: str, full: Sample, ratio: float, *, min_units: int, target_rciw: float,
             confidence_level: float, evidence: bool, robust: bool, looks: str = "every") -> tuple[bool, int]:
    """One adaptive comparison over the first units of `full`: `monitor.watch` after every unit
    (`looks="every"`, the worst case) or at the counts the CLI looks at (`looks="schedule"`,
    `looks.LookSchedule`, from the evidence rule's first look on, as `duet compare` asks it), then the
    interval the CLI reports (the confidence sequence after an evidence stop, else the fixed-n interval).
    Whether it missed `ratio`, and the units it stopped at."""
    if looks not in ("every", "schedule"):
        raise ValueError(f"looks must be 'every' or 'schedule', got {looks!r}")
    max_units = len(full.a)
    schedule = LookSchedule(min_units)
    looked_from = first_look(min_units, evidence)

    def first(k: int) -> dict[str, np.ndarray] | None:
        return None if full.stamps is None else {key: v[:k] for key, v in full.stamps.items()}

    n, kind = max_units, "t"
    for k in range(3, max_units + 1):
        if looks == "schedule" and not (k >= looked_from and schedule.due(k)):
            continue
        decision, _ = watch(method, full.a[:k], full.b[:k], min_units=min_units, target_rciw=target_rciw,
                            confidence_level=confidence_level, evidence=evidence, robust=robust,
                            interval="t-stopped", stamps=first(k))
        if decision.stop:
            n, kind = k, "anytime" if decision.reason == "evidence" else "t-stopped"
            break
    r = compare(method, full.a[:n], full.b[:n], confidence_level=confidence_level, robust=robust,
                u_test=False, interval=kind, **(first(n) or {}))  # type: ignore[arg-type]
    return not (r.ratio.low <= ratio <= r.ratio.high), n


@dataclass(frozen=True)
class Sample:
    """One simulated comparison: A's and B's times, and for the async duet their start/end in ns."""

    a: np.ndarray
    b: np.ndarray
    stamps: dict[str, np.ndarray] | None = None
    #: Per duet pair, what `interference.one_sided_pairs` reads (each side's wall and CPU time, other
    #: processes' CPU time, each side's run-queue wait), where the model knows it.
    records: tuple[np.ndarray, ...] | None = None


def simulate(method: str, n: int, ratio: float, noise: str, sigma: float, rng: np.random.Generator,
             shared_sigma: float = 0.05) -> Sample:
    """n invocations per side of a `duet compare` by `method` (one value per run)."""
    own_a = side_noise(noise, sigma, rng, n)
    own_b = side_noise(noise, sigma, rng, n)
    if method == "duet":
        shared = shared_sigma * rng.standard_normal(n)
        return Sample(np.exp(shared + own_a), ratio * np.exp(shared + own_b))
    if method == "sequential":
        return Sample(np.exp(shared_sigma * rng.standard_normal(n) + own_a),
                      ratio * np.exp(shared_sigma * rng.standard_normal(n) + own_b))
    if method == "aduet":
        # Back to back on each side, B starting a random fraction of an invocation later: overlaps pair
        # each A with one or two B invocations, so neighbouring pairs share an invocation.
        a = np.exp(own_a)
        b = ratio * np.exp(own_b)
        unit = 10_000_000.0  # 10 ms in ns
        a_end = np.cumsum(a * unit)
        b_end = rng.uniform(0, unit) + np.cumsum(b * unit)
        stamps = {"a_start": (a_end - a * unit).astype(np.int64), "a_end": a_end.astype(np.int64),
                  "b_start": (b_end - b * unit).astype(np.int64), "b_end": b_end.astype(np.int64)}
        return Sample(a, b, stamps)
    raise ValueError(f"method must be duet, aduet or sequential, got {method!r}")


@dataclass(frozen=True)
class Rate:
    """How often the interval missed the true ratio (for A/A: a false alarm), over `sims`."""

    misses: int
    sims: int
    median_n: float

    @property
    def rate(self) -> float:
        return self.misses / self.sims

    def upper(self, z: float = 2.576) -> float:
        """Wilson score upper bound of the miss rate (Wilson 1927, JASA 22(158))."""
        p, n = self.rate, self.sims
        centre = p + z * z / (2 * n)
        half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
        return (centre + half) / (1 + z * z / n)


def fixed_n(method: str, n: int, *, ratio: float = 1.0, noise: str = "normal", sigma: float = 0.01,
            sims: int = 2000, seed: int = 0, interval: str = "t", robust: bool = True,
            confidence_level: float = 0.99, shared_sigma: float = 0.05) -> Rate:
    """`duet compare --runs n` repeated `sims` times: how often its interval misses `ratio`."""
    rng = np.random.default_rng(seed)
    misses = 0
    for _ in range(sims):
        s = simulate(method, n, ratio, noise, sigma, rng, shared_sigma)
        r = compare(method, s.a, s.b, confidence_level=confidence_level, n_resamples=2000, random_state=rng,
                    robust=robust, u_test=False, interval=interval, **(s.stamps or {}))  # type: ignore[arg-type]
        misses += not (r.ratio.low <= ratio <= r.ratio.high)
    return Rate(misses, sims, float(n))


def adaptive(method: str, *, ratio: float = 1.0, noise: str = "normal", sigma: float = 0.01, sims: int = 2000,
             seed: int = 0, min_units: int = 10, max_units: int = 300, target_rciw: float = 0.01,
             evidence: bool = True, robust: bool = True, confidence_level: float = 0.99,
             shared_sigma: float = 0.05, looks: str = "every") -> Rate:
    """`duet compare` with its adaptive stop (`monitor.watch` after every run, the worst case, or with
    `looks="schedule"` at the counts the CLI looks at), repeated `sims` times; the final interval is the
    one the CLI reports: the confidence sequence after an evidence stop, else the fixed-n interval."""
    rng = np.random.default_rng(seed)
    runs = [_watched(method, simulate(method, max_units, ratio, noise, sigma, rng, shared_sigma), ratio,
                     min_units=min_units, target_rciw=target_rciw, confidence_level=confidence_level,
                     evidence=evidence, robust=robust, looks=looks) for _ in range(sims)]
    return Rate(sum(missed for missed, _ in runs), sims, float(np.median([n for _, n in runs])))


def campaign(method: str, estimator: str, runs: int, iterations: int, *, ratio: float = 1.0,
             noise: str = "normal", sigma: float = 0.01, run_sigma: float = 0.02, sims: int = 2000, seed: int = 0,
             confidence_level: float = 0.99) -> Rate:
    """`duet analyze` of a campaign of `runs` runs × `iterations` iterations per side (each run adds
    its own random effect of `run_sigma` per side: layout, JIT), repeated `sims` times."""
    rng = np.random.default_rng(seed)
    misses = 0
    for _ in range(sims):
        shape = (runs, iterations)
        own_a = side_noise(noise, sigma, rng, shape) + run_sigma * rng.standard_normal((runs, 1))
        own_b = side_noise(noise, sigma, rng, shape) + run_sigma * rng.standard_normal((runs, 1))
        shared = 0.05 * rng.standard_normal(shape)
        if method == "duet":
            a, b = np.exp(shared + own_a), ratio * np.exp(shared + own_b)
        else:
            a, b = np.exp(shared + own_a), ratio * np.exp(0.05 * rng.standard_normal(shape) + own_b)
        table = _table(method, a, b)
        r = analyze_group(table, method, AnalysisOptions(estimator=estimator, confidence_level=confidence_level,
                                                         seed=rng, n_resamples=2000, u_test=False)).result
        assert r is not None  # analyze_group raises instead
        misses += not (r.ratio.low <= ratio <= r.ratio.high)
    return Rate(misses, sims, float(runs))


def _table(method: str, a: np.ndarray, b: np.ndarray) -> IterationTable:
    runs, iterations = a.shape
    cells = runs * iterations
    run = np.tile(np.repeat(np.arange(runs), iterations), 2)
    index = np.tile(np.tile(np.arange(iterations), runs), 2)
    return IterationTable.from_columns(
        benchmark=np.full(2 * cells, "sim", dtype=object), method=np.full(2 * cells, method, dtype=object),
        run=run, side=np.repeat(np.array(["A", "B"], dtype=object), cells), index=index,
        value=np.concatenate([a.ravel(), b.ravel()]))


def auto(*, ratio: float = 1.0, noise: str = "normal", sigma: float = 0.01, shared_sigma: float = 0.05,
         sims: int = 2000, seed: int = 0, pilot_units: int = 6, min_units: int = 10, max_units: int = 120,
         target_rciw: float = 0.01, confidence_level: float = 0.99, neighbour_after: int | None = None,
         neighbour_sigma: float = 0.1) -> tuple[Rate, dict[str, int]]:
    """`duet compare --method auto`, as the CLI runs it: a pilot of both methods (`choice`; a duet pair costs
    one command's time, a sequential round two), then the chosen method's adaptive comparison on new data,
    with `monitor.watch` after every unit and, every RECENT_UNITS units, the re-decision check
    (`choice.conditions_changed` over the last RECENT_WINDOWS windows): when it fires, at most
    MAX_REDECISIONS times, a new pilot; the same method chosen goes on counting its units, the other one
    starts afresh (the earlier units become warm-ups).

    `neighbour_after`: from this many units into the comparison (pilots included) a neighbour lands on one
    side of each duet pair at a time, adding `neighbour_sigma` to the duet's own noise (sequential rounds,
    on one CPU, are left as they were): the change of conditions the re-decision is for.
    Returns the miss rate of the final interval and how often each method was the final one, with
    "redecisions": how many pilots beyond the first ran in all."""
    from .choice import (
        MAX_REDECISIONS,
        RECENT_UNITS,
        RECENT_WINDOWS,
        SEQUENTIAL_MARGIN,
        choose,
        conditions_changed,
        duet_candidate,
        sequential_candidate,
        unit_sd,
    )

    rng = np.random.default_rng(seed)
    chosen = {"duet": 0, "sequential": 0, "redecisions": 0}
    misses = 0
    stops = []
    cost = {"duet": 1.0, "sequential": 2.0}

    def draw(method: str, n: int, clock: int) -> Sample:
        s = simulate(method, n, ratio, noise, sigma, rng, shared_sigma)
        if method == "duet" and neighbour_after is not None:
            # One side of each pair (at random) meets the neighbour, from unit `neighbour_after` on.
            hit = (np.arange(clock, clock + n) >= neighbour_after) * neighbour_sigma * rng.standard_normal(n)
            on_a = rng.random(n) < 0.5
            return Sample(s.a * np.exp(hit * on_a), s.b * np.exp(hit * ~on_a))
        return s

    def pilot(clock: int) -> tuple[MethodChoice, int]:
        d = draw("duet", pilot_units, clock)
        q = draw("sequential", pilot_units, clock + pilot_units)
        c = choose(duet_candidate(d.a, d.b, cost["duet"] * pilot_units),
                   sequential_candidate(q.a, q.b, cost["sequential"] * pilot_units),
                   sequential_margin=SEQUENTIAL_MARGIN)
        return c, clock + 3 * pilot_units

    for _ in range(sims):
        choice, clock = pilot(0)
        method, pilots = choice.method, 1
        full = draw(method, max_units, clock)
        start = clock  # the clock at the chosen method's first unit
        since = 0  # units measured since the last pilot (the re-decision check looks at these only)
        n, kind = max_units, "t"
        k = 0
        while k < max_units:
            k += 1
            since += 1
            if k >= 3:
                decision, _ = watch(method, full.a[:k], full.b[:k], min_units=min_units, target_rciw=target_rciw,
                                    confidence_level=confidence_level, evidence=True, robust=True,
                                    interval="t-stopped")
                if decision.stop:
                    n, kind = k, "anytime" if decision.reason == "evidence" else "t-stopped"
                    break
            if pilots <= MAX_REDECISIONS and since >= RECENT_UNITS * RECENT_WINDOWS and since % RECENT_UNITS == 0:
                mine = next(c for c in choice.candidates if c.method == method)
                other = next(c for c in choice.candidates if c.method != method)
                recent = [unit_sd(method, full.a[e - RECENT_UNITS:e], full.b[e - RECENT_UNITS:e],
                                  robust_sequential=False)
                          for e in range(k - RECENT_UNITS * (RECENT_WINDOWS - 1), k + 1, RECENT_UNITS)]
                if conditions_changed(mine, other, recent, sequential_margin=SEQUENTIAL_MARGIN):
                    now = start + int(sum(cost[method] for _ in range(k)))
                    choice, clock = pilot(now)
                    pilots += 1
                    since = 0
                    if choice.method != method:
                        method = choice.method
                        full = draw(method, max_units, clock)
                        start, k = clock, 0
        else:
            n = max_units
        r = compare(method, full.a[:n], full.b[:n], confidence_level=confidence_level, robust=True,
                    u_test=False, interval=kind)
        misses += not (r.ratio.low <= ratio <= r.ratio.high)
        chosen[method] += 1
        chosen["redecisions"] += pilots - 1
        stops.append(n)
    return Rate(misses, sims, float(np.median(stops))), chosen


def campaign_auto(runs: int, iterations: int, *, ratio: float = 1.0, noise: str = "normal", sigma: float = 0.01,
                  shared_sigma: float = 0.0, duet_sigma: float = 0.01, run_sigma: float = 0.005, sims: int = 2000,
                  seed: int = 0, confidence_level: float = 0.99) -> tuple[Rate, dict[str, int]]:
    """`duet run` with `methods: {auto: runs}`: one duet run and one sequential repetition as the pilot
    (`choice.choose_from_runs` on their iterations), then `runs` runs of the chosen method — its pilot run
    among them — analysed as `duet run` summarises (analyze.tables, default options). `shared_sigma`:
    interference both sides of a duet meet alike (it favours the duet); `duet_sigma`: what the duet's two
    sides do to each other (it favours sequential). At the defaults (duet_sigma = sigma, no shared
    interference) both methods cost the same per machine-second, so the choice flips most often and would
    bend the interval most if it could."""
    from .api import AnalysisOptions
    from .choice import choose_from_runs
    from .tables import analyze_table

    rng = np.random.default_rng(seed)
    chosen = {"duet": 0, "sequential": 0}
    misses = 0
    opts = AnalysisOptions(confidence_level=confidence_level, n_resamples=2000, seed=seed)
    for _ in range(sims):
        sims_of = {}
        for method in ("duet", "sequential"):
            shape = (runs, iterations)
            s = math.hypot(sigma, duet_sigma) if method == "duet" else sigma
            own_a = side_noise(noise, s, rng, shape) + run_sigma * rng.standard_normal((runs, 1))
            own_b = side_noise(noise, s, rng, shape) + run_sigma * rng.standard_normal((runs, 1))
            shared = shared_sigma * rng.standard_normal(shape)
            other = shared if method == "duet" else shared_sigma * rng.standard_normal(shape)
            sims_of[method] = (np.exp(shared + own_a), ratio * np.exp(other + own_b))
        (da, db), (qa, qb) = sims_of["duet"], sims_of["sequential"]
        # A duet run takes one side's time, a sequential repetition both sides' time.
        method = choose_from_runs([(da[0], db[0])], float(iterations), [(qa[0], qb[0])], 2.0 * iterations).method
        chosen[method] += 1
        a, b = sims_of[method]
        (row,) = analyze_table(_table(method, a, b), opts)
        assert row.result is not None, row.problem
        misses += not (row.result.ratio.low <= ratio <= row.result.ratio.high)
    return Rate(misses, sims, float(runs)), chosen
