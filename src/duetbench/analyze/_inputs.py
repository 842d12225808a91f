"""Coercion and validation of user arrays, with error messages a user can act on.

Every public function of `duetbench.analyze` funnels its inputs through here so that a NaN, a
zero time or an empty run is reported once, clearly, instead of surfacing as a NaN confidence
interval three layers later.
"""
from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, TypeAlias

import msgspec
import numpy as np
from numpy.typing import ArrayLike, NDArray

FloatArray: TypeAlias = NDArray[np.float64]
IntArray: TypeAlias = NDArray[np.intp]
# A string: numpy.random (~15-20 ms to import on a 2-vCPU VM) is imported only where something is drawn.
RandomState: TypeAlias = "int | np.random.Generator | np.random.SeedSequence | None"

#: A sample given either flat (one value per run) or as per-run arrays (possibly ragged).
RunsLike: TypeAlias = ArrayLike | Sequence[ArrayLike]


def check_random_state(random_state: Any) -> RandomState:
    """`random_state` if a Generator can be made of it (`as_generator`), without importing numpy.random:
    a legacy RandomState is refused (numpy.random is imported already where one exists)."""
    random = sys.modules.get("numpy.random")
    if random is not None and isinstance(random_state, random.RandomState):
        raise ValueError("random_state must be an int seed or a numpy Generator, not a legacy RandomState")
    return random_state


def as_generator(random_state: Any) -> np.random.Generator:
    """Return a numpy Generator; a Generator passed in is used as is, so callers can chain draws."""
    check_random_state(random_state)
    return np.random.default_rng(random_state)


def check_confidence_level(confidence_level: float) -> float:
    cl = float(confidence_level)
    if not 0.0 < cl < 1.0:
        raise ValueError(f"confidence_level must lie strictly between 0 and 1 (e.g. 0.99), got {confidence_level!r}")
    return cl


def check_n_resamples(n_resamples: int) -> int:
    if isinstance(n_resamples, bool) or int(n_resamples) != n_resamples or n_resamples < 1:
        raise ValueError(f"n_resamples must be a positive integer, got {n_resamples!r}")
    return int(n_resamples)


def _first_bad(mask: NDArray[np.bool_]) -> int:
    return int(np.flatnonzero(mask)[0])


def as_sample(x: Any, name: str, *, min_size: int = 1, positive: bool = False) -> FloatArray:
    """A finite 1-D float array of at least `min_size` values (and > 0 when `positive`).

    `x` is typed Any because callers pass whatever the user gave; everything is checked here."""
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a 1-D array of numbers ({exc})") from None
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of numbers, got shape {arr.shape}")
    if arr.size < min_size:
        what = "is empty" if arr.size == 0 else f"has only {arr.size} value{'s' if arr.size != 1 else ''}"
        raise ValueError(f"{name} {what}; at least {min_size} value{'s are' if min_size != 1 else ' is'} needed")
    _check_values(arr, name, positive)
    return arr


def _check_values(arr: FloatArray, name: str, positive: bool, *, where: str = "") -> None:
    bad = ~np.isfinite(arr)
    if bad.any():
        i = _first_bad(bad)
        raise ValueError(f"{name}{where} contains a non-finite value ({arr[i]}) at index {i}")
    if positive:
        bad = arr <= 0
        if bad.any():
            i = _first_bad(bad)
            raise ValueError(
                f"{name}{where} contains {arr[i]:g} at index {i}; times must be > 0 "
                "(a zero or negative time cannot enter a ratio)"
            )


class Runs(msgspec.Struct, frozen=True, eq=False):
    """Observations of one side, run after run. A flat sample is R runs of one observation."""

    values: FloatArray
    lengths: IntArray
    flat: bool

    @property
    def count(self) -> int:
        return int(self.lengths.size)

    @property
    def offsets(self) -> IntArray:
        return np.concatenate(([0], np.cumsum(self.lengths)[:-1])).astype(np.intp)

    def run_means(self, values: FloatArray | None = None) -> FloatArray:
        """Mean of `values` (default: the observations) within each run."""
        v = self.values if values is None else values
        if self.flat:
            return v
        return np.add.reduceat(v, self.offsets) / self.lengths

    def split(self, values: FloatArray | None = None) -> list[FloatArray]:
        v = self.values if values is None else values
        return np.split(v, np.cumsum(self.lengths)[:-1])


def as_runs(x: Any, name: str, *, min_runs: int = 2, positive: bool = True) -> Runs:
    """Read either a flat 1-D sample or a sequence of per-run arrays (ragged allowed).

    A 2-D ndarray is read as runs (rows). A sequence is flat when all its items are scalars and
    per-run when all are array-like; mixing the two is an error rather than a guess.
    """
    if isinstance(x, (str, bytes)):
        raise ValueError(f"{name} must be numbers or per-run arrays of numbers, got a string")
    if isinstance(x, np.ndarray):
        if x.ndim == 1:
            items: list[Any] | None = None
        elif x.ndim == 2:
            items = list(x)
        else:
            raise ValueError(f"{name} must be 1-D (one value per run) or 2-D (runs × iterations), got shape {x.shape}")
    else:
        try:
            seq = list(x)
        except TypeError:
            raise ValueError(f"{name} must be a 1-D array or a sequence of per-run arrays, "
                             f"got {type(x).__name__}") from None
        if not seq:
            raise ValueError(f"{name} is empty; at least {min_runs} values are needed")
        try:
            dims = {np.ndim(item) for item in seq}
        except ValueError as exc:
            raise ValueError(f"{name}: cannot read per-run arrays ({exc})") from None
        if dims == {0}:
            items = None
        elif 0 not in dims:
            items = seq
        else:
            raise ValueError(f"{name} mixes scalars and arrays; give one value per run or one array per run")

    if items is None:
        values = as_sample(x, name, min_size=min_runs, positive=positive)
        return Runs(values, np.ones(values.size, dtype=np.intp), flat=True)

    if len(items) < min_runs:
        raise ValueError(f"{name} has {len(items)} run{'s' if len(items) != 1 else ''}; "
                         f"at least {min_runs} runs are needed")
    arrays: list[FloatArray] = []
    for r, item in enumerate(items):
        try:
            arr = np.asarray(item, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name}: run {r} is not an array of numbers ({exc})") from None
        if arr.ndim != 1:
            raise ValueError(f"{name}: run {r} must be 1-D, got shape {arr.shape}")
        if arr.size == 0:
            raise ValueError(f"{name}: run {r} is empty")
        _check_values(arr, name, positive, where=f" (run {r})")
        arrays.append(arr)
    lengths = np.fromiter((a.size for a in arrays), dtype=np.intp, count=len(arrays))
    return Runs(np.concatenate(arrays), lengths, flat=False)
