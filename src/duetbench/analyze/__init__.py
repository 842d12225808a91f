"""Statistics of A/B performance comparisons: pure functions on arrays, no I/O.

Modules: `summary` (descriptive statistics), `bootstrap` (vectorized percentile bootstrap),
`ratio` (duet ratio, ratio and difference of means, robust pair filter), `filter`
(warm-up, winsorization), `overlap` (async duet pairing and ratio), `tests` (Mann–Whitney U),
`verdicts` (`verdict`, and plain words), `comparison` (`compare`, on arrays), `estimators` (what an interval
resamples, by name), `api` (`analyze`: the one way in from invocations and iteration tables, which
`invocations` and `tables` adapt).
Ratios are B/A: > 1 means B (candidate) is slower than A (baseline).
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
    from .verdicts import describe_change, exceeds_threshold, verdict

#: Where each name of `__all__` lives (no name may be a module's: once that module is imported, the package's
#: attribute is the module, as `verdict` was). The package imports none of them until asked (PEP 562): importing
#: `duetbench.analyze.X` runs this file first, and `bootstrap` (numpy.random, threadpoolctl: ~25-35 ms on
#: a 2-vCPU VM) is not needed by a duet's report (issue 17).
_WHERE = {
    "BootstrapCI": "bootstrap", "percentile_ci": "bootstrap",
    "ComparisonResult": "comparison", "compare": "comparison",
    "discard_warmup": "filter", "winsorize_run": "filter", "winsorize_runs": "filter",
    "OverlapPairs": "overlap", "aduet_ratio_ci": "overlap", "overlap_pairs": "overlap",
    "overlap_pairs_by_run": "overlap",
    "DifferenceResult": "ratio", "RatioResult": "ratio", "difference_of_means_ci": "ratio",
    "duet_ratio_ci": "ratio", "ratio_of_means_ci": "ratio", "robust_pair_filter": "ratio",
    "sequential_cis": "ratio",
    "Summary": "summary", "describe": "summary", "relative_ci_width": "summary",
    "UTestResult": "tests", "mann_whitney_u": "tests",
    "describe_change": "verdicts", "exceeds_threshold": "verdicts", "verdict": "verdicts",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


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
