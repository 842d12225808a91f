"""``duet compare`` against commands and surroundings that misbehave: shell syntax that splitting would
change, output that is not text, temporary directories whose names are not UTF-8, --output at a
directory. Real processes, real store."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_output import one_line_error
from stopped_children import kill_stopped_children

from duetbench.config.compare import command_argv, detect_shell_syntax

ONE = ["--no-progress", "--warmup", "0"]




# -- what sh reads otherwise than shlex --------------------------------------------------------------

@pytest.mark.parametrize("command, found", [
    ("echo a\nfalse", "newline"),  # sh: two commands; split: `echo a false`
    ("echo a\\\nb", "line continuation"),  # sh: `echo ab`; split: a word with a newline in it
    ('awk "{print \\$2}" f.txt', "escaped $"),  # sh gives awk `{print $2}`; split: `{print \$2}`
    ('echo "a\\`b"', "escaped `"),
    ('echo "a\\\nb"', "line continuation"),
    ("echo 'a\nb'", None), ('echo "a\nb"', None),  # quoted newlines: one word either way
    ('echo "a\\"b"', None), ('echo "a\\\\b"', None), ('echo "a\\xb"', None), (r"echo a\$b", None),
])
def test_what_sh_and_shlex_read_differently_is_shell_syntax(command: str, found: str | None) -> None:
    feature = detect_shell_syntax(command)
    assert (feature is None) if found is None else (feature is not None and found in feature), feature
    if found is not None:
        assert command_argv(command, shell=None, side="A")[0] == ["/bin/sh", "-c", command]


def test_an_awk_program_in_double_quotes_runs_as_sh_would_run_it(duet, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a b\n")
    result = duet("compare", 'awk "{print \\$2}" f.txt', "--show-output", "--runs", "2", *ONE)
    assert result.returncode == 0, result.stderr
    assert "A | b" in result.stdout.splitlines()


# -- surroundings --------------------------------------------------------------------------------------

@pytest.mark.parametrize("method", ["duet", "sequential"])
def test_a_temporary_directory_whose_name_is_not_utf8(duet_env: dict[str, str], tmp_path: Path,
                                                      method: str) -> None:
    """Linux paths are bytes: TMPDIR may hold any (the scratch directory and the launchers' files in it
    are made there), and reaches the launcher as it is."""
    tmp = tmp_path / "t\udcfd"  # the byte 0xfd, as Python gives an undecodable file name
    tmp.mkdir()
    result = subprocess.run([sys.executable, "-m", "duetbench", "compare", "sh -c 'echo oops >&2'", "true",
                             "--method", method, "--runs", "2", *ONE], cwd=tmp_path,
                            env={**duet_env, "TMPDIR": str(tmp)}, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert list(tmp.iterdir()) == []  # nothing left behind in it


@pytest.mark.parametrize("method", ["duet", "sequential"])
def test_output_to_a_directory_or_to_nothing_is_bad_input(duet, tmp_path: Path, method: str) -> None:
    """Found before anything runs, as a missing directory is: not as command A failing to start (exit 1)."""
    (tmp_path / "outdir").mkdir()
    for where, said in (("outdir", "is a directory"), ("", "is empty")):
        outputs = ["--output", where] * (2 if method == "duet" else 1)
        result = duet("compare", "echo hi", "true", *outputs, "--method", method, "--runs", "2", *ONE)
        assert result.returncode == 2 and said in one_line_error(result), result.stderr
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr


# -- --show-output -----------------------------------------------------------------------------------

class _Sink:
    """A standard stream that keeps only how much was written, and the first of it."""

    def __init__(self) -> None:
        self.size, self.head = 0, ""

    def write(self, text: str) -> int:
        if len(self.head) < 200:
            self.head += text[:200]
        self.size += len(text)
        return len(text)

    def flush(self) -> None:
        pass


def test_show_output_of_a_chatty_command_is_not_held_in_memory_at_once(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """--show-output echoes an invocation's output once it ended: 5 MB of short lines were read, decoded,
    split into a list of lines and prefixed all at once (~14x the output: 100 MB took ~1.4 GB)."""
    import tracemalloc

    from duetbench.execute.invocation import echo_output

    out = tmp_path / "A.stdout"
    out.write_bytes(b"1234567\n" * 650_000)  # 5.2 MB
    sink = _Sink()
    monkeypatch.setattr(sys, "stdout", sink)
    tracemalloc.start()
    try:
        echo_output("A", out, None)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert sink.size == 650_000 * len("A | 1234567\n") and sink.head.startswith("A | 1234567\nA | 1234567\n")
    assert peak < 5_000_000, peak
    assert out.read_bytes() == b""  # emptied for the next invocation


def test_show_output_lines_as_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from duetbench.execute.invocation import echo_output

    out, err = tmp_path / "B.stdout", tmp_path / "B.stderr"
    out.write_bytes(b"one\r\ntwo\rthree\n\nbad \xff\xfe byte\nno end")
    err.write_bytes(b"oops\n")
    sink, sink_err = _Sink(), _Sink()
    monkeypatch.setattr(sys, "stdout", sink)
    monkeypatch.setattr(sys, "stderr", sink_err)
    echo_output("beta", out, err)
    assert sink.head == ("beta | one\nbeta | two\nbeta | three\nbeta | \nbeta | bad \ufffd\ufffd byte\n"
                         "beta | no end\n")
    assert sink_err.head == "beta | oops\n" and err.read_bytes() == b"oops\n"  # kept for the failure's tail


# -- a command that stops its launcher ---------------------------------------------------------------

def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:  # it ended meanwhile
        return "gone"


def _stopped(pid: int) -> bool:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if _state(pid) == "T":
            return True
        time.sleep(0.02)
    return False


def test_a_launcher_its_command_stopped_still_ends_when_told(native_dir: Path, tmp_path: Path) -> None:
    """`kill -STOP $PPID` stops the launcher: a stopped process acts on no signal but SIGKILL until it is
    continued, so the SIGTERM of Ctrl-C's clean-up waited for ever (and `duet` with it)."""
    from duetbench.execute.invocation import LauncherServer, LaunchSpec

    server = LauncherServer(tmp_path, "t")
    try:
        server.start(LaunchSpec(argv=["sh", "-c", "kill -STOP $PPID; sleep 30"], side="A", index=0, pair=0,
                                warmup=False))
        assert _stopped(server.process.pid)
        server.terminate()
        assert server.process.wait(timeout=5) is not None
    finally:
        if server.process.poll() is None:
            server.process.kill()
        server.close()


@pytest.mark.parametrize("method", ["duet", "sequential"])
def test_sigterm_ends_a_comparison_whose_command_stopped_its_launcher(duet_env: dict[str, str], tmp_path: Path,
                                                                      method: str) -> None:
    marker = str(tmp_path / f"duetbench-stopper-{os.getpid()}-{method}")  # `sleep` by a name of its own
    os.symlink(shutil.which("sleep") or "/bin/sleep", marker)
    process = subprocess.Popen([sys.executable, "-m", "duetbench", "compare",
                                f"sh -c 'kill -STOP $PPID; exec {marker} 30'", "true", "--method", method,
                                "--runs", "3", *ONE], cwd=tmp_path, env=duet_env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    launchers: list[int] = []
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not launchers:
            children = Path(f"/proc/{process.pid}/task/{process.pid}/children").read_text().split()
            launchers = [int(c) for c in children if _state(int(c)) == "T"]
            time.sleep(0.05)
        assert launchers, "no launcher was stopped"
        process.terminate()
        _, err = process.communicate(timeout=20)
        assert process.returncode == 130 and "Traceback" not in err, err
        time.sleep(0.2)
        assert _running(marker) == []
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        for pid in launchers:  # a stopped launcher held on to our pipes: left, the test would not end
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def _stopped_launchers(parent: int) -> list[int]:
    """The launchers of the `duet` process `parent` (by their --parent) that are stopped, wherever they are."""
    found = subprocess.run(["pgrep", "-f", f"duet-launch .*--parent {parent}( |$)"], capture_output=True,
                           text=True).stdout.split()
    return [int(pid) for pid in found if _state(int(pid)) == "T"]


def _stored(tmp_path: Path) -> list[tuple[str, int, str]]:
    """(side, index, status) of every invocation in the results database of `tmp_path`, in storing order."""
    import sqlite3

    with sqlite3.connect(tmp_path / ".duet" / "results.db") as db:
        return list(db.execute('SELECT side, "index", status FROM invocations ORDER BY comparison_id, seq'))


@pytest.mark.parametrize("method", ["duet", "sequential", "aduet"])
def test_a_command_that_stops_its_launcher_times_out_as_a_slow_one_does(duet, duet_env: dict[str, str],
                                                                       tmp_path: Path, method: str) -> None:
    """`kill -STOP $PPID` stops the launcher, which enforces --timeout: its timer then fires unseen, and duet
    waited for ever. The orchestrator gives up on it after --timeout and some slack, ends it and its command,
    and ends as at any timeout (the same one-line error and exit code), keeping what ran before. The bound
    below is generous: a duet gives up after --timeout, the barrier's 10 s and 5 s."""
    marker = str(tmp_path / f"duetbench-stopped-{os.getpid()}-{method}")  # `sleep` by a name of its own
    os.symlink(shutil.which("sleep") or "/bin/sleep", marker)
    process = subprocess.Popen([sys.executable, "-m", "duetbench", "compare",
                                f"sh -c 'kill -STOP $PPID; exec {marker} 30'", "true", "--method", method,
                                "--timeout", "1", "--runs", "3", *ONE], cwd=tmp_path, env=duet_env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _, err = process.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        for pid in _stopped_launchers(process.pid):  # left stopped, they would hold our pipes for ever
            os.kill(pid, signal.SIGKILL)
        process.kill()
        process.communicate()
        pytest.fail("duet waited for ever for a launcher its command had stopped")
    finally:
        subprocess.run(["pkill", "-KILL", "-f", f"^{marker}"], capture_output=True)
    stopped = subprocess.CompletedProcess(process.args, process.returncode, "", err)
    assert _stopped_launchers(process.pid) == [] and _running(marker) == []
    a_runs = [status for side, _, status in _stored(tmp_path) if side == "A"]
    b_runs = [status for side, _, status in _stored(tmp_path) if side == "B"]
    assert a_runs == ["timeout"] and all(status == "ok" for status in b_runs), _stored(tmp_path)
    if method != "sequential":  # (there B may come after A, and then never runs)
        assert b_runs
    slow = duet("compare", "sleep 30", "true", "--method", method, "--timeout", "1", "--runs", "3", *ONE)
    assert stopped.returncode == slow.returncode == 1
    assert one_line_error(stopped) == one_line_error(slow), err


def test_a_launcher_stopped_again_and_again_is_killed_with_its_command(native_dir: Path, tmp_path: Path) -> None:
    """A command that leaves a process of another session stopping its launcher again and again: told to end
    (SIGTERM, SIGCONT), the launcher is stopped again before it can, so the orchestrator kills it after a
    grace, and the command's processes with it; the run ends at that invocation as timed out."""
    import threading

    from duetbench.execute.runner import Runner, RunSettings

    marker = str(tmp_path / f"duetbench-restopped-{os.getpid()}")
    os.symlink(shutil.which("sleep") or "/bin/sleep", marker)
    # The loop (named after the marker) ends once the launcher is reaped: kill then fails.
    stopper = (f'L=$PPID; setsid sh -c "while kill -STOP $L 2>/dev/null; do :; done" {marker}-stopper & '
               f"exec {marker} 30")
    cpu = max(os.sched_getaffinity(0))
    settings = RunSettings(method="sequential", argv={"A": ["sh", "-c", stopper]}, cpus=(cpu, cpu), seed=3,
                           timeout_s=1.0)
    outcomes = []
    run = threading.Thread(target=lambda: outcomes.append(Runner(settings, lambda measured, _: len(measured) < 2,
                                                                 lambda inv: None).run()), daemon=True)
    try:
        run.start()
        run.join(90)
        assert not run.is_alive(), "the orchestrator waited for ever for a launcher stopped again and again"
        assert outcomes[0].status == "failed" and outcomes[0].failure is not None
        assert outcomes[0].failure.status == "timeout" and "duet ended it" in outcomes[0].failure.error
        def left() -> list[str]:
            return _running(marker) + subprocess.run(["pgrep", "-f", f"{marker}-stopper"], capture_output=True,
                                                     text=True).stdout.split()

        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and left():
            time.sleep(0.05)
        assert left() == []
    finally:
        subprocess.run(["pkill", "-KILL", "-f", f"{marker}-stopper"], capture_output=True)
        subprocess.run(["pkill", "-KILL", "-f", f"^{marker}"], capture_output=True)
        kill_stopped_children()
        run.join(30)


# -- hooks that start what outlives them ---------------------------------------------------------------

@pytest.mark.parametrize("hook", ["--prepare", "--setup"])
def test_sigterm_ends_what_a_hook_started(duet_env: dict[str, str], tmp_path: Path, hook: str) -> None:
    """A hook's shell was killed alone: what it started (here a sleep in a subshell) ran on after duet
    exited 130. The hook now runs in a group of its own, killed whole."""
    # `sleep` under a name of its own (dash's exec has no -a), so that only it is found by that name
    marker = str(tmp_path / f"duetbench-hook-{os.getpid()}-{hook.strip('-')}")
    os.symlink(shutil.which("sleep") or "/bin/sleep", marker)
    process = subprocess.Popen([sys.executable, "-m", "duetbench", "compare", "true", "sleep 0.001", "--runs", "3",
                                hook, f"sh -c '{marker} 100'; true", *ONE], cwd=tmp_path,
                               env=duet_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not _running(marker):
            time.sleep(0.05)
        assert _running(marker), "the hook's sleep never started"
        process.terminate()
        _, err = process.communicate(timeout=30)
        assert process.returncode == 130 and "Traceback" not in err, err
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and _running(marker):
            time.sleep(0.05)
        assert not _running(marker), "what the hook started outlived duet"
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        subprocess.run(["pkill", "-f", f"^{marker}"], capture_output=True)


def _running(marker: str) -> list[str]:
    """The sleep named `marker` (exec -a), not duet or the shell, whose command lines hold it too."""
    return subprocess.run(["pgrep", "-f", f"^{marker}"], capture_output=True, text=True).stdout.split()


def test_a_command_over_the_systems_argument_limit_is_not_told_to_try_sequential() -> None:
    """E2BIG (arguments and environment over ARG_MAX) fails every method alike: the hint named the
    sequential method as the way out."""
    from duetbench.model.invocation import Invocation
    from duetbench.usecases.conclude import _failure_error

    def failed(error: str) -> Invocation:
        return Invocation(side="A", index=0, pair=0, warmup=False, status="error", exit_code=0, signal=0,
                          start_ns=0, end_ns=0, wall_s=0.0, cpu_s=0.0, user_s=0.0, sys_s=0.0, cgroup_cpu_s=None,
                          maxrss_kb=0, nvcsw=0, nivcsw=0, minflt=0, majflt=0, cpu_requested=0, cpu_seen=0,
                          orphans_reaped=0, error=error)

    too_long = _failure_error(failed("cannot execute true: Argument list too long"), {"A": "A"})
    assert "ARG_MAX" in str(too_long) and "sequential" not in str(too_long)
    other = _failure_error(failed("cannot set up the barrier"), {"A": "A"})
    assert "--method sequential" in str(other)


# -- text that looks like the terminal's markup ---------------------------------------------------------

def test_commands_and_names_that_look_like_markup_are_printed_as_they_are(duet) -> None:  # type: ignore[no-untyped-def]
    """A "[/x]" in a command or a name was read by rich as a closing tag: a traceback where the report
    should be (two commands, one command, `duet show`); a "[bold]" styled the rest and vanished."""
    two = duet("compare", "echo [bold]x[/bold] [/oops]", "true", "-n", "[/a]", "-n", "b", "--runs", "2",
               "--method", "sequential", *ONE)
    assert two.returncode == 0, two.stderr
    assert "A ([/a]): echo [bold]x[/bold] [/oops]" in two.stdout and " [/a] " in two.stdout, two.stdout
    one = duet("compare", "echo [/oops]", "--runs", "2", *ONE)
    assert one.returncode == 0 and "Benchmark: echo [/oops]" in one.stdout, one.stdout + one.stderr
    listed = duet("show")
    assert listed.returncode == 0 and "[/a]: echo [bold]x[/bold] [/oops]" in listed.stdout, listed.stdout


def test_a_command_of_several_lines_keeps_them_under_its_first(duet) -> None:  # type: ignore[no-untyped-def]
    """A script of several lines (run through sh -c) printed its second line at the report's left edge,
    where it read as a line of the report's own."""
    two = duet("compare", "echo a\ntrue\n", "true", "-n", "fast", "--runs", "2", "--method", "sequential", *ONE)
    assert two.returncode == 0, two.stderr
    assert "  A (fast): echo a\n            true\n  B: true\n" in two.stdout, two.stdout
    one = duet("compare", "echo a\ntrue", "--runs", "2", *ONE)
    assert one.returncode == 0 and "  Benchmark: echo a\n             true\n" in one.stdout, one.stdout + one.stderr


@pytest.mark.parametrize("method", ["duet", "sequential", "aduet"])
def test_a_timeout_longer_than_poll_can_wait_is_waited_in_steps(duet, method: str) -> None:  # type: ignore[no-untyped-def]
    """The orchestrator's own deadline (--timeout and some slack) went to poll() whole: beyond its C int of
    milliseconds (~24.8 days) it raised OverflowError, a traceback before the first pair."""
    for timeout in ("2147469", "1e300"):
        result = duet("compare", "true", "true", "--method", method, "--timeout", timeout, "--runs", "3", *ONE)
        assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr


def test_a_filler_that_stops_its_launcher_is_ended_with_the_pair(duet, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """--fill re-runs the side that finished first, unmeasured, while its partner runs: a filler that stops
    its launcher (`kill -STOP $PPID`; a filler is told DUET_ITERATION=-1) is cancelled and continued when the
    partner ends, and the comparison goes on as if it had not."""
    stopper = "sh -c '[ \"$DUET_ITERATION\" = -1 ] && kill -STOP $PPID; exit 0'"
    result = duet("compare", stopper, "sleep 0.3", "--fill", "--runs", "3", "--method", "duet", *ONE, timeout=60)
    assert result.returncode == 0, result.stderr
    assert sorted(_stored(tmp_path)) == [(side, k, "ok") for side in "AB" for k in range(3)], _stored(tmp_path)
