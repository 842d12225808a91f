"""One way into the analysis (issue 14): the same measurements give the same ratios and CIs through every
entry point — `duet compare`'s invocations and `duet show` of the stored comparison, `duet analyze` of the
same data imported from a CSV, `duet run`'s closing summary, `duet report` — and the bugs the separate
adapters hid stay fixed: --winsorize reached neither the hierarchical duet's CI nor the async duet, the
hierarchical duet reported `outliers_removed=0` and `ratio_cv=None` though its filter ran, and a table's
results were named "wall" under --metric cpu."""
from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from types import SimpleNamespace

import msgspec
import numpy as np
import pytest
from click.testing import CliRunner

from duetbench.analyze.filter import winsorize_run
from duetbench.analyze.tables import AnalysisOptions, analyze_table
from duetbench.execute.invocation import Invocation
from duetbench.model.table import IterationTable

TRUTH = 1.07
RESAMPLES = 2000


# -- data ---------------------------------------------------------------------------------------------
def _rows() -> dict[str, list]:
    return {k: [] for k in ("benchmark", "method", "run", "side", "index", "value", "start_ns", "end_ns")}


def _add(cols: dict[str, list], method: str, run: int, side: str, values: np.ndarray, starts: np.ndarray) -> None:
    n = values.size
    cols["benchmark"] += ["b"] * n
    cols["method"] += [method] * n
    cols["run"] += [run] * n
    cols["side"] += [side] * n
    cols["index"] += list(range(n))
    cols["value"] += [float(v) for v in values]
    cols["start_ns"] += [int(s) for s in starts]
    cols["end_ns"] += [int(s) + int(v * 1e9) for s, v in zip(starts, values, strict=True)]


def simulated(seed: int, runs: int, iterations: int, aduet_runs: int) -> IterationTable:
    """One benchmark measured by every method, B `TRUTH` times A: run effects, interference shared by a
    duet's pair (a barrier starts both sides together), the async duet's sides back to back in time."""
    rng = np.random.default_rng(seed)
    cols = _rows()
    for r in range(runs):
        level = rng.lognormal(0, 0.05)
        shared = rng.lognormal(0, 0.1, iterations)
        a = 0.01 * level * shared * rng.lognormal(0, 0.01, iterations)
        b = TRUTH * 0.01 * level * shared * rng.lognormal(0, 0.01, iterations)
        starts = 10**12 * (r + 1) + np.cumsum(np.r_[0, (np.maximum(a, b) * 1e9).astype(np.int64)[:-1] + 1000])
        _add(cols, "duet", r, "A", a, starts)
        _add(cols, "duet", r, "B", b, starts)
        for side, scale in (("A", 1.0), ("B", TRUTH)):
            values = 0.01 * scale * rng.lognormal(0, 0.03) * rng.lognormal(0, 0.05, iterations)
            _add(cols, "sequential", r, side, values, 10**12 * (r + 1) + np.arange(iterations) * 10**8)
    per_run = runs * iterations // aduet_runs
    for r in range(aduet_runs):
        shared = rng.lognormal(0, 0.1, per_run)
        a = 0.01 * shared * rng.lognormal(0, 0.01, per_run)
        b = TRUTH * 0.01 * shared * rng.lognormal(0, 0.01, per_run)
        origin = 10**12 * (r + 1)
        _add(cols, "aduet", r, "A", a, origin + np.cumsum(np.r_[0, (a * 1e9).astype(np.int64)[:-1]]))
        _add(cols, "aduet", r, "B", b, origin + np.cumsum(np.r_[0, (b * 1e9).astype(np.int64)[:-1]]))
    return IterationTable.from_columns(**cols)


def invocations_of(table: IterationTable, method: str) -> list[Invocation]:
    """The invocations `duet compare` would have stored for this method's rows: every run of one iteration
    is one invocation per side (a duet's run its pair), the async duet's one run its iterations in order."""
    rows = table.where(table.method == method)
    out = []
    for k in np.lexsort((rows.side, rows.index, rows.run)):
        pair = int(rows.run[k]) if method != "aduet" else int(rows.index[k])
        out.append(Invocation(side=str(rows.side[k]), index=len(out), pair=pair, warmup=False, status="ok", exit_code=0,
                              signal=0, start_ns=int(rows.start_ns[k]), end_ns=int(rows.end_ns[k]),
                              wall_s=float(rows.value[k]), cpu_s=float(rows.value[k]), user_s=float(rows.value[k]),
                              sys_s=0.0, cgroup_cpu_s=None, maxrss_kb=1000, nvcsw=0, nivcsw=0, minflt=0, majflt=0,
                              cpu_requested=0, cpu_seen=0, orphans_reaped=0))
    return out


def write_csv(table: IterationTable, path: Path) -> None:
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["bench", "method", "run", "side", "iteration", "seconds", "start", "end"])
        for i in range(len(table)):
            w.writerow([table.benchmark[i], table.method[i], table.run[i], table.side[i], table.index[i],
                        repr(float(table.value[i])), table.start_ns[i], table.end_ns[i]])


def import_csv(path: Path, db: Path) -> int:
    from duetbench.cli.importing import import_

    args = ["csv", str(path), "--db", str(db), "--col", "benchmark=bench", "--col", "method=method", "--col", "run=run",
            "--col", "side=side", "--col", "index=iteration", "--col", "value=seconds", "--col", "start=start",
            "--col", "end=end", "--time-unit", "ns"]
    r = CliRunner().invoke(import_, args)
    assert r.exit_code == 0, r.output
    return int(r.stdout.strip().splitlines()[-1])


def analyze_cli(db: Path, out: Path) -> dict[str, dict]:
    from duetbench.cli.analyze import analyze

    r = CliRunner().invoke(analyze, ["--db", str(db), "--resamples", str(RESAMPLES), "--export-json", str(out)])
    assert r.exit_code == 0, r.output
    return {row["method"]: row for row in json.loads(out.read_text())["rows"]}


def campaign_summary(db: Path, cid: int) -> dict[str, tuple[float, float, float]]:
    from duetbench.store.campaigns import CampaignStore
    from duetbench.store.db import Store
    from duetbench.usecases.campaign import summarize

    store = Store(db)
    try:
        bench = SimpleNamespace(warmup=SimpleNamespace(discard=None))  # what summarize reads of a benchmark
        rows = summarize(CampaignStore(store), cid, {"b": bench}, seed=0, confidence=0.99, n_resamples=RESAMPLES)
    finally:
        store.close()
    return {r.method: _ci(r.result) for r in rows}


def show_json(db: Path, method: str, invocations: list[Invocation], tmp: Path) -> dict:
    """Store the invocations as `duet compare` does, then `duet show ID --export-json`."""
    from duetbench.cli.main import main
    from duetbench.store.db import Store

    options = {"confidence": 0.99, "n_resamples": RESAMPLES, "min_overlap_rate": 0.4, "robust": True, "interval": "t",
               "metric": "wall"}
    store = Store(db)
    try:
        cid = store.begin_comparison(method=method, name_a="A", name_b="B", command_a="a", command_b="b", seed=0,
                                     options=options, host={}, tool_version="test")
        store.add_invocations(cid, invocations)
        store.finish_comparison(cid, "complete")
    finally:
        store.close()
    out = tmp / f"show-{method}.json"
    r = CliRunner().invoke(main, ["show", str(cid), "--db", str(db), "--export-json", str(out)])
    assert r.exit_code == 0, r.output
    return next(c for c in json.loads(out.read_text())["comparisons"] if c["metric"] == "wall")


def _ci(result) -> tuple[float, float, float]:  # type: ignore[no-untyped-def]
    assert result is not None
    return (result.ratio.estimate, result.ratio.low, result.ratio.high)


def _same(x: tuple[float, ...], y: tuple[float, ...]) -> bool:
    return all(math.isclose(p, q, rel_tol=1e-12) for p, q in zip(x, y, strict=True))


# -- every entry point, the same answer -----------------------------------------------------------------
def test_compare_show_analyze_and_the_campaign_summary_agree(tmp_path: Path) -> None:
    """Runs of one iteration (what `duet compare` measures: every invocation a run, the async duet one long
    run): the invocation path, `duet show`, `duet analyze` of the CSV and `duet run`'s summary agree exactly."""
    from duetbench.analyze.invocations import evaluate

    table = simulated(seed=1, runs=16, iterations=1, aduet_runs=1)
    write_csv(table, tmp_path / "t.csv")
    db = tmp_path / "r.db"
    cid = import_csv(tmp_path / "t.csv", db)
    analyzed = analyze_cli(db, tmp_path / "a.json")
    summary = campaign_summary(db, cid)
    direct = {r.method: _ci(r.result) for r in analyze_table(table, AnalysisOptions(n_resamples=RESAMPLES))}
    for method in ("sequential", "duet", "aduet"):
        invocations = invocations_of(table, method)
        compared = _ci(evaluate(method, invocations, "wall", confidence_level=0.99, n_resamples=RESAMPLES, seed=0))
        shown = show_json(db, method, invocations, tmp_path)
        row = analyzed[method]
        paths = {"duet compare": compared, "duet show": (shown["ratio"]["estimate"], shown["ratio"]["low"],
                                                         shown["ratio"]["high"]),
                 "duet analyze": (row["ratio"], row["ci_low"], row["ci_high"]), "duet run summary": summary[method],
                 "analyze_table": direct[method]}
        for name, ci in paths.items():
            assert _same(ci, compared), (method, name, ci, compared)
        assert compared[1] < TRUTH < compared[2], (method, compared)


@pytest.mark.parametrize("estimator", ["run-means", "hierarchical", "merged"])
def test_every_estimator_gives_the_invocations_answer(estimator: str) -> None:
    """Runs of one iteration are a flat sample: every estimator gives what `duet compare` reports for them."""
    from duetbench.analyze.invocations import evaluate

    table = simulated(seed=2, runs=14, iterations=1, aduet_runs=1)
    rows = {r.method: r.result for r in analyze_table(table, AnalysisOptions(estimator=estimator, n_resamples=RESAMPLES))}
    for method in ("sequential", "duet", "aduet"):
        compared = evaluate(method, invocations_of(table, method), "wall", confidence_level=0.99,
                            n_resamples=RESAMPLES, seed=0)
        assert _same(_ci(rows[method]), _ci(compared)), (method, estimator)


def test_a_campaign_of_many_iterations_agrees_everywhere(tmp_path: Path) -> None:
    """Runs of many iterations: `duet analyze` of the imported CSV, `duet run`'s summary, the table analysis
    and `duet report`'s per-benchmark estimate agree exactly."""
    from duetbench.report.html import _estimate

    table = simulated(seed=3, runs=10, iterations=12, aduet_runs=10)
    write_csv(table, tmp_path / "t.csv")
    db = tmp_path / "r.db"
    cid = import_csv(tmp_path / "t.csv", db)
    analyzed = analyze_cli(db, tmp_path / "a.json")
    summary = campaign_summary(db, cid)
    direct = {r.method: _ci(r.result) for r in analyze_table(table, AnalysisOptions(n_resamples=RESAMPLES))}
    for method in ("sequential", "duet", "aduet"):
        row = analyzed[method]
        report = _ci(_estimate(method, table.where(table.method == method), 0.99, RESAMPLES))
        for name, ci in {"duet analyze": (row["ratio"], row["ci_low"], row["ci_high"]),
                         "duet run summary": summary[method], "duet report": report}.items():
            assert _same(ci, direct[method]), (method, name, ci, direct[method])
        assert direct[method][1] < TRUTH < direct[method][2], (method, direct[method])


# -- the bugs the separate adapters hid ------------------------------------------------------------------
def _with_outlier(table: IterationTable) -> IterationTable:
    """B's first iteration of run 0 of every method five times too long."""
    value = table.value.copy()
    for method in ("sequential", "duet", "aduet"):
        k = np.flatnonzero((table.method == method) & (table.side == "B") & (table.run == 0) & (table.index == 0))
        value[k] *= 5.0
    return msgspec.structs.replace(table, value=value)


def _winsorized_by_hand(table: IterationTable) -> IterationTable:
    value = table.value.copy()
    for key in set(zip(table.method.tolist(), table.run.tolist(), table.side.tolist(), strict=True)):
        k = np.flatnonzero((table.method == key[0]) & (table.run == key[1]) & (table.side == key[2]))
        k = k[np.argsort(table.index[k])]
        value[k] = winsorize_run(value[k])
    return msgspec.structs.replace(table, value=value)


@pytest.mark.parametrize("estimator", ["auto", "run-means", "hierarchical", "merged"])
@pytest.mark.parametrize("method", ["duet", "aduet"])
def test_winsorize_reaches_every_duet_estimator(method: str, estimator: str) -> None:
    """--winsorize judged the hierarchical duet's CI on the raw rows and the async duet's on the raw rows
    under every estimator (only the A/B summaries were winsorized): the CI must be that of the winsorized data."""
    table = _with_outlier(simulated(seed=4, runs=8, iterations=10, aduet_runs=8))
    opts = AnalysisOptions(estimator=estimator, methods=(method,), n_resamples=RESAMPLES, robust=False)
    [asked] = analyze_table(table, msgspec.structs.replace(opts, winsorize=True))
    [by_hand] = analyze_table(_winsorized_by_hand(table), opts)
    [raw] = analyze_table(table, opts)
    assert asked.result is not None and by_hand.result is not None and raw.result is not None
    assert _same(_ci(asked.result), _ci(by_hand.result)), (_ci(asked.result), _ci(by_hand.result))
    assert not _same(_ci(asked.result), _ci(raw.result))


@pytest.mark.parametrize("method", ["duet", "aduet"])
def test_the_hierarchical_duet_reports_its_filter_and_ratio_cv(method: str) -> None:
    """The hierarchical duet ran the robust pair filter but said `outliers_removed=0`, `ratio_cv=None`."""
    table = simulated(seed=5, runs=8, iterations=20, aduet_runs=8)
    value = table.value.copy()
    hit = np.flatnonzero((table.method == method) & (table.side == "B") & (table.index == 3))
    value[hit] *= 1.5  # one-sided interference on one pair of every run: 8 of 160 pairs
    table = msgspec.structs.replace(table, value=value)
    [row] = analyze_table(table, AnalysisOptions(estimator="hierarchical", methods=(method,), n_resamples=RESAMPLES))
    r = row.result
    assert r is not None
    assert r.outliers_removed >= 8 and r.ratio_cv is not None and 0 < r.ratio_cv < 0.5
    assert any("robust pair filter removed" in n for n in r.notes)


def test_a_table_result_is_named_by_its_metric() -> None:
    """`duet analyze --metric cpu` judged CPU times and named the results "wall"."""
    table = simulated(seed=6, runs=6, iterations=5, aduet_runs=6)
    for row in analyze_table(table, AnalysisOptions(metric="cpu", n_resamples=RESAMPLES)):
        assert row.result is not None and row.result.metric == "cpu", row.method


def test_a_stopped_hierarchical_duet_is_made_at_half_alpha() -> None:
    """interval "t-stopped" (a campaign's precision stop) fell back to the percentile bootstrap in the
    hierarchical duet; it is the t interval at 1 − α/2, labelled as stated."""
    table = simulated(seed=7, runs=8, iterations=10, aduet_runs=8)
    opts = AnalysisOptions(estimator="hierarchical", methods=("duet",), n_resamples=RESAMPLES)
    [stopped] = analyze_table(table, msgspec.structs.replace(opts, interval="t-stopped"))
    [wider] = analyze_table(table, msgspec.structs.replace(opts, confidence_level=0.995))
    assert stopped.result is not None and wider.result is not None
    assert stopped.result.ratio.interval == "t-stopped" and stopped.result.ratio.confidence_level == 0.99
    assert _same(_ci(stopped.result), _ci(wider.result))


# -- the design: an estimator is one module and one registration line ----------------------------------
def test_a_registered_estimator_is_used_by_every_table_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    """A toy estimator (the first run's pairs only) registered by name is what `analyze_table` runs, with
    the summaries, U test and verdict `analyze` adds to every estimator."""
    from duetbench.analyze import estimators
    from duetbench.analyze.estimators._base import Estimate, duet_runs, judge

    def first_run(method: str, rows: IterationTable, opts: AnalysisOptions) -> Estimate:
        a, b = duet_runs(rows)
        return judge("duet", a[0], b[0], opts)

    monkeypatch.setitem(estimators.ESTIMATORS, "first-run", first_run)
    table = simulated(seed=8, runs=6, iterations=15, aduet_runs=6)
    [row] = analyze_table(table, AnalysisOptions(estimator="first-run", methods=("duet",), n_resamples=RESAMPLES))
    assert row.result is not None and row.result.runs == 15 and row.result.a.n == 6 * 15
    with pytest.raises(ValueError, match="first-run"):
        analyze_table(table, AnalysisOptions(estimator="second-run"))
