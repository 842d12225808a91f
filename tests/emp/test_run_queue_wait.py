"""A duet records each side's run-queue wait (its cgroup's cpu.pressure) and judges one-sided
interference by it: a command that sleeps is not taken for one held off its CPU (analyze/interference.py)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from duetbench.host.cgroup import SideCgroup

two_cpus = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs to run a duet")


def _pressure_per_cgroup() -> str | None:
    """Why a side's run-queue wait cannot be read here, or None if it can."""
    group = SideCgroup.create(f"duetbench-{os.getpid()}-psi-probe")
    if group is None:
        return "no writable cgroup v2 hierarchy for a side's cgroup"
    try:
        return None if group.wait_usec() is not None else "the kernel keeps no pressure stall information (PSI)"
    finally:
        group.remove()


def _measured(data: dict) -> list[dict]:
    return [i for i in data["invocations"] if not i["warmup"]]


@two_cpus
def test_every_invocation_records_its_run_queue_wait(duet, tmp_path: Path) -> None:
    reason = _pressure_per_cgroup()
    if reason:
        pytest.skip(reason)
    result = duet("compare", "sleep 0.01", "sleep 0.01", "--method", "duet", "--runs", "4", "--no-progress",
                  "--export-json", "o.json")
    assert result.returncode == 0, result.stderr
    waits = [i["cgroup_wait_s"] for i in _measured(json.loads((tmp_path / "o.json").read_text()))]
    assert len(waits) == 8 and all(w is not None and 0 <= w < 0.01 for w in waits), waits  # sleeping: ~no wait


@two_cpus
def test_a_duet_of_sleeps_beside_a_cpu_hog_gets_an_answer(duet, tmp_path: Path) -> None:
    """Sleeps of 20 and 40 ms beside a process that keeps a CPU busy: wall − CPU time differs by 20 ms in
    every pair, and with the hog's CPU time beside it that read as one side held off its CPU in every
    pair (the wall interval left unbounded: "no difference"). Their run-queue wait tells it was sleep."""
    reason = _pressure_per_cgroup()
    if reason:
        pytest.skip(reason)
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.2)  # the hog is running before the first pair
        result = duet("compare", "sleep 0.02", "sleep 0.04", "--method", "duet", "--runs", "8", "--no-progress",
                      "--export-json", "o.json")
    finally:
        hog.kill()
        hog.wait()
    assert result.returncode == 0, result.stderr
    data = json.loads((tmp_path / "o.json").read_text())
    wall = next(c for c in data["comparisons"] if c["metric"] == "wall")
    # The hog was there: other processes' CPU time beside the pairs (what the old rule counted against them).
    others = [sum(p["cpu_ms"] for p in json.loads(i["activity"])) for i in _measured(data) if i["activity"]]
    assert others and max(others) >= 10, others
    assert wall["ratio"]["high"] is not None, wall  # bounded: not every pair was taken for interference
    assert wall["verdict"] == "slower" and 1.3 < wall["ratio"]["estimate"] < 2.5, wall


def test_cgroup_counters_carry_over_and_one_not_known_is_read_afresh(tmp_path: Path) -> None:
    """Between two invocations of a side the counters its launcher read after the first are the second's
    starting point; one it could not read is read again before the next, not carried over as unknown."""
    from duetbench.execute import invocation

    (tmp_path / "cpu.stat").write_text("usage_usec 1000\nuser_usec 900\n")
    (tmp_path / "cpu.pressure").write_text("some avg10=0.00 avg60=0.00 avg300=0.00 total=500\n"
                                           "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")
    group = SideCgroup(tmp_path)
    invocation.forget_cgroup_usage()
    assert group.ensure() is group
    inode = invocation._cgroup_inode(group)
    assert inode == tmp_path.stat().st_ino
    before = invocation._cgroup_counters_before(group, inode)
    assert before == (1000, 500)
    # The launcher's answer: usage read, the wait not (-1); the file cannot be read here either.
    (tmp_path / "cpu.pressure").unlink()
    cpu, wait = invocation._cgroup_deltas(group, before, {"cgroup_usage_usec": 3000, "cgroup_wait_usec": -1}, inode)
    assert cpu == pytest.approx(0.002) and wait is None
    (tmp_path / "cpu.pressure").write_text("some avg10=0.00 avg60=0.00 avg300=0.00 total=800\n")
    assert invocation._cgroup_counters_before(group, inode) == (3000, 800)  # usage carried over, the wait read afresh
    cpu, wait = invocation._cgroup_deltas(group, (3000, 800), {"cgroup_usage_usec": 3500, "cgroup_wait_usec": 900},
                                          inode)
    assert cpu == pytest.approx(0.0005) and wait == pytest.approx(0.0001)
    assert invocation._cgroup_counters_before(group, inode) == (3500, 900)
    invocation.forget_cgroup_usage()


def test_a_cgroup_made_again_is_read_afresh_and_ensure_stats_it_once(tmp_path: Path) -> None:
    """`ensure` notes the directory's inode (the one stat() of each invocation's cgroup between pairs); a
    cgroup removed and made again has another, and its counters are then read, not carried over."""
    from duetbench.execute import invocation

    where = tmp_path / "side"
    where.mkdir()
    (where / "cpu.stat").write_text("usage_usec 5000\n")
    group = SideCgroup(where)
    invocation.forget_cgroup_usage()
    assert group.ensure() is group and group.inode == where.stat().st_ino
    first = group.inode
    before = invocation._cgroup_counters_before(group, first)
    invocation._cgroup_deltas(group, before, {"cgroup_usage_usec": 9000, "cgroup_wait_usec": -1}, first)
    assert invocation._cgroup_counters_before(group, first)[0] == 9000  # carried over
    where.rename(tmp_path / "removed")  # still there, so that the directory made again has another inode
    assert group.ensure() is group and group.inode != first  # made again
    (where / "cpu.stat").write_text("usage_usec 12\n")
    assert invocation._cgroup_counters_before(group, group.inode)[0] == 12  # read afresh
    (where / "cpu.stat").unlink()
    where.rmdir()
    where.write_text("a file where the directory was")
    assert group.ensure() is None  # cannot be made: the invocation runs without one
    invocation.forget_cgroup_usage()
