"""The execution-backend interface (execute/backends/): a backend registered by name gets a campaign
through the one start-up path — plan, seed, record, dry run, resume, summary — and only executes runs.

The toy backend below is all a new backend has to write: no start-up code of its own. Its runs are
real: the harness runs as processes through the native launcher, parsed and stored by the campaign's
own per-run loop.
"""
from __future__ import annotations

import io
import json
import os
import shutil
import sqlite3
import sys
from pathlib import Path
from typing import ClassVar

import pytest
from rich.console import Console

from duetbench.errors import DuetError
from duetbench.execute.backends import registry
from duetbench.execute.backends.base import Backend, CampaignJob, Outcome
from duetbench.usecases.campaign import RunOptions, run_campaign

HERE = Path(__file__).resolve().parent


class BatchBackend(Backend):
    """Measures at most `batch` of the runs left per `duet run` (then says it stopped), on this machine."""

    name: ClassVar[str] = "toy"
    family: ClassVar[str] = "toy"
    handed: ClassVar[list[list[str]]] = []

    def execute(self, job: CampaignJob) -> Outcome:
        runs = job.todo[: self.settings.get("batch", len(job.todo))]
        BatchBackend.handed.append([r.key for r in runs])
        status = job.loop(runs, engine=None)
        return Outcome("stopped" if status == "finished" and len(runs) < len(job.todo) else status)


@pytest.fixture()
def toy(monkeypatch: pytest.MonkeyPatch, native_dir: Path, tmp_path: Path) -> Path:
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("the campaign has duet runs, which need two CPUs")
    # The one registration line a new backend adds (here for this test only).
    monkeypatch.setitem(registry.BACKENDS, "toy", f"{__name__}:BatchBackend")
    monkeypatch.setenv("DUETBENCH_NATIVE_DIR", str(native_dir))
    monkeypatch.chdir(tmp_path)
    BatchBackend.handed.clear()
    shutil.copy(HERE / "harness.py", tmp_path / "harness.py")
    harness = f"{sys.executable} harness.py --iterations 3 --work 20000"
    (tmp_path / "campaign.yml").write_text(f"""campaign: toy
methods: {{sequential: 2, duet: 2}}
parser: {{name: regex, pattern: 'iteration \\d+: (?P<value>[0-9.]+) s'}}
timeout: 60
benchmarks:
  loop:
    command: {harness}
""")
    return tmp_path


def _run(directory: Path, backend: str = "toy", **options: object) -> tuple[int, str]:
    out = io.StringIO()
    settings = {k: options.pop(k) for k in ("batch",) if k in options}
    code = run_campaign(directory / "campaign.yml",
                        RunOptions(db=directory / ".duet" / "results.db", progress=False, **options),  # type: ignore[arg-type]
                        Console(file=out, width=200, highlight=False), backend=backend, settings=settings)
    return code, " ".join(out.getvalue().split())


def _rows(db: Path, query: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(db) as conn:
        return conn.execute(query).fetchall()


def test_a_registered_backend_runs_a_campaign_through_the_start_up_path(toy: Path) -> None:
    db = toy / ".duet" / "results.db"
    code, text = _run(toy, dry_run=True, seed=11)
    assert code == 0 and "dry run: nothing was measured (6 runs planned)" in text
    assert not db.exists() and BatchBackend.handed == []  # a dry run never reaches the backend

    code, text = _run(toy, seed=11, batch=2)
    assert code == 0, text
    assert "--resume --backend toy" in text  # how to continue, with this backend
    ((plan_json, seed, options, status),) = _rows(db, "SELECT plan, seed, options, status FROM campaigns")
    plan = [f"{p['benchmark']}/{p['method']}/{p['repetition']}" + (f"/{p['sides'][0]}" if p["method"] == "sequential"
                                                                     else "") for p in json.loads(plan_json)]
    assert seed == 11 and json.loads(options)["backend"] == "toy" and status == "stopped"
    assert BatchBackend.handed == [plan[:2]]  # the runs left, in plan order

    code, text = _run(toy, resume=True)  # no seed given: the recorded one is used, the plan is not made again
    assert code == 0, text
    assert BatchBackend.handed == [plan[:2], plan[2:]]
    stored = _rows(db, "SELECT key, status FROM runs")
    assert sorted(k for k, _ in stored) == sorted(plan) and {s for _, s in stored} == {"ok"}
    # Real processes measured them: every side's iterations were parsed from its output and stored.
    per_run = _rows(db, "SELECT r.key, COUNT(*) FROM runs r JOIN iterations i ON i.run_id = r.id GROUP BY r.key")
    assert {k: n for k, n in per_run} == {k: 3 if "/sequential/" in k else 6 for k in plan}
    assert _rows(db, "SELECT status FROM campaigns") == [("finished",)]
    assert "ratio B/A" in text and "loop" in text  # the summary, read back from the store


def test_a_campaign_resumes_only_with_its_own_kind_of_backend(toy: Path) -> None:
    code, _ = _run(toy, seed=5, batch=1)
    assert code == 0
    with pytest.raises(DuetError, match="began with --backend toy, not local") as exc:
        _run(toy, backend="local", resume=True)
    assert exc.value.hint == "resume it with --backend toy"
    assert len(_rows(toy / ".duet" / "results.db", "SELECT key FROM runs")) == 1  # nothing more was measured


def test_an_unknown_backend_is_one_clear_error(toy: Path) -> None:
    with pytest.raises(DuetError, match="unknown backend 'nosuch'"):
        _run(toy, backend="nosuch")
