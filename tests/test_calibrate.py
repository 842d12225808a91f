"""duet calibrate: a real quick run (native workloads through the compare runner), and its arithmetic."""
from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from duetbench.host.doctor.noise_floor import (
    best_method,
    ci_half_width,
    relative_std,
    runs_to_resolve,
    time_to_resolve,
)

SRC = Path(__file__).resolve().parents[1] / "src"


def test_relative_std_matches_statistics() -> None:
    values = [100.0, 101.0, 99.5, 100.7, 98.9]
    assert relative_std(values) == pytest.approx(statistics.stdev(values) / statistics.fmean(values))
    assert math.isnan(relative_std([1.0]))


def test_half_width_and_sqrt_n_scaling() -> None:
    assert ci_half_width(0.98, 1.02, 1.0) == pytest.approx(0.02)
    # A ±2 % half-width after 30 s needs 4× the time (and runs) for ±1 %.
    assert time_to_resolve(0.02, 30.0) == pytest.approx(120.0)
    assert runs_to_resolve(0.02, 25) == 100
    assert time_to_resolve(0.005, 30.0) == 0.0 and runs_to_resolve(0.005, 25) == 25
    assert time_to_resolve(float("nan"), 30.0) == math.inf
    assert best_method({"duet": 50.0, "sequential": 20.0}) == "sequential"
    assert best_method({"duet": math.inf}) is None
    with pytest.raises(ValueError):
        ci_half_width(1.1, 1.0, 1.0)


def test_answer_is_decided_by_the_hardest_workload() -> None:
    from duetbench.usecases.calibrate import WorkloadRow, plan_for, summarize

    def row(kind: str, method: str, half: float, t: float, runs: int) -> WorkloadRow:
        return WorkloadRow(kind, method, "wall", 50, 13.6, 1.0, 1 - half, 1 + half, half, None, True, t, runs)

    # This machine's default run (README): sequential resolves 1 % already on integer and float but
    # needs minutes on memory; the median of its times (~9 s) would hide that.
    rows = [row("integer", "sequential", 0.0016, 0.0, 55), row("float", "sequential", 0.0015, 0.0, 55),
            row("cache", "sequential", 0.0118, 19.0, 76), row("memory", "sequential", 0.039, 207.0, 776),
            *(row(k, "duet", 0.005, 0.0, 100) for k in ("integer", "float", "cache", "memory"))]
    rows += [WorkloadRow(r.kind, r.method, "cpu", *list(vars(r).values())[3:]) for r in rows]
    out = summarize(plan_for(180, False), [], rows, confidence=0.99, seed=1, host={}, elapsed_s=1.0)
    seq = out["summary"]["wall"]["sequential"]  # type: ignore[index]
    assert seq["median_time_to_1pct_s"] == pytest.approx(9.5)
    assert (seq["worst_workload"], seq["worst_time_to_1pct_s"], seq["worst_runs_to_1pct"]) == ("memory", 207.0, 776)
    assert out["summary"]["wall"]["best"] == "duet"  # type: ignore[index]
    assert "1 % on every workload: ~3 min of measuring per benchmark (776 runs, for memory)" in out["answer"]
    assert "duet resolves ±0.50% in the time spent (median; worst ±0.50%" in out["answer"]


def test_an_unbounded_interval_is_not_reachable_rather_than_a_crash() -> None:
    # CI (load from other tests): a quick calibration's duet A/A had every pair hit on one side, so its
    # interval was unbounded, and the run count to resolve 1 % overflowed (math.ceil of infinity).
    from duetbench.usecases.calibrate import WorkloadRow, plan_for, summarize

    assert runs_to_resolve(math.inf, 30) is None
    inf = math.inf
    rows = [WorkloadRow(k, m, metric, 30, 5.0, 1.0, 0.0 if m == "duet" else 0.99, inf if m == "duet" else 1.01,
                        inf if m == "duet" else 0.01, None, True, time_to_resolve(inf if m == "duet" else 0.01, 5.0),
                        runs_to_resolve(inf if m == "duet" else 0.01, 30))
            for k in ("integer", "memory") for m in ("duet", "sequential") for metric in ("wall", "cpu")]
    out = summarize(plan_for(180, False), [], rows, confidence=0.99, seed=1, host={}, elapsed_s=1.0)
    duet = out["summary"]["wall"]["duet"]  # type: ignore[index]
    assert duet["median_runs_to_1pct"] is None and duet["worst_time_to_1pct_s"] is None  # JSON: null
    assert "1 % on every workload: not reachable" in out["answer"] and out["summary"]["wall"]["best"] == "sequential"  # type: ignore[index]
    assert "duet resolves nothing (unbounded) in the time spent" in out["answer"], out["answer"]


def test_quick_calibrate_on_this_machine(native_dir: Path) -> None:
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
           "DUETBENCH_NATIVE_DIR": str(native_dir)}
    done = subprocess.run([sys.executable, "-m", "duetbench", "calibrate", "--quick", "--budget", "16", "--json",
                           "--seed", "7"], check=False, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert {"confidence", "seed", "elapsed_s", "plan", "machine", "inc", "workloads", "pair_ratio_cv", "summary",
            "answer"} <= set(data)
    assert data["seed"] == 7 and data["confidence"] == 0.99
    assert [r["task_ms"] for r in data["inc"]] == [10.0, 50.0]
    for r in data["inc"]:
        assert r["invocations"] >= 10 and r["ops"] > 0
        assert 0 <= r["pt_rel_std"] < 1 and 0 <= r["et_rel_std"] < 5
        assert r["mean_et_ms"] > 0.5 * r["task_ms"]
    methods = {"sequential", "duet"} if (os.cpu_count() or 1) >= 2 else {"sequential"}
    rows = data["workloads"]
    assert {(r["kind"], r["method"], r["metric"]) for r in rows} == {
        (k, m, x) for k in ("integer", "float", "cache", "memory") for m in methods for x in ("wall", "cpu")}
    for r in rows:
        assert r["runs"] >= 5 and r["machine_s"] > 0
        if r["ci_high"] is None or r["ci_low"] is None:  # unbounded (JSON null): few noisy runs (CI: the memory workload, 6 runs)
            assert r["half_width"] is None and r["runs_to_1pct"] is None and r["time_to_1pct_s"] is None, r
        else:
            assert r["ci_low"] <= r["ratio"] <= r["ci_high"]
            assert r["half_width"] > 0
        assert 0.5 < r["ratio"] < 2  # A/A: loose, the CPUs are shared with other work
        if r["method"] == "duet":
            assert r["ratio_cv"] is not None and r["ratio_cv"] >= 0
    for metric in ("wall", "cpu"):
        assert data["summary"][metric]["best"] in methods | {None}
    assert "use " in data["answer"] or "not reachable" in data["answer"]
    assert data["elapsed_s"] < 120


def test_ctrl_c_keeps_the_stages_that_finished(native_dir: Path) -> None:
    """Interrupted after the first workload's stages: those are answered from, exit 130 (was: all thrown away)."""
    import signal

    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
           "DUETBENCH_NATIVE_DIR": str(native_dir), "COLUMNS": "200"}
    proc = subprocess.Popen([sys.executable, "-m", "duetbench", "calibrate", "--quick", "--budget", "5", "--seed", "3"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert proc.stderr is not None
        for line in proc.stderr:  # the progress: one line as each stage starts
            if line.startswith("float"):  # integer's two stages are done
                proc.send_signal(signal.SIGINT)
                break
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert "Interrupted: this answers from the stages that finished only." in out
    assert "│ integer  │ sequential │" in out and "│ 10 ms │" in out
    assert "│ memory" not in out and "Traceback" not in err


def test_a_short_time_is_not_rounded_to_nothing() -> None:
    from duetbench.usecases.calibrate import WorkloadRow, plan_for, summarize

    rows = [WorkloadRow("integer", m, metric, 20, 0.1, 1.0, 0.98, 1.02, 0.02, None, True, time_to_resolve(0.02, 0.1),
                        runs_to_resolve(0.02, 20)) for m in ("duet", "sequential") for metric in ("wall", "cpu")]
    out = summarize(plan_for(5, True), [], rows, confidence=0.99, seed=1, host={}, elapsed_s=1.0)
    assert "~0.4 s of measuring per benchmark (80 runs, for integer)" in out["answer"], out["answer"]  # was "~0 s"
