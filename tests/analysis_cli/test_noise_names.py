"""`duet analyze` names the other processes that were busy during a benchmark's slowest runs."""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from duetbench.report.warnings import name_noise as _name_noise
from duetbench.execute.invocation import Invocation
from duetbench.analyze.tables import AnalysisRow


def _side(side: str, pair: int, wall: float, busy: list[tuple[str, float]]) -> Invocation:
    return Invocation(side=side, index=pair, pair=pair, warmup=False, status="ok", exit_code=0, signal=0,
                      start_ns=pair * 10**10, end_ns=pair * 10**10 + int(wall * 1e9), wall_s=wall, cpu_s=wall,
                      user_s=wall, sys_s=0.0, cgroup_cpu_s=None, maxrss_kb=0, nvcsw=0, nivcsw=0, minflt=0, majflt=0,
                      cpu_requested=0, cpu_seen=0, orphans_reaped=0,
                      activity=json.dumps([{"pid": 1, "comm": c, "cpu_ms": ms} for c, ms in busy]))


@dataclass
class _Run:
    benchmark: str
    method: str
    status: str = "ok"
    sides: dict[str, Invocation] = field(default_factory=dict)


def test_busy_process_during_the_slowest_runs_is_named() -> None:
    runs = [_Run("fib", "duet", sides={s: _side(s, k, 1.0, [("sshd", 2.0)]) for s in "AB"}) for k in range(9)]
    runs.append(_Run("fib", "duet", sides={s: _side(s, 9, 1.6, [("backup-daemon", 600.0), ("sshd", 3.0)])
                                           for s in "AB"}))
    runs.append(_Run("other", "duet", sides={s: _side(s, 10, 5.0, [("cron", 900.0)]) for s in "AB"}))
    rows = [AnalysisRow("fib/Bench.run", "duet", 10, 100, 100, None), AnalysisRow("fib", "sequential", 0, 0, 0, None)]
    _name_noise(rows, runs)
    assert len(rows[0].notes) == 1 and "backup-daemon 600 ms" in rows[0].notes[0]
    assert "cron" not in rows[0].notes[0]  # another benchmark's run
    assert rows[1].notes == []  # no runs of that method


def test_quiet_machine_gets_no_note() -> None:
    runs = [_Run("fib", "duet", sides={s: _side(s, k, 1.0, [("sshd", 1.0)]) for s in "AB"}) for k in range(10)]
    rows = [AnalysisRow("fib", "duet", 10, 100, 100, None)]
    _name_noise(rows, runs)
    assert rows[0].notes == []
