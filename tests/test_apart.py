"""usecases/apart.py: a compare of a fixed count of runs of a fixed method forks its reporter when `duet`
starts; the orchestrator measures without numpy and hands over; the reporter prints, exports and exits
with the code. Real processes throughout: the fork, the hand-over, signals to either process."""
from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from duetbench.usecases import apart

two_cpus = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs to run a duet")

#: Long enough that a signal lands while pairs are measured.
SLOW = "sleep 0.05"
FIXED = ["--method", "duet", "--no-progress", "--warmup", "1"]


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(x) for x in text.split()]


def _reporter_of(pid: int) -> int | None:
    """The orchestrator's child that is a copy of it (the same command line), not a launcher."""
    own = Path(f"/proc/{pid}/cmdline").read_bytes()
    for child in _children(pid):
        try:
            if Path(f"/proc/{child}/cmdline").read_bytes() == own:
                return child
        except OSError:
            continue
    return None


def _alive(pid: int) -> bool:
    """Running (a zombie nobody reaped yet has ended)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[0] != "Z"


def _start(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "duetbench", *args], cwd=cwd, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)


def _wait_for(predicate, timeout: float = 30.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_the_arguments_decide_whether_to_fork() -> None:
    # (stdout is not a terminal under pytest) Any compare without a progress line: a fixed count, an
    # adaptive stop, --method auto's pilot (the orchestrator then imports its own statistics beside the
    # warm-up, the reporter the report's); not a help page, another command, or nothing.
    base = ["compare", "a", "b"]
    two = len(os.sched_getaffinity(0)) >= 2
    for args in ([*base, "--runs", "5", "--method", "duet"], [*base, "--runs", "5"], [*base, "--method", "duet"],
                 base, [*base, "-r", "5", "--method=auto"], [*base, "--run-criterion", "cv"]):
        assert apart._worth_forking(args) == two, args
    for args in ([*base, "-r", "5", "--method", "duet", "--help"], [*base, "-h"],
                 ["run", "c.yml", "--runs", "5", "--method", "duet"], []):
        assert not apart._worth_forking(args), args


def _imports_of_a_compare(duet_probe, tmp_path: Path) -> tuple[set[str], set[str], list[str]]:  # type: ignore[no-untyped-def]
    """A fixed compare run in-process: the modules the orchestrator had at its first launch, those its
    reporter imported before the hand-over, and those it imported after (in order)."""
    hooks = ("parent = os.getpid()\n"
             "handed_over = []\n"
             "def hook(event, args):\n"
             "    if os.getpid() == parent:\n"
             "        if event == 'subprocess.Popen' and not os.path.exists('first.txt'):\n"
             "            with open('first.txt', 'w') as out:\n"
             "                out.write('\\n'.join(sorted(sys.modules)))\n"
             "    elif event == 'pickle.find_class' and args[1] == 'Handover':\n"
             "        handed_over.append(1)\n"
             "    elif event == 'import':\n"
             "        with open('late.txt' if handed_over else 'reporter.txt', 'a') as out:\n"
             "            out.write(str(args[0]) + '\\n')\n"
             "sys.addaudithook(hook)\n")
    result = duet_probe(hooks, ["compare", "true", "true", "--runs", "3", "--method", "duet", "--no-progress"])
    assert result.returncode == 0 and "duet compare #" in result.stdout, result.stderr

    def lines(name: str) -> list[str]:
        return (tmp_path / name).read_text().split() if (tmp_path / name).exists() else []

    return set(lines("first.txt")), set(lines("reporter.txt")), lines("late.txt")


def test_the_reporter_imports_nothing_once_handed_over(duet_probe, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # What the reporter imports after the hand-over is on the comparison's critical path (issue 17): the
    # exporters, the safe-text helpers and the store's owner records were ~15 ms of it, imported late.
    _, _, late = _imports_of_a_compare(duet_probe, tmp_path)
    assert late == [], late


@two_cpus
def test_what_both_processes_need_is_imported_once_before_the_fork(duet_probe, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # Each module the orchestrator has imported by its first launch and the reporter needs too was paid
    # twice (~25 ms of CPU, issue 17); nor may what is imported before the fork reach numpy (the
    # orchestrator would then import it before measuring).
    at_first_launch, before, late = _imports_of_a_compare(duet_probe, tmp_path)
    in_reporter = before | set(late)

    def numpy_in(modules: set[str]) -> bool:
        return any(name.split(".")[0] == "numpy" for name in modules)

    assert not numpy_in(at_first_launch) and numpy_in(in_reporter)
    assert sorted(at_first_launch & in_reporter) == []
    # numpy's median, percentile and unique import numpy.ma (~7 ms) on first use: the report needs none.
    # (The audit hook sees its submodules' imports, not the package's own.)
    assert not any(name == "numpy.ma" or name.startswith("numpy.ma.") for name in in_reporter)


@two_cpus
def test_a_fixed_compare_is_measured_without_numpy_and_reported_once(duet_probe, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = duet_probe("", ["compare", "true", "true", "--runs", "3", "--method", "duet", "--no-progress",
                             "--export-json", "o.json"], at_first_run="'numpy' in sys.modules",
                        then="print('exit', e.code, 'numpy at the end:', 'numpy' in sys.modules)\n")
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    lines = result.stdout.splitlines()
    # The orchestrator ran, and ended, without numpy; the report came once, from the reporter (which ends
    # where the program does: it never returned into this probe's code).
    assert lines.count("at the first run: False") == 1, result.stdout
    assert lines[-1] == "exit 0 numpy at the end: False", result.stdout
    assert sum(line.startswith("duet compare #") for line in lines) == 1, result.stdout
    assert (tmp_path / "o.json").is_file()


@two_cpus
@pytest.mark.parametrize("how", [["--method", "duet"], []], ids=["adaptive", "auto"])
def test_an_adaptive_compare_starts_without_numpy_and_is_reported_once(duet_probe, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                        how: list[str]) -> None:
    # The adaptive stop and --method auto's pilot judge in the orchestrator: it imports their statistics
    # beside the warm-up, never before the first invocation (numpy there delayed it by ~110 ms), and the
    # reporter forked at start reports.
    result = duet_probe("", ["compare", "true", "true", "--no-progress", "--max-runs", "12", *how],
                        at_first_run="'numpy' in sys.modules",
                        then="print('exit', e.code, 'renderer:', 'duetbench.report.terminal' in sys.modules)\n")
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    lines = result.stdout.splitlines()
    assert lines.count("at the first run: False") == 1, result.stdout
    # Printed once, by the reporter: the orchestrator never imported the renderer (the reporter ends where
    # the program does: it never returns into this probe's code).
    assert sum(line.startswith("duet compare #") for line in lines) == 1, result.stdout
    assert lines[-1] == "exit 0 renderer: False", result.stdout
    with sqlite3.connect(tmp_path / ".duet" / "results.db") as conn:
        status, method = conn.execute("SELECT status, method FROM comparisons").fetchone()
    assert status == "complete" and method in ("duet", "sequential")


@two_cpus
def test_the_reporter_gives_the_exit_code_and_the_error(duet, native_dir: Path) -> None:  # type: ignore[no-untyped-def]
    work = f"{native_dir}/duet-workload integer --ops 2000"
    slower = duet("compare", work, f"{work} --scale 2", "--runs", "5", *FIXED, "--metric", "cpu",
                  "--fail-if-slower", "5")
    assert slower.returncode == 3, slower.stdout + slower.stderr
    assert slower.stdout.count("duet compare #") == 1 and "--fail-if-slower" in slower.stdout
    failed = duet("compare", "true", "false", "--runs", "5", *FIXED)
    assert failed.returncode == 1
    assert failed.stderr.count("error:") == 1 and "command B failed" in failed.stderr, failed.stderr


@two_cpus
def test_ctrl_c_while_measuring_is_kept_and_reported_once(duet_env: dict[str, str], tmp_path: Path) -> None:
    proc = _start(["compare", SLOW, SLOW, "--runs", "200", *FIXED], duet_env, tmp_path)
    _wait_for(lambda: (tmp_path / ".duet" / "results.db").exists())
    time.sleep(0.5)  # a few pairs
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C: to every process of the group
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert out.count("Interrupted:") == 1 and out.count("duet compare #") == 1, out + err
    assert "Traceback" not in err


@two_cpus
def test_sigterm_to_the_orchestrator_is_kept_and_reported(duet_env: dict[str, str], tmp_path: Path) -> None:
    proc = _start(["compare", SLOW, SLOW, "--runs", "200", *FIXED], duet_env, tmp_path)
    _wait_for(lambda: (tmp_path / ".duet" / "results.db").exists())
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)  # as a CI job's timeout: to the process it started
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and out.count("Interrupted:") == 1, out + err


@two_cpus
def test_a_closed_terminal_sighup_is_kept_and_reported(duet_env: dict[str, str], tmp_path: Path) -> None:
    proc = _start(["compare", SLOW, SLOW, "--runs", "200", *FIXED], duet_env, tmp_path)
    _wait_for(lambda: (tmp_path / ".duet" / "results.db").exists())
    time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGHUP)  # as a closed terminal: to every process of its session's group
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and out.count("Interrupted:") == 1, out + err
    assert out.count("duet compare #") == 1 and "Traceback" not in err, out + err
    with sqlite3.connect(tmp_path / ".duet" / "results.db") as conn:
        assert conn.execute("SELECT status FROM comparisons").fetchone()[0] == "interrupted"


@two_cpus
def test_sighup_ignored_as_by_nohup_stays_ignored(duet_env: dict[str, str], tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "duetbench", "compare", SLOW, SLOW, "--runs", "10", *FIXED],
                            cwd=tmp_path, env=duet_env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))
    _wait_for(lambda: (tmp_path / ".duet" / "results.db").exists())
    os.killpg(proc.pid, signal.SIGHUP)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and "Interrupted:" not in out and "duet compare #" in out, out + err


@two_cpus
def test_sigterm_while_the_reporter_reports_is_waited_through(duet_probe) -> None:  # type: ignore[no-untyped-def]
    """Once handed over, the reporter ignores SIGTERM and finishes the report; its waiter ignored only SIGINT,
    so a SIGTERM then (a CI timeout) ended the orchestrator with 143 while the orphaned reporter went on
    printing. Made certain here: the orchestrator sends itself SIGTERM as it starts waiting."""
    setup = ("import signal\nfrom duetbench.usecases import apart\n"
             "_reap = apart.Reporter._reap\n"
             "def _reap_after_sigterm(self):\n"
             "    os.kill(os.getpid(), signal.SIGTERM)\n"
             "    return _reap(self)\n"
             "apart.Reporter._reap = _reap_after_sigterm\n")
    result = duet_probe(setup, ["compare", "true", "true", "--runs", "3", *FIXED])
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("duet compare #") == 1 and "· complete" in result.stdout, result.stdout


@two_cpus
def test_killing_the_orchestrator_ends_its_reporter(duet_env: dict[str, str], tmp_path: Path) -> None:
    proc = _start(["compare", SLOW, SLOW, "--runs", "200", *FIXED], duet_env, tmp_path)
    _wait_for(lambda: _reporter_of(proc.pid) is not None)
    reporter = _reporter_of(proc.pid)
    assert reporter is not None
    _wait_for(lambda: (tmp_path / ".duet" / "results.db").exists())
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)
    _wait_for(lambda: not _alive(reporter), timeout=10)


@two_cpus
def test_a_reporter_gone_before_the_hand_over_leaves_the_report_to_the_orchestrator(
        duet_env: dict[str, str], tmp_path: Path) -> None:
    proc = _start(["compare", SLOW, SLOW, "--runs", "20", *FIXED], duet_env, tmp_path)
    _wait_for(lambda: _reporter_of(proc.pid) is not None)
    reporter = _reporter_of(proc.pid)
    assert reporter is not None
    os.kill(reporter, signal.SIGKILL)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert out.count("duet compare #") == 1 and "· complete" in out and "▶ wall:" in out, out


@two_cpus
def test_a_comparison_the_reporter_cannot_serve_ends_it_before_measuring(duet) -> None:  # type: ignore[no-untyped-def]
    # Three commands are three comparisons, reported together: the reporter forked for the arguments' look
    # is ended, and the orchestrator reports itself.
    result = duet("compare", "true", "true", "true", "--runs", "3", *FIXED)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("ran") >= 1 or "no difference" in result.stdout, result.stdout


def test_a_reporter_not_ready_in_time_is_ended_and_the_orchestrator_reports_itself(tmp_path: Path) -> None:
    # A reporter whose imports hang (here: a module that sleeps as it is imported) must not hang the
    # comparison: the parent ends it after READY_TIMEOUT_S and hand_over says "report yourself" (None).
    (tmp_path / "hangs.py").write_text("import time\ntime.sleep(60)\n")
    probe = ("import os, sys, time\n"
             "from duetbench.usecases import apart\n"
             "apart.READY_TIMEOUT_S = 0.5\n"
             "forked = apart.Reporter.fork(('hangs',))\n"
             "t0 = time.monotonic()\n"
             "forked.wait_ready()\n"
             "print('waited', round(time.monotonic() - t0, 1))\n"
             "print('handed over:', forked.hand_over(apart.Handover(1, None, None, None, {}, None)))\n"
             "try:\n    os.kill(forked.pid, 0)\n    print('reporter alive')\nexcept ProcessLookupError:\n"
             "    print('reporter gone')\n")
    env = dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    result = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True,
                            timeout=30)
    assert result.returncode == 0, result.stderr
    waited, *rest = result.stdout.splitlines()
    assert 0.4 <= float(waited.split()[1]) < 10 and rest == ["handed over: None", "reporter gone"], result.stdout
