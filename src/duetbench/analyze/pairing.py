"""How each duet pairs the rows of an iteration table: the sync duet iteration by iteration within a run, the
async duet by time overlap within a run (docs/methods.md). Used by the estimators (`analyze.estimators`), the
shuffle analysis and the slowdown study, which must pair exactly as the comparison does."""
from __future__ import annotations

import msgspec
import numpy as np

from duetbench.model.table import IterationTable

from .overlap import OverlapPairs, overlap_pairs


def paired_runs(measured: IterationTable) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """A and B values of a sync duet paired by (run, iteration index); iterations present on one
    side only (a lost or warm-up-only iteration) are left out. Per-run arrays, runs in order."""
    a = measured.where(measured.side == "A")
    b = measured.where(measured.side == "B")
    width = int(max(a.index.max(initial=0), b.index.max(initial=0))) + 1
    _, ia, ib = np.intersect1d(a.run * width + a.index, b.run * width + b.index, return_indices=True)
    if ia.size == 0:
        return [], []
    cuts = np.flatnonzero(np.diff(a.run[ia])) + 1
    return np.split(a.value[ia], cuts), np.split(b.value[ib], cuts)


class AduetPairs(msgspec.Struct, frozen=True, eq=False):
    """Overlap pairs of an async duet over all runs at once, with the paired values."""

    a_value: np.ndarray
    b_value: np.ndarray
    pairs: OverlapPairs
    pair_run: np.ndarray  # run of each pair, pairs sorted by run
    a_count: int
    b_count: int


def rebased_timeline(table: IterationTable) -> tuple[np.ndarray, np.ndarray]:
    """Start and end (int64 ns) with each run moved to its own stretch of time, both sides by the
    same shift, so one `overlap_pairs` call pairs all runs without pairing across runs."""
    if not table.has_timestamps():
        raise ValueError(
            "the async duet pairs iterations by time, but some iterations lack start/end timestamps; "
            "re-run with a harness hook that records them, or analyze with the sequential method"
        )
    runs, inverse = np.unique(table.run, return_inverse=True)
    first = np.full(runs.size, np.iinfo(np.int64).max)
    last = np.full(runs.size, np.iinfo(np.int64).min)
    np.minimum.at(first, inverse, table.start_ns)
    np.maximum.at(last, inverse, table.end_ns)
    origin = np.concatenate(([0], np.cumsum(last - first + 1)[:-1]))
    shift = (origin - first)[inverse]
    return table.start_ns + shift, table.end_ns + shift


def aduet_pairs(measured: IterationTable, min_overlap_rate: float = 0.4) -> AduetPairs:
    """Pair the measured iterations of an async duet within runs (Drozdík 2023 §3.3.2)."""
    start, end = rebased_timeline(measured)
    is_a = measured.side == "A"
    is_b = measured.side == "B"
    pairs = overlap_pairs(start[is_a], end[is_a], start[is_b], end[is_b], min_overlap_rate=min_overlap_rate)
    pair_run = measured.run[is_a][pairs.a_index]
    order = np.argsort(pair_run, kind="stable")
    return AduetPairs(
        a_value=measured.value[is_a],
        b_value=measured.value[is_b],
        pairs=pairs.subset(order),
        pair_run=pair_run[order],
        a_count=int(is_a.sum()),
        b_count=int(is_b.sum()),
    )
