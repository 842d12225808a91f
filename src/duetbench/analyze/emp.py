"""EMP's disciplined outlier removal and sample-size determination for one program (Suh et al. (EMP) §4.5, §4.6).

Suh, Snodgrass, Kececioglu, Downey, Maier, Yi: *EMP: Execution Time Measurement Protocol for
Compute-Bound Programs* (Softw. Pract. Exper., 2017). Pure functions on arrays: no I/O.

Inputs per sample k (in measurement order, warm-up already discarded): process time ``pt[k]``
(user+sys of the program), elapsed time ``et[k]``, and the daemons seen during it:
``daemons[k] = {comm: [PT of each process with that name, seconds]}`` (one entry per process, as the
paper's Table IX lists ``java: 3 msec, java: 1 msec``).

Where the paper is informal or inconsistent, the choice made here is stated in the docstring:
* the central cluster is found visually in the paper (§4.5.1 step 3); here by a deterministic rule;
* the cutoff is the midpoint between the daemon's *maximum* in the central cluster and its *minimum*
  long-running PT in the L-samples in the worked example (§4.5.2, Tables XI and XVI), but between the
  two *averages* in the step list (§4.5.1 step 8). Both are offered; the default follows the worked
  example, which is what produced the paper's cutoffs;
* the paper's programs run for seconds to hours, so the before/after images (Figure 5) bracket the run
  almost exactly; for a short program the launch and the snapshots themselves are a sizeable part of
  the window, and a daemon that ran in that part (not during the run) would be charged to the sample.
  ``prorate_to_run`` scales each daemon's PT by ET/window (the share of the window the run occupied),
  and ``attributable_windows`` marks samples whose window exceeds their ET by far more than usual; those
  are kept in the statistics and in the cutoff check, but not used to characterise daemons (steps 4–5).
  For the paper's long programs ET/window ≈ 1 and both change nothing;
* the paper's second pass (INC16384, step 7) and its periodicity-dependent two-case cutoffs need a
  second, much longer program and do not apply to measuring one program; periodicity is reported.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

SampleDaemons = Mapping[str, Sequence[float]]
CutoffRule = Literal["extremes", "means"]

#: Modified z-score above which a sample lies outside the central cluster (Iglewicz & Hoaglin 1993,
#: *How to Detect and Handle Outliers*, §3.2: |M| > 3.5 with M = 0.6745 (x − median) / MAD).
CENTRAL_Z = 3.5
#: A daemon execution shorter than this is never called long-running. The paper's process times have a
#: 1 ms resolution (taskstats, §3.2), so its tables cannot hold shorter executions; ours are in ns, and
#: without a floor every sub-millisecond kworker that happened to run only in an L-sample would get a
#: cutoff of a few microseconds.
MIN_LONG_S = 0.001


@dataclass(frozen=True)
class Stats:
    """One row of the paper's statistics tables (e.g. Table VII): times in seconds."""

    n: int
    minimum: float
    maximum: float
    mean: float
    std: float
    #: std / mean, the paper's "relative error" (Table VII: 1,730.3 / 128,343 = 1.3e-2).
    relative_error: float


def stats(values: Sequence[float] | np.ndarray) -> Stats:
    """Minimum, maximum, average, standard deviation and relative error, as in Suh et al. (EMP) Table VII.

    The standard deviation is the sample one (ddof=1; the paper does not say which), and the relative
    error is std/mean, which reproduces the paper's Table VII and XVIII figures."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        nan = float("nan")
        return Stats(0, nan, nan, nan, nan, nan)
    sd = float(np.std(x, ddof=1)) if x.size > 1 else 0.0
    mean = float(np.mean(x))
    return Stats(int(x.size), float(x.min()), float(x.max()), mean, sd, sd / mean if mean else float("nan"))


def dual_pairs(et: Sequence[float] | np.ndarray) -> np.ndarray:
    """The dual-execution scatter plot's points (§4.5.1 step 2): samples 1 and 2 form the first pair,
    3 and 4 the second, ...; x is the first sample's ET, y the second's. An odd last sample is left out."""
    x = np.asarray(et, dtype=float)
    m = x.size // 2
    return x[: 2 * m].reshape(m, 2)


@dataclass(frozen=True)
class ClusterSplit:
    """Central cluster vs L-samples (§4.5.1 step 3, §4.5.2 Figure 14)."""

    #: Per sample: True for an L-sample (outside the central cluster, above it).
    l_sample: np.ndarray
    center: float
    scale: float
    threshold: float  # ET above which a sample is an L-sample
    #: Pairs by quadrant of the dual-execution plot: both central, only the first long, only the second
    #: long, both long. "both" pairs are the signature of *frequent* long-running daemons (§4.5.2 set (d)).
    pairs_central: int
    pairs_first_long: int
    pairs_second_long: int
    pairs_both_long: int

    @property
    def l_shape(self) -> bool:
        """Arms of the L are populated and its top-right corner is empty (§4.5.2: the "L-shape")."""
        return (self.pairs_first_long + self.pairs_second_long) > 0 and self.pairs_both_long == 0


def split_central(et: Sequence[float] | np.ndarray, z: float = CENTRAL_Z, min_rel_scale: float = 1e-4) -> ClusterSplit:
    """Split samples into the central cluster and the L-samples (§4.5.1 step 3, made deterministic).

    The paper zooms into the dual-execution scatter plot until the remaining cluster looks symmetric.
    The rule here: a sample is an *L-sample* when its ET lies above the median by more than ``z``
    robust standard deviations (1.4826 × MAD, i.e. a modified z-score above 3.5, Iglewicz & Hoaglin).
    It is applied to each coordinate of each pair, so a pair is central when both its coordinates are
    within the band, and lies on an arm of the L when exactly one is above it. Only the high side
    counts: a daemon can only lengthen a run; short outliers are left to the ±2σ check. The robust
    scale is floored at ``min_rel_scale`` × median so that identical (quantized) times do not make
    every other value an L-sample."""
    x = np.asarray(et, dtype=float)
    if x.size == 0:
        return ClusterSplit(np.zeros(0, bool), float("nan"), float("nan"), float("nan"), 0, 0, 0, 0)
    center = float(np.median(x))
    scale = max(1.4826 * float(np.median(np.abs(x - center))), min_rel_scale * abs(center))
    threshold = center + z * scale
    long_ = x > threshold
    pairs = long_[: 2 * (x.size // 2)].reshape(-1, 2)
    first, second = pairs[:, 0], pairs[:, 1]
    return ClusterSplit(long_, center, scale, threshold,
                        int(np.sum(~first & ~second)), int(np.sum(first & ~second)),
                        int(np.sum(~first & second)), int(np.sum(first & second)))


@dataclass(frozen=True)
class CentralDaemon:
    """A daemon's process time over the central-cluster samples it appeared in (§4.5.1 step 4, Table VIII)."""

    count: int
    maximum: float
    std: float
    mean: float


def prorate_to_run(daemons: Sequence[SampleDaemons], et: Sequence[float] | np.ndarray,
                   window: Sequence[float] | np.ndarray) -> list[dict[str, list[float]]]:
    """Each daemon execution's PT × ET/window: the part of it expected inside the run if it ran evenly
    over the window. Not in the paper (see the module note); it keeps a daemon that ran while the next
    run was being launched from looking like one that ran during a run whose ET stayed central."""
    out = []
    for seen, e, w in zip(daemons, np.asarray(et, dtype=float), np.asarray(window, dtype=float), strict=True):
        share = min(1.0, e / w) if w > 0 else 1.0
        out.append({name: [t * share for t in times] for name, times in seen.items()})
    return out


def attributable_windows(window: Sequence[float] | np.ndarray, et: Sequence[float] | np.ndarray,
                         z: float = CENTRAL_Z, min_scale: float = 0.001) -> np.ndarray:
    """Samples whose activity window (snapshot to snapshot) can be attributed to the run itself.

    Not in the paper (its windows bracket runs of seconds or more, §3.3); needed for short programs.
    The overhead is window − ET; a sample is attributable unless its overhead lies more than ``z``
    robust standard deviations (1.4826 × MAD, floored at ``min_scale`` seconds) above the median
    overhead, i.e. unless something held the launch or the second snapshot up — typically a daemon
    that ran on the CPU before the program could start, which did not lengthen ET at all."""
    over = np.asarray(window, dtype=float) - np.asarray(et, dtype=float)
    if over.size == 0:
        return np.zeros(0, dtype=bool)
    center = float(np.median(over))
    scale = max(1.4826 * float(np.median(np.abs(over - center))), min_scale)
    return over <= center + z * scale


def central_daemons(daemons: Sequence[SampleDaemons], central: np.ndarray) -> dict[str, CentralDaemon]:
    """Maximum, standard deviation and mean PT of each daemon within the central cluster (§4.5.1 step 4).

    Every execution (process) counts once; the standard deviation is over executions (ddof=0, so that a
    daemon seen once has 0, as the paper's Table VIII shows for daemons with a single value)."""
    values: dict[str, list[float]] = {}
    for k, seen in enumerate(daemons):
        if central[k]:
            for name, times in seen.items():
                values.setdefault(name, []).extend(float(t) for t in times)
    return {name: CentralDaemon(len(v), max(v), float(np.std(v)), float(np.mean(v))) for name, v in values.items()}


@dataclass(frozen=True)
class LongRunningDaemon:
    """A daemon with long-running executions in the L-samples (§4.5.1 steps 5–6, Tables X, XI)."""

    name: str
    samples: tuple[int, ...]  # indices of the L-samples holding a long-running execution
    times: tuple[float, ...]  # PT of each such execution (s)
    central: CentralDaemon | None
    #: Median gap between its samples, in samples (the paper's periodicity heuristic, step 6); None
    #: below two occurrences. ``regular`` when three or more gaps agree within 25%.
    period_samples: float | None
    regular: bool

    @property
    def minimum(self) -> float:
        return min(self.times)

    @property
    def mean(self) -> float:
        return float(np.mean(self.times))


def long_running_daemons(daemons: Sequence[SampleDaemons], split: ClusterSplit,
                         central: Mapping[str, CentralDaemon], min_long_s: float = MIN_LONG_S,
                         usable: np.ndarray | None = None) -> list[LongRunningDaemon]:
    """Long-running daemon executions in the L-samples (§4.5.1 step 5) and their periodicity (step 6).

    An execution is long-running when its PT is more than two standard deviations above that daemon's
    maximum in the central cluster (0 and 0 for a daemon absent from it), and at least ``min_long_s``.
    """
    found: dict[str, list[tuple[int, float]]] = {}
    for k, seen in enumerate(daemons):
        if not split.l_sample[k] or (usable is not None and not usable[k]):
            continue
        for name, times in seen.items():
            c = central.get(name)
            limit = (c.maximum + 2 * c.std) if c else 0.0
            for t in times:
                if t > limit and t >= min_long_s:
                    found.setdefault(name, []).append((k, float(t)))
    out = []
    for name, hits in sorted(found.items()):
        samples = tuple(sorted({k for k, _ in hits}))
        period, regular = _periodicity(samples)
        out.append(LongRunningDaemon(name, samples, tuple(t for _, t in hits), central.get(name), period, regular))
    return out


def _periodicity(samples: Sequence[int]) -> tuple[float | None, bool]:
    """The paper's heuristic (§4.5.2): a daemon that occurs in a regular sequence of samples is periodic."""
    if len(samples) < 2:
        return None, False
    gaps = np.diff(np.asarray(samples, dtype=float))
    period = float(np.median(gaps))
    regular = gaps.size >= 2 and bool(np.all(np.abs(gaps - period) <= 0.25 * period))
    return period, regular


@dataclass(frozen=True)
class DaemonCutoff:
    """PT above which a sample is discarded for this daemon (§4.5.1 step 8, Table XVI)."""

    name: str
    cutoff: float
    low: float  # the central-cluster end of the midpoint (0 when the daemon was absent from it)
    high: float  # the L-sample end of the midpoint


def daemon_cutoffs(long_running: Sequence[LongRunningDaemon], rule: CutoffRule = "extremes") -> dict[str, DaemonCutoff]:
    """Cutoff per infrequent, long-running daemon: a midpoint (§4.5.1 step 8).

    ``extremes`` (default, the worked example §4.5.2 and Table XVI: flush-9:0 (1 + 126)/2 → 64 ms):
    between the daemon's maximum PT in the central cluster (0 if absent) and its minimum long-running
    PT in the L-samples. ``means`` (the step list, §4.5.1 step 8): between the two averages."""
    out: dict[str, DaemonCutoff] = {}
    for d in long_running:
        if rule == "extremes":
            low, high = (d.central.maximum if d.central else 0.0), d.minimum
        else:
            low, high = (d.central.mean if d.central else 0.0), d.mean
        out[d.name] = DaemonCutoff(d.name, (low + high) / 2, low, high)
    return out


def daemon_removals(daemons: Sequence[SampleDaemons], cutoffs: Mapping[str, DaemonCutoff]
                    ) -> dict[int, list[tuple[str, float]]]:
    """First sanity check (§4.5.2, Table XVII): samples holding an execution of an identified daemon
    above its cutoff, with the offending daemons and their PT."""
    out: dict[int, list[tuple[str, float]]] = {}
    for k, seen in enumerate(daemons):
        for name, times in seen.items():
            c = cutoffs.get(name)
            if c is None:
                continue
            for t in times:
                if t > c.cutoff:
                    out.setdefault(k, []).append((name, float(t)))
    return out


def two_sigma_outliers(values: Sequence[float] | np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Second sanity check (§4.5.2): among the kept samples, those more than two standard deviations
    (sample std) above or below their average. One pass, as in the paper; returns a mask over all samples."""
    x = np.asarray(values, dtype=float)
    kept = x[keep]
    out = np.zeros(x.size, dtype=bool)
    if kept.size < 3:
        return out
    mean, sd = float(np.mean(kept)), float(np.std(kept, ddof=1))
    out[keep] = np.abs(kept - mean) > 2 * sd
    return out


@dataclass(frozen=True)
class MetricResult:
    """One metric (PT or ET) before and after removal, as in Tables VII and XVIII."""

    before: Stats
    after: Stats
    removed_by_daemon: int
    removed_by_sigma: tuple[int, ...]  # sample indices removed by ±2σ on this metric

    @property
    def outliers(self) -> int:
        return self.removed_by_daemon + len(self.removed_by_sigma)


@dataclass(frozen=True)
class EmpResult:
    split: ClusterSplit
    central: dict[str, CentralDaemon]
    long_running: list[LongRunningDaemon]
    cutoffs: dict[str, DaemonCutoff]
    #: Sample index → the daemons (name, PT) that exceeded their cutoff in it.
    daemon_removed: dict[int, list[tuple[str, float]]]
    pt: MetricResult
    et: MetricResult
    n: int = 0
    notes: list[str] = field(default_factory=list)


def emp_v5(pt: Sequence[float] | np.ndarray, et: Sequence[float] | np.ndarray, daemons: Sequence[SampleDaemons], *,
           cutoffs: Mapping[str, DaemonCutoff] | None = None, rule: CutoffRule = "extremes",
           z: float = CENTRAL_Z, min_long_s: float = MIN_LONG_S,
           attributable: np.ndarray | None = None) -> EmpResult:
    """EMPv5 for one program (§4.5): identify infrequent long-running daemons from this run's dual-execution
    plot (steps 2–6, 8), discard samples where one exceeded its cutoff, then ±2σ per metric (Table XVIII
    counts outliers per metric: "ET 16 (=15+1)", "PT 20 (=15+5)").

    With ``cutoffs`` given (from an earlier, longer run — the paper determines them once and applies them
    to "any subsequent experiment"), they are applied as they are and no identification is made.
    ``attributable`` (default: all) limits which samples characterise daemons (steps 4–5); see
    ``attributable_windows``."""
    pt_a, et_a = np.asarray(pt, dtype=float), np.asarray(et, dtype=float)
    if not (pt_a.size == et_a.size == len(daemons)):
        raise ValueError("pt, et and daemons must have one entry per sample")
    split = split_central(et_a, z=z)
    usable = np.ones(pt_a.size, dtype=bool) if attributable is None else np.asarray(attributable, dtype=bool)
    central = central_daemons(daemons, ~split.l_sample & usable)
    long_running = long_running_daemons(daemons, split, central, min_long_s, usable)
    notes: list[str] = []
    if not usable.all():
        notes.append(f"{int(np.sum(~usable))} sample(s) with a much wider activity window than their ET were not "
                     "used to characterise daemons")
    if cutoffs is None:
        cutoffs = daemon_cutoffs(long_running, rule)
    else:
        cutoffs = dict(cutoffs)
        notes.append("cutoffs given, not determined from this run")
    if split.pairs_both_long:
        notes.append(f"{split.pairs_both_long} dual-execution pair(s) have both samples long: frequent "
                     "long-running activity, which cutoffs cannot separate (§4.5.2 set (d))")
    removed = daemon_removals(daemons, cutoffs)
    keep = np.ones(pt_a.size, dtype=bool)
    keep[list(removed)] = False
    results = {}
    for name, x in (("pt", pt_a), ("et", et_a)):
        sigma = two_sigma_outliers(x, keep)
        results[name] = MetricResult(stats(x), stats(x[keep & ~sigma]), len(removed),
                                     tuple(int(i) for i in np.flatnonzero(sigma)))
    return EmpResult(split, central, long_running, dict(cutoffs), removed, results["pt"], results["et"],
                     int(pt_a.size), notes)


def halving_sizes(n: int, min_size: int = 5) -> list[int]:
    """Sample sizes for EMPv6 (§4.6.1 step 1): n/2, n/4, ... (integer halving) while at least ``min_size``."""
    sizes = []
    m = n // 2
    while m >= min_size:
        sizes.append(m)
        m //= 2
    return sizes


@dataclass(frozen=True)
class SubsetRow:
    """One column of Tables XX–XXIV: a subset of the first ``size`` samples after EMPv5."""

    size: int
    pt_outliers: int
    et_outliers: int
    pt_outliers_daemon: int
    et_outliers_daemon: int
    pt_std: float
    et_std: float
    pt_mean: float
    et_mean: float


def _subset_row(size: int, r: EmpResult) -> SubsetRow:
    return SubsetRow(size, r.pt.outliers, r.et.outliers, r.pt.removed_by_daemon, r.et.removed_by_daemon,
                     r.pt.after.std, r.et.after.std, r.pt.after.mean, r.et.after.mean)


@dataclass(frozen=True)
class SampleSizeChoice:
    rows: list[SubsetRow]  # the subsets, largest first
    whole: SubsetRow
    chosen: int
    rule: str


def sample_size(pt: Sequence[float] | np.ndarray, et: Sequence[float] | np.ndarray, daemons: Sequence[SampleDaemons],
                cutoffs: Mapping[str, DaemonCutoff], *, min_size: int = 5, std_tolerance: float = 0.5,
                outlier_slack: float = 0.1) -> SampleSizeChoice:
    """EMPv6 sample-size determination by halving (§4.6.1 steps 1–3, Tables XX–XXIV).

    Each subset is the *first* n/2, n/4, ... samples; EMPv5 is applied to it with the cutoffs of the
    whole run (the paper determines cutoffs once, §4.5) and ±2σ within the subset (§4.6.2). The paper
    then chooses "considering the similarity" of outlier counts and standard deviations to the whole
    set; the rule here makes that explicit: the smallest subset whose PT and ET standard deviations are
    both within a factor (1 + ``std_tolerance``) of the whole set's, and whose outlier share is at most
    the whole set's plus ``outlier_slack``. Without such a subset, the whole size is chosen."""
    pt_a, et_a = np.asarray(pt, dtype=float), np.asarray(et, dtype=float)
    whole = _subset_row(pt_a.size, emp_v5(pt_a, et_a, daemons, cutoffs=cutoffs))
    rows = [_subset_row(m, emp_v5(pt_a[:m], et_a[:m], daemons[:m], cutoffs=cutoffs))
            for m in halving_sizes(pt_a.size, min_size)]
    factor = 1 + std_tolerance

    def similar(r: SubsetRow) -> bool:
        for sd, ref in ((r.pt_std, whole.pt_std), (r.et_std, whole.et_std)):
            if ref > 0 and not (ref / factor <= sd <= ref * factor):
                return False
            if ref == 0 and sd > 0:
                return False
        share = max(r.pt_outliers, r.et_outliers) / r.size
        whole_share = max(whole.pt_outliers, whole.et_outliers) / whole.size
        return share <= whole_share + outlier_slack

    ok = [r.size for r in rows if similar(r)]
    chosen = min(ok) if ok else whole.size
    rule = (f"smallest first-n subset with PT and ET std within ×{factor:g} of all {whole.size} samples' "
            f"and an outlier share at most {outlier_slack:.0%} above theirs")
    return SampleSizeChoice(rows, whole, chosen, rule)
