"""Imported measurements stored as campaigns: what the store gives back, what campaign analysis makes of
it, and the `duet import` command's output and errors."""
from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Iterator
from contextlib import closing
from pathlib import Path

import numpy as np
from click.testing import CliRunner

from duetbench.model.table import IterationTable
from duetbench.analyze.tables import AnalysisOptions, analyze_table
from duetbench.cli.importing import import_
from duetbench.errors import DuetError
from duetbench.importers import read_csv, read_duetprocess, store_imported
from duetbench.importers.datasets import FAASTERBENCH
from duetbench.store import campaigns as campaigns_module
from duetbench.store.campaigns import CampaignStore, RunRecord, iteration_table
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


def test_an_empty_or_blank_name_is_refused(tmp_path: Path) -> None:
    # --name '' imported under the default name, --name ' ' as a campaign named blank.
    for name in ("", "  "):
        result = CliRunner().invoke(import_, ["duetprocess", str(DUETPROCESS), "--name", name,
                                              "--db", str(tmp_path / "r.db")])
        assert isinstance(result.exception, DuetError), result.output
        assert str(result.exception) == (f"--name {name!r} is empty — give the campaign a name, or leave --name out "
                                         f"for duetprocess:{DUETPROCESS.name}")
    assert not (tmp_path / "r.db").exists()


def _rows(db: Path) -> dict[str, list[tuple]]:
    """Every row of every table, ids included, uids left out (random per campaign)."""
    with closing(sqlite3.connect(db)) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        out = {}
        for table in tables:
            cursor = conn.execute(f"SELECT * FROM {table} ORDER BY rowid")
            names = [d[0] for d in cursor.description]
            out[table] = [tuple(v for n, v in zip(names, row, strict=True) if n != "uid") for row in cursor]
    return out


def test_an_import_stores_its_runs_at_once_exactly_as_one_by_one(tmp_path: Path, monkeypatch) -> None:
    # A transaction per run made a 20 000-run hyperfine export take ~8 s to import (CampaignStore.add_runs).
    imported = read_duetprocess(DUETPROCESS)  # duet, aduet and sequential runs, with timestamps
    monkeypatch.setattr(time, "time", lambda: 1_700_000_000.5)
    monkeypatch.setattr(campaigns_module, "_RUNS_PER_TRANSACTION", 5)  # two transactions, the last of one run
    batched = store_imported(tmp_path / "batched.db", imported, name="x")

    def one_by_one(self: CampaignStore, campaign_id: int, runs: object) -> list[int]:
        return [self.add_run(campaign_id, r) for r in runs]  # type: ignore[attr-defined]

    monkeypatch.setattr(CampaignStore, "add_runs", one_by_one)
    single = store_imported(tmp_path / "single.db", imported, name="x")
    assert batched == single
    rows = _rows(tmp_path / "batched.db")
    assert len(rows["runs"]) == 6 and len(rows["iterations"]) == len(imported.table)
    assert rows == _rows(tmp_path / "single.db")


def test_an_import_interrupted_while_storing_leaves_no_half_campaign(tmp_path: Path, monkeypatch) -> None:
    # Ctrl-C during a long import left A's runs without B's as the latest campaign, status "running",
    # which `duet analyze` then took for the import; the runs are stored in transactions of several runs,
    # so the runs of those committed before the interruption must go too.
    imported = read_duetprocess(DUETPROCESS)
    db = tmp_path / "r.db"
    kept = store_imported(db, imported, name="before")
    monkeypatch.setattr(campaigns_module, "_RUNS_PER_TRANSACTION", 2)
    add_runs, given = CampaignStore.add_runs, []

    def interrupted(self: CampaignStore, campaign_id: int, runs: Iterable[RunRecord]) -> list[int]:
        def runs_until_ctrl_c() -> Iterator[RunRecord]:
            for run in runs:
                if len(given) == 5:  # of 6 runs: two transactions committed, the third being filled
                    raise KeyboardInterrupt
                given.append(run)
                yield run
        return add_runs(self, campaign_id, runs_until_ctrl_c())

    monkeypatch.setattr(CampaignStore, "add_runs", interrupted)
    try:
        store_imported(db, imported, name="interrupted")
    except KeyboardInterrupt:
        pass
    else:
        raise AssertionError("the interruption was swallowed")
    assert len(given) == 5
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

def test_an_import_builds_its_runs_as_they_are_stored_not_all_first(tmp_path: Path, monkeypatch) -> None:
    # All at once, a 200 000-run hyperfine export held ~600 MB of run records before the first was stored.
    from duetbench.importers import store as importer_store

    built: list[int] = []
    seen_at: dict[str, list[int]] = {"begin": [], "transaction": []}

    def counted(*args: object, **kwargs: object) -> RunRecord:
        built.append(1)
        return RunRecord(*args, **kwargs)  # type: ignore[arg-type]

    begin, add = CampaignStore.begin, CampaignStore._add

    def noting_begin(self: CampaignStore, **kwargs: object) -> int:
        seen_at["begin"].append(len(built))
        return begin(self, **kwargs)  # type: ignore[arg-type]

    def noting_add(self: CampaignStore, campaign_id: int, runs: list[RunRecord]) -> list[int]:
        seen_at["transaction"].append(len(built))
        return add(self, campaign_id, runs)

    monkeypatch.setattr(importer_store, "RunRecord", counted)
    monkeypatch.setattr(CampaignStore, "begin", noting_begin)
    monkeypatch.setattr(CampaignStore, "_add", noting_add)
    monkeypatch.setattr(campaigns_module, "_RUNS_PER_TRANSACTION", 2)
    imported = read_duetprocess(DUETPROCESS)  # 6 runs
    cid = store_imported(tmp_path / "r.db", imported, name="x")
    assert seen_at == {"begin": [0], "transaction": [2, 4, 6]} and len(built) == 6
    store = Store(tmp_path / "r.db")
    try:
        assert len(CampaignStore(store).runs(cid)) == 6
    finally:
        store.close()
