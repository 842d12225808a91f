"""The machine lock: a second measurement is refused with a message naming the first."""
from __future__ import annotations

import io
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from duetbench.errors import DuetError
from duetbench.execute.lock import MeasurementLock, wait_from_env

HOLDER = """
import sys, time
from pathlib import Path
from duetbench.execute.lock import MeasurementLock
with MeasurementLock("duet run nightly (campaign.yml)", Path(sys.argv[1])):
    print("held", flush=True)
    time.sleep(60)
"""


def test_second_holder_is_refused_and_told_who(tmp_path: Path) -> None:
    path = tmp_path / "lock"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(DuetError) as err:
            MeasurementLock("duet compare", path).acquire()
        message = str(err.value)
        assert "another measurement is running" in message
        assert "duet run nightly (campaign.yml)" in message and f"pid {holder.pid}" in message
    finally:
        holder.kill()
        holder.wait()
    # The kernel dropped the lock with its holder: no stale lock after a kill.
    with MeasurementLock("after", path):
        pass


def test_reacquire_after_release(tmp_path: Path) -> None:
    path = tmp_path / "lock"
    with MeasurementLock("first", path):
        pass
    lock = MeasurementLock("second", path)
    lock.acquire()
    lock.release()


WAITER = """
import sys, time
from pathlib import Path
from duetbench.execute.lock import MeasurementLock
start = time.monotonic()
with MeasurementLock("duet compare (second job)", Path(sys.argv[1])):
    print(f"got it after {time.monotonic() - start:.2f}", flush=True)
"""


def _hold(path: Path, seconds: float) -> subprocess.Popen[str]:
    holder = subprocess.Popen([sys.executable, "-c", HOLDER.replace("time.sleep(60)", f"time.sleep({seconds})"),
                               str(path)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


def test_waiter_queues_behind_the_holder_through_the_environment(tmp_path: Path) -> None:
    """A CI job with DUETBENCH_LOCK_WAIT set waits for the other job's measurement instead of failing,
    says once whom it waits for, and starts when the holder ends."""
    path = tmp_path / "lock"
    holder = _hold(path, 1.5)
    try:
        env = dict(os.environ, DUETBENCH_LOCK_WAIT="30")
        waiter = subprocess.run([sys.executable, "-c", WAITER, str(path)], env=env, capture_output=True, text=True,
                                timeout=60)
    finally:
        holder.kill()
        holder.wait()
    assert waiter.returncode == 0, waiter.stderr
    assert float(waiter.stdout.split()[-1]) >= 0.5  # it really waited for the holder
    assert waiter.stderr.count("waiting for the machine lock") == 1
    assert f"duet run nightly (campaign.yml) (pid {holder.pid}" in waiter.stderr


def test_wait_gives_up_after_its_limit(tmp_path: Path) -> None:
    path = tmp_path / "lock"
    holder = _hold(path, 60)
    log = io.StringIO()
    try:
        start = time.monotonic()
        with pytest.raises(DuetError) as err:
            MeasurementLock("duet compare", path).acquire(wait=0.6, log=log)
        assert 0.5 <= time.monotonic() - start < 5
    finally:
        holder.kill()
        holder.wait()
    assert "waited 0.6 s" in str(err.value) and f"pid {holder.pid}" in str(err.value)
    assert "DUETBENCH_LOCK_WAIT" in (err.value.hint or "")
    assert "waiting for the machine lock" in log.getvalue() and "up to 0.6 s" in log.getvalue()


@pytest.mark.parametrize("text, seconds", [("", 0.0), ("0", 0.0), ("2.5", 2.5), ("inf", math.inf)])
def test_wait_from_env_reads_seconds(text: str, seconds: float) -> None:
    assert wait_from_env({"DUETBENCH_LOCK_WAIT": text}) == seconds


@pytest.mark.parametrize("text", ["soon", "-1", "nan"])
def test_wait_from_env_refuses_what_is_not_seconds(text: str) -> None:
    with pytest.raises(DuetError) as err:
        wait_from_env({"DUETBENCH_LOCK_WAIT": text})
    assert "DUETBENCH_LOCK_WAIT" in str(err.value) and "inf" in (err.value.hint or "")


def test_compare_lock_wait_option_waits_for_the_holder(duet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `duet compare --lock-wait`: queued behind a holder that lets go after ~1.5 s, instead of failing.
    path = tmp_path / "lock"
    releaser = HOLDER.replace("time.sleep(60)", "time.sleep(1.5)")
    env = dict(os.environ, DUETBENCH_LOCK=str(path))
    holder = subprocess.Popen([sys.executable, "-c", releaser, str(path)], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        monkeypatch.setenv("DUETBENCH_LOCK", str(path))
        monkeypatch.delenv("DUETBENCH_LOCK_WAIT", raising=False)
        refused = duet("compare", "true", "true", "--runs", "2", "--method", "duet", "--no-progress")
        waited = duet("compare", "true", "true", "--runs", "2", "--method", "duet", "--no-progress",
                      "--lock-wait", "30")
    finally:
        holder.kill()
        holder.wait()
    assert refused.returncode != 0 and "another measurement is running" in refused.stderr
    assert waited.returncode == 0, waited.stderr
