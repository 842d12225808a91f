"""Method studies (issue 4 item 2) on small hand-made tables with answers worked out by hand,
plus the identities the fast paths rely on, checked against recomputation."""
from __future__ import annotations

import math

import numpy as np
import pytest

from duetbench.analyze.api import AnalysisOptions, AnalysisRow, analyze, analyze_group
from duetbench.analyze.pairing import paired_runs
from duetbench.analyze.ratio import RatioResult
from duetbench.analyze.shuffle import shuffle_analysis
from duetbench.analyze.simulate import simulate_campaign
from duetbench.analyze.slowdown import (
    minimal_detectable_slowdown,
    slow_down,
    slowdown_curves,
)
from duetbench.analyze.studies import (
    aa_false_positive_rate,
    ci_width_reduction,
    overlap_statistics,
    run_studies,
    runtime_saving,
)
from duetbench.model.table import IterationTable


def group_of(table: IterationTable, method: str, bench: str = "bench000") -> IterationTable:
    return table.where((table.method == method) & (table.benchmark == bench))


def result(bench: str, method: str, low: float, high: float, p: float = 0.5, width: float | None = None) -> AnalysisRow:
    from duetbench.analyze.comparison import ComparisonResult
    from duetbench.analyze.summary import describe

    est = math.sqrt(low * high)
    ratio = RatioResult(estimate=est, low=low, high=high, confidence_level=0.99, n=10)
    v = "slower" if low > 1 else "faster" if high < 1 else "no difference"
    same = describe([1.0, 2.0])
    judged = ComparisonResult(method, "wall", 10, ratio, v, p, (high - low) / est if width is None else width, same, same,
                              None, 0, None, ())
    return AnalysisRow(bench, method, 10, 50, 50, judged)


# -- slow_down ---------------------------------------------------------------------------------------
def test_slow_down_scales_b_and_keeps_gaps() -> None:
    t = IterationTable.from_columns(
        benchmark=["x"] * 6, method=["aduet"] * 6, run=[0, 0, 0, 0, 0, 0], side=["A", "A", "A", "B", "B", "B"],
        index=[0, 1, 2, 0, 1, 2], value=[1.0, 1.0, 1.0, 2.0, 2.0, 2.0],
        start_ns=[0, 110, 220, 50, 260, 480], end_ns=[100, 210, 320, 250, 460, 680],
    )
    s = slow_down(t, 1.5)
    np.testing.assert_array_equal(s.start_ns[:3], t.start_ns[:3])  # A untouched
    np.testing.assert_array_equal(s.value, [1, 1, 1, 3, 3, 3])
    # B: durations 200 → 300, gaps of 10 and 20 kept, first start kept.
    np.testing.assert_array_equal(s.start_ns[3:], [50, 360, 680])
    np.testing.assert_array_equal(s.end_ns[3:], [350, 660, 980])


def test_slow_down_restarts_per_run_and_side_order_independent() -> None:
    sim = simulate_campaign(benchmarks=2, methods=("aduet",), runs=3, iterations=5, warmup=2, seed=3)
    t = sim.table
    perm = np.random.default_rng(0).permutation(len(t))
    shuffled = t.where(perm)
    slowed = slow_down(shuffled, 1.1)
    back = np.argsort(perm)
    np.testing.assert_array_equal(slowed.where(back).start_ns, slow_down(t, 1.1).start_ns)
    s = slow_down(t, 1.1)
    for run in range(3):
        rows = np.flatnonzero((t.side == "B") & (t.run == run) & (t.benchmark == "bench000"))
        gaps_before = t.start_ns[rows][1:] - t.end_ns[rows][:-1]
        gaps_after = s.start_ns[rows][1:] - s.end_ns[rows][:-1]
        np.testing.assert_array_equal(gaps_before, gaps_after)
        assert s.start_ns[rows[0]] == t.start_ns[rows[0]]


# -- minimal detectable slowdown ----------------------------------------------------------------------
@pytest.mark.parametrize("method", ["duet", "sequential"])
@pytest.mark.parametrize("estimator", ["run-means", "merged"])
def test_mds_fast_path_equals_recomputation(method: str, estimator: str) -> None:
    sim = simulate_campaign(benchmarks=1, runs=12, iterations=20, seed=11)
    g = group_of(sim.table, method)
    mds = minimal_detectable_slowdown(g, method, [0.0, 0.03, 0.07], estimator=estimator, n_resamples=500, random_state=5)
    for k, s in enumerate([0.0, 0.03, 0.07]):
        rng = np.random.default_rng(np.random.SeedSequence(5))
        direct = analyze(method, slow_down(g, 1 + s), AnalysisOptions(estimator=estimator, n_resamples=500, seed=rng))
        assert mds.low[k] == pytest.approx(direct.ratio.low, rel=1e-9)
        assert mds.high[k] == pytest.approx(direct.ratio.high, rel=1e-9)
        assert mds.u_test_p[k] == pytest.approx(direct.u_test_p, rel=1e-9)


def test_mds_of_aduet_batched_equals_one_ci_per_slowdown() -> None:
    """The run-means units found per s and bootstrapped together give what one analysis per s gives:
    the same estimates exactly, bounds within Monte Carlo error (different draws, the same bootstrap)."""
    sim = simulate_campaign(benchmarks=1, methods=("aduet",), runs=15, iterations=30, seed=12)
    g = group_of(sim.table, "aduet")
    grid = [0.0, 0.02, 0.05]
    r = minimal_detectable_slowdown(g, "aduet", grid, n_resamples=20_000, random_state=3)
    for k, s in enumerate(grid):
        direct = analyze("aduet", slow_down(g, 1 + s), AnalysisOptions(n_resamples=20_000, seed=4))
        assert r.estimate[k] == pytest.approx(direct.ratio.estimate, rel=1e-12)
        width = direct.ratio.high - direct.ratio.low
        assert abs(r.low[k] - direct.ratio.low) < 0.05 * width and abs(r.high[k] - direct.ratio.high) < 0.05 * width


def test_mds_of_aduet_falls_back_when_slowdowns_change_the_runs() -> None:
    from duetbench.analyze.slowdown import aduet_run_units

    sim = simulate_campaign(benchmarks=1, methods=("aduet",), runs=15, iterations=30, seed=12)
    g = group_of(sim.table, "aduet")
    units = aduet_run_units(g, np.array([1.0, 1.05]), 0.4, True)
    assert units is not None and units.shape == (2, 15)
    # A rate no pair reaches: no units, so each slowdown is judged alone (and raises as analyze does).
    assert aduet_run_units(g, np.array([1.0, 1.05]), 0.999999, True) is None


def test_mds_of_aduet_recomputes_pairs_and_finds_the_threshold() -> None:
    sim = simulate_campaign(benchmarks=1, methods=("aduet",), runs=15, iterations=30, seed=12)
    g = group_of(sim.table, "aduet")
    r = minimal_detectable_slowdown(g, "aduet", n_resamples=500, random_state=1)
    # The estimate follows the injected slowdown only approximately: as B stretches, its iterations
    # pair with other A iterations that met other interference (5% here), so allow 1%.
    np.testing.assert_allclose(r.estimate / r.estimate[0], 1 + r.slowdowns, rtol=0.01)
    assert r.ci_equal[0] and not r.ci_equal[-1]
    assert r.mds_ci is not None and 0 < r.mds_ci <= 0.05
    assert np.all(r.ci_detects[r.slowdowns >= r.mds_ci])


def test_slowdown_curves_share_equal() -> None:
    sim = simulate_campaign(benchmarks=3, methods=("duet",), runs=10, iterations=10, seed=2)
    rs = [minimal_detectable_slowdown(g, m, [0.0, 0.1], n_resamples=300, random_state=0) for _, m, g in sim.table.groups()]
    c = slowdown_curves(rs)["duet"]
    assert c.benchmarks == 3
    np.testing.assert_allclose(c.share_equal_ci, np.mean([r.ci_equal for r in rs], axis=0))
    assert c.share_equal_ci[-1] == 0.0


def test_mds_rejects_bad_grid() -> None:
    sim = simulate_campaign(benchmarks=1, methods=("duet",), runs=5, iterations=5, seed=2)
    with pytest.raises(ValueError, match="slowdowns"):
        minimal_detectable_slowdown(sim.table, "duet", [])


# -- A/A false positives, CI width reduction -------------------------------------------------------------
def test_aa_false_positive_rate_counts() -> None:
    rs = [result("a", "duet", 0.99, 1.01), result("b", "duet", 1.01, 1.02, p=0.01), result("c", "duet", 0.95, 0.98, p=0.2),
          result("d", "duet", 0.98, 1.03, p=0.04), result("a", "sequential", 0.9, 1.1)]
    fp = aa_false_positive_rate(rs, alpha=0.05)
    assert fp["duet"].benchmarks == 4 and fp["duet"].ci_alarms == 2 and fp["duet"].ci_rate == 0.5
    assert fp["duet"].u_alarms == 2 and fp["sequential"].ci_alarms == 0
    assert fp["duet"].ci_rate_low < 0.5 < fp["duet"].ci_rate_high


def test_ci_width_reduction_geomean() -> None:
    rs = [result("a", "sequential", 1, 1, width=0.08), result("a", "duet", 1, 1, width=0.02),
          result("b", "sequential", 1, 1, width=0.01), result("b", "duet", 1, 1, width=0.01),
          result("b", "aduet", 1, 1, width=0.005)]
    w = ci_width_reduction(rs)
    np.testing.assert_allclose(w.reduction("duet"), [4.0, 1.0])
    assert w.geomean_reduction("duet") == pytest.approx(2.0)
    assert math.isnan(w.reduction("aduet")[0]) and w.geomean_reduction("aduet") == pytest.approx(2.0)


# -- runtime saving, overlaps ------------------------------------------------------------------------------
def test_runtime_saving_by_hand() -> None:
    # sequential run: A 0..100, B 200..320 → 220 ns; duet run: A 1000..1100, B 1010..1130 → 130 ns.
    t = IterationTable.from_columns(
        benchmark=["x"] * 8, method=["sequential"] * 4 + ["duet"] * 4, run=[0] * 8,
        side=["A", "A", "B", "B"] * 2, index=[0, 1] * 4, value=[1.0] * 8,
        start_ns=[0, 50, 200, 260, 1000, 1050, 1010, 1070], end_ns=[50, 100, 260, 320, 1050, 1100, 1070, 1130],
    )
    r = runtime_saving(t)
    assert r.sequential_s[0] == pytest.approx(220e-9) and r.duet_s[0] == pytest.approx(130e-9)
    assert math.isnan(r.aduet_s[0])
    assert r.median_speedup("duet") == pytest.approx(220 / 130)
    assert r.median_saving("duet") == pytest.approx(1 - 130 / 220)


def test_overlap_statistics_by_hand() -> None:
    # A: [0,100), [100,200); B: [50,150), [150,250). Overlaps 50 each (A0-B0, A1-B0, A1-B1): rate 0.5.
    t = IterationTable.from_columns(
        benchmark=["x"] * 4, method=["aduet"] * 4, run=[0] * 4, side=["A", "A", "B", "B"], index=[0, 1, 0, 1],
        value=[1.0] * 4, start_ns=[0, 100, 50, 150], end_ns=[100, 200, 150, 250],
    )
    o = overlap_statistics(t, [0.0, 0.4, 0.5])
    np.testing.assert_allclose(o.relative_overlap_time, [2 * 150 / 400, 2 * 150 / 400, 0.0])
    np.testing.assert_array_equal(o.pairs, [3, 3, 0])
    np.testing.assert_allclose(o.paired_share_b, [1.0, 1.0, 0.0])


# -- grouping and errors ------------------------------------------------------------------------------------
def test_paired_runs_drops_unmatched_iterations() -> None:
    t = IterationTable.from_columns(
        benchmark=["x"] * 5, method=["duet"] * 5, run=[0, 0, 1, 0, 1], side=["A", "A", "A", "B", "B"],
        index=[0, 1, 0, 0, 0], value=[1.0, 2.0, 3.0, 1.5, 3.5],
    )
    a, b = paired_runs(t)
    assert [x.tolist() for x in a] == [[1.0], [3.0]] and [x.tolist() for x in b] == [[1.5], [3.5]]


def test_analyze_group_errors_are_one_clear_line() -> None:
    sim = simulate_campaign(benchmarks=2, methods=("duet", "aduet"), runs=3, iterations=3, seed=0)
    with pytest.raises(ValueError, match="one benchmark"):
        analyze_group(sim.table, "duet", AnalysisOptions())
    g = group_of(sim.table, "aduet")
    no_stamps = IterationTable.from_columns(benchmark=g.benchmark, method=g.method, run=g.run, side=g.side, value=g.value)
    with pytest.raises(ValueError, match="bench000 \\(aduet\\): .*timestamps"):
        analyze_group(no_stamps, "aduet", AnalysisOptions(estimator="merged"))
    with pytest.raises(ValueError, match="estimator"):
        analyze_group(group_of(sim.table, "duet"), "duet", AnalysisOptions(estimator="bogus"))


@pytest.mark.parametrize("method", ["sequential", "duet", "aduet"])
@pytest.mark.parametrize("estimator", ["run-means", "merged", "hierarchical"])
def test_every_estimator_finds_a_clear_slowdown(method: str, estimator: str) -> None:
    # Truth 1.25; the sequential estimate's SD is ≈ 3.3% here (run effects of 5% per side, 10 runs).
    sim = simulate_campaign(benchmarks=1, runs=10, iterations=15, ratio=1.25, seed=4)
    row = analyze_group(group_of(sim.table, method), method, AnalysisOptions(estimator=estimator, n_resamples=300))
    r = row.result
    assert r is not None and r.verdict == "slower" and abs(math.log(r.ratio.estimate / 1.25)) < 0.1
    assert row.runs == 10 and row.iterations_a + row.iterations_b == 2 * 10 * 15


def test_shuffle_of_perfectly_paired_duet() -> None:
    # B = 1.02·A exactly: the measured pairing gives a zero-width CI, any shuffle a wide one.
    rng = np.random.default_rng(0)
    a = np.exp(rng.normal(0, 0.1, (8, 10)))
    n = a.size
    t = IterationTable.from_columns(
        benchmark=["x"] * 2 * n, method=["duet"] * 2 * n, run=np.tile(np.repeat(np.arange(8), 10), 2),
        side=["A"] * n + ["B"] * n, index=np.tile(np.arange(10), 16), value=np.r_[a.ravel(), 1.02 * a.ravel()],
    )
    s = shuffle_analysis(t, "duet", n_shuffles=5, n_resamples=500, random_state=1)
    assert s.original_width < 1e-12 and np.all(s.shuffled_widths > 0.02) and s.pairs == 80 and s.runs == 8


def test_run_studies_smoke() -> None:
    sim = simulate_campaign(benchmarks=2, runs=6, iterations=8, seed=9)
    st = run_studies(sim.table, n_resamples=200, n_shuffles=3, slowdowns=[0.0, 0.05])
    assert len(st.comparisons) == 6 and len(st.shuffles) == 4 and len(st.overlaps) == 2 and len(st.slowdowns) == 6
    assert set(st.false_positives or {}) == {"sequential", "duet", "aduet"}
    assert st.runtime.benchmarks == ("bench000", "bench001")


@pytest.mark.parametrize("robust", [True, False])
def test_aduet_by_runs_equals_compare_with_run_ids(robust: bool) -> None:
    from duetbench.analyze.comparison import compare

    sim = simulate_campaign(benchmarks=1, methods=("aduet",), runs=8, iterations=25, ratio=1.02, asym_sd=0.05, seed=8)
    g = sim.table
    mine = analyze("aduet", g, AnalysisOptions(n_resamples=400, seed=3, robust=robust))
    m = g.measured()
    ia, ib = m.side == "A", m.side == "B"
    ref = compare("aduet", m.value[ia], m.value[ib], a_start=m.start_ns[ia], a_end=m.end_ns[ia], b_start=m.start_ns[ib],
                  b_end=m.end_ns[ib], a_run_ids=m.run[ia], b_run_ids=m.run[ib], n_resamples=400, random_state=3, robust=robust)
    assert mine.ratio == ref.ratio and mine.u_test_p == ref.u_test_p and mine.verdict == ref.verdict
    assert mine.notes[0] == ref.notes[0]


def test_split_groups_matches_table_groups() -> None:
    from duetbench.analyze.studies import split_groups

    sim = simulate_campaign(benchmarks=3, methods=("aduet", "sequential"), runs=2, iterations=3, seed=1)
    t = sim.table.where(np.random.default_rng(0).permutation(len(sim.table)))
    mine = split_groups(t)
    ref = list(t.groups())
    assert [(b, m) for b, m, _ in mine] == [(b, m) for b, m, _ in ref]
    for (_, _, g1), (_, _, g2) in zip(mine, ref):
        o1 = np.lexsort((g1.index, g1.side, g1.run))
        o2 = np.lexsort((g2.index, g2.side, g2.run))
        np.testing.assert_array_equal(g1.value[o1], g2.value[o2])


def test_studies_accept_rows_holding_a_comparison_result() -> None:
    # `duet analyze` keeps (benchmark, method, result: ComparisonResult | None) rows; a None is skipped.
    from dataclasses import dataclass

    from duetbench.analyze.comparison import ComparisonResult, compare

    @dataclass
    class Row:
        benchmark: str
        method: str
        result: ComparisonResult | None

    rng = np.random.default_rng(0)
    a = rng.normal(1.0, 0.01, 20)
    rows = [Row("x", "duet", compare("duet", a, a * 1.05 * rng.normal(1.0, 0.001, 20), n_resamples=200, random_state=0)),
            Row("x", "sequential", compare("sequential", a, a * 1.05 + rng.normal(0, 0.05, 20), n_resamples=200, random_state=0)),
            Row("y", "duet", None)]
    fp = aa_false_positive_rate(rows)
    assert fp["duet"].benchmarks == 1 and fp["duet"].ci_alarms == 1
    w = ci_width_reduction(rows)
    assert w.benchmarks == ("x",) and w.reduction("duet")[0] == pytest.approx(rows[1].result.relative_ci_width / rows[0].result.relative_ci_width)


def test_bench_analysis_runs_on_a_small_campaign(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # bench/analysis.py must stay runnable: a 2-benchmark campaign takes ~2 s.
    import json
    import subprocess
    import sys
    from pathlib import Path

    bench = Path(__file__).resolve().parents[2] / "bench" / "analysis.py"
    proc = subprocess.run([sys.executable, str(bench), "--benchmarks", "2", "--runs", "4", "--iterations", "10",
                           "--warmup", "2", "--out", str(tmp_path)], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "RuntimeWarning" not in proc.stderr, proc.stderr
    data = json.loads((tmp_path / "analysis.json").read_text())
    assert data["campaign"]["iterations"] == 2 * 3 * 4 * 2 * 12
    assert data["analysis_s"] > 0 and len(data["bootstrap_vs_scipy"]) == 6
    assert "Whole analysis (all studies)" in (tmp_path / "analysis.md").read_text()


def test_a_group_that_cannot_be_analysed_is_left_out_not_fatal() -> None:
    """An async duet whose pairs all come from one run has no CI over runs; the other groups still get
    their studies, and the left-out one is named with the reason."""
    from duetbench.analyze.simulate import simulate_campaign
    from duetbench.analyze.studies import run_studies

    table = simulate_campaign(benchmarks=2, runs=4, iterations=20, warmup=2, seed=7).table
    one_run = (table.method == "aduet") & (table.benchmark == table.benchmark[0]) & (table.run != table.run[
        np.flatnonzero((table.method == "aduet") & (table.benchmark == table.benchmark[0]))[0]])
    st = run_studies(table.where(~one_run), aa=True, n_resamples=500, n_shuffles=5, seed=1)
    assert [(b, m) for b, m, _ in st.skipped] == [(str(table.benchmark[0]), "aduet")]
    assert "at least 2 runs" in st.skipped[0][2]
    assert len(st.comparisons) == 2 * 3 - 1
