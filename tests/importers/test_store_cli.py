"""Imported measurements stored as campaigns: what the store gives back, what campaign analysis makes of
it, and the `duet import` command's output and errors."""
from __future__ import annotations

from pathlib import Path

import numpy as np
from click.testing import CliRunner

from duetbench.model.table import IterationTable
from duetbench.analyze.tables import AnalysisOptions, analyze_table
from duetbench.cli.importing import import_
from duetbench.importers import read_csv, read_duetprocess, store_imported
from duetbench.importers.datasets import FAASTERBENCH
from duetbench.store.campaigns import CampaignStore, iteration_table
from duetbench.store.db import Store

DATA = Path(__file__).parent / "data"
DUETPROCESS = DATA / "asynchronous-duet" / "duetprocess_chi-square_5096d7d.csv"


def _sorted(t: IterationTable) -> IterationTable:
    order = np.lexsort((t.index, t.side, t.run, t.method, t.benchmark))
    return t.where(order)


def test_store_round_trip_keeps_every_column(tmp_path: Path) -> None:
    imported = read_duetprocess(DUETPROCESS)
    db = tmp_path / "r.db"
    cid = store_imported(db, imported, name="thesis toy")
    store = Store(db)
    try:
        campaigns = CampaignStore(store)
        back = _sorted(iteration_table(campaigns, cid))
        record = campaigns.campaign(cid)
        runs = campaigns.runs(cid)
    finally:
        store.close()
    mine = _sorted(imported.table)
    for column in ("benchmark", "method", "run", "side", "index", "value", "start_ns", "end_ns", "warmup"):
        assert np.array_equal(getattr(back, column), getattr(mine, column)), column
    assert record is not None and record.status == "finished" and record.name == "thesis toy"
    # as duet run stores them: sequential runs one record per side, duet runs one record with both sides
    assert sorted((r.method, tuple(r.sides)) for r in runs).count(("sequential", ("A",))) == 2
    assert all(len(r.sides) == 2 for r in runs if r.method == "aduet")
    assert all(r.clock == "epoch" for r in runs)


def test_campaign_evaluation_runs_on_imported_faas_data(tmp_path: Path) -> None:
    imported = read_csv(DATA / "faasterBench" / "faasterbench_wosc23_long.csv.gz", FAASTERBENCH)
    db = tmp_path / "f.db"
    cid = store_imported(db, imported, name="faas")
    store = Store(db)
    try:
        table = iteration_table(CampaignStore(store), cid)
    finally:
        store.close()
    rows = {r.method: r.result for r in analyze_table(table, AnalysisOptions(benchmarks=("aws/5/10/25",),
                                                                             n_resamples=2000))}
    duet, seq = rows["duet"], rows["sequential"]
    # the known +5 % regression: both methods see it, the paired one with a narrower CI
    for result in (duet, seq):
        assert result.verdict == "slower" and 1.03 < result.ratio.estimate < 1.07, result
    assert duet.relative_ci_width < seq.relative_ci_width


def test_cli_prints_the_campaign_id(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    runner = CliRunner()
    first = runner.invoke(import_, ["duetprocess", str(DUETPROCESS), "--db", str(db)])
    assert first.exit_code == 0, first.output
    assert first.stdout.strip() == "1" and "imported 32 iterations of 1 benchmark(s)" in first.stderr
    args = ["csv", str(DATA / "faasterBench" / "faasterbench_wosc23_long.csv.gz"), "--db", str(db), "--name", "faas",
            "--col", "benchmark=platform,regression_pct,wrapper_count,calls_per_function", "--col", "method=mode",
            "--col", "run=wrapper,invocation_id", "--col", "side=version", "--col", "value=duration_ms",
            "--col", "index=iteration", "--map", "side:f1=A,f2=B", "--map", "method:A=duet,B=sequential,C=sequential",
            "--unit", "ms", "--where", "platform=aws"]
    second = runner.invoke(import_, args)
    assert second.exit_code == 0, second.output
    assert second.stdout.strip() == "2"
    store = Store(db)
    try:
        table = iteration_table(CampaignStore(store), 2)
        assert CampaignStore(store).campaign(2).name == "faas"  # type: ignore[union-attr]
    finally:
        store.close()
    expected = read_csv(DATA / "faasterBench" / "faasterbench_wosc23_long.csv.gz", FAASTERBENCH).table
    assert len(table) == int((np.char.startswith(expected.benchmark.astype(str), "aws/")).sum()) == 14_400


def test_cli_errors_are_one_line(tmp_path: Path) -> None:
    from duetbench.errors import DuetError

    runner = CliRunner()
    cases = [
        (["jmh", str(DUETPROCESS)], "takes 2 file(s)"),
        (["csv", str(DUETPROCESS), "--col", "side"], "is not KEY=VALUE"),
        (["csv", str(DUETPROCESS), "--col", "side=pair"], "has no benchmark, method, value"),
        (["duetprocess", str(DUETPROCESS), "--col", "side=pair"], "describe a generic CSV"),
        (["duetprocess", str(tmp_path / "nope.csv")], "file not found"),
    ]
    for args, message in cases:
        result = runner.invoke(import_, [*args, "--db", str(tmp_path / "e.db")])
        assert isinstance(result.exception, DuetError) and message in str(result.exception), (args, result.exception)
        assert "\n" not in str(result.exception)


def test_an_import_interrupted_while_storing_leaves_no_half_campaign(tmp_path: Path, monkeypatch) -> None:
    # Ctrl-C during a long import left A's runs without B's as the latest campaign, status "running",
    # which `duet analyze` then took for the import.
    imported = read_duetprocess(DUETPROCESS)
    db = tmp_path / "r.db"
    kept = store_imported(db, imported, name="before")
    add_run, calls = CampaignStore.add_run, []

    def interrupted(self: CampaignStore, campaign_id: int, run: object) -> int:
        calls.append(run)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return add_run(self, campaign_id, run)  # type: ignore[arg-type]

    monkeypatch.setattr(CampaignStore, "add_run", interrupted)
    try:
        store_imported(db, imported, name="interrupted")
    except KeyboardInterrupt:
        pass
    else:
        raise AssertionError("the interruption was swallowed")
    store = Store(db)
    try:
        campaigns = CampaignStore(store)
        assert [c.id for c in campaigns.campaigns()] == [kept]
        with store.engine.connect() as conn:
            counts = [conn.exec_driver_sql(f"SELECT count(*) FROM {t}").scalar() for t in
                      ("runs", "run_sides", "iterations")]
        assert counts[0] == len(campaigns.runs(kept)) and counts[2] == len(imported.table)
    finally:
        store.close()
