"""EMP's outlier removal and sample-size rule on seeded synthetic runs whose disturbed samples are known."""
from __future__ import annotations

import numpy as np
import pytest

from duetbench.analyze.emp import (
    CentralDaemon, DaemonCutoff, LongRunningDaemon, daemon_cutoffs, daemon_removals, dual_pairs, emp_v5,
    halving_sizes, sample_size, split_central, stats, two_sigma_outliers,
)


def synthetic_run(n: int = 300, seed: int = 1, period: int = 37, burst_s: float = 0.030):
    """A 100 ms program; a frequent short kworker in every sample; 'cronjob' every ``period`` samples
    burns ``burst_s`` on the program's CPU, which lengthens that sample's ET (and barely its PT)."""
    rng = np.random.default_rng(seed)
    pt = 0.100 + rng.normal(0, 0.0001, n)
    et = pt + 0.0002 + np.abs(rng.normal(0, 0.0001, n))
    daemons = [{"kworker/0:1": [float(rng.uniform(0.0001, 0.0003))]} for _ in range(n)]
    hit = list(range(5, n, period))
    for k in hit:
        burst = burst_s * rng.uniform(0.9, 1.1)
        et[k] += burst
        pt[k] += 0.00002
        daemons[k]["cronjob"] = [burst]
        daemons[k]["kworker/0:1"] = [0.0002]
    return pt, et, daemons, hit


def test_stats_reproduce_the_papers_relative_error() -> None:
    s = stats([1.0, 2.0, 3.0, 4.0])
    assert s.mean == 2.5 and s.std == pytest.approx(np.std([1, 2, 3, 4], ddof=1))
    assert s.relative_error == pytest.approx(s.std / 2.5)
    assert (s.minimum, s.maximum, s.n) == (1.0, 4.0, 4)
    assert stats([]).n == 0


def test_dual_pairs_are_consecutive_samples_odd_last_dropped() -> None:
    assert dual_pairs([1, 2, 3, 4, 5]).tolist() == [[1, 2], [3, 4]]


def test_split_finds_the_l_samples_and_the_l_shape() -> None:
    pt, et, daemons, hit = synthetic_run()
    split = split_central(et)
    assert sorted(np.flatnonzero(split.l_sample).tolist()) == hit
    assert split.l_shape and split.pairs_both_long == 0
    assert split.pairs_first_long + split.pairs_second_long == len(hit)
    assert split.pairs_central == 150 - len(hit)


def test_both_long_pairs_mean_frequent_daemons_no_l_shape() -> None:
    et = np.array([1.0, 1.001, 1.5, 1.5, 1.0, 1.0, 0.999, 1.0, 1.0, 1.0])
    split = split_central(et)
    assert split.pairs_both_long == 1 and not split.l_shape


def test_quantized_identical_times_do_not_make_l_samples() -> None:
    et = np.array([1.0] * 20 + [1.00001])
    assert not split_central(et).l_sample.any()


def test_emp_v5_removes_exactly_the_daemon_samples_and_names_the_daemon() -> None:
    pt, et, daemons, hit = synthetic_run()
    r = emp_v5(pt, et, daemons)
    assert sorted(r.daemon_removed) == hit
    assert {name for hits in r.daemon_removed.values() for name, _ in hits} == {"cronjob"}
    assert list(r.cutoffs) == ["cronjob"]
    c = r.cutoffs["cronjob"]
    # absent from the central cluster: midpoint between 0 and the smallest burst (Table XVI's rule)
    assert c.low == 0 and c.cutoff == pytest.approx(min(daemons[k]["cronjob"][0] for k in hit) / 2)
    [lr] = r.long_running
    assert lr.period_samples == 37 and lr.regular
    # the frequent kworker stays in the central cluster and is not called long-running
    assert r.central["kworker/0:1"].count == 300 - len(hit)
    # ET after removal is the clean distribution: mean near 100.2 ms + |N(0, .1 ms)| mean, tiny std
    assert r.et.before.std > 0.003 and r.et.after.std < 0.0003
    assert r.et.after.mean == pytest.approx(0.1003, abs=0.0002)
    # ±2σ removes a few percent of a normal sample per metric, counted separately (Table XVIII)
    assert 0 < len(r.pt.removed_by_sigma) < 0.1 * 300
    assert r.pt.outliers == len(hit) + len(r.pt.removed_by_sigma)
    assert not set(r.pt.removed_by_sigma) & set(hit)


def test_clean_run_keeps_all_but_two_sigma() -> None:
    rng = np.random.default_rng(7)
    pt = 0.05 + rng.normal(0, 5e-5, 200)
    et = pt + 1e-4
    daemons = [{"kworker": [float(rng.uniform(1e-5, 3e-4))]} for _ in range(200)]
    r = emp_v5(pt, et, daemons)
    assert r.daemon_removed == {} and r.cutoffs == {}
    assert r.pt.outliers <= 0.08 * 200


def test_daemon_in_central_cluster_gets_cutoff_between_max_and_long_executions() -> None:
    # 'flushd' runs ~1 ms in every sample, but 120 ms in two: the paper's flush-9:0 case (Table XI)
    n = 100
    rng = np.random.default_rng(3)
    pt = 1.0 + rng.normal(0, 1e-4, n)
    et = pt.copy()
    daemons = [{"flushd": [0.001]} for _ in range(n)]
    for k, t in ((20, 0.126), (71, 0.127)):
        daemons[k]["flushd"] = [t]
        et[k] += t
    r = emp_v5(pt, et, daemons)
    c = r.cutoffs["flushd"]
    assert c.low == pytest.approx(0.001) and c.cutoff == pytest.approx((0.001 + 0.126) / 2)
    assert sorted(r.daemon_removed) == [20, 71]
    means = emp_v5(pt, et, daemons, rule="means").cutoffs["flushd"]
    assert means.cutoff == pytest.approx((0.001 + 0.1265) / 2)


def test_paper_table_xvi_cutoffs_from_its_tables() -> None:
    # Table XI → Table XVI (INC128 column): midpoint of max central and min L-sample PT, in ms.
    cases = {"flush-9:0": (1, 126, 63.5), "jbd2/md0-8": (2, 6, 4), "rhn_check": (None, 562, 281)}
    lr = [LongRunningDaemon(name, (1,), (float(low_l),),
                            CentralDaemon(1, float(mx), 0.0, float(mx)) if mx is not None else None, None, False)
          for name, (mx, low_l, _) in cases.items()]
    got = daemon_cutoffs(lr)
    for name, (_, _, want) in cases.items():
        assert got[name].cutoff == want


def test_removal_uses_given_cutoffs_per_execution() -> None:
    cut = {"d": DaemonCutoff("d", 0.01, 0, 0.02)}
    daemons = [{"d": [0.005]}, {"d": [0.005, 0.02]}, {"e": [1.0]}]
    assert daemon_removals(daemons, cut) == {1: [("d", 0.02)]}


def test_two_sigma_is_one_pass_over_kept_samples() -> None:
    x = np.array([10.0] * 19 + [20.0, 1000.0])
    keep = np.ones(21, bool)
    keep[20] = False  # already removed by a cutoff: must not inflate σ
    out = two_sigma_outliers(x, keep)
    assert out.tolist() == [False] * 19 + [True, False]


def test_halving_sizes() -> None:
    assert halving_sizes(300) == [150, 75, 37, 18, 9]
    assert halving_sizes(800, min_size=10) == [400, 200, 100, 50, 25, 12]


def test_sample_size_chooses_a_small_subset_on_stationary_data() -> None:
    pt, et, daemons, hit = synthetic_run(n=320, seed=11)
    whole = emp_v5(pt, et, daemons)
    choice = sample_size(pt, et, daemons, whole.cutoffs)
    assert [r.size for r in choice.rows] == [160, 80, 40, 20, 10, 5]
    assert choice.whole.pt_outliers == whole.pt.outliers
    assert choice.chosen <= 40
    assert "smallest" in choice.rule


def test_sample_size_refuses_subsets_that_differ_from_the_whole() -> None:
    # the program gets noisier over time: the first samples' std is far below the whole set's
    rng = np.random.default_rng(5)
    noise = np.concatenate([rng.normal(0, 1e-5, 160), rng.normal(0, 1e-3, 160)])
    pt = 0.1 + noise
    et = pt.copy()
    choice = sample_size(pt, et, [{} for _ in pt], {})
    assert choice.chosen == 320


def test_prorate_scales_by_the_runs_share_of_the_window() -> None:
    from duetbench.analyze.emp import prorate_to_run
    got = prorate_to_run([{"d": [0.08]}, {"d": [0.01, 0.02]}], et=[0.03, 0.1], window=[0.12, 0.1])
    assert got[0]["d"] == [pytest.approx(0.02)] and got[1]["d"] == [0.01, 0.02]


def test_attributable_windows_flags_a_held_up_launch() -> None:
    from duetbench.analyze.emp import attributable_windows
    et = np.full(20, 0.03)
    window = et + 0.004
    window[7] += 0.1  # a daemon held the CPU before the run could start
    assert np.flatnonzero(~attributable_windows(window, et)).tolist() == [7]


def test_slowest_runs_noise_names_the_busy_processes() -> None:
    import json as _json
    from duetbench.execute.invocation import Invocation
    from duetbench.report.warnings import slowest_runs_noise

    def inv(pair: int, wall: float, activity: list[dict[str, object]] | None) -> Invocation:
        return Invocation("A", pair, pair, False, "ok", 0, 0, pair * 10**9, 0, wall, wall, wall, 0, None, 0, 0, 0, 0,
                          0, 0, 0, 0, activity=_json.dumps(activity) if activity is not None else None)
    runs = [inv(k, 0.1, [{"pid": 1, "comm": "quiet", "cpu_ms": 0.1}]) for k in range(19)]
    runs.append(inv(19, 0.3, [{"pid": 9, "comm": "cronjob", "cpu_ms": 150.0}]))
    assert slowest_runs_noise(runs).startswith("cronjob 150 ms")
    # -u names the unit of every time the report shows, warnings included
    assert slowest_runs_noise(runs, time_unit="microsecond").startswith("cronjob 150000.0 µs")
    assert slowest_runs_noise(runs, time_unit="second").startswith("cronjob 0.1500 s")
    assert slowest_runs_noise(runs[:19]) == ""  # nothing busy enough to name
    assert slowest_runs_noise([inv(0, 0.1, None)]) == ""
