"""run-means: runs are the units, each summarized by one number (Bulej et al. 2020 §3 and §4.1, Drozdík 2023
§4.3.2 "run means"; docs/methods.md): the duets' geometric mean of a run's pair ratios, the sequential
method's run mean. `auto` for duet and aduet."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from duetbench.model.table import IterationTable

from ._base import Estimate, aduet_by_run, duet_runs, flat_if_single, judge, sequential_runs

if TYPE_CHECKING:
    from ..api import AnalysisOptions


def estimate(method: str, rows: IterationTable, opts: AnalysisOptions) -> Estimate:
    if method == "sequential":
        a, b = sequential_runs(rows)
        for name, runs in (("A (baseline)", a), ("B (candidate)", b)):
            if len(runs) < 2:  # said as runs: the run means below would be "only 1 value" of iterations aplenty
                raise ValueError(f"{name} has {len(runs)} run{'s' if len(runs) != 1 else ''}; at least 2 runs are "
                                 "needed (run-means: each run is one unit)")
        return judge("sequential", np.array([x.mean() for x in a]), np.array([x.mean() for x in b]), opts)
    if method == "duet":
        a, b = duet_runs(rows)
        return judge("duet", flat_if_single(a), flat_if_single(b), opts)
    return aduet_by_run(rows, opts)
