"""A's and B's values over shared histogram bins: what both HTML reports (campaign and comparisons) draw
as the two-colour distribution plot."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

#: Bins: the Freedman–Diaconis width (numpy's "fd") over both sides' values, within bounds. FD alone is
#: coarse for a few hundred values (its width shrinks only as n^(-1/3)): a 5% shift between A and B within a
#: few percent of run-to-run noise would fall inside one or two bins. At least MIN_BINS where the values
#: are runs (a comparison's handful), MIN_ITERATION_BINS where they are iterations (a campaign has hundreds
#: per side); at most MAX_BINS, so that each bin keeps a few values.
MIN_BINS = 12
MIN_ITERATION_BINS = 20
MAX_BINS = 60
#: Values beyond these percentiles of A and B together fold into the end bins (one stray iteration would
#: otherwise squeeze every other into a single bin).
FOLD_PERCENTILES = (0.5, 99.5)


def _sig(x: float, digits: int = 6) -> float | None:
    return float(f"{x:.{digits}g}") if math.isfinite(x) else None


def shared_histogram(a: np.ndarray, b: np.ndarray, min_bins: int = MIN_BINS) -> dict[str, Any] | None:
    """Counts of `a` and `b` over the same bins, with each side's median; None with fewer than 2 values."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    a, b = a[np.isfinite(a)], b[np.isfinite(b)]
    both = np.concatenate([a, b])
    if both.size < 2:
        return None
    lo, hi = (float(x) for x in np.percentile(both, FOLD_PERCENTILES))
    if not hi > lo:
        lo, hi = float(both.min()) * 0.999, float(both.max()) * 1.001 + 1e-12
    clipped = np.clip(both, lo, hi)
    bins = int(np.clip(np.histogram_bin_edges(clipped, bins="fd").size - 1, min_bins, MAX_BINS))
    edges = np.linspace(lo, hi, bins + 1)
    counts = [np.histogram(np.clip(x, lo, hi), edges)[0].tolist() for x in (a, b)]
    return {"edges": [_sig(float(e)) for e in edges], "A": counts[0], "B": counts[1], "nA": int(a.size),
            "nB": int(b.size), "medianA": _sig(float(np.median(a))) if a.size else None,
            "medianB": _sig(float(np.median(b))) if b.size else None}
