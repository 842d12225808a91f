"""The outside data sets' published figures, recomputed by import → IterationTable → our functions."""
from __future__ import annotations

import csv
import gzip
from pathlib import Path

import numpy as np
import pytest

from duetbench.model.table import IterationTable
from duetbench.importers import read_csv
from duetbench.importers.datasets import CONDUCTOR, FAASTERBENCH, THESIS_RQ1
from duetbench.importers.published import faasterbench_change, median_ratio_study, runtime_speedup

DATA = Path(__file__).parent / "data"


def _rows(path: Path) -> list[dict[str, str]]:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:  # type: ignore[operator]
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def conductor() -> IterationTable:
    return read_csv(DATA / "cloud-benchmark-conductor" / "fbs_microbenchmarks_rmit.csv.gz", CONDUCTOR).table


def test_conductor_design_is_complete(conductor: IterationTable) -> None:
    assert len(conductor) == 73_710 and len(set(conductor.benchmark)) == 819
    # 9 trials (3 VMs × 3 suite runs) of 5 values per side and experiment
    assert conductor.run.max() == 8 and sorted(set(conductor.index)) == [1, 2, 3, 4, 5]


def test_conductor_819_median_ratios_and_verdicts(conductor: IterationTable) -> None:
    """Japke et al. 2023: all 819 median ratios exact, all detect/no-detect verdicts, 99 % CIs within noise.
    Benchmarks are processed in the authors' order with their seed (42), as their script did."""
    published = {f"{r['Perf Issue']}/{r['Severity']}/{r['Benchmark']}": r
                 for r in _rows(DATA / "cloud-benchmark-conductor" / "results_mb.csv.gz")}
    ours = median_ratio_study(conductor, order=list(published))
    assert len(ours) == len(published) == 819
    ratio = np.array([r.ratio for r in ours])
    assert np.allclose(ratio, [float(published[r.benchmark]["Median Ratio"]) for r in ours], rtol=1e-12, atol=0)
    assert [r.change_found for r in ours] == [published[r.benchmark]["Perf Change Found"] == "True" for r in ours]
    low_diff = np.abs([r.low - float(published[r.benchmark]["CI Lower"]) for r in ours])
    high_diff = np.abs([r.high - float(published[r.benchmark]["CI Upper"]) for r in ours])
    assert np.median(np.r_[low_diff, high_diff]) < 1e-3
    assert np.quantile(np.r_[low_diff, high_diff], 0.9) < 0.01
    # the README's facts: severity 0 is the A/A test, 1 of 63 flagged; no CI entirely below 1
    aa = [r for r in ours if r.benchmark.split("/")[1] == "0"]
    assert len(aa) == 63 and sum(r.change_found for r in aa) == 1
    assert not any(r.high < 1 for r in ours)


def test_faasterbench_48_published_estimates() -> None:
    """Grambow et al. 2023: the 24 paired (faasterBench) and 24 unpaired (traditional) estimates exact to the
    published two decimals; the 99 % CIs within bootstrap noise."""
    table = read_csv(DATA / "faasterBench" / "faasterbench_wosc23_long.csv.gz", FAASTERBENCH).table
    assert len(table) == 28_800
    diffs = []
    published = _rows(DATA / "faasterBench" / "published_notebook_results_83e862e.csv")
    assert len(published) == 48
    for row in published:
        bench = "/".join(row[k] for k in ("platform", "regression_pct", "wrapper_count", "calls_per_function"))
        change = faasterbench_change(table, bench, paired=row["method"] == "faasterBench", n_resamples=4000,
                                     random_state=7)
        assert round(change.estimate_pct, 2) == float(row["change_pct"]), (row, change)
        diffs += [change.low_pct - float(row["ci99_lower_pct"]), change.high_pct - float(row["ci99_upper_pct"])]
    assert np.median(np.abs(diffs)) < 0.05  # percentage points
    assert np.quantile(np.abs(diffs), 0.9) < 0.5


def test_faasterbench_all_pairs_differs_from_published() -> None:
    """The notebook bug (faasterBench README): with all 3 pairs, Google at +5 % moves from 2.2–2.9 % to 3.8–6.3 %."""
    table = read_csv(DATA / "faasterBench" / "faasterbench_wosc23_long.csv.gz", FAASTERBENCH).table
    google5 = [b for b in dict.fromkeys(table.benchmark.tolist()) if b.startswith("google/5/")]
    last = [faasterbench_change(table, b, paired=True, n_resamples=200, random_state=1).estimate_pct for b in google5]
    every = [faasterbench_change(table, b, paired=True, last_pair_only=False, n_resamples=200,
                                 random_state=1).estimate_pct for b in google5]
    assert 2.2 <= min(last) and max(last) <= 2.9
    assert round(min(every), 1) >= 3.8 and round(max(every), 1) <= 6.3  # the README rounds to 0.1


def test_thesis_runtime_speedups_and_medians() -> None:
    """Drozdík 2023 §5.2.1: all 197 per-benchmark async-duet run-time speedups; medians 5 % (AWS t3.medium),
    73 % (bare metal), 53 % (shared teaching VM)."""
    table = read_csv(DATA / "asynchronous-duet" / "rq1_run_times.csv.gz", THESIS_RQ1).table
    assert len(table) == 9_499
    ours = runtime_speedup(table)
    published = {"/".join((r["environment"], r["suite"], r["benchmark"])): float(r["run_time_speedup"])
                 for r in _rows(DATA / "asynchronous-duet" / "rq1_runtime_speedup_published.csv")}
    assert set(ours) == set(published) and len(ours) == 197
    assert max(abs(ours[k] - v) for k, v in published.items()) < 1e-9
    medians = {env: np.median([v for k, v in ours.items() if k.startswith(env + "/")])
               for env in ("AWS:t3.medium", "bare-metal", "teaching")}
    assert [round(100 * m) for m in medians.values()] == [5, 73, 53]
