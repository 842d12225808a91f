"""analyze/quantile.py `median` and `percentiles`: numpy's answers to the last bit, without numpy.ma."""
from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from duetbench.analyze.quantile import median, percentiles

samples = arrays(np.float64, st.integers(1, 120),
                 elements=st.floats(-1e9, 1e9, allow_nan=False, allow_infinity=False) | st.sampled_from([0.0, 1.0]))


@given(samples)
def test_median_is_numpys(x: np.ndarray) -> None:
    assert median(x) == float(np.median(x))


@given(samples, st.lists(st.floats(0.0, 100.0), min_size=1, max_size=5))
def test_percentiles_are_numpys(x: np.ndarray, q: list[float]) -> None:
    assert percentiles(x, q) == [float(v) for v in np.percentile(x, q)]


def test_a_nan_makes_every_answer_nan_as_in_numpy() -> None:
    x = np.array([1.0, math.nan, 3.0])
    assert math.isnan(median(x)) and all(math.isnan(v) for v in percentiles(x, (25.0, 75.0)))


def test_neither_imports_numpy_ma() -> None:
    code = ("import sys, numpy as np\n"
            "from duetbench.analyze.quantile import median, percentiles\n"
            "x = np.arange(10.0)\n"
            "median(x); percentiles(x, (25.0, 50.0, 75.0))\n"
            "print('numpy.ma' in sys.modules)\n")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.strip() == "False"
