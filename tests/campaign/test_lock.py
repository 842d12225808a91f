"""The machine lock: a second measurement is refused with a message naming the first."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from duetbench.errors import DuetError
from duetbench.execute.lock import MeasurementLock

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
