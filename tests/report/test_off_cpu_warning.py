"""The warning for commands that spend most of their wall time off the CPU (hyperfine#898): which
commands, with what share, and the time spent waiting for a CPU where the cgroup recorded it."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from duetbench.model.invocation import Invocation
from duetbench.report.warnings import off_cpu_warning

NAMES = {"A": "old", "B": "new"}


def _runs(side: str, wall: float, cpu: float, n: int = 9, wait: float | None = None) -> list[Invocation]:
    return [Invocation(side=side, index=k, pair=k, warmup=False, status="ok", exit_code=0, signal=0,
                       start_ns=k * 10**9, end_ns=k * 10**9 + int(wall * 1e9), wall_s=wall * (1 + 0.01 * k),
                       cpu_s=cpu, user_s=cpu, sys_s=0.0, cgroup_cpu_s=None, maxrss_kb=1000, nvcsw=0, nivcsw=0,
                       minflt=0, majflt=0, cpu_requested=0, cpu_seen=0, orphans_reaped=0, cgroup_wait_s=wait)
            for k in range(n)]


def test_cpu_bound_commands_get_no_warning() -> None:
    assert off_cpu_warning(_runs("A", 0.020, 0.0199) + _runs("B", 0.021, 0.0208), NAMES) is None
    # a multi-threaded command uses more CPU than wall time
    assert off_cpu_warning(_runs("A", 0.020, 0.070) + _runs("B", 0.020, 0.071), NAMES) is None


def test_a_command_that_mostly_sleeps_is_named_with_its_share() -> None:
    text = off_cpu_warning(_runs("A", 0.020, 0.0199) + _runs("B", 0.050, 0.005), NAMES)
    assert text is not None and text.startswith("new ran on a CPU for only 10% of its wall time"), text
    assert "old" not in text and "use --metric cpu" in text and "waiting for a CPU" in text, text
    assert "10% of its wall time (median over its runs)" in text and " ms" not in text, text


def test_both_commands_and_the_wait_for_a_cpu() -> None:
    text = off_cpu_warning(_runs("A", 0.040, 0.010, wait=0.020) + _runs("B", 0.040, 0.012, wait=0.001), NAMES)
    assert text is not None and text.startswith("old and new ran on a CPU for only 24%"), text
    assert "only 24% (48% waiting for a CPU) and 29% of their wall time" in text, text


def test_the_threshold_and_short_commands() -> None:
    # on a CPU for just over half its wall time: no warning; just under: a warning
    assert off_cpu_warning(_runs("A", 0.020, 0.0106), NAMES) is None
    assert off_cpu_warning(_runs("A", 0.020, 0.0100), NAMES) is not None
    # below 5 ms the start-up warning speaks; warm-ups and failed runs do not count
    assert off_cpu_warning(_runs("A", 0.002, 0.0001), NAMES) is None
    failed = [Invocation(**{**{f: getattr(i, f) for f in i.__struct_fields__}, "status": "failed"})
              for i in _runs("B", 0.050, 0.001)]
    assert off_cpu_warning(failed, NAMES) is None


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs to run a duet")
def test_a_sleeping_command_is_warned_about_end_to_end(duet, tmp_path: Path) -> None:
    result = duet("compare", "sleep 0.02", "sleep 0.02", "--runs", "3", "--method", "duet", "--no-progress",
                  "--export-json", str(tmp_path / "o.json"))
    assert result.returncode == 0, result.stderr
    warnings = json.loads((tmp_path / "o.json").read_text())["warnings"]
    assert any(w.startswith("A and B ran on a CPU for only") for w in warnings), warnings
    assert "ran on a CPU for only" in result.stdout + result.stderr


def test_one_command_gets_the_warnings_that_apply_to_it(duet, tmp_path: Path) -> None:
    # `duet compare CMD` (as `hyperfine CMD`) showed no warning at all: now those about one command.
    result = duet("compare", "sleep 0.02", "--runs", "3", "--no-progress", "--export-json", str(tmp_path / "o.json"))
    assert result.returncode == 0, result.stderr
    warnings = json.loads((tmp_path / "o.json").read_text())["warnings"]
    assert any(w.startswith("The command ran on a CPU for only") for w in warnings), warnings
    assert "warning: The command ran on a CPU" in result.stdout.replace("\n", " "), result.stdout
    short = duet("compare", "true", "-n", "tiny", "--runs", "3", "--no-progress", "--export-json", str(tmp_path / "t.json"))
    assert short.returncode == 0, short.stderr
    assert any(w.startswith("tiny takes under 5 ms") for w in json.loads((tmp_path / "t.json").read_text())["warnings"])


def test_the_short_command_warning_speaks_the_time_unit() -> None:
    from duetbench.report.warnings import teaching_warnings

    runs = _runs("A", 0.001, 0.0009) + _runs("B", 0.001, 0.0009)
    plain = teaching_warnings("duet", {}, runs, names=NAMES, usable_cpus=2)
    assert any(w.startswith("old takes under 5 ms per invocation") for w in plain), plain
    micro = teaching_warnings("duet", {}, runs, names=NAMES, usable_cpus=2, time_unit="microsecond")
    assert any(w.startswith("old takes under 5000.0 µs per invocation") for w in micro), micro
    assert not any(" ms" in w for w in micro), micro
