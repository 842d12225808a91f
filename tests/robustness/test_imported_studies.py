"""Issue 16 item 1: `duet report` and the studies on imported campaigns (no timestamps, one side only)
skip what the data cannot support and say which and why, instead of crashing."""
from __future__ import annotations

import json
from pathlib import Path

from duetbench.analyze.studies import run_studies, runtime_saving
from duetbench.store.campaigns import CampaignStore, iteration_table
from duetbench.store.db import Store

HYPERFINE = {"results": [{"command": "sleep 0.1", "mean": 0.1, "times": [0.10, 0.11, 0.10, 0.12, 0.10, 0.11]},
                         {"command": "sleep 0.2", "mean": 0.2, "times": [0.20, 0.21, 0.20, 0.22, 0.20, 0.21]}]}


def test_report_of_a_hyperfine_import_skips_runtime_saving_and_says_why(duet, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "hf.json").write_text(json.dumps(HYPERFINE))
    assert duet("import", "hyperfine", "hf.json", "--db", "r.db").returncode == 0
    rep = duet("report", "--db", "r.db", "-o", "r.html")
    assert rep.returncode == 0, rep.stderr
    assert (tmp_path / "r.html").stat().st_size > 0
    studies = duet("analyze", "--db", "r.db", "--studies")
    assert studies.returncode == 0, studies.stderr
    assert "runtime saving" in studies.stdout and "timestamps" in studies.stdout


def test_one_sided_csv_import_is_reported_with_the_reason(duet, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    rows = ["bench,method,run,side,value"] + [f"x,duet,{r},A,{1 + 0.01 * i}" for r in range(5) for i in range(3)]
    (tmp_path / "one.csv").write_text("\n".join(rows) + "\n")
    imp = duet("import", "csv", "one.csv", "--col", "benchmark=bench", "--col", "method=method", "--col", "run=run",
               "--col", "side=side", "--col", "value=value", "--db", "r.db")
    assert imp.returncode == 0, imp.stderr
    rep = duet("report", "--db", "r.db", "-o", "r.html")
    assert rep.returncode == 0, rep.stderr
    out = duet("analyze", "--db", "r.db", "--studies")
    assert out.returncode == 0, out.stderr
    assert "left out of the studies" in out.stdout and "0 B" in out.stdout


def test_runtime_saving_of_an_untimed_table_is_nan_not_an_index_error(duet, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "hf.json").write_text(json.dumps(HYPERFINE))
    duet("import", "hyperfine", "hf.json", "--db", "r.db")
    store = Store(tmp_path / "r.db")
    try:
        table = iteration_table(CampaignStore(store), 1)
    finally:
        store.close()
    saving = runtime_saving(table)
    assert saving.benchmarks and all(v != v for v in saving.sequential_s)  # nan: nothing timed
    studies = run_studies(table, aa=False, n_resamples=200)
    assert any(method == "runtime saving" for _, method, _ in studies.skipped)
