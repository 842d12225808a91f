"""analyze/tdist: Student's t quantile without scipy, checked against scipy (which it replaces at run time)."""
from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from scipy.special import stdtr, stdtrit

from duetbench.analyze.interval import t_quantile
from duetbench.analyze.tdist import betainc, t_isf

RNG = np.random.default_rng(20261124)
DFS = [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 9.0, 29.0, 99.0, 1e3, 99_999.0, 1e5, 1e7, 1e9, 1e15,
       *RNG.uniform(0.5, 300.0, 60), *(10 ** RNG.uniform(0.0, 9.0, 40))]
QS = [1e-12, 1e-9, 1e-6, 1e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2, 5e-2, 0.1, 0.2, 0.3, 0.4, 0.49]


@pytest.mark.parametrize("df", DFS)
def test_quantile_matches_scipy(df: float) -> None:
    for q in QS:
        ours = t_isf(q, float(df))
        # scipy's lower-tail quantile, negated: passing 1 - q would lose q's digits in the far tail
        ref = -float(stdtrit(df, q))
        assert ours == pytest.approx(ref, rel=1e-10), (df, q)
        if q >= 1e-6:  # 1 - (1 - q) keeps q to ~1e-10 relative only from here on
            assert t_isf(1.0 - q, float(df)) == pytest.approx(-ref, rel=1e-7), (df, q)


@pytest.mark.parametrize("df", [0.7, 2.0, 4.0, 17.0, 250.0])
def test_quantile_round_trips_near_the_centre(df: float) -> None:
    for q in (0.4999, 0.49999999, 0.45):
        t = t_isf(q, df)
        assert t > 0
        assert float(stdtr(df, -t)) == pytest.approx(q, rel=1e-12)
    assert t_isf(0.5, df) == 0.0


def test_quantile_rejects_what_has_no_quantile() -> None:
    for q, df in ((0.0, 5.0), (1.0, 5.0), (-0.1, 5.0), (0.01, 0.0), (0.01, -1.0), (0.01, math.nan)):
        with pytest.raises(ValueError):
            t_isf(q, df)


def test_betainc_matches_scipy() -> None:
    from scipy.special import betainc as ref

    for a, b in ((0.5, 0.5), (0.5, 3.0), (3.0, 0.5), (2.0, 7.5), (40.0, 0.5), (0.5, 4000.0)):
        for x in (1e-9, 1e-3, 0.1, 0.5, 0.9, 0.999, 1 - 1e-9):
            assert betainc(a, b, x) == pytest.approx(float(ref(a, b, x)), rel=1e-10, abs=1e-300), (a, b, x)
    assert betainc(2.0, 3.0, 0.0) == 0.0 and betainc(2.0, 3.0, 1.0) == 1.0


def test_interval_quantile_is_the_two_sided_one() -> None:
    assert t_quantile(0.99, 9.0) == pytest.approx(3.2498355415921263, rel=1e-12)
    assert t_quantile(0.95, 1.0) == pytest.approx(12.706204736174698, rel=1e-12)


def test_the_comparison_statistics_do_not_import_scipy() -> None:
    """What `duet compare` imports to judge its pairs must not pull in scipy (~150 ms of CPU, issue 17)."""
    code = ("import sys; import duetbench.analyze.comparison, duetbench.analyze.monitor, "
            "duetbench.analyze.choice, duetbench.analyze.tests; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'scipy'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
