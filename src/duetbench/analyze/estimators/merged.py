"""merged: every iteration (sequential) or pair (duet, aduet) its own unit, all runs pooled. Blind to
run-to-run variation, so its CI is too narrow whenever runs differ; there for comparison with tools that
pool (docs/methods.md). The async duet's pairs are still found within runs."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from duetbench.model.table import IterationTable

from ._base import Estimate, aduet_pooled, duet_runs, judge, sequential_runs

if TYPE_CHECKING:
    from ..api import AnalysisOptions


def estimate(method: str, rows: IterationTable, opts: AnalysisOptions) -> Estimate:
    if method == "sequential":
        a, b = sequential_runs(rows)
        return judge("sequential", np.concatenate(a), np.concatenate(b), opts)
    if method == "duet":
        a, b = duet_runs(rows)
        return judge("duet", np.concatenate(a), np.concatenate(b), opts)
    return aduet_pooled(rows, opts)
