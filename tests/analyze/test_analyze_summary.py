"""describe() and relative_ci_width() against numpy and closed forms."""
from __future__ import annotations

import math

import numpy as np
import pytest

from duetbench.analyze.summary import coefficient_of_variation, describe, relative_ci_width, unsummarized


def test_describe_matches_numpy() -> None:
    x = np.random.default_rng(3).lognormal(0.0, 0.2, 57)
    s = describe(x)
    assert s.n == 57
    assert s.mean == pytest.approx(x.mean())
    assert s.median == pytest.approx(np.median(x))
    assert s.stdev == pytest.approx(x.std(ddof=1))
    assert (s.min, s.max) == (x.min(), x.max())
    assert (s.q1, s.q3) == pytest.approx(tuple(np.percentile(x, [25, 75])))
    assert s.cv == pytest.approx(x.std(ddof=1) / x.mean())


def test_describe_closed_form() -> None:
    s = describe([1.0, 2.0, 3.0, 4.0])
    assert (s.mean, s.median, s.q1, s.q3) == (2.5, 2.5, 1.75, 3.25)
    assert s.stdev == pytest.approx(math.sqrt(5.0 / 3.0))


def test_single_value_has_nan_spread() -> None:
    s = describe([4.2])
    assert s.n == 1 and s.mean == 4.2
    assert math.isnan(s.stdev) and math.isnan(s.cv)


@pytest.mark.parametrize(
    ("bad", "message"),
    [([], "empty"), ([1.0, float("nan")], "non-finite"), ([[1.0, 2.0]], "1-D")],
)
def test_describe_rejects_bad_input(bad: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        describe(bad)  # type: ignore[arg-type]


def test_relative_ci_width() -> None:
    assert relative_ci_width(0.98, 1.04, 1.0) == pytest.approx(0.06)
    assert relative_ci_width(-5.0, 15.0, 100.0) == pytest.approx(0.2)
    with pytest.raises(ValueError, match="estimate of 0"):
        relative_ci_width(-1.0, 1.0, 0.0)
    with pytest.raises(ValueError, match="reversed"):
        relative_ci_width(2.0, 1.0, 1.5)


@pytest.mark.parametrize("x", [[3.0], [2.0, 2.0], [1.0, 2.0, 4.0], list(np.random.default_rng(5).lognormal(0, 0.3, 41)),
                               [-1.0, 1.0]])
def test_coefficient_of_variation_is_describes_cv(x: list[float]) -> None:
    # The same number, not a close one: a duet's ratio_cv is computed by either, and shown.
    assert np.array_equal(coefficient_of_variation(x), describe(x).cv, equal_nan=True)


def test_unsummarized_knows_only_the_size() -> None:
    s = unsummarized(7)
    assert s.n == 7
    assert all(math.isnan(getattr(s, f)) for f in ("mean", "median", "stdev", "min", "max", "q1", "q3", "cv"))
