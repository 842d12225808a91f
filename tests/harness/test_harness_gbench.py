from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from harness_fixtures import FIXTURES, fixture, inp

from duetbench.errors import DuetError
from duetbench.harness import ParserInput, parse


def test_repetitions_in_seconds_and_aggregates_ignored() -> None:
    r = parse("gbench", {}, inp("gbench.json"))
    doc = json.loads(fixture("gbench.json").read_text())
    reps = [b for b in doc["benchmarks"] if b["run_type"] == "iteration"]
    assert len(reps) == 6 and len(doc["benchmarks"]) == 14  # 2 × (3 repetitions + 4 aggregates)
    # time_unit is "us" in the fixture: 1 us = 1e-6 s.
    assert [it.value_s for it in r.iterations] == pytest.approx([b["real_time"] * 1e-6 for b in reps], rel=1e-15)
    assert [(it.name, it.index) for it in r.iterations] == [
        ("BM_Accumulate/64", 0), ("BM_Accumulate/64", 1), ("BM_Accumulate/64", 2),
        ("BM_Accumulate/512", 0), ("BM_Accumulate/512", 1), ("BM_Accumulate/512", 2)]
    cpu = parse("gbench", {"metric": "cpu_time"}, inp("gbench.json"))
    assert [it.value_s for it in cpu.iterations] == pytest.approx([b["cpu_time"] * 1e-6 for b in reps], rel=1e-15)
    assert r.clock == "none" and r.metadata["metric"] == "real_time"


def test_errored_repetitions_fail_unless_skipped() -> None:
    with pytest.raises(DuetError, match=r"gbench_error\.json: benchmark 'BM_Skipped' reported an error: "
                                        "deliberately failing — .*skip_errors: true"):
        parse("gbench", {}, inp("gbench_error.json"))
    # Skipping every repetition leaves nothing to compare, which is its own clear error.
    with pytest.raises(DuetError, match="found no iterations"):
        parse("gbench", {"skip_errors": True}, inp("gbench_error.json"))


def test_skip_errors_keeps_the_good_ones(tmp_path: Path) -> None:
    good = json.loads(fixture("gbench.json").read_text())
    bad = json.loads(fixture("gbench_error.json").read_text())
    good["benchmarks"] += bad["benchmarks"]
    (tmp_path / "g.json").write_text(json.dumps(good))
    r = parse("gbench", {"skip_errors": True}, ParserInput(files={"g.json": tmp_path / "g.json"}))
    assert len(r.iterations) == 6 and r.metadata["skipped_errors"] == 2


def test_bad_metric_option_is_a_validation_error() -> None:
    with pytest.raises(DuetError, match="parser 'gbench' option 'metric': Input should be 'real_time' or 'cpu_time'"):
        parse("gbench", {"metric": "wall"}, inp("gbench.json"))


def test_fresh_google_benchmark_output_parses(tmp_path: Path) -> None:
    cxx = shutil.which("g++") or shutil.which("c++")
    if cxx is None or not Path("/usr/include/benchmark/benchmark.h").exists():
        pytest.skip("needs g++ and the Debian package libbenchmark-dev")
    exe = tmp_path / "bench"
    subprocess.run([cxx, "-O2", "-o", str(exe), str(FIXTURES / "src" / "gbench_tiny.cc"), "-lbenchmark",
                    "-lpthread"], check=True, timeout=120)
    out = tmp_path / "out.json"
    subprocess.run([str(exe), "--benchmark_filter=BM_Accumulate/64", "--benchmark_repetitions=2",
                    "--benchmark_min_time=0.01", f"--benchmark_out={out}", "--benchmark_out_format=json"],
                   check=True, timeout=60, capture_output=True)
    r = parse("gbench", {}, ParserInput(files={"out.json": out}))
    assert len(r.iterations) == 2 and all(0 < it.value_s < 1e-3 for it in r.iterations)
