from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from harness_fixtures import FIXTURES, fixture, inp

from duetbench.errors import DuetError
from duetbench.harness import LogLine, ParserInput, parse

# Values of fixtures/pyperf.json, copied from the file: per run, 1 warmup then 3 values (seconds per loop).
RUN0 = [2.201299867010675e-06, 1.884800076368265e-06, 1.7595999452169054e-06, 1.8707998606259934e-06]
RUN1 = [1.5984000128810293e-06, 1.880799936770927e-06, 1.9969000277342273e-06, 1.8507000277168117e-06]


@pytest.mark.parametrize("name", ["pyperf.json", "pyperf.json.gz"])
def test_every_run_gives_its_warmups_then_its_values(name: str) -> None:
    r = parse("pyperf", {}, inp(name))
    assert [it.value_s for it in r.iterations] == RUN0 + RUN1
    assert [it.warmup for it in r.iterations] == [True, False, False, False] * 2
    assert [it.fork for it in r.iterations] == [0] * 4 + [1] * 4
    assert [it.index for it in r.iterations] == list(range(8))
    assert {it.name for it in r.iterations} == {"sum_range"}
    assert r.clock == "none" and r.metadata["perf_version"] == "2.10.0" and r.metadata["loops"] == 10


def test_calibration_runs_are_skipped_and_benchmarks_named() -> None:
    r = parse("pyperf", {}, inp("pyperf_calibrated.json"))
    doc = json.loads(fixture("pyperf_calibrated.json").read_text())
    for bench in ("small", "large"):
        its = [it for it in r.iterations if it.name == bench]
        # 2 worker runs × (1 warmup + 2 values); the calibration run (warmups only) is not there.
        assert len(its) == 6 and [it.fork for it in its] == [0, 0, 0, 1, 1, 1]
        runs = next(b for b in doc["benchmarks"] if b["metadata"]["name"] == bench)["runs"]
        assert "values" not in runs[0]
        assert its[1].value_s == runs[1]["values"][0]


def test_log_with_kinds_matches_warmups_and_values() -> None:
    log = [LogLine("A", i % 4, 100 * i, 100 * i + 50, "w" if i % 4 == 0 else "m") for i in range(8)]
    r = parse("pyperf", {}, inp("pyperf.json", log=log))
    assert r.clock == "monotonic"
    assert [it.start_ns for it in r.iterations] == [100 * i for i in range(8)]


def test_non_time_unit_is_refused(tmp_path: Path) -> None:
    doc = json.loads(fixture("pyperf.json").read_text())
    doc["metadata"]["unit"] = "byte"
    (tmp_path / "m.json").write_text(json.dumps(doc))
    with pytest.raises(DuetError, match=r"m\.json: benchmarks\[0\]: values are in 'byte', not seconds"):
        parse("pyperf", {}, ParserInput(files={"m.json": tmp_path / "m.json"}))


def test_truncated_gzip_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "t.json.gz").write_bytes(fixture("pyperf.json.gz").read_bytes()[:40])
    with pytest.raises(DuetError, match=r"t\.json\.gz: cannot read"):
        parse("pyperf", {}, ParserInput(files={"t.json.gz": tmp_path / "t.json.gz"}))


def test_fresh_pyperf_output_parses(tmp_path: Path) -> None:
    pytest.importorskip("pyperf", reason="pyperf (PyPI) is not installed")
    out = tmp_path / "out.json"
    subprocess.run([sys.executable, str(FIXTURES / "src" / "pyperf_bench.py"), "--quiet", "--processes", "2",
                    "--values", "2", "--warmups", "1", "--loops", "5", "-o", str(out)], check=True, timeout=120)
    r = parse("pyperf", {}, ParserInput(files={"out.json": out}))
    assert [it.warmup for it in r.iterations] == [True, False, False] * 2
    assert all(0 < it.value_s < 1e-3 for it in r.iterations)
