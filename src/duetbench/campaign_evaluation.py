"""From stored campaign runs to statistics: which iterations enter the analysis, paired how.

Per benchmark and method:
- duet (seed 000 §3): in every run the k-th measured iteration of A is paired with the k-th of B
  (the barrier started them together); runs are the bootstrap units.
- aduet (seed 004 §3.3.2): iterations paired by overlap of their absolute [start, end] within a run;
  needs timestamps, so a benchmark whose parser cannot give them is refused with the reason.
- sequential: A runs and B runs are independent samples; hierarchical bootstrap over runs.
Warmup: iterations the harness flags as warmup are dropped, then the benchmark's `warmup` setting
(count or fraction) drops the first measured ones of every run.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from duetbench.analyze.comparison import ComparisonResult, compare
from duetbench.store.campaigns import RunRecord, StoredIteration

#: discard(n_iterations) -> how many leading measured iterations to drop
WarmupRule = Callable[[int], int]


@dataclass(frozen=True)
class SideRun:
    run: RunRecord
    values: np.ndarray
    start: np.ndarray | None
    end: np.ndarray | None


def measured(iterations: list[StoredIteration], side: str, discard: WarmupRule,
             name: str | None = None) -> list[StoredIteration]:
    """The side's measured iterations (of one harness-internal benchmark `name`, if given), warmup dropped."""
    steady = [it for it in iterations if it.side == side and not it.warmup and (name is None or it.name == name)]
    return steady[discard(len(steady)):]


def harness_names(runs: list[RunRecord]) -> list[str]:
    """Harness-internal benchmark names in these runs (one JMH run may hold several), in first-seen order."""
    return list(dict.fromkeys(it.name for r in runs for it in r.iterations))


def _side_run(run: RunRecord, side: str, discard: WarmupRule, name: str | None = None) -> SideRun:
    its = measured(run.iterations, side, discard, name)
    values = np.array([it.value_s for it in its], dtype=float)
    if run.clock == "none" or any(it.start_ns is None or it.end_ns is None for it in its):
        return SideRun(run, values, None, None)
    return SideRun(run, values, np.array([it.start_ns for it in its], dtype=np.int64),
                   np.array([it.end_ns for it in its], dtype=np.int64))


class NotAnalyzable(Exception):
    """Why a benchmark/method cannot be analysed (shown to the user as is)."""


def evaluate_method(method: str, runs: list[RunRecord], discard: WarmupRule, *, name: str | None = None,
                    confidence_level: float = 0.99, n_resamples: int = 10_000, seed: int = 0,
                    min_overlap_rate: float = 0.4) -> ComparisonResult:
    """Ratio B/A of one benchmark (and harness-internal `name`) measured by `method`, from its stored runs."""
    ok = [r for r in runs if r.status == "ok" and r.method == method]
    if method == "sequential":
        a = [_side_run(r, "A", discard, name).values for r in ok if "A" in r.sides]
        b = [_side_run(r, "B", discard, name).values for r in ok if "B" in r.sides]
        a, b = [x for x in a if x.size], [x for x in b if x.size]
        if not a or not b:
            raise NotAnalyzable("needs at least one finished run of A and of B with measured iterations")
        return compare("sequential", a, b, confidence_level=confidence_level, n_resamples=n_resamples,
                       random_state=seed)
    pairs = [(_side_run(r, "A", discard, name), _side_run(r, "B", discard, name)) for r in ok]
    pairs = [(x, y) for x, y in pairs if x.values.size and y.values.size]
    if not pairs:
        raise NotAnalyzable("no finished run with measured iterations on both sides")
    if method == "duet":
        a_runs, b_runs = [], []
        for x, y in pairs:
            n = min(x.values.size, y.values.size)
            a_runs.append(x.values[:n])
            b_runs.append(y.values[:n])
        return compare("duet", a_runs, b_runs, confidence_level=confidence_level, n_resamples=n_resamples,
                       random_state=seed)
    missing = [x.run.key for x, y in pairs if x.start is None or y.start is None]
    if missing:
        notes = "; ".join(n for n in pairs[0][0].run.notes if "timestamp" in n) or "the parser gave none"
        raise NotAnalyzable(
            f"the async duet pairs iterations by time, but {len(missing)} run(s) have no iteration timestamps "
            f"({notes})")
    a = np.concatenate([x.values for x, _ in pairs])
    b = np.concatenate([y.values for _, y in pairs])
    # Runs are the bootstrap units (seed 004 §4.3.2); a single run can only be resampled by pairs.
    ids_a = np.concatenate([np.full(x.values.size, i) for i, (x, _) in enumerate(pairs)]) if len(pairs) > 1 else None
    ids_b = np.concatenate([np.full(y.values.size, i) for i, (_, y) in enumerate(pairs)]) if len(pairs) > 1 else None
    return compare("aduet", a, b, a_start=np.concatenate([x.start for x, _ in pairs]),  # type: ignore[misc]
                   a_end=np.concatenate([x.end for x, _ in pairs]),  # type: ignore[misc]
                   b_start=np.concatenate([y.start for _, y in pairs]),  # type: ignore[misc]
                   b_end=np.concatenate([y.end for _, y in pairs]),  # type: ignore[misc]
                   a_run_ids=ids_a, b_run_ids=ids_b, confidence_level=confidence_level,
                   n_resamples=n_resamples, random_state=seed, min_overlap_rate=min_overlap_rate)
