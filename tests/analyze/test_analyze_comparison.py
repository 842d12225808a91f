"""compare(): the CLI's entry point, end to end for each method, and its input errors."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import mannwhitneyu

from duetbench.analyze.comparison import compare
from duetbench.analyze.ratio import duet_ratio_ci


def _duet(rng: np.random.Generator, n: int, ratio: float) -> tuple[np.ndarray, np.ndarray]:
    shared = rng.lognormal(0.0, 0.1, n)  # interference both sides of a pair see
    return shared * rng.lognormal(0.0, 0.01, n), ratio * shared * rng.lognormal(0.0, 0.01, n)


def test_duet_end_to_end() -> None:
    a, b = _duet(np.random.default_rng(1), 30, 1.05)
    r = compare("duet", a, b, n_resamples=2000, random_state=3)
    assert r.method == "duet" and r.metric == "wall" and r.runs == 30
    assert r.verdict == "slower" and r.ratio.low > 1.03 and r.ratio.high < 1.07
    assert r.difference is None and r.outliers_removed == 0 and r.notes == ()
    assert r.ratio_cv == pytest.approx(np.std(b / a, ddof=1) / np.mean(b / a))
    assert r.u_test_p == pytest.approx(mannwhitneyu(a, b, alternative="two-sided").pvalue, rel=1e-12)
    assert r.relative_ci_width == pytest.approx((r.ratio.high - r.ratio.low) / r.ratio.estimate)
    assert r.a.n == r.b.n == 30 and r.a.mean == pytest.approx(a.mean())
    # Same seed, same answer; clean data: robust filter changes nothing.
    assert compare("duet", a, b, n_resamples=2000, random_state=3) == r
    assert compare("duet", a, b, n_resamples=2000, random_state=3, robust=False).ratio == r.ratio


def test_duet_robust_filter_is_reported() -> None:
    a, b = _duet(np.random.default_rng(2), 40, 1.0)
    b[[5, 17]] *= 1.15
    r = compare("duet", a, b, metric="cpu", n_resamples=2000, random_state=0)
    assert r.outliers_removed == 2 and r.runs == 38
    assert any("removed 2 of 40 pairs" in n for n in r.notes)
    assert r.a.n == 40  # summaries and the U test still see everything
    keep = np.setdiff1d(np.arange(40), [5, 17])
    boot = compare("duet", a, b, metric="cpu", n_resamples=2000, random_state=0, interval="bootstrap")
    assert boot.ratio == duet_ratio_ci(a[keep], b[keep], n_resamples=2000, random_state=0, interval="bootstrap")
    # The t interval is Yuen's: the mean with the two removed pairs and the two lowest trimmed (a
    # symmetric trim), the spread of all 40 with the four winsorized, so it is wider than a t interval
    # that pretends the 36 kept pairs were all there was.
    assert any("trims as many from the other end" in n for n in r.notes)
    log_ratio = np.log(b / a)
    trimmed = np.setdiff1d(np.arange(40), [5, 17, *np.argsort(log_ratio)[:2]])
    naive = duet_ratio_ci(a[trimmed], b[trimmed])
    assert r.ratio.interval == "t" and r.ratio.estimate == pytest.approx(naive.estimate)
    assert r.ratio.low < naive.low and r.ratio.high > naive.high


def test_duet_per_run_arrays_with_filter() -> None:
    rng = np.random.default_rng(3)
    pairs = [_duet(rng, 8, 1.02) for _ in range(12)]
    a = [p[0] for p in pairs]
    b = [p[1] for p in pairs]
    b[4][2] *= 1.2
    r = compare("duet", a, b, n_resamples=2000, random_state=0)
    assert r.outliers_removed == 1 and r.runs == 95 and r.ratio.n == 12
    assert r.ratio.low < 1.02 < r.ratio.high


def test_small_samples_get_a_note() -> None:
    r = compare("duet", [1.0, 1.1, 1.2], [1.1, 1.2, 1.3], n_resamples=500, random_state=0, interval="bootstrap")
    assert any("robust pair filter inactive" in n for n in r.notes)
    assert any("only 3 pairs" in n for n in r.notes)
    # The t interval keeps its level with 3 pairs: no warning needed.
    assert not any("only 3 pairs" in n for n in compare("duet", [1.0, 1.1, 1.2], [1.1, 1.2, 1.3]).notes)


def test_sequential_end_to_end() -> None:
    rng = np.random.default_rng(4)
    a, b = rng.normal(100, 2, 25), rng.normal(110, 2, 20)
    r = compare("sequential", a, b, n_resamples=2000, random_state=1)
    assert r.runs == 20 and r.ratio.n == 20 and r.ratio_cv is None
    assert r.verdict == "slower"
    assert r.difference is not None and r.difference.n_a == 25 and r.difference.n_b == 20
    assert r.difference.relative_estimate == pytest.approx(r.ratio.estimate - 1.0)
    # Per-run arrays go through the hierarchical bootstrap.
    r2 = compare("sequential", [a[:5], a[5:12], a[12:]], [b[:10], b[10:]], n_resamples=2000, random_state=1,
                 interval="bootstrap")
    assert r2.runs == 2 and any("only 2 runs per side" in n for n in r2.notes)


def test_aduet_end_to_end() -> None:
    rng = np.random.default_rng(5)
    da = rng.normal(1_000_000, 10_000, 60).round().astype(np.int64)
    db = (1.04 * rng.normal(1_000_000, 10_000, 60)).round().astype(np.int64)
    a_end = 1_000 + np.cumsum(da + 50)
    b_end = 200_000 + np.cumsum(db + 50)
    r = compare(
        "aduet", da, db, a_start=a_end - da, a_end=a_end, b_start=b_end - db, b_end=b_end,
        n_resamples=2000, random_state=2,
    )
    assert r.method == "aduet" and r.runs > 40 and r.ratio.low < 1.04 < r.ratio.high
    assert "overlap pairs" in r.notes[0]
    # Two runs with run ids: bootstrap over the runs.
    ids = np.repeat([0, 1], 30)
    r2 = compare(
        "aduet", da, db, a_start=a_end - da, a_end=a_end, b_start=b_end - db, b_end=b_end,
        a_run_ids=ids, b_run_ids=ids, n_resamples=500, random_state=2,
    )
    assert r2.ratio.n == 2


def test_aduet_errors() -> None:
    t = np.array([1.0, 1.0])
    with pytest.raises(ValueError, match="a_start, a_end, b_start and b_end are all required"):
        compare("aduet", t, t)
    with pytest.raises(ValueError, match="no A and B iterations overlap"):
        compare("aduet", t, t, a_start=[0, 1], a_end=[1, 2], b_start=[10, 11], b_end=[11, 12])
    with pytest.raises(ValueError, match="one timestamp per iteration"):
        compare("aduet", t, t, a_start=[0], a_end=[1], b_start=[0, 1], b_end=[1, 2])
    with pytest.raises(ValueError, match="both sides"):
        compare("aduet", t, t, a_start=[0, 1], a_end=[1, 2], b_start=[0, 1], b_end=[1, 2], a_run_ids=[0, 0])


@pytest.mark.parametrize("method", ["duet", "sequential", "aduet"])
@pytest.mark.parametrize(
    ("a", "message"),
    [
        ([], "A \\(baseline\\) is empty"),
        ([1.0], "A \\(baseline\\) has only 1 value"),
        ([1.0, float("nan")], "non-finite"),
        ([1.0, 0.0], "times must be > 0"),
        ([1.0, -1.0], "times must be > 0"),
    ],
)
def test_bad_input(method: str, a: list[float], message: str) -> None:
    stamps = dict(a_start=[0, 1], a_end=[1, 2], b_start=[0, 1], b_end=[1, 2])
    with pytest.raises(ValueError, match=message):
        compare(method, a, [1.0, 1.0], **(stamps if method == "aduet" else {}))  # type: ignore[arg-type]


def test_bad_method_metric_and_pairing() -> None:
    with pytest.raises(ValueError, match="method must be one of"):
        compare("parallel", [1.0, 2.0], [1.0, 2.0])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="metric"):
        compare("duet", [1.0, 2.0], [1.0, 2.0], metric="")
    with pytest.raises(ValueError, match="must be paired"):
        compare("duet", [1.0, 2.0, 3.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="B \\(candidate\\) has only 1 value"):
        compare("sequential", [1.0, 2.0], [1.0])


def test_symmetric_trim_drops_as_many_from_each_end() -> None:
    from duetbench.analyze.interval import symmetric_trim

    x = np.array([0.0, 5.0, 1.0, 2.0, 3.0, 4.0, 9.0, 8.0])
    keep = x < 8.0  # the filter removed the two highest only
    out = symmetric_trim(x, keep)
    assert out.tolist() == [False, True, False, True, True, True, False, False]
    assert symmetric_trim(x, np.ones(8, dtype=bool)).all()


@pytest.mark.parametrize("method", ["duet", "sequential"])
def test_without_summaries_the_interval_is_the_same(method: str) -> None:
    # The live look (monitor.watch) skips describing the sides; what it decides on must not change.
    rng = np.random.default_rng(11)
    a = rng.lognormal(0.0, 0.05, 40)
    b = a * 1.03 * rng.lognormal(0.0, 0.02, 40)
    full = compare(method, a, b, u_test=False, interval="t-stopped")
    live = compare(method, a, b, u_test=False, interval="t-stopped", summaries=False)
    assert (live.ratio, live.relative_ci_width, live.ratio_cv, live.notes) == (
        full.ratio, full.relative_ci_width, full.ratio_cv, full.notes)
    assert (live.a.n, live.b.n) == (full.a.n, full.b.n) == (40, 40)
    assert np.isnan(live.a.mean) and np.isnan(live.b.median) and not np.isnan(full.a.mean)


def test_a_warmup_that_took_every_iteration_says_so() -> None:
    """A warm-up rule that discards every iteration (`warmup: 99999999`) read only "got 0 A and 0 B"."""
    from duetbench.analyze.api import AnalysisOptions, analyze
    from duetbench.model.table import IterationTable

    n = 6
    table = IterationTable.from_columns(benchmark=["b"] * 2 * n, method=["sequential"] * 2 * n, run=[0] * 2 * n,
                                        side=["A"] * n + ["B"] * n, value=[1.0] * 2 * n, warmup=[True] * 2 * n)
    with pytest.raises(ValueError, match=r"got 0 A and 0 B \(the warm-up took 6 A and 6 B: lower it\)"):
        analyze("sequential", table, AnalysisOptions())
