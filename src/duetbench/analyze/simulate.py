"""Synthetic campaigns with known truth, for the simulation tests and bench/analysis.

A time-based model, so that every method sees interference the way it would on a machine:
interference is a random step function of time (segments a few iterations long, lognormal
factors) and an iteration is slowed by the factor in force when it starts. In a synchronous duet
both sides start every iteration together (the barrier), so they draw the same factor; in an
asynchronous duet their starts drift apart and share the factor only while they overlap; a
sequential A run and B run happen at different times and never share it. With
`synchronized=False` the duet sides get independent interference processes and run effects of
the same size: everything else about the duet stays, only the synchronization is gone — the
counterfactual of the shuffle analysis (Bulej et al. 2020 §4.2).

Truth: B's base time is `ratio` × A's, and all noise is lognormal with log-mean 0, so the
geometric-mean ratio B/A (what the duet methods estimate) is exactly `ratio`; the ratio of
expected means (the sequential estimator's target) is `ratio · exp(asym_sd² / 2)` because the
asymmetric noise hits B only.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from duetbench.model.method import METHODS
from duetbench.model.table import IterationTable


@dataclass(frozen=True)
class SimulatedCampaign:
    table: IterationTable
    benchmarks: tuple[str, ...]
    true_ratio: np.ndarray  # geometric-mean B/A per benchmark (duet, aduet)
    true_mean_ratio: np.ndarray  # ratio of expected means per benchmark (sequential)


def simulate_campaign(
    *,
    benchmarks: int = 10,
    methods: Sequence[str] = METHODS,
    runs: int = 20,
    iterations: int = 75,
    warmup: int = 10,
    ratio: float | ArrayLike = 1.0,
    base_s: float = 1e-3,
    base_spread: float = 0.5,
    run_sd: float = 0.05,
    sync_sd: float = 0.05,
    synchronized: bool = True,
    own_sd: float = 0.01,
    asym_sd: float = 0.0,
    segment: float = 3.0,
    gap: float = 0.02,
    seed: int | np.random.Generator = 0,
) -> SimulatedCampaign:
    """Simulate `benchmarks` × `methods` × `runs` runs of `warmup` + `iterations` iterations per side.

    run_sd: per-run effect (shared by duet sides when `synchronized`); sync_sd: the interference
    process; own_sd: each side's own iteration noise; asym_sd: extra noise on B only (a noisy
    neighbour on one CPU); segment: interference step length in base iteration times; gap:
    mean pause between iterations in base iteration times. Vectorized over all runs: the only
    loop is over iteration positions, because an iteration's start depends on its predecessor.
    """
    rng = np.random.default_rng(seed)
    for m in methods:
        if m not in METHODS:
            raise ValueError(f"unknown method {m!r}; use {', '.join(METHODS)}")
    n_bench, n_meth, n = int(benchmarks), len(methods), int(warmup) + int(iterations)
    if n_bench < 1 or runs < 1 or iterations < 1 or warmup < 0:
        raise ValueError("benchmarks, runs and iterations must be >= 1 and warmup >= 0")
    ratios = np.broadcast_to(np.asarray(ratio, dtype=np.float64), (n_bench,)).copy()
    base = base_s * np.exp(rng.normal(0.0, base_spread, n_bench))

    # One unit = one (benchmark, method, run); arrays are (unit, side, ...).
    bench_u = np.repeat(np.arange(n_bench), n_meth * runs)
    meth_u = np.tile(np.repeat(np.arange(n_meth), runs), n_bench)
    run_u = np.tile(np.arange(runs), n_bench * n_meth)
    units = bench_u.size
    kind = np.asarray(methods, dtype=object)[meth_u]
    duet_like = (kind == "duet") | (kind == "aduet")
    shared = duet_like & synchronized

    scale = base[bench_u][:, None] * np.stack([np.ones(units), ratios[bench_u]], axis=1)
    run_eff = rng.normal(0.0, run_sd, (units, 2))
    run_eff[shared, 1] = run_eff[shared, 0]
    n_seg = math.ceil(n * (1.0 + 2 * gap) * 3.0 / segment) + 2
    seg = rng.normal(0.0, sync_sd, (units, 2, n_seg))
    seg[shared, 1] = seg[shared, 0]
    seg_len = segment * base[bench_u]
    noise = rng.normal(0.0, own_sd, (units, 2, n))
    noise[:, 1] += rng.normal(0.0, asym_sd, (units, n)) if asym_sd > 0 else 0.0
    warm = np.ones(n)
    if warmup:
        warm[:warmup] = 1.0 + 0.5 * (warmup - np.arange(warmup)) / warmup
    gaps = gap * base[bench_u][:, None, None] * rng.uniform(0.5, 1.5, (units, 2, n))

    start = np.empty((units, 2, n))
    dur = np.empty((units, 2, n))
    t = np.zeros((units, 2))
    # The async duet's B starts up to half an iteration late, so pairs are not index-aligned.
    t[kind == "aduet", 1] = rng.uniform(0.0, 0.5, int((kind == "aduet").sum())) * base[bench_u][kind == "aduet"]
    rows = np.arange(units)[:, None]
    sides = np.arange(2)[None, :]
    for i in range(n):
        start[:, :, i] = t
        k = np.minimum((t / seg_len[:, None]).astype(np.intp), n_seg - 1)
        dur[:, :, i] = scale * warm[i] * np.exp(run_eff + seg[rows, sides, k] + noise[:, :, i])
        t = t + dur[:, :, i] + gaps[:, :, i]
        # The barrier: both sides of a sync duet start the next iteration when the slower one is done.
        sync_rows = kind == "duet"
        t[sync_rows] = t[sync_rows].max(axis=1, keepdims=True)

    # Absolute clock: units one after another; a sequential B run starts after its A run.
    span = (start + dur).max(axis=2)
    seq = kind == "sequential"
    offset_b = np.where(seq, span[:, 0] + 1e-3, 0.0)
    length = np.where(seq, offset_b + span[:, 1], span.max(axis=1)) + 1e-3
    origin = np.concatenate(([0.0], np.cumsum(length)[:-1]))
    abs_start = start + origin[:, None, None]
    abs_start[:, 1, :] += offset_b[:, None]
    start_ns = np.rint(abs_start * 1e9).astype(np.int64)
    end_ns = start_ns + np.maximum(np.rint(dur * 1e9).astype(np.int64), 1)

    names = tuple(f"bench{b:03d}" for b in range(n_bench))
    shape = (units, 2, n)
    table = IterationTable(
        benchmark=np.asarray(names, dtype=object)[np.broadcast_to(bench_u[:, None, None], shape).ravel()],
        method=np.broadcast_to(kind[:, None, None], shape).ravel().copy(),
        run=np.broadcast_to(run_u[:, None, None], shape).ravel().astype(np.int64),
        side=np.broadcast_to(np.array(["A", "B"], dtype=object)[None, :, None], shape).ravel().copy(),
        index=np.broadcast_to(np.arange(n)[None, None, :], shape).ravel().astype(np.int64),
        value=((end_ns - start_ns) / 1e9).ravel(),
        start_ns=start_ns.ravel(),
        end_ns=end_ns.ravel(),
        warmup=np.broadcast_to(np.arange(n) < warmup, shape).ravel().copy(),
    )
    return SimulatedCampaign(
        table=table,
        benchmarks=names,
        true_ratio=ratios,
        true_mean_ratio=ratios * math.exp(asym_sd**2 / 2.0),
    )
