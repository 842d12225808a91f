"""The published analyses of the three outside data sets, recomputed with duetbench's own code
(IterationTable in, our bootstrap engine) so tests can check them against the authors' numbers.

- `median_ratio_study`: Japke et al. 2023, "The Early Microbenchmark Catches the Bug"
  (cloud-benchmark-conductor, analysis_scripts/perf_analysis_median_ratio_mb.py).
- `faasterbench_change`: Grambow et al., WoSC '23, "Efficiently Detecting Performance Changes in FaaS
  Application Releases" (faasterBench, analysis/{aws,google}/analysis_calc.ipynb).
- `runtime_speedup`: Drozdík 2023 §5.2.1, thesis Fig. runtime_speedup (notebooks/rq1.ipynb).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from duetbench.analyze._inputs import RandomState, as_generator
from duetbench.analyze.bootstrap import bootstrap_distribution, percentile_interval
from duetbench.model.table import IterationTable


def median(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """np.median along the last axis, the same values about 4× faster: a partial sort (np.partition)
    instead of np.median's general path, which matters for 10,000 replicates × 1,638 samples."""
    if axis not in (-1, x.ndim - 1):
        raise ValueError("median reduces along the last axis only")
    n = x.shape[-1]
    if n % 2:
        return np.partition(x, n // 2, axis=-1)[..., n // 2]
    part = np.partition(x, (n // 2 - 1, n // 2), axis=-1)
    return (part[..., n // 2 - 1] + part[..., n // 2]) / 2.0


@dataclass(frozen=True)
class MedianRatio:
    benchmark: str
    ratio: float  # median(B) / median(A)
    low: float
    high: float
    change_found: bool  # 1 lies outside [low, high]


def median_ratio_study(table: IterationTable, *, confidence_level: float = 0.99, n_resamples: int = 10_000,
                       random_state: RandomState = 42, order: list[str] | None = None) -> list[MedianRatio]:
    """Per benchmark: median(B)/median(A) over all measured iterations, with the percentile bootstrap CI
    of the ratio of medians (A and B resampled independently), and "Perf Change Found" when 1 lies
    outside the CI — the microbenchmark analysis of Japke et al. 2023 (cloud-benchmark-conductor
    README; 99 %, 10,000 resamples). Run structure is ignored, as the authors did. Benchmarks are
    processed in `order` (default: first seen), which decides which random numbers each one gets."""
    rng = as_generator(random_state)
    rows = table.measured()
    out = []
    for bench in order or dict.fromkeys(rows.benchmark.tolist()):
        mine = rows.benchmark == bench
        a, b = rows.value[mine & (rows.side == "A")], rows.value[mine & (rows.side == "B")]
        # int64 draws: the authors' random stream, which reproduces their borderline verdicts exactly.
        dist_a = bootstrap_distribution((a,), median, n_resamples=n_resamples, rng=rng, narrow_indices=False)
        dist_b = bootstrap_distribution((b,), median, n_resamples=n_resamples, rng=rng, narrow_indices=False)
        low, high = percentile_interval(dist_b / dist_a, confidence_level)
        out.append(MedianRatio(bench, float(np.median(b) / np.median(a)), low, high, not low <= 1.0 <= high))
    return out


@dataclass(frozen=True)
class Change:
    benchmark: str
    estimate_pct: float  # (median ratio − 1) · 100
    low_pct: float
    high_pct: float
    n: int  # ratios (paired) or A durations (unpaired) behind the estimate


def _pairs(rows: IterationTable) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A and B values of a duet paired on (run, index), with run and index; unpaired rows are dropped."""
    a, b = rows.where(rows.side == "A"), rows.where(rows.side == "B")
    ka = a.run * (int(rows.index.max()) + 1) + a.index
    kb = b.run * (int(rows.index.max()) + 1) + b.index
    common, ia, ib = np.intersect1d(ka, kb, return_indices=True)
    return a.value[ia], b.value[ib], a.run[ia], a.index[ia]


def faasterbench_change(table: IterationTable, benchmark: str, *, paired: bool, last_pair_only: bool = True,
                        confidence_level: float = 0.99, n_resamples: int = 10_000,
                        random_state: RandomState = None) -> Change:
    """Relative change of B against A in %, as the faasterBench notebook computes it.

    paired (the "faasterBench" method, duet rows): median over pairs of B/A − 1; bootstrap of the
    median of the pair ratios. With `last_pair_only` (the published numbers) only the last pair of each
    invocation enters, three times: the notebook appended one dict three times, so only the last pair
    survived, triplicated (faasterBench README). unpaired ("traditional", sequential rows): median over
    all (B, A) combinations of B/A − 1; a replicate draws as many B/A ratios of a random B and a random A
    as there are A durations and takes their median."""
    rng = as_generator(random_state)
    rows = table.measured().where(table.measured().benchmark == benchmark)
    if paired:
        a, b, run, index = _pairs(rows.where(rows.method == "duet"))
        ratios = b / a
        if last_pair_only:
            last = np.zeros(run.size, dtype=bool)
            order = np.lexsort((index, run))
            last[order[np.r_[run[order][1:] != run[order][:-1], True]]] = True
            ratios = np.repeat(ratios[last], 3)
        estimate = float(np.median(ratios))
        dist = bootstrap_distribution((ratios,), np.median, n_resamples=n_resamples, rng=rng)
        n = ratios.size
    else:
        seq = rows.where(rows.method == "sequential")
        a, b = seq.value[seq.side == "A"], seq.value[seq.side == "B"]
        estimate = float(np.median(np.divide.outer(b, a)))
        dist = np.empty(n_resamples)
        step = max(1, (1 << 22) // a.size)
        for s in range(0, n_resamples, step):
            m = min(step, n_resamples - s)
            dist[s:s + m] = np.median(b[rng.integers(0, b.size, (m, a.size))] / a[rng.integers(0, a.size, (m, a.size))],
                                      axis=1)
        n = a.size
    low, high = percentile_interval(dist, confidence_level)
    return Change(benchmark, (estimate - 1) * 100, (low - 1) * 100, (high - 1) * 100, n)


def runtime_speedup(table: IterationTable, *, duet_method: str = "aduet") -> dict[str, float]:
    """Per benchmark: mean(sequential run values) / mean(duet run values) − 1 — the run-time speedup of
    duets over sequential runs, Drozdík 2023 §5.2.1 (thesis: "5 %, 73 %, and 53 %"
    median speedup of the async duet in the cloud, on bare metal and in a shared VM). Each value is
    one run's time per iteration; benchmarks lacking either method are left out."""
    out: dict[str, float] = {}
    for bench in dict.fromkeys(table.benchmark.tolist()):
        mine = table.benchmark == bench
        seq = table.value[mine & (table.method == "sequential")]
        duet = table.value[mine & (table.method == duet_method)]
        if seq.size and duet.size:
            out[bench] = float(seq.mean() / duet.mean() - 1.0)
    return out
