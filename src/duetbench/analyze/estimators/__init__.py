"""The estimators of a comparison's CI, by name: what the bootstrap (or the t interval) treats as its units
(docs/methods.md). Each is a module of this folder with an ``estimate(method, rows, opts) -> Estimate``
(`_base.Estimator`); `analyze.api.analyze` looks them up here, and the command line offers every name
registered below (docs/contributing.md, "Adding an estimator")."""
from __future__ import annotations

from . import hierarchical, merged, run_means
from ._base import Estimate, Estimator

#: name -> estimator: one line per estimator. The names are the command line's (`duet analyze --estimator`).
ESTIMATORS: dict[str, Estimator] = {
    "run-means": run_means.estimate,
    "hierarchical": hierarchical.estimate,
    "merged": merged.estimate,
}

#: What "auto" (the default) picks for each method: the papers' unit for the duets (run means, Bulej et al.
#: 2020 §3, Drozdík 2023 §4.3.2), runs then iterations for the sequential method (Kalibera & Jones).
AUTO: dict[str, str] = {"sequential": "hierarchical", "duet": "run-means", "aduet": "run-means"}

#: Every name `--estimator` accepts.
ESTIMATOR_NAMES: tuple[str, ...] = ("auto", *ESTIMATORS)


def check_estimator(name: str) -> str:
    """`name` if it is "auto" or registered, else ValueError naming the known ones."""
    if name != "auto" and name not in ESTIMATORS:
        raise ValueError(f"estimator must be one of {', '.join(('auto', *ESTIMATORS))}, got {name!r}")
    return name


def estimator_for(name: str, method: str) -> Estimator:
    """The estimator called `name` ("auto": the method's own)."""
    return ESTIMATORS[AUTO[method] if check_estimator(name) == "auto" else name]


__all__ = ["AUTO", "ESTIMATORS", "ESTIMATOR_NAMES", "Estimate", "Estimator", "check_estimator", "estimator_for"]
