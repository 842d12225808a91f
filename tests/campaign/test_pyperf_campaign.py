"""`duet run` with a real pyperf benchmark (PyPI): `--hook duet` in every worker of both sides, pyperf's
JSON parsed, the hook's timestamps attached to its values, warmups flagged."""
from __future__ import annotations

import importlib.metadata
import sqlite3
import sys
from pathlib import Path

import pytest

pyperf = pytest.importorskip("pyperf", reason="pyperf (PyPI) is in the test extra: pip install '.[test]'")

BENCH = """
import pyperf

def work(n):
    return sum(i * i for i in range(n))

runner = pyperf.Runner()
runner.argparser.add_argument("--n", type=int, default=20000)
args = runner.parse_args()
runner.bench_func("squares", work, args.n)
"""


def test_pyperf_campaign_through_the_hook(duet, tmp_path: Path) -> None:
    if not any(ep.name == "duet" for ep in importlib.metadata.entry_points(group="pyperf.hook")):
        pytest.skip("the pyperf hook entry point is visible only when duetbench is installed (pip install .)")
    (tmp_path / "bench.py").write_text(BENCH)
    keep = "DUET_SIDE,DUET_ITERATION_LOG,DUET_BARRIER,DUET_BARRIER_TIMEOUT_MS,DUETBENCH_NATIVE_DIR,PYTHONPATH"
    (tmp_path / "campaign.yml").write_text(_campaign(keep))
    result = duet("run", "campaign.yml", "--no-progress", timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    with sqlite3.connect(tmp_path / ".duet" / "results.db") as conn:
        runs = conn.execute("SELECT id, status, clock, error, notes FROM runs").fetchall()
        assert len(runs) == 3 and all(r[1] == "ok" for r in runs), runs
        assert all(r[2] == "monotonic" for r in runs), runs
        for run_id, *_ in runs:
            for side in "AB":
                measured, warm = conn.execute("SELECT SUM(warmup = 0), SUM(warmup) FROM iterations "
                                              "WHERE run_id=? AND side=?", (run_id, side)).fetchone()
                assert (measured, warm) == (6, 2)  # 2 workers x (3 values + 1 warmup)
    assert "squares" in result.stdout
    # every worker's values passed the barrier on both sides, and pyperf's metadata says synchronized
    assert "duet: 2 of 2 runs synchronized (barrier passed for every iteration)" in result.stdout, result.stdout


def _campaign(keep: str) -> str:
    common = (f"--hook duet --inherit-environ {keep} --processes 2 --warmups 1 --values 3 --loops 4 "
              "-o {outdir}/pyperf.json")
    return f"""campaign: pyperf
seed: 5
methods: {{duet: 2, aduet: 1}}
parser: pyperf
results: ["{{outdir}}/pyperf.json"]
timeout: 120
benchmarks:
  squares:
    A: {sys.executable} bench.py --n 20000 {common}
    B: {sys.executable} bench.py --n 24000 {common}
"""
