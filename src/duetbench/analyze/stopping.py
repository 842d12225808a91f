"""Dynamic reconfiguration: stop warmup and runs once the measurements are stable.

Laaber et al. 2020 §4: after every warmup iteration (Algorithm 1 line 7) and after every
run ("fork", line 10) a stability criterion — CV, RCIW or KLD (§4.2.3) — is computed over a sliding
window, and the phase stops once it is stable, within minimum and maximum counts. Pure functions:
arrays in, frozen results out. The reference implementation (JMH fork, docs/notes/seed_tools.md §3.1)
differs from the paper in places; we follow the paper and fix the fork's bugs, and each docstring
says where.

A *step* is one iteration (its samples: one time, or JMH-style per-invocation times) or one run
(its measurement iterations). Steps are given as a sequence of scalars or 1-D arrays.

Live use: after each new iteration call `warmup_step` (it judges only the newest iteration, assuming
the earlier ones were judged unstable, as a live loop does); `warmup_end` scans a whole series and
gives the same first stop. Likewise `run_step` / `run_stop` after each run.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import DuetError
from ._inputs import FloatArray
from .bootstrap import hierarchical_mean_distribution, percentile_interval
from .kld import kld_similarity

Criterion = Literal["cv", "rciw", "kld"]
CRITERIA: tuple[Criterion, ...] = ("cv", "rciw", "kld")


def criterion_named(name: str) -> Criterion:
    """`name` as a criterion (e.g. from a campaign file); DuetError naming the criteria when it is none."""
    for criterion in CRITERIA:
        if name == criterion:
            return criterion
    raise DuetError(f"unknown stopping criterion {name!r}", hint=f"use one of {', '.join(CRITERIA)}")
#: "window": the unions start at the window's first step (paper Eq. 1, warmup);
#: "cumulative": they start at step 1 (paper Eq. 2, runs).
Basis = Literal["window", "cumulative"]

Steps = Sequence[ArrayLike]


@dataclass(frozen=True)
class StoppingParams:
    """Parameters of dynamic reconfiguration with the defaults of Laaber et al. 2020 §4 / notes §3.1.

    wi_min/wi_max: warmup iterations per run (the effective minimum is raised to the iteration
    window, as in the reference: 5, or 6 for KLD); mi: measurement iterations after warmup;
    f_min/f_max: runs; window_iterations (None: 5, 6 for KLD) and window_runs: the sliding
    window sW in steps; thresholds per criterion (variability ≤ threshold for CV and RCIW,
    mean similarity > threshold for KLD); confidence_level and n_resamples: RCIW's bootstrap
    (the reference's 99 % and 1000); outlier_factor: per step, values outside
    [median/f, f·median] are dropped before any criterion (the reference's factor 10; None: off).
    """

    criterion: Criterion = "kld"
    cv_threshold: float = 0.01
    rciw_threshold: float = 0.03
    kld_threshold: float = 0.99
    wi_min: int = 5
    wi_max: int = 50
    mi: int = 50
    f_min: int = 2
    f_max: int = 5
    window_iterations: int | None = None
    window_runs: int = 2
    confidence_level: float = 0.99
    n_resamples: int = 1000
    outlier_factor: float | None = 10.0

    def __post_init__(self) -> None:
        criterion_named(self.criterion)
        for name in ("cv_threshold", "rciw_threshold"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
                raise DuetError(f"stopping parameter {name} must be a number >= 0, got {v!r}")
        if not (isinstance(self.kld_threshold, (int, float)) and 0.0 <= self.kld_threshold < 1.0):
            raise DuetError(
                f"stopping parameter kld_threshold must lie in [0, 1), got {self.kld_threshold!r}",
                hint="it is a similarity probability, e.g. 0.99",
            )
        for name in ("wi_min", "wi_max", "mi", "f_min", "f_max", "window_runs", "n_resamples"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise DuetError(f"stopping parameter {name} must be a positive integer, got {v!r}")
        w = self.window_iterations
        if w is not None and (isinstance(w, bool) or not isinstance(w, int) or w < 2):
            raise DuetError(f"stopping parameter window_iterations must be an integer >= 2, got {w!r}")
        if self.window_runs < 2:
            raise DuetError(f"stopping parameter window_runs must be >= 2, got {self.window_runs}")
        if self.wi_max < self.min_warmup_iterations:
            raise DuetError(
                f"stopping parameter wi_max={self.wi_max} is below the minimum warmup iterations "
                f"({self.min_warmup_iterations} for {self.criterion})",
                hint="raise wi_max or use a fixed warmup count instead of dynamic warmup",
            )
        if self.f_max < self.f_min:
            raise DuetError(f"stopping parameter f_max={self.f_max} is below f_min={self.f_min}")
        if not 0.0 < self.confidence_level < 1.0:
            raise DuetError(f"stopping parameter confidence_level must lie in (0, 1), got {self.confidence_level!r}")
        f = self.outlier_factor
        if f is not None and not (isinstance(f, (int, float)) and f > 1.0):
            raise DuetError(f"stopping parameter outlier_factor must be > 1 (or none), got {f!r}")

    @property
    def threshold(self) -> float:
        return float(getattr(self, f"{self.criterion}_threshold"))

    @property
    def iteration_window(self) -> int:
        if self.window_iterations is not None:
            return self.window_iterations
        return 6 if self.criterion == "kld" else 5

    @property
    def min_warmup_iterations(self) -> int:
        return max(self.wi_min, self.iteration_window)


# ----------------------------------------------------------------------------------------------
# Criteria over a window


@dataclass(frozen=True)
class Check:
    """The stability judgement after `step` steps (1-based).

    vector: the window's stability values — sc of the growing unions for CV/RCIW, similarities
    of consecutive unions for KLD (nan where undefined, e.g. a CV of one value); variability:
    max − min of the defined values (CV, RCIW) or their mean (KLD), nan when fewer than needed.
    """

    step: int
    criterion: Criterion
    vector: tuple[float, ...]
    variability: float
    threshold: float
    stable: bool


@dataclass(frozen=True)
class CriterionTrace:
    """One `Check` per step of a series; `variability`/`stable` are the same as arrays."""

    checks: tuple[Check, ...]
    variability: FloatArray = field(repr=False)
    stable: NDArray[np.bool_] = field(repr=False)

    @property
    def first_stable(self) -> int | None:
        """The first step (1-based) at which the criterion holds, or None."""
        hits = np.flatnonzero(self.stable)
        return int(hits[0]) + 1 if hits.size else None


def _as_steps(steps: Steps, name: str, outlier_factor: float | None) -> list[FloatArray]:
    if isinstance(steps, (str, bytes)):
        raise ValueError(f"{name} must be a sequence of numbers or of 1-D arrays, got a string")  # noqa: TRY004 - analyze reports all bad input as ValueError
    out: list[FloatArray] = []
    for i, s in enumerate(steps):
        try:
            arr = np.atleast_1d(np.asarray(s, dtype=np.float64))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name}: step {i + 1} is not numbers ({exc})") from None
        if arr.ndim != 1 or arr.size == 0:
            raise ValueError(f"{name}: step {i + 1} must be a number or a non-empty 1-D array, got shape {arr.shape}")
        if not np.isfinite(arr).all() or (arr <= 0).any():
            raise ValueError(f"{name}: step {i + 1} holds a non-finite or non-positive time; times must be > 0")
        if outlier_factor is not None and arr.size > 1:
            med = float(np.median(arr))
            arr = arr[(arr >= med / outlier_factor) & (arr <= med * outlier_factor)]
        out.append(arr)
    return out


class _Evaluator:
    """Stability values of unions of steps, memoized so a trace computes each union once.

    RCIW's bootstrap is seeded by (random_state, first step, last step) of the union, so a value
    depends only on the data and the seed: a live check after each step and a batch trace agree.
    """

    def __init__(self, steps: list[FloatArray], criterion: Criterion, cl: float, n_resamples: int, seed: int):
        self.steps, self.criterion, self.cl, self.n_resamples, self.seed = steps, criterion, cl, n_resamples, seed
        self._cache: dict[tuple[int, int], float] = {}

    def union(self, lo: int, hi: int) -> FloatArray:
        return np.concatenate(self.steps[lo:hi])

    def sc(self, lo: int, hi: int) -> float:
        """CV or RCIW of steps[lo:hi]."""
        key = (lo, hi)
        if key not in self._cache:
            self._cache[key] = self._cv(lo, hi) if self.criterion == "cv" else self._rciw(lo, hi)
        return self._cache[key]

    def _cv(self, lo: int, hi: int) -> float:
        x = self.union(lo, hi)
        return float(x.std(ddof=1) / x.mean()) if x.size >= 2 else math.nan

    def _rciw(self, lo: int, hi: int) -> float:
        part = self.steps[lo:hi]
        lengths = np.fromiter((a.size for a in part), dtype=np.intp, count=len(part))
        if int(lengths.sum()) < 2:
            return math.nan
        values = np.concatenate(part)
        rng = np.random.default_rng([self.seed, lo, hi])
        # Steps with several values (runs of iterations, iterations of invocations) get the
        # two-level bootstrap; steps of one value reduce it to the ordinary bootstrap.
        dist = hierarchical_mean_distribution(values, lengths, n_resamples=self.n_resamples, rng=rng)
        low, high = percentile_interval(dist, self.cl)
        estimate = float(np.mean([a.mean() for a in part]))
        return (high - low) / estimate

    def similarity(self, lo: int, hi: int) -> float:
        """KLD similarity of steps[lo:hi−1] (without the newest step) and steps[lo:hi]."""
        key = (lo, hi)
        if key not in self._cache:
            self._cache[key] = kld_similarity(self.union(lo, hi - 1), self.union(lo, hi))
        return self._cache[key]


def _check(ev: _Evaluator, n: int, window: int, threshold: float, basis: Basis) -> Check:
    """Judge stability after n steps: paper Eq. (1) (basis "window") or Eq. (2) ("cumulative").

    The window holds the last `window` steps, so its start is i' = n − window + 1 (1-based); the
    paper's i' = i'' − sW would hold sW + 1, which contradicts its own i' ≥ 1 at i'' = sW = 5.
    """
    crit = ev.criterion
    if n < window:
        return Check(n, crit, (), math.nan, threshold, False)
    start = n - window  # 0-based index of the window's first step
    base = start if basis == "window" else 0
    if crit == "kld":
        vector = tuple(ev.similarity(base, x) for x in range(start + 2, n + 1))
    else:
        vector = tuple(ev.sc(base, x) for x in range(start + 1, n + 1))
    defined = [v for v in vector if not math.isnan(v)]
    if crit == "kld":
        variability = float(np.mean(defined)) if defined else math.nan
        stable = bool(defined) and variability > threshold
    else:
        variability = max(defined) - min(defined) if len(defined) >= 2 else math.nan
        stable = len(defined) >= 2 and variability <= threshold
    return Check(n, crit, vector, variability, threshold, stable)


def _trace(
    steps: Steps, criterion: Criterion, *, window: int, threshold: float, basis: Basis,
    confidence_level: float = 0.99, n_resamples: int = 1000, outlier_factor: float | None = 10.0,
    random_state: int = 0,
) -> CriterionTrace:
    ev = _Evaluator(_as_steps(steps, "steps", outlier_factor), criterion, confidence_level, n_resamples, random_state)
    checks = tuple(_check(ev, n, window, threshold, basis) for n in range(1, len(ev.steps) + 1))
    return CriterionTrace(
        checks=checks,
        variability=np.array([c.variability for c in checks], dtype=np.float64),
        stable=np.array([c.stable for c in checks], dtype=bool),
    )


def cv_criterion(
    steps: Steps, *, window: int = 5, threshold: float = 0.01, basis: Basis = "window",
    outlier_factor: float | None = 10.0,
) -> CriterionTrace:
    """CV criterion (Laaber et al. 2020 §4.2.3): sc = stdev/mean (ddof 1) of the pooled values of a union
    of steps; stable iff max(v) − min(v) ≤ threshold over the window's values v.

    The reference (notes §3.1) instead tests max_k |cov(i−k) − cov(i)| < t, always over
    cumulative unions from step 1; we follow the paper (Eq. 1 for warmup, Eq. 2 for runs).
    """
    return _trace(steps, "cv", window=window, threshold=threshold, basis=basis, outlier_factor=outlier_factor)


def rciw_criterion(
    steps: Steps, *, window: int = 5, threshold: float = 0.03, basis: Basis = "window",
    confidence_level: float = 0.99, n_resamples: int = 1000, outlier_factor: float | None = 10.0,
    random_state: int = 0,
) -> CriterionTrace:
    """RCIW criterion (Laaber et al. 2020 §4.2.3): sc = (CI high − CI low)/mean, the percentile CI of the
    mean of step means from a hierarchical bootstrap (steps, then values within each drawn step,
    uniformly — not pa's normal-draws-mod-n resampler, notes §3.2); stable iff max − min ≤ t.

    Unlike the reference we bootstrap all the data rather than a fresh random 1000-value
    subsample, and lose no data row (the reference's header-less CSV drops one, notes §3.1).
    """
    return _trace(
        steps, "rciw", window=window, threshold=threshold, basis=basis, confidence_level=confidence_level,
        n_resamples=n_resamples, outlier_factor=outlier_factor, random_state=random_state,
    )


def kld_criterion(
    steps: Steps, *, window: int = 6, threshold: float = 0.99, basis: Basis = "window",
    outlier_factor: float | None = 10.0,
) -> CriterionTrace:
    """KLD criterion (Laaber et al. 2020 §4.2.3): for each step x of the window, the similarity
    2^−KL(P‖Q)·2^−KL(Q‖P) of the union without step x (P) and with it (Q) — `kld.kld_similarity`;
    stable iff the mean of the window's window − 1 similarities > threshold.

    It compares densities, so it needs many values per union: with one time per iteration the
    small warmup window rarely reaches 0.99 — prefer CV or RCIW there.
    """
    return _trace(steps, "kld", window=window, threshold=threshold, basis=basis, outlier_factor=outlier_factor)


# ----------------------------------------------------------------------------------------------
# Decisions


@dataclass(frozen=True)
class WarmupDecision:
    """Whether warmup is over after the iterations seen.

    done: stop warming up (stable, or wi_max reached); stable: the criterion held; iteration:
    the iteration (1-based count) at which it first held, else None; warmup_iterations: the
    warmup length to use (iteration, or wi_max when the maximum was reached), None while
    undecided; measurement_end: warmup_iterations + mi, the iteration after which the run may
    stop; check: the last judgement; warning: set when wi_max was reached without stability.
    """

    done: bool
    stable: bool
    iteration: int | None
    warmup_iterations: int | None
    measurement_end: int | None
    criterion: Criterion
    check: Check | None
    warning: str | None

    @property
    def reason(self) -> str:
        if self.stable:
            return f"{self.criterion} stable after {self.iteration} warmup iterations"
        if self.done:
            return "max reached without stability"
        return "not yet stable"


@dataclass(frozen=True)
class RunDecision:
    """Whether to stop launching runs after the runs seen (fields as in `WarmupDecision`)."""

    stop: bool
    stable: bool
    runs: int | None
    criterion: Criterion
    check: Check | None
    warning: str | None

    @property
    def reason(self) -> str:
        if self.stable:
            return f"{self.criterion} stable after {self.runs} runs"
        if self.stop:
            return "max reached without stability"
        return "not yet stable"


def _describe(check: Check | None) -> str:
    if check is None or math.isnan(check.variability):
        return "criterion undefined"
    if check.criterion == "kld":
        return f"mean KLD similarity {check.variability:.4f}, needs > {check.threshold:g}"
    return f"{check.criterion} varies by {check.variability:.4f} in the window, needs <= {check.threshold:g}"


Judge = Callable[[int], Check]


def _first_stop(judge: Judge, n: int, lo: int, hi: int, live: bool) -> tuple[int | None, Check | None]:
    """First step in [lo, min(n, hi)] whose check is stable (only step n when `live`)."""
    last: Check | None = None
    first = max(lo, n) if live else lo
    for i in range(first, min(n, hi) + 1):
        last = judge(i)
        if last.stable:
            return i, last
    return None, last


def _all_stable(judges: list[Judge]) -> Judge:
    """One judge over several sides: a pair is stable only when both sides are; the check reported
    is the first side not yet stable."""
    def judge(i: int) -> Check:
        checks = [j(i) for j in judges]
        bad = [c for c in checks if not c.stable]
        return bad[0] if bad else checks[0]

    return judge


def _warmup(judges: list[Judge], n: int, params: StoppingParams, live: bool, what: str) -> WarmupDecision:
    lo, hi = params.min_warmup_iterations, params.wi_max
    at, check = _first_stop(_all_stable(judges), n, lo, hi, live)
    if at is not None:
        return WarmupDecision(True, True, at, at, at + params.mi, params.criterion, check, None)
    if n >= hi:
        warning = (
            f"{what} did not stabilize within wi_max={hi} warmup iterations ({_describe(check)}); "
            "measuring anyway"
        )
        return WarmupDecision(True, False, None, hi, hi + params.mi, params.criterion, check, warning)
    return WarmupDecision(False, False, None, None, None, params.criterion, check, None)


def _evaluator(steps: Steps, name: str, params: StoppingParams, random_state: int) -> _Evaluator:
    return _Evaluator(
        _as_steps(steps, name, params.outlier_factor), params.criterion, params.confidence_level,
        params.n_resamples, random_state,
    )


def _judge(ev: _Evaluator, params: StoppingParams, window: int, basis: Basis) -> Judge:
    return lambda i: _check(ev, i, window, params.threshold, basis)


def _pair_judges(
    a: Steps, b: Steps, names: tuple[str, str], params: StoppingParams, random_state: int, window: int, basis: Basis
) -> tuple[list[Judge], int]:
    """Both sides' judges, and how many steps both have (steps beyond the shorter side are not judged)."""
    ev_a = _evaluator(a, names[0], params, random_state)
    ev_b = _evaluator(b, names[1], params, random_state)
    n = min(len(ev_a.steps), len(ev_b.steps))
    return [_judge(ev_a, params, window, basis), _judge(ev_b, params, window, basis)], n


def warmup_end(
    values: Steps, params: StoppingParams = StoppingParams(), *, random_state: int = 0, live: bool = False
) -> WarmupDecision:
    """Where warmup ends in one run's iterations (Laaber et al. 2020 §4.2.1, Algorithm 1 line 7).

    Scans iterations wi_min..min(len, wi_max) for the first at which the criterion holds over
    the window of the last sW iterations (unions inside the window, Eq. 1). Past wi_max without
    stability: done with a warning and warmup_iterations = wi_max (the reference does the same
    but records its warning with the wrong comparison direction for KLD; ours is decided by the
    same test as stability). With `live=True` only the newest iteration is judged (see module).
    """
    ev = _evaluator(values, "values", params, random_state)
    return _warmup([_judge(ev, params, params.iteration_window, "window")], len(ev.steps), params, live, "warmup")


def warmup_step(values: Steps, params: StoppingParams = StoppingParams(), *, random_state: int = 0) -> WarmupDecision:
    """`warmup_end` judging only the newest iteration: call after every iteration of a live run."""
    return warmup_end(values, params, random_state=random_state, live=True)


def pair_warmup_end(
    a_values: Steps, b_values: Steps, params: StoppingParams = StoppingParams(), *,
    random_state: int = 0, live: bool = False,
) -> WarmupDecision:
    """Warmup end for a duet pair: the first iteration at which both sides are stable at once
    (the sides stay aligned: one decision, one warmup length for both). Iterations beyond the
    shorter side are not judged."""
    judges, n = _pair_judges(a_values, b_values, ("a_values", "b_values"), params, random_state,
                             params.iteration_window, "window")
    return _warmup(judges, n, params, live, "the duet pair's warmup")


def pair_warmup_step(
    a_values: Steps, b_values: Steps, params: StoppingParams = StoppingParams(), *, random_state: int = 0
) -> WarmupDecision:
    """`pair_warmup_end` judging only the newest iteration pair."""
    return pair_warmup_end(a_values, b_values, params, random_state=random_state, live=True)


def _runs(judges: list[Judge], n: int, params: StoppingParams, live: bool, what: str) -> RunDecision:
    at, check = _first_stop(_all_stable(judges), n, params.f_min, params.f_max, live)
    if at is not None:
        return RunDecision(True, True, at, params.criterion, check, None)
    if n >= params.f_max:
        warning = f"{what} did not stabilize within f_max={params.f_max} runs ({_describe(check)})"
        return RunDecision(True, False, None, params.criterion, check, warning)
    return RunDecision(False, False, None, params.criterion, check, None)


def run_stop(
    runs: Steps, params: StoppingParams = StoppingParams(), *, random_state: int = 0, live: bool = False
) -> RunDecision:
    """Stop launching runs? (Laaber et al. 2020 §4.2.2, Algorithm 1 line 10). `runs`: each run's
    measurement iterations. Checked from f_min on, over the last window_runs cumulative unions
    (Eq. 2: runs 1..x); at f_max without stability: stop with a warning. The reference compares
    its warning count with the *minimum* forks and crashes (NPE) with fewer warmup forks than
    the window (notes §3.1); here an undefined criterion is simply "not stable"."""
    ev = _evaluator(runs, "runs", params, random_state)
    return _runs([_judge(ev, params, params.window_runs, "cumulative")], len(ev.steps), params, live, "the runs")


def run_step(runs: Steps, params: StoppingParams = StoppingParams(), *, random_state: int = 0) -> RunDecision:
    """`run_stop` judging only the newest run: call after every run."""
    return run_stop(runs, params, random_state=random_state, live=True)


def pair_run_stop(
    a_runs: Steps, b_runs: Steps, params: StoppingParams = StoppingParams(), *,
    random_state: int = 0, live: bool = False,
) -> RunDecision:
    """Stop launching duet runs when both sides' runs are stable at the same run count."""
    judges, n = _pair_judges(a_runs, b_runs, ("a_runs", "b_runs"), params, random_state,
                             params.window_runs, "cumulative")
    return _runs(judges, n, params, live, "the duet pair's runs")


# ----------------------------------------------------------------------------------------------
# Our own rule: the precision of the A/B ratio


@dataclass(frozen=True)
class Decision:
    """stop, and why: "precision" (target reached), "max_runs" or "budget" (with a warning),
    "continue", or "min_runs" (precise enough already, but too few runs yet)."""

    stop: bool
    reason: Literal["precision", "max_runs", "budget", "continue", "min_runs"]
    warning: str | None = None


def ratio_precision_stop(
    rciw_of_ratio: float, target: float, runs: int, min_runs: int, max_runs: int,
    elapsed_s: float, budget_s: float | None,
) -> Decision:
    """Stop launching runs when the CI of the A/B ratio is narrower than `target` (relative width,
    e.g. 0.01 for `--target-width 0.01`), within min/max runs and a time budget.

    Stops on precision, never on significance: whether the CI excludes 1 plays no part, because
    stopping once a difference looks significant inflates false alarms; a width-based rule only
    weakly depends on where the interval lies (tests/analyze/test_stopping_simulation.py measures
    both error rates). The budget stops before a run that, at the average run time so far, would
    end past it. `rciw_of_ratio` may be nan (too few runs for a CI): then only limits stop.
    """
    if not (math.isfinite(target) and target > 0):
        raise DuetError(f"target relative CI width must be > 0, got {target!r}", hint="e.g. --target-width 0.01")
    if min_runs < 1 or max_runs < min_runs:
        raise DuetError(f"run limits must satisfy 1 <= min_runs <= max_runs, got {min_runs} and {max_runs}")
    if budget_s is not None and not budget_s > 0:
        raise DuetError(f"time budget must be > 0 seconds, got {budget_s!r}")
    precise = math.isfinite(rciw_of_ratio) and rciw_of_ratio <= target
    if precise and runs >= min_runs:
        return Decision(True, "precision")
    width = f"{rciw_of_ratio:.2%}" if math.isfinite(rciw_of_ratio) else "undefined"
    if runs >= max_runs:
        return Decision(True, "max_runs", f"reached max {max_runs} runs with the ratio's CI width {width} "
                                          f"above the target {target:.2%}")
    if budget_s is not None and runs > 0 and elapsed_s + elapsed_s / runs > budget_s:
        return Decision(
            True, "budget",
            f"time budget {budget_s:g} s would be exceeded by another run after {runs} runs "
            f"({elapsed_s:.1f} s so far); the ratio's CI width is {width}, target {target:.2%}",
        )
    return Decision(False, "min_runs" if precise else "continue")
