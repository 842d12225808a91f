"""`-i`/`--ignore-failure` times a command killed by a signal, as hyperfine does (its exit code 128 + N in
exit_codes, and in --ignore-failure=137): `hyperfine -N -i --runs 3 "sh -c 'kill -9 \\$\\$'"` runs all three;
duet stopped at the first ("B was killed by signal 9") in every method. A timeout is still a failure."""
from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from queued_runs import fixed_pairs, record_batches

from duetbench.execute.runner import Runner, RunSettings
from duetbench.model.invocation import Invocation

two_cpus = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs to run a duet")
KILLED = "sh -c 'kill -9 $$'"



def _killed_at(iteration: int, log: Path) -> list[str]:
    return ["sh", "-c", f"echo $DUET_ITERATION >> {log}; [ $DUET_ITERATION -ne {iteration} ] || kill -9 $$"]


@pytest.mark.parametrize("method", [pytest.param("duet", marks=two_cpus), "sequential"])
@pytest.mark.parametrize("codes", [frozenset(), frozenset({137}), frozenset({1})])
def test_a_queued_batch_goes_on_past_a_killed_invocation(native_dir: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch, method: str,
                                                         codes: frozenset[int]) -> None:
    """A's sixth invocation is killed: with -i (or --ignore-failure=137) it is timed as exit code 137 and the
    launchers do not halt the batch (every pair in one), else (--ignore-failure=1) the comparison ends there
    and nothing after it is stored."""
    batches = record_batches(monkeypatch)
    log = tmp_path / "A"
    settings = RunSettings(method=method, argv={"A": _killed_at(5, log), "B": ["true"]}, cpus=(0, 1), seed=7,
                           warmup=1, ignore_failure=True, ignore_exit_codes=codes)
    stored: list[Invocation] = []
    go_on, certain = fixed_pairs(12)
    outcome = Runner(settings, go_on, stored.append, certain=certain).run()
    assert batches and batches[0] == (1, 12)  # all queued at once after the warm-up
    killed = [i for i in stored if i.side == "A" and i.index == 5]
    assert [(i.exit_code, i.signal) for i in killed] == [(137, 9)]
    if codes == {1}:
        assert outcome.status == "failed" and outcome.failure is killed[0] and killed[0].status == "signaled"
        assert max(i.index for i in stored) == 5  # (the batch ran on: only the orchestrator knows the codes)
        return
    assert outcome.status == "complete" and len(stored) == 2 * 13 and batches == [(1, 12)]
    assert killed[0].status == "failed" and killed[0].wall_s > 0  # counted as hyperfine counts it
    assert log.read_text().split() == [str(k) for k in range(13)]


@pytest.mark.parametrize("method", [pytest.param("duet", marks=two_cpus), "sequential",
                                    pytest.param("aduet", marks=two_cpus)])
def test_released_invocations_time_a_killed_command_with_ignore_failure(native_dir: Path, tmp_path: Path,
                                                                        method: str) -> None:
    """Released one by one (no stop rule that queues): each killed run is timed, none stops the run."""
    stored: list[Invocation] = []
    settings = RunSettings(method=method, argv={"A": ["true"], "B": ["sh", "-c", "kill -9 $$"]}, cpus=(0, 1),
                           seed=3, warmup=1, ignore_failure=True)
    outcome = Runner(settings, lambda measured, elapsed: len(measured) < 8, stored.append).run()
    assert outcome.status == "complete", outcome.failure
    measured_b = [i for i in stored if i.side == "B" and not i.warmup]
    assert len(measured_b) >= 4 and {(i.status, i.exit_code, i.signal) for i in measured_b} == {("failed", 137, 9)}


def test_a_timeout_still_ends_the_run_with_ignore_failure(native_dir: Path) -> None:
    """-i times non-zero exits (and signals), as hyperfine's does; a command that overran --timeout is not one."""
    settings = RunSettings(method="sequential", argv={"A": ["sleep", "5"]}, cpus=(0, 1), seed=3,
                           timeout_s=0.2, ignore_failure=True)
    outcome = Runner(settings, lambda measured, elapsed: len(measured) < 3, lambda inv: None).run()
    assert outcome.status == "failed" and outcome.failure is not None and outcome.failure.status == "timeout"


def test_a_signaled_invocation_holds_exit_code_128_plus_its_signal() -> None:
    """The launcher answers -1 (no exit code of its own), as stores written before hold it: read as 137."""
    def inv(**kw: object) -> Invocation:
        fields: dict[str, object] = dict(side="A", index=0, pair=0, warmup=False, status="signaled", exit_code=-1,
                                         signal=9, start_ns=1, end_ns=2, wall_s=1e-9, cpu_s=0.0, user_s=0.0,
                                         sys_s=0.0, cgroup_cpu_s=None, maxrss_kb=0, nvcsw=0, nivcsw=0, minflt=0,
                                         majflt=0, cpu_requested=0, cpu_seen=0, orphans_reaped=0)
        return Invocation(**{**fields, **kw})  # type: ignore[arg-type]

    assert inv().exit_code == 137 and inv(signal=15).exit_code == 143
    assert inv(status="timeout", signal=0).exit_code == -1
    assert inv(status="failed", exit_code=3, signal=0).exit_code == 3


def _compare(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "duetbench", "compare", *args, "--db", str(cwd / "r.db")],
                          cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("method", [None, "sequential", pytest.param("duet", marks=two_cpus)])
def test_duet_compare_i_times_a_killed_command_as_hyperfine_does(duet_env: dict[str, str], tmp_path: Path,
                                                                 method: str | None) -> None:
    """`duet compare -i 'true' "sh -c 'kill -9 \\$\\$'"` (the default method, and each named): every run is
    timed, and every export says exit code 137 as hyperfine's does."""
    chosen = ["--method", method] if method else []
    done = _compare(duet_env, tmp_path, "-i", "true", KILLED, "--runs", "3", *chosen,
                    "--export-hyperfine", "h.json", "--export-json", "d.json", "--export-csv", "c.csv")
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / "h.json").read_text())["results"]
    assert [r["exit_codes"] for r in results] == [[0, 0, 0], [137, 137, 137]]
    killed = [i for i in json.loads((tmp_path / "d.json").read_text())["invocations"]
              if i["side"] == "B" and not i["warmup"]]
    assert [(i["exit_code"], i["signal"]) for i in killed] == [(137, 9)] * 3
    rows = [r for r in csv.DictReader(io.StringIO((tmp_path / "c.csv").read_text())) if r["side"] == "B"]
    measured = {(r["status"], r["exit_code"], r["signal"]) for r in rows if r["warmup"] == "False"}
    assert measured == {("failed", "137", "9")}


def test_one_command_alone_and_the_exit_codes_named(duet_env: dict[str, str], tmp_path: Path) -> None:
    """`duet compare -i CMD` times a killed CMD; --ignore-failure=137 names the signal's code, =1 does not."""
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return _compare(duet_env, tmp_path, *args)

    alone = run("-i", KILLED, "--runs", "3", "--export-hyperfine", "h.json")
    assert alone.returncode == 0, alone.stderr
    assert [r["exit_codes"] for r in json.loads((tmp_path / "h.json").read_text())["results"]] == [[137] * 3]
    # the warning says how they failed, and reads as a sentence for one command ("of The command" before)
    assert "The command: 3 invocation(s) were killed by a signal and were timed anyway" in " ".join(alone.stdout.split())
    named = run("--ignore-failure=137", "true", KILLED, "--runs", "3", "--method", "sequential")
    assert named.returncode == 0, named.stderr
    other = run("--ignore-failure=1", "true", KILLED, "--runs", "3", "--method", "sequential")
    assert other.returncode != 0 and "B was killed by signal 9" in other.stderr
    assert "--ignore-failure=137" in other.stderr and "Traceback" not in other.stderr
    plain = run("true", KILLED, "--runs", "3", "--method", "sequential")
    assert plain.returncode != 0 and "B was killed by signal 9 (invocation 0)" in plain.stderr


@two_cpus
@pytest.mark.parametrize("queued", [False, True])
def test_a_pair_that_ends_is_blamed_on_its_timeout_not_on_the_partners_timed_exit(native_dir: Path, queued: bool
                                                                                  ) -> None:
    """`duet compare -i --timeout 0.3 "sh -c 'kill -9 \\$\\$'" 'sleep 1' --method duet` said "command A failed
    with exit code 137": the exit it was told to time, not B's timeout that ended the comparison."""
    slow = "[ $DUET_ITERATION -ne 5 ] || sleep 5"
    settings = RunSettings(method="duet", argv={"A": ["sh", "-c", "kill -9 $$"], "B": ["sh", "-c", slow]},
                           cpus=(0, 1), seed=3, warmup=1, timeout_s=0.5, ignore_failure=True)
    go_on, certain = fixed_pairs(8)
    outcome = Runner(settings, go_on, lambda inv: None, certain=certain if queued else None).run()
    assert outcome.status == "failed" and outcome.failure is not None
    assert (outcome.failure.side, outcome.failure.index, outcome.failure.status) == ("B", 5, "timeout")
