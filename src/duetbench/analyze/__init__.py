"""Statistics of A/B performance comparisons: pure functions on arrays, no I/O.

Modules: `summary` (descriptive statistics), `bootstrap` (vectorized percentile bootstrap),
`ratio` (duet ratio, ratio and difference of means, robust pair filter), `filter`
(warm-up, winsorization), `overlap` (async duet pairing and ratio), `tests` (Mann–Whitney U),
`verdict` (verdicts and plain words), `comparison` (`compare`, on arrays), `estimators` (what an interval
resamples, by name), `api` (`analyze`: the one way in from invocations and iteration tables, which
`invocations` and `tables` adapt).
Ratios are B/A: > 1 means B (candidate) is slower than A (baseline).
"""
from .bootstrap import BootstrapCI, percentile_ci
from .comparison import ComparisonResult, compare
from .filter import discard_warmup, winsorize_run, winsorize_runs
from .overlap import OverlapPairs, aduet_ratio_ci, overlap_pairs, overlap_pairs_by_run
from .ratio import (
    DifferenceResult,
    RatioResult,
    difference_of_means_ci,
    duet_ratio_ci,
    ratio_of_means_ci,
    robust_pair_filter,
    sequential_cis,
)
from .summary import Summary, describe, relative_ci_width
from .tests import UTestResult, mann_whitney_u
from .verdict import describe_change, exceeds_threshold, verdict

__all__ = [
    "BootstrapCI",
    "ComparisonResult",
    "DifferenceResult",
    "OverlapPairs",
    "RatioResult",
    "Summary",
    "UTestResult",
    "aduet_ratio_ci",
    "compare",
    "describe",
    "describe_change",
    "difference_of_means_ci",
    "discard_warmup",
    "duet_ratio_ci",
    "exceeds_threshold",
    "mann_whitney_u",
    "overlap_pairs",
    "overlap_pairs_by_run",
    "percentile_ci",
    "ratio_of_means_ci",
    "relative_ci_width",
    "robust_pair_filter",
    "sequential_cis",
    "verdict",
    "winsorize_run",
    "winsorize_runs",
]
