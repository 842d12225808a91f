"""The warning for runs that started on another CPU than the one duet pinned them to (`cpu_seen`, read by
the launcher just before the command starts, against `cpu_requested`): which side, how many runs, why it
matters and what to do."""
from __future__ import annotations

import json
import os
import sqlite3
import sys
from pathlib import Path

import pytest

from duetbench.model.invocation import Invocation
from duetbench.report.warnings import moved_cpu_warning, teaching_warnings

NAMES = {"A": "old", "B": "new"}


def _runs(side: str, cpu: int, seen: list[int], warmup: bool = False) -> list[Invocation]:
    return [Invocation(side=side, index=k, pair=k, warmup=warmup, status="ok", exit_code=0, signal=0,
                       start_ns=k * 10**9, end_ns=k * 10**9 + 20_000_000, wall_s=0.020, cpu_s=0.019, user_s=0.019,
                       sys_s=0.0, cgroup_cpu_s=None, maxrss_kb=1000, nvcsw=0, nivcsw=0, minflt=0, majflt=0,
                       cpu_requested=cpu, cpu_seen=where, orphans_reaped=0)
            for k, where in enumerate(seen)]


def test_runs_where_they_were_pinned_get_no_warning() -> None:
    assert moved_cpu_warning(_runs("A", 0, [0] * 6) + _runs("B", 1, [1] * 6), NAMES, method="duet") is None
    # unknown CPUs (imported runs) do not count
    assert moved_cpu_warning(_runs("A", -1, [-1] * 6) + _runs("B", 1, [-1] * 6), NAMES, method="duet") is None
    # a command given several CPUs may run on any of them, and only the lowest is recorded
    assert moved_cpu_warning(_runs("A", 0, [0, 1, 1, 0]), NAMES, method="duet", per_command=2) is None


def test_a_moved_side_is_named_with_its_count_why_and_what_to_do() -> None:
    text = moved_cpu_warning(_runs("A", 0, [0] * 6) + _runs("B", 1, [1, 1, 0, 0, 0, 1]), NAMES, method="duet")
    assert text is not None and text.startswith("new ran on another CPU than the one duet pinned it to "
                                                "(3 of 6 measured runs)"), text
    assert "old" not in text
    assert "a CPU of its own" in text and "cancels" in text, text  # why
    assert "taskset -p" in text and "measure again" in text, text  # what to do
    both = moved_cpu_warning(_runs("A", 0, [1, 0]) + _runs("B", 1, [0, 1, 1]), NAMES, method="duet")
    assert both is not None and both.startswith("old and new ran on another CPU than the one duet pinned them "
                                                "to (old: 1 of 2 and new: 1 of 3 measured runs)"), both
    sequential = moved_cpu_warning(_runs("A", 1, [0, 1]), NAMES, method="sequential")
    assert sequential is not None and "taking turns on it" in sequential and "partner" not in sequential


def test_the_report_warns_once_and_not_about_warm_ups() -> None:
    runs = _runs("A", 0, [0, 1, 1]) + _runs("B", 1, [1, 1, 1]) + _runs("A", 0, [1], warmup=True)
    found = [w for w in teaching_warnings("duet", {}, runs, names=NAMES, usable_cpus=2)
             if "another CPU than the one duet pinned" in w]
    assert len(found) == 1 and "(2 of 3 measured runs)" in found[0], found


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs to run a duet")
def test_a_command_that_moves_its_launcher_moves_no_run_and_a_moved_run_is_warned_about(duet,
                                                                                       tmp_path: Path) -> None:
    """End to end: a command that re-pins its parent (the launcher, which runs every invocation on its CPU)
    moved the later runs of that launcher, of either side, onto the CPU it chose; each run now starts where it
    was pinned, and the report has nothing to say. A store whose runs did start elsewhere (as such a run was
    recorded before) is warned about by `duet show`."""
    usable = sorted(os.sched_getaffinity(0))
    mover = (f"{sys.executable} -c \"import os; os.sched_setaffinity(os.getppid(), "
             f"set({usable}) - os.sched_getaffinity(0))\"")
    result = duet("compare", mover, "sleep 0.002", "--method", "duet", "--runs", "6", "--warmup", "0",
                  "--no-progress", "--export-json", str(tmp_path / "o.json"))
    assert result.returncode == 0, result.stderr
    with sqlite3.connect(tmp_path / ".duet" / "results.db") as db:
        placed = list(db.execute("SELECT side, cpu_requested, cpu_seen FROM invocations"))
    assert len(placed) == 12 and all(seen == requested for _, requested, seen in placed), placed
    assert not any("another CPU" in w for w in json.loads((tmp_path / "o.json").read_text())["warnings"])

    with sqlite3.connect(tmp_path / ".duet" / "results.db") as db:
        db.execute(f"UPDATE invocations SET cpu_seen = {usable[0]} + {usable[-1]} - cpu_requested "
                   "WHERE side = 'B' AND \"index\" IN (2, 4)")
    shown = duet("show", "1", "--export-json", str(tmp_path / "s.json"))
    assert shown.returncode == 0, shown.stderr
    warnings = [w for w in json.loads((tmp_path / "s.json").read_text())["warnings"] if "another CPU" in w]
    assert len(warnings) == 1 and warnings[0].startswith("B ran on another CPU than the one duet pinned it to "
                                                         "(2 of 6 measured runs)"), warnings
    assert "warning: B ran on another CPU" in shown.stdout.replace("\n", " "), shown.stdout
