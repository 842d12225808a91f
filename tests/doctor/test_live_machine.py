"""duet doctor on the machine the tests run on (root = /): it runs, every item has a status, JSON parses."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from duetbench.host.doctor import STATUSES, run_checks
from duetbench.host.doctor.live import SystemProbe

SRC = Path(__file__).resolve().parents[2] / "src"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}", "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "duetbench", "doctor", *args], check=False, capture_output=True, text=True,
                          env=env, timeout=120)


def test_real_machine_every_item_has_a_status() -> None:
    started = time.monotonic()
    report = run_checks(Path("/"), interval_s=0.5)
    assert time.monotonic() - started >= 0.5  # the sampling checks really watched an interval
    assert len(report.checks) == 20
    for c in report.checks:
        assert c.status in STATUSES and c.evidence
    assert report.interval_s > 0
    names = {c.name: c for c in report.checks}
    assert names["kernel"].status != "not-observable"  # /proc/sys/kernel/osrelease exists on every Linux


def test_real_machine_json_parses_and_exits_zero() -> None:
    done = _cli("--json", "--interval", "0.3")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["root"] == "/" and len(data["checks"]) == 20
    assert sum(data["summary"].values()) == 20


def test_real_machine_table_and_fix_change_nothing() -> None:
    rate = Path("/proc/sys/kernel/perf_event_max_sample_rate").read_text()
    done = _cli("--fix", "--interval", "0.3")
    assert done.returncode == 0, done.stderr
    assert "Clocksource" in done.stdout and "--fix" in done.stdout
    assert Path("/proc/sys/kernel/perf_event_max_sample_rate").read_text() == rate


def test_adjtimex_is_read_only_and_consistent() -> None:
    tx = SystemProbe().adjtimex()
    assert tx is not None
    assert 0 <= tx.state <= 5
    assert tx.maxerror_us >= 0
    assert tx.synced == (not tx.status & 0x40 and tx.state != 5)


def test_perf_probe_answers_with_success_or_an_errno() -> None:
    result = SystemProbe().perf_hw_cycles()
    if result is None:
        pytest.skip("perf_event_open syscall number unknown for this architecture")
    assert result.ok or result.errno > 0


def test_apply_needs_root_on_the_live_machine() -> None:
    if os.geteuid() == 0:
        pytest.skip("running as root: the refusal for ordinary users cannot be observed")
    done = _cli("--fix", "--apply", "--interval", "0.3")
    assert done.returncode == 2 and "needs root" in done.stderr
