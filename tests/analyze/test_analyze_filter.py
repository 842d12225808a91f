"""Winsorization (Bulej et al. 2020 §4) and warm-up removal: exact cases."""
from __future__ import annotations

import numpy as np
import pytest

from duetbench.analyze.filter import discard_warmup, winsorize_run, winsorize_runs


@pytest.mark.parametrize(
    ("run", "expected"),
    [
        # High outlier: rest [10, 13] spans 3, limit 13 + 0.6; 20 → its nearest neighbour 13.
        ([10, 11, 12, 13, 20], [10, 11, 12, 13, 13]),
        # Both ends within 20% of the other values' range beyond it (0.5 < 0.6): unchanged.
        ([10, 10.5, 11, 12, 13, 13.5], [10, 10.5, 11, 12, 13, 13.5]),
        # Low outlier, unsorted input, position kept.
        ([12, 1, 10, 13, 11], [12, 10, 10, 13, 11]),
        # Exactly on the limit (120 + 0.2·20 = 124, and 104 − 0.2·20 = 100) is not beyond it;
        # one more is (and then the low end's limit moves to 104 − 0.2·21 = 99.8).
        ([100, 104, 108, 112, 116, 120, 124], [100, 104, 108, 112, 116, 120, 124]),
        ([100, 104, 108, 112, 116, 120, 125], [100, 104, 108, 112, 116, 120, 120]),
        # Both ends qualify: 30 lies 18/12 = 1.5 ranges beyond, 0 lies 10/20 = 0.5: replace 30.
        ([0, 10, 11, 12, 30], [0, 10, 11, 12, 12]),
        # Two equal maxima: the remaining one belongs to the range, nothing is replaced.
        ([10, 11, 12, 20, 20], [10, 11, 12, 20, 20]),
        # At most one replacement per run even with two outliers on one side.
        ([10, 11, 12, 30, 50], [10, 11, 12, 30, 30]),
        # Remaining values all equal: range 0, any other value lies beyond it.
        ([5, 5, 5, 9], [5, 5, 5, 5]),
        # Fewer than three values: no "remaining range" to speak of.
        ([1, 100], [1, 100]),
    ],
)
def test_winsorize_run_exact(run: list[float], expected: list[float]) -> None:
    assert winsorize_run(run).tolist() == [float(v) for v in expected]


def test_winsorize_runs_per_run_and_no_mutation() -> None:
    runs = [np.array([10.0, 11.0, 12.0, 13.0, 20.0]), np.array([1.0, 10.0, 11.0, 12.0])]
    out = winsorize_runs(runs)
    assert [r.tolist() for r in out] == [[10, 11, 12, 13, 13], [10, 10, 11, 12]]
    assert runs[0][-1] == 20.0 and runs[1][0] == 1.0
    assert [r.tolist() for r in winsorize_runs(np.array([[1.0, 2.0, 3.0, 9.0]]))] == [[1, 2, 3, 3]]


def test_winsorize_threshold_parameter() -> None:
    # With 10% both ends qualify, equally far (0.5/3): the maximum is replaced.
    assert winsorize_run([10, 10.5, 11, 12, 13, 13.5], threshold=0.1).tolist() == [10, 10.5, 11, 12, 13, 13]
    with pytest.raises(ValueError, match="threshold"):
        winsorize_run([1, 2, 3], threshold=-1)


def test_winsorize_bad_input() -> None:
    with pytest.raises(ValueError, match="non-finite"):
        winsorize_run([1.0, float("nan"), 2.0])
    with pytest.raises(ValueError, match="winsorize_run"):
        winsorize_runs(np.array([1.0, 2.0, 3.0]))


def test_discard_warmup() -> None:
    x = np.arange(11.0)
    assert discard_warmup(x, 3).tolist() == list(range(3, 11))
    assert discard_warmup(x, 0.5).tolist() == list(range(5, 11))  # floor(5.5): as the thesis' iteration < max/2
    assert discard_warmup(x, 0).tolist() == x.tolist()
    with pytest.raises(ValueError, match="leaves nothing"):
        discard_warmup(x, 11)
    with pytest.raises(ValueError, match="fraction"):
        discard_warmup(x, 1.0)
    with pytest.raises(ValueError, match=">= 0"):
        discard_warmup(x, -1)
    with pytest.raises(ValueError, match="bool"):
        discard_warmup(x, True)
