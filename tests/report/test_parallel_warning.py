"""The warning for a command that runs several threads at once: duetbench gives each command one CPU, so
its parallel speed is not compared. Told apart from a neighbour on its CPU by its own CPU time."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from duetbench.model.invocation import Invocation
from duetbench.report.warnings import BUSY_SHARE, SELF_WAIT_SHARE, _cpu_shares, parallel_warning

NAMES = {"A": "serial", "B": "threads"}


def _runs(side: str, wall: float, cpu: float, wait: float | None, n: int = 7) -> list[Invocation]:
    return [Invocation(side=side, index=k, pair=k, warmup=False, status="ok", exit_code=0, signal=0,
                       start_ns=k * 10**9, end_ns=k * 10**9 + int(wall * 1e9), wall_s=wall, cpu_s=cpu, user_s=cpu,
                       sys_s=0.0, cgroup_cpu_s=None, maxrss_kb=1000, nvcsw=0, nivcsw=0, minflt=0, majflt=0,
                       cpu_requested=0, cpu_seen=0, orphans_reaped=0, cgroup_wait_s=wait) for k in range(n)]


def test_own_threads_queueing_for_the_cpu_is_named() -> None:
    text = parallel_warning(_runs("A", 0.040, 0.0398, 0.0001) + _runs("B", 0.040, 0.0399, 0.0392), NAMES)
    assert text is not None and text.startswith("threads kept its CPU busy and still had tasks waiting for it 98%")
    assert "serial" not in text and "one CPU" in text, text
    both = parallel_warning(_runs("A", 0.040, 0.0398, 0.02) + _runs("B", 0.040, 0.0399, 0.0392), NAMES)
    assert both is not None and both.startswith("serial and threads kept their CPUs busy and still had tasks "
                                                "waiting for them 50% and 98% of their wall time"), both


def test_a_neighbour_on_the_cpu_or_no_pressure_record_is_not_parallelism() -> None:
    # a CPU hog beside it: the command waited, but the CPU went to the hog, not to its own work
    assert parallel_warning(_runs("A", 0.040, 0.020, 0.020) + _runs("B", 0.040, 0.021, 0.019), NAMES) is None
    assert parallel_warning(_runs("A", 0.040, 0.040, None), NAMES) is None  # no cgroup: no evidence
    assert parallel_warning(_runs("A", 0.002, 0.002, 0.0019), NAMES) is None  # the start-up warning's range
    assert parallel_warning(_runs("A", 0.040, 0.040, 0.008), NAMES) is None  # 20 %: below the threshold


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs to run a duet")
def test_a_four_thread_program_is_warned_about_end_to_end(duet, tmp_path: Path) -> None:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler for the threaded program")
    source = tmp_path / "mt.c"
    source.write_text(
        "#include <pthread.h>\n#include <stdlib.h>\nstatic volatile unsigned long sink; static long n;\n"
        "static void *work(void *a) { unsigned long x = 1; for (long i = 0; i < n; i++) "
        "x = x * 6364136223846793005UL + 1; sink += x; return a; }\n"
        "int main(int c, char **v) { int t = atoi(v[1]); n = atol(v[2]) / t; pthread_t th[8];\n"
        "for (int i = 0; i < t; i++) pthread_create(&th[i], 0, work, 0);\n"
        "for (int i = 0; i < t; i++) pthread_join(th[i], 0); return 0; }\n")
    subprocess.run([cc, "-O2", "-pthread", "-o", str(tmp_path / "mt"), str(source)], check=True)
    prog = tmp_path / "mt"
    # Another process on B's CPU takes CPU time from it (busy drops below BUSY_SHARE: no sign then, by
    # design), so a loaded machine gets three tries. Whenever B's recorded shares qualify, the warning must
    # name B; the 1-thread A is never named, on any try.
    shares: list[tuple[float, float | None] | None] = []
    for attempt in range(3):
        out = tmp_path / f"o{attempt}.json"
        result = duet("compare", f"{prog} 1 30000000", f"{prog} 4 30000000", "--runs", "5", "--method", "duet",
                      "--no-progress", "--export-json", str(out))
        assert result.returncode == 0, result.stderr
        data = json.loads(out.read_text())
        if any(i.get("cgroup_wait_s") is None for i in data["invocations"]):
            pytest.skip("the sides ran without a cgroup recording CPU pressure here (needs cgroup v2 and root)")
        warnings = [w for w in data["warnings"] if "more threads or processes at once" in w]
        assert not [w for w in warnings if w.startswith("A ")], warnings  # "A kept" or "A and B kept"
        measured = [Invocation(**i) for i in data["invocations"] if not i["warmup"]]
        shares.append(_cpu_shares(measured, "B"))
        qualifies = shares[-1] is not None and shares[-1][0] >= BUSY_SHARE and (shares[-1][1] or 0) >= SELF_WAIT_SHARE
        if qualifies or warnings:
            assert qualifies and len(warnings) == 1 and warnings[0].startswith("B kept its CPU busy"), (shares,
                                                                                                          warnings)
            return
        if shares[-1] is not None and shares[-1][0] >= BUSY_SHARE:  # B had its CPU and still did not wait
            pytest.fail(f"4 threads on one CPU did not wait for it (B's busy and wait shares: {shares[-1]})")
    pytest.skip(f"another process took B's CPU in all three tries (B's busy and wait shares: {shares})")
