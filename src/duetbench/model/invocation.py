"""What one invocation measured (`Invocation`), apart from how it was launched (execute/invocation.py):
the store, the analysis and the report read it without importing the launcher's machinery (subprocess,
tempfile, the cgroup and /proc readers: ~15-20 ms of the report process's start on a 2-vCPU VM, on the
path of a fixed-count comparison, issue 17)."""
from __future__ import annotations

import msgspec

#: The exit status a shell's `$?` (and hyperfine's exit_codes) gives a command killed by signal N: 128 + N.
SIGNAL_EXIT_BASE = 128


class Invocation(msgspec.Struct):
    """Everything measured about one invocation; times in seconds, timestamps in CLOCK_MONOTONIC ns."""

    side: str
    index: int
    pair: int
    warmup: bool
    status: str
    exit_code: int
    signal: int
    start_ns: int
    end_ns: int
    wall_s: float
    cpu_s: float
    user_s: float
    sys_s: float
    cgroup_cpu_s: float | None
    maxrss_kb: int
    nvcsw: int
    nivcsw: int
    minflt: int
    majflt: int
    cpu_requested: int
    cpu_seen: int
    orphans_reaped: int
    steal_s: float | None = None
    error: str = ""
    stderr_tail: str = ""
    #: JSON list of the busiest other processes on the machine during the run ({"pid","comm","cpu_ms"},
    #: measure.activity.top_activity): what a report names when a run was slow. None if not recorded.
    activity: str | None = None
    #: Seconds the side's whole process tree was runnable but waiting for a CPU (its cgroup's cpu.pressure,
    #: pressure stall information): what tells waiting from sleeping (analyze/interference.py). None where
    #: the side ran without a cgroup or the kernel has no PSI.
    cgroup_wait_s: float | None = None

    def __post_init__(self) -> None:
        # A killed command has no exit code of its own (the launcher answers -1, as stores written before
        # this hold): 128 + N, which hyperfine's users read in exit_codes and name in --ignore-failure=137.
        if self.signal > 0 and self.exit_code < 0:
            self.exit_code = SIGNAL_EXIT_BASE + self.signal

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_dict(self) -> dict[str, object]:
        return msgspec.structs.asdict(self)

    def ending(self) -> str:
        """How an invocation that did not succeed ended, in the words every place that tells it uses (the
        error line a comparison ends with, the reports of a comparison that produced no statistics):
        "failed with exit code 3", "was killed by signal 9", "did not finish within --timeout", "could not
        run: ...". Empty for one that succeeded."""
        if self.status == "ok":
            return ""
        if self.status == "failed":
            return f"failed with exit code {self.exit_code}"
        if self.status == "timeout":
            return "did not finish within --timeout"
        if self.status == "signaled":
            return f"was killed by signal {self.signal}"
        return f"could not run: {self.error or self.status}"


def usable(invocations: list[Invocation]) -> list[Invocation]:
    """Measured (not warmup) invocations that completed; failures kept with --ignore-failure count too,
    since the user asked to time them anyway (a killed one it timed is stored "failed", execute/runner.py).
    (Here, not in analyze/: counting them while measuring must not import numpy.)"""
    return [i for i in invocations if not i.warmup and i.status in ("ok", "failed") and i.wall_s > 0]
