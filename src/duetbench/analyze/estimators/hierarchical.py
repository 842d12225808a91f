"""hierarchical: runs, then iterations (pairs, for the duets) within each drawn run (Kalibera & Jones 2013;
docs/methods.md). `auto` for the sequential method.

Sequential: `ratio_of_means_ci` on per-run arrays (`comparison.compare`). Duets: the mean of the per-run mean
log ratios B/A; with interval "t" the Student t interval over those run means (a run's mean carries the
variance of both levels, and the run-level t keeps its level with few runs, where the two-level percentile
bootstrap does not), with "bootstrap" the two-level bootstrap. With one pair per run it is the per-pair
comparison, as every estimator is there (`_base.flat_if_single`); an async duet of one run (`duet compare
--method aduet`), its overlap pairs."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from duetbench.model.table import IterationTable

from .._inputs import as_generator, check_confidence_level
from ..comparison import FEW_UNITS, robust_notes
from ..interval import student_t
from ..pairing import aduet_pairs
from ..ratio import RatioResult, exp_bound, exp_interval, robust_pair_filter
from ..summary import coefficient_of_variation
from ._base import Estimate, aduet_by_run, check_timestamps, duet_runs, flat_if_single, judge, sequential_runs

if TYPE_CHECKING:
    from ..api import AnalysisOptions


def estimate(method: str, rows: IterationTable, opts: AnalysisOptions) -> Estimate:
    if method == "sequential":
        a, b = sequential_runs(rows)
        return judge("sequential", flat_if_single(a), flat_if_single(b), opts)
    if method == "duet":
        a, b = duet_runs(rows)
        if all(x.size == 1 for x in a):
            return judge("duet", np.concatenate(a), np.concatenate(b), opts)
        log_ratio = np.log(np.concatenate(b)) - np.log(np.concatenate(a))
        return _over_runs(log_ratio, np.repeat(np.arange(len(a)), [x.size for x in a]), opts, [])
    check_timestamps(rows)
    if np.unique(rows.run).size == 1:
        return aduet_by_run(rows, opts)  # one run: the level of runs is not there, its pairs are the units
    ap = aduet_pairs(rows, opts.min_overlap_rate)
    if len(ap.pairs) < 2:
        raise ValueError(f"fewer than 2 iterations of A and B overlap by more than {opts.min_overlap_rate:.0%}; "
                         "were A and B really running at the same time (check the timestamps' clock and unit)?")
    log_ratio = np.log(ap.b_value[ap.pairs.b_index]) - np.log(ap.a_value[ap.pairs.a_index])
    unpaired_a = ap.a_count - np.unique(ap.pairs.a_index).size
    unpaired_b = ap.b_count - np.unique(ap.pairs.b_index).size
    said = [f"{len(ap.pairs)} overlap pairs (overlap rate > {opts.min_overlap_rate:g}); {unpaired_a} of {ap.a_count} "
            f"A and {unpaired_b} of {ap.b_count} B iterations unpaired"]
    return _over_runs(log_ratio, ap.pair_run, opts, said)


def _over_runs(log_ratio: np.ndarray, run: np.ndarray, opts: AnalysisOptions, notes: list[str]) -> Estimate:
    """The two-level estimate of the mean of per-run mean log ratios; `log_ratio` sorted by `run`."""
    if opts.interval == "anytime":
        raise ValueError("the hierarchical estimator has no anytime-valid interval; use the run-means estimator")
    stated = check_confidence_level(opts.confidence_level)
    # A stopped comparison's interval is made at 1 - α/2 (analyze/monitor.py), as `compare` makes it.
    cl = 1.0 - (1.0 - stated) / 2.0 if opts.interval == "t-stopped" else stated
    keep = robust_pair_filter(log_ratio) if opts.robust and log_ratio.size else np.ones(log_ratio.size, dtype=np.bool_)
    removed = int(log_ratio.size - keep.sum())
    lr, rr = log_ratio[keep], run[keep]
    _, lengths = np.unique(rr, return_counts=True)
    if lengths.size < 2:
        raise ValueError(f"the hierarchical estimator needs pairs from at least 2 runs, got {lengths.size}")
    offsets = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    run_means = np.add.reduceat(lr, offsets) / lengths
    notes = notes + robust_notes(opts.robust, int(log_ratio.size), removed)
    if opts.interval == "bootstrap":
        from ..bootstrap import hierarchical_mean_distribution, percentile_interval  # only here: ratio.py

        dist = hierarchical_mean_distribution(lr, lengths, n_resamples=opts.n_resamples, rng=as_generator(opts.seed))
        low, high = percentile_interval(dist, cl)
        ratio = RatioResult(estimate=exp_bound(float(run_means.mean())), low=exp_bound(low), high=exp_bound(high),
                            confidence_level=cl, n=int(lengths.size), interval="bootstrap")
        if lengths.size < FEW_UNITS:
            notes.append(f"only {lengths.size} runs to resample: percentile bootstrap intervals come out too narrow "
                         f"with fewer than {FEW_UNITS}; measure more for a trustworthy CI")
    else:
        ratio = exp_interval(student_t(run_means, cl), cl, int(lengths.size))
    if cl != stated:
        ratio = RatioResult(estimate=ratio.estimate, low=ratio.low, high=ratio.high, confidence_level=stated,
                            n=ratio.n, interval="t-stopped")
        notes.append(f"stopped once the CI was narrow enough: the {stated:.0%} CI is made at {cl:.1%} "
                     "to stay true despite stopping when the spread looked small")
    return Estimate(ratio=ratio, units=int(lengths.size), outliers_removed=removed,
                    ratio_cv=coefficient_of_variation(np.exp(lr)), notes=tuple(notes))
