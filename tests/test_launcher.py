"""The native launcher and the runner, with real processes, real pinning and a real barrier."""
from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from duetbench.execute.barrier import BarrierPage
from duetbench.execute.runner import Runner, RunSettings
from duetbench.host.cgroup import SideCgroup

if TYPE_CHECKING:
    from duetbench.execute.invocation import Invocation, LauncherServer

BURN = "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done"  # ~0.2-0.5 s of CPU in dash

two_cpus = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs to run a duet")


def launch(launcher: Path, tmp_path: Path, *command: str, **opts: object) -> dict[str, object]:
    result = tmp_path / "result.json"
    argv = [str(launcher), "--result", str(result)]
    for key, value in opts.items():
        argv += ["--" + key.replace("_", "-"), str(value)]
    subprocess.run([*argv, "--", *command], capture_output=True, timeout=60)
    return json.loads(result.read_text())


def test_pins_the_command_to_the_requested_cpu(launcher: Path, tmp_path: Path) -> None:
    cpu = max(os.sched_getaffinity(0))
    out = tmp_path / "allowed"
    r = launch(launcher, tmp_path, "sh", "-c", f"grep Cpus_allowed_list /proc/self/status > {out}", cpu=cpu)
    assert r["status"] == "ok"
    assert r["cpu_seen"] == cpu
    assert out.read_text().split()[-1] == str(cpu)


def _shell_times(path: Path) -> float:
    """CPU seconds a shell reported for itself with the `times` builtin (first line: user and sys)."""
    user, system = path.read_text().split("\n")[0].split()
    return sum(float(t.split("m")[0]) * 60 + float(t.split("m")[1].rstrip("s")) for t in (user, system))


def test_counts_cpu_of_daemonized_grandchildren(launcher: Path, tmp_path: Path) -> None:
    # Double fork: the intermediate subshell exits at once, so the burner is orphaned and re-parented;
    # without a subreaper it would go to init and plain wait4 would never see its CPU time. The burner
    # reports its own CPU time: these VMs change speed by up to 2x from second to second, so comparing
    # with a separate run of the burner would be noise.
    times = tmp_path / "burner-times"
    daemonized = launch(launcher, tmp_path, "sh", "-c", f"(setsid sh -c '{BURN}; times > {times}' &); sleep 2")
    burn_cpu = _shell_times(times)
    tree_cpu = (daemonized["utime_us"] + daemonized["stime_us"]) / 1e6
    assert daemonized["orphans_reaped"] >= 1
    assert burn_cpu > 0.1
    assert tree_cpu >= 0.95 * burn_cpu, (tree_cpu, burn_cpu)


def test_leaves_no_process_behind(launcher: Path, tmp_path: Path) -> None:
    marker = f"duetbench-orphan-{os.getpid()}"
    r = launch(launcher, tmp_path, "sh", "-c", f"setsid sh -c 'exec -a {marker} sleep 30' & exit 0")
    assert r["status"] == "ok"
    time.sleep(0.2)
    left = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout.split()
    assert left == []


def test_max_rss_is_not_inflated_by_the_python_parent(launcher: Path, tmp_path: Path) -> None:
    ballast = bytearray(300 * 1024 * 1024)
    ballast[::4096] = b"x" * len(ballast[::4096])  # touch every page
    r = launch(launcher, tmp_path, "true")
    assert r["maxrss_kb"] < 50_000, r["maxrss_kb"]
    del ballast


def test_timeout_kills_the_command(launcher: Path, tmp_path: Path) -> None:
    t0 = time.monotonic()
    r = launch(launcher, tmp_path, "sleep", "10", timeout_ms=200)
    assert r["status"] == "timeout"
    assert time.monotonic() - t0 < 5


def test_reports_exec_failure_and_exit_codes(launcher: Path, tmp_path: Path) -> None:
    assert launch(launcher, tmp_path, "/nonexistent/program")["status"] == "exec_failed"
    r = launch(launcher, tmp_path, "sh", "-c", "exit 7")
    assert (r["status"], r["exit_code"]) == ("failed", 7)
    r = launch(launcher, tmp_path, "sh", "-c", "kill -9 $$")
    assert (r["status"], r["signal"]) == ("signaled", 9)


def test_barrier_times_out_when_the_other_side_never_comes(launcher: Path, tmp_path: Path) -> None:
    with BarrierPage(parties=2) as page:
        t0 = time.monotonic()
        r = launch(launcher, tmp_path, "true", barrier=page.path, barrier_timeout_ms=300)
        assert r["status"] == "barrier_timeout"
        assert time.monotonic() - t0 < 5
        assert page.aborted == 1
        # Once aborted, a late partner does not wait at all.
        r = launch(launcher, tmp_path, "true", barrier=page.path, barrier_timeout_ms=30_000)
        assert r["status"] == "barrier_aborted"


def test_sigterm_stops_the_command_and_reports(launcher: Path, tmp_path: Path) -> None:
    result = tmp_path / "r.json"
    proc = subprocess.Popen([str(launcher), "--result", str(result), "--", "sleep", "30"])
    time.sleep(0.3)
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=5)
    assert json.loads(result.read_text())["status"] == "interrupted"


def test_a_launcher_whose_orchestrator_is_already_gone_launches_nothing(launcher: Path, tmp_path: Path) -> None:
    """An orchestrator killed (-9) right after starting its launchers, before they set their parent-death
    signal, left them to a reaper: they read that reaper as their parent and ran the queued commands to
    their end (a campaign test's two harnesses, still running 2 s after the kill). Told the orchestrator's
    pid (--parent), a launcher whose parent is another process ends at once, the command never started."""
    ran = tmp_path / "ran"
    r = launch(launcher, tmp_path, "touch", str(ran), parent=os.getppid() if os.getppid() != 1 else 2)
    assert r["status"] == "interrupted" and not ran.exists(), r
    r = launch(launcher, tmp_path, "touch", str(ran), parent=os.getpid())  # its real parent: it runs
    assert r["status"] == "ok" and ran.exists(), r


@two_cpus
def test_duet_starts_both_sides_within_microseconds(native_dir: Path) -> None:
    settings = RunSettings(method="duet", argv={"A": ["true"], "B": ["true"]}, cpus=(0, 1), seed=3, warmup=2,
                           use_cgroups=False)
    outcome = Runner(settings, lambda measured, elapsed: len(measured) < 200, lambda inv: None).run()
    assert outcome.status == "complete"
    starts: dict[int, dict[str, int]] = {}
    for inv in outcome.measured:
        starts.setdefault(inv.pair, {})[inv.side] = inv.start_ns
        assert inv.cpu_seen == inv.cpu_requested  # each side ran where it was put
    skews = [abs(p["A"] - p["B"]) / 1000 for p in starts.values()]
    assert statistics.median(skews) < 100, f"median start skew {statistics.median(skews):.2f} us"
    # CPU assignment and launch order are randomized per pair, not fixed.
    assert {inv.cpu_requested for inv in outcome.measured if inv.side == "A"} == {0, 1}


@two_cpus
def test_every_method_runs_and_measures(native_dir: Path) -> None:
    # Each side's own wall time: at least its sleep, and far from the other side's. B sleeps 4x as long as A,
    # so that the start-up and wake-up delays a loaded machine adds to each sleep stay far inside the bounds
    # (A's median: 1.6 ms over its sleep quiet, 5.8 ms beside two CPU hogs and another test run, past the
    # old bound of +5 ms).
    for method in ("duet", "aduet", "sequential"):
        settings = RunSettings(method=method, argv={"A": ["sleep", "0.01"], "B": ["sleep", "0.04"]}, cpus=(0, 1),
                               seed=1, warmup=1)
        outcome = Runner(settings, lambda m, e: min(sum(i.side == s for i in m) for s in "AB") < 4,
                         lambda inv: None).run()
        assert outcome.status == "complete", method
        a = [i.wall_s for i in outcome.measured if i.side == "A"]
        b = [i.wall_s for i in outcome.measured if i.side == "B"]
        assert len(a) >= 4 and len(b) >= 4
        assert 0.009 < statistics.median(a) < 0.025 and 0.039 < statistics.median(b) < 0.055, (method, a, b)
        if method == "sequential":
            assert {i.cpu_seen for i in outcome.measured} == {1}


def test_cgroup_cpu_stat_where_available(native_dir: Path) -> None:
    group = SideCgroup.create(f"duetbench-test-{os.getpid()}")
    if group is None:
        pytest.skip("no writable cgroup v2 hierarchy with cpu.stat on this machine")
    group.remove()
    settings = RunSettings(method="sequential", argv={"A": ["sh", "-c", BURN], "B": ["true"]}, cpus=(0, 0), seed=1)
    outcome = Runner(settings, lambda m, e: len(m) < 2, lambda inv: None).run()
    burn = next(i for i in outcome.measured if i.side == "A")
    assert burn.cgroup_cpu_s is not None and burn.cgroup_cpu_s == pytest.approx(burn.cpu_s, rel=0.2)


def _dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_stale_cgroups_of_dead_orchestrators_are_swept(tmp_path: Path) -> None:
    """An orchestrator killed with SIGKILL leaves its cgroups (and podman's conmon child in them); the next
    run removes them, and never those of a live orchestrator or anything not ours."""
    from duetbench.host.cgroup import sweep_stale_cgroups

    dead, alive = _dead_pid(), os.getpid()
    for name in (f"duetbench-{dead}-c1-0-A/conmon", f"duetbench-{dead}-A", f"duetbench-{alive}-A",
                 "duetbench-notapid-A", "user.slice"):
        (tmp_path / "cpu" / name).mkdir(parents=True)
    (tmp_path / "cpu" / f"duetbench-{dead}-B").mkdir()
    (tmp_path / "cpu" / f"duetbench-{dead}-B" / "cgroup.procs").write_text("123\n")  # not empty: stays
    removed = sweep_stale_cgroups([tmp_path / "cpu"])
    assert removed == 3
    assert sorted(p.name for p in (tmp_path / "cpu").iterdir()) == sorted(
        [f"duetbench-{alive}-A", "duetbench-notapid-A", "user.slice", f"duetbench-{dead}-B"])


def test_stale_cgroup_is_swept_on_this_machine() -> None:
    from duetbench.host.cgroup import find_cgroup2_root, sweep_stale_cgroups

    root = find_cgroup2_root()
    if root is None:
        pytest.skip("no writable cgroup v2 hierarchy on this machine")
    stale = root / f"duetbench-{_dead_pid()}-test-A"
    stale.mkdir()
    try:
        assert sweep_stale_cgroups([root]) >= 1
        assert not stale.exists()
    finally:
        if stale.exists():
            stale.rmdir()


def test_a_cgroup_removed_between_invocations_is_made_again(duet, tmp_path: Path) -> None:
    """Something removes the side's cgroup between two invocations (here --prepare, as a clean-up tool
    might): the comparison goes on, and the next invocations are still measured through a cgroup."""
    from duetbench.host.cgroup import find_cgroup2_root

    root = find_cgroup2_root()
    if root is None:
        pytest.skip("no writable cgroup v2 hierarchy on this machine")
    # The prepare shell's parent is the orchestrator, whose pid names its cgroups.
    result = duet("compare", "true", "true", "--method", "sequential", "--runs", "4", "--warmup", "0",
                  "--prepare", f"rmdir {root}/duetbench-$PPID-A 2>/dev/null; true", "--export-json", "r.json",
                  "--no-progress")
    assert result.returncode == 0, result.stderr
    invocations = json.loads((tmp_path / "r.json").read_text())["invocations"]
    a = [i for i in invocations if i["side"] == "A"]
    assert len(a) == 4 and all(i["status"] == "ok" and i["cgroup_cpu_s"] is not None for i in a)


# --- the persistent launcher (duet-launch --serve) ---------------------------------------------------

def _served(server: LauncherServer, argv: list[str], **spec: object) -> Invocation:
    from duetbench.execute.invocation import LaunchSpec

    return server.start(LaunchSpec(argv=argv, side=str(spec.pop("side", "A")), index=int(spec.pop("index", 0)),  # type: ignore[call-overload]
                                   pair=0, warmup=False, **spec)).wait()  # type: ignore[arg-type]


def test_served_launcher_runs_many_invocations_in_one_process(native_dir: Path, tmp_path: Path) -> None:
    from duetbench.execute.invocation import LauncherServer

    cpu = max(os.sched_getaffinity(0))
    server = LauncherServer(tmp_path, "t")
    try:
        seen = tmp_path / "seen"
        first = _served(server, ["sh", "-c", f"echo $DUET_SIDE $DUET_ITERATION $X ${{#DUETBENCH_ENV_OFFSET}} > {seen}; "
                                             "grep Cpus_allowed_list /proc/self/status >> " + str(seen)],
                        side="B", index=7, cpu=cpu, env={"X": "y z", "DUETBENCH_ENV_OFFSET": "x" * 123})
        assert first.status == "ok" and first.cpu_seen == cpu == first.cpu_requested
        lines = seen.read_text().splitlines()
        assert lines[0] == "B 7 y z 123" and lines[1].split()[-1] == str(cpu)
        failed = _served(server, ["sh", "-c", "echo disk on fire >&2; exit 3"], cpu=cpu)
        assert (failed.status, failed.exit_code, failed.stderr_tail) == ("failed", 3, "disk on fire")
        # The next invocation's stderr tail is its own, never the previous one's.
        assert _served(server, ["true"], cpu=cpu).stderr_tail == ""
        signaled = _served(server, ["sh", "-c", "kill -9 $$"], cpu=cpu)
        assert (signaled.status, signaled.signal) == ("signaled", 9)
        assert _served(server, ["/nonexistent/program"], cpu=cpu).status == "exec_failed"
        timed_out = _served(server, ["sleep", "10"], cpu=cpu, timeout_s=0.2)
        assert timed_out.status == "timeout"
        assert _served(server, ["sleep", "0.3"], cpu=cpu).status == "ok"  # the timer was disarmed
        # All of these ran under one launcher, and it is still there.
        assert server.process.poll() is None
    finally:
        server.close()
    assert server.process.returncode == 0  # EOF on its requests ends it cleanly


@two_cpus
def test_a_command_that_moves_its_launcher_does_not_move_the_next_invocation(native_dir: Path,
                                                                            tmp_path: Path) -> None:
    """A command that re-pins its parent (`taskset -p -c 0 $PPID`) moved the launcher, and with it every later
    invocation the launcher forked, onto that CPU (in a duet, perhaps its partner's): the launcher pinned
    itself only when a request named other CPUs than the last. It pins itself for every invocation now."""
    from duetbench.execute.invocation import LauncherServer

    here, there = max(os.sched_getaffinity(0)), min(os.sched_getaffinity(0))
    server = LauncherServer(tmp_path, "t")
    try:
        mover = _served(server, [sys.executable, "-c", f"import os; os.sched_setaffinity(os.getppid(), {{{there}}})"],
                        cpu=here)
        assert mover.status == "ok" and mover.cpu_seen == here
        assert os.sched_getaffinity(server.process.pid) == {there}  # it did move its launcher
        later = [_served(server, ["sh", "-c", "true"], cpu=here, index=k) for k in range(1, 4)]
        assert [(inv.status, inv.cpu_seen) for inv in later] == [("ok", here)] * 3
    finally:
        server.close()


def test_served_command_gets_our_environment_with_the_requests_on_top(native_dir: Path, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The launcher hands the command its own environment with the request's entries set on top (made
    before fork, not by setenv in the child): an inherited name is replaced, not doubled; the others are
    kept; and the command is looked up in the PATH the request gives."""
    from duetbench.execute.invocation import LauncherServer

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    tool = bin_dir / "only-here"
    tool.write_text("#!/bin/sh\necho found\n")
    tool.chmod(0o755)
    monkeypatch.setenv("DUET_TEST_KEPT", "kept")
    monkeypatch.setenv("DUET_TEST_REPLACED", "old")
    server = LauncherServer(tmp_path, "t")  # started with the environment above
    seen = tmp_path / "seen"
    try:
        done = _served(server, ["sh", "-c", f"env > {seen}"], env={"DUET_TEST_REPLACED": "new"})
        assert done.status == "ok"
        entries = seen.read_text().splitlines()
        assert "DUET_TEST_KEPT=kept" in entries
        assert [e for e in entries if e.startswith("DUET_TEST_REPLACED=")] == ["DUET_TEST_REPLACED=new"]
        found = _served(server, ["only-here"], env={"PATH": f"{bin_dir}:/usr/bin:/bin"},
                        stdout_path=tmp_path / "out")
        assert found.status == "ok" and (tmp_path / "out").read_text() == "found\n"
    finally:
        server.close()


def test_the_answer_says_how_much_the_command_wrote_to_stderr(native_dir: Path, tmp_path: Path) -> None:
    """`stderr_bytes` in the launcher's answer: 0 for a silent command (the orchestrator then does not open
    the file), the size for one that wrote, -1 where there is no file (its output shown as it comes)."""
    from duetbench.execute.invocation import LauncherServer, LaunchSpec

    server = LauncherServer(tmp_path, "t")
    try:
        for argv, expected in ((["true"], 0), (["sh", "-c", "echo oops >&2"], 5)):
            server.start(LaunchSpec(argv=argv, side="A", index=0, pair=0, warmup=False))
            answer = server.read_result()
            server.busy = None
            assert answer["stderr_bytes"] == expected, answer
        server.start(LaunchSpec(argv=["true"], side="A", index=0, pair=0, warmup=False, show_output=True))
        answer = server.read_result()
        server.busy = None
        assert answer["stderr_bytes"] == -1, answer
        noisy = _served(server, ["sh", "-c", "echo oops >&2; exit 1"])
        assert noisy.stderr_tail == "oops" and _served(server, ["true"]).stderr_tail == ""
    finally:
        server.close()


def test_served_launcher_counts_daemonized_grandchildren_and_leaves_nothing_behind(native_dir: Path,
                                                                                    tmp_path: Path) -> None:
    from duetbench.execute.invocation import LauncherServer

    times = tmp_path / "burner-times"
    marker = f"duetbench-served-orphan-{os.getpid()}"
    server = LauncherServer(tmp_path, "t")
    try:
        daemonized = _served(server, ["sh", "-c", f"(setsid sh -c '{BURN}; times > {times}' &); sleep 2"])
        assert daemonized.orphans_reaped >= 1
        assert daemonized.user_s + daemonized.sys_s >= 0.95 * _shell_times(times)
        left = _served(server, ["sh", "-c", f"setsid sh -c 'exec -a {marker} sleep 30' & exit 0"])
        assert left.status == "ok"
        time.sleep(0.2)
        assert subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout.split() == []
    finally:
        server.close()


def test_served_max_rss_is_not_inflated_by_the_python_parent(native_dir: Path, tmp_path: Path) -> None:
    from duetbench.execute.invocation import LauncherServer

    ballast = bytearray(300 * 1024 * 1024)
    ballast[::4096] = b"x" * len(ballast[::4096])
    server = LauncherServer(tmp_path, "t")
    try:
        assert _served(server, ["true"]).maxrss_kb < 50_000
    finally:
        server.close()
    del ballast


def test_served_cancel_stops_only_the_invocation_in_progress(native_dir: Path, tmp_path: Path) -> None:
    from duetbench.execute.invocation import LauncherServer, LaunchSpec

    server = LauncherServer(tmp_path, "t")
    try:
        running = server.start(LaunchSpec(argv=["sleep", "30"], side="A", index=0, pair=0, warmup=True))
        time.sleep(0.2)
        running.cancel()
        assert running.wait().status == "interrupted"
        # A cancel that arrives after its invocation ended does not reach the next one.
        done = _served(server, ["true"])
        server.cancel()
        time.sleep(0.1)
        assert done.status == "ok" and _served(server, ["sleep", "0.2"]).status == "ok"
        # SIGTERM (what Ctrl-C's clean-up sends) stops the command, answers, and ends the launcher.
        running = server.start(LaunchSpec(argv=["sleep", "30"], side="A", index=1, pair=1, warmup=False))
        time.sleep(0.2)
        running.terminate()
        assert running.wait().status == "interrupted"
        assert server.process.wait(timeout=10) == 0
    finally:
        server.close()


def test_served_launchers_meet_at_the_barrier(native_dir: Path, tmp_path: Path) -> None:
    """Two launchers on one page: the side whose partner never comes times out and aborts the page."""
    from duetbench.execute.invocation import LauncherServer, LaunchSpec

    server = LauncherServer(tmp_path, "t")
    with BarrierPage(parties=2) as page:
        try:
            alone = _served(server, ["true"], barrier=page.path, barrier_timeout_s=0.3)
            assert alone.status == "barrier_timeout" and page.aborted == 1
            page.reset()
            other = LauncherServer(tmp_path, "u")
            try:
                a = server.start(LaunchSpec(argv=["true"], side="A", index=0, pair=0, warmup=False,
                                            barrier=page.path))
                b = other.start(LaunchSpec(argv=["true"], side="B", index=0, pair=0, warmup=False,
                                           barrier=page.path))
                ra, rb = a.wait(), b.wait()
                assert ra.status == rb.status == "ok" and page.generation == 1
            finally:
                other.close()
        finally:
            server.close()


@two_cpus
def test_duet_fill_and_show_output_through_served_launchers(native_dir: Path,
                                                            capfd: pytest.CaptureFixture[str]) -> None:
    settings = RunSettings(method="duet",
                           argv={"A": ["sh", "-c", "echo out-A"], "B": ["sh", "-c", "sleep 0.05; echo out-B"]},
                           cpus=(0, 1), seed=2, warmup=0, use_cgroups=False, fill=True, show_output=True)
    outcome = Runner(settings, lambda m, e: len(m) < 6, lambda inv: None).run()
    assert outcome.status == "complete"
    assert all(inv.status == "ok" for inv in outcome.measured)
    out = capfd.readouterr().out
    # The measured invocations' output is shown; the fillers' (A again, while B sleeps) is not.
    assert out.count("out-B") == 3 and out.count("out-A") == 3


def test_served_invocations_in_one_cgroup_are_each_measured_by_it(native_dir: Path, tmp_path: Path) -> None:
    """Children are cloned straight into the side's cgroup, one after another; each invocation's
    cgroup CPU time is its own (the counter is read once per invocation, chained)."""
    from duetbench.execute.invocation import LauncherServer

    group = SideCgroup.create(f"duetbench-{os.getpid()}-served-A")
    if group is None:
        pytest.skip("no writable cgroup v2 hierarchy with cpu.stat on this machine")
    server = LauncherServer(tmp_path, "t")
    try:
        burns = [_served(server, ["sh", "-c", "i=0; while [ $i -lt 60000 ]; do i=$((i+1)); done"], cgroup=group,
                         index=k) for k in range(4)]
        for inv in burns:
            assert inv.status == "ok", inv.error
            assert inv.cgroup_cpu_s is not None and inv.cgroup_cpu_s == pytest.approx(inv.user_s + inv.sys_s, rel=0.2)
        assert group.path.joinpath("cgroup.procs").read_text().strip() == ""  # nothing left behind in it
    finally:
        server.close()
        group.remove()


def test_served_launcher_reads_its_cgroup_and_its_cpus_steal_once_the_command_is_reaped(
        native_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The usage after an invocation and its CPU's steal come in the launcher's answer: the orchestrator
    reads neither between pairs. Our own read of cpu.stat is made to fail after the first invocation's
    "before": every later number must come from the launcher."""
    from duetbench.execute.invocation import LauncherServer, LaunchSpec, forget_cgroup_usage
    from duetbench.host.procstat import read_steal_seconds

    group = SideCgroup.create(f"duetbench-{os.getpid()}-reads-A")
    if group is None:
        pytest.skip("no writable cgroup v2 hierarchy with cpu.stat on this machine")
    forget_cgroup_usage()
    cpu = max(os.sched_getaffinity(0))
    server = LauncherServer(tmp_path, "t")
    try:
        burn = ["sh", "-c", "i=0; while [ $i -lt 60000 ]; do i=$((i+1)); done"]
        served = server.start(LaunchSpec(argv=burn, side="A", index=0, pair=0, warmup=False, cpu=cpu, cgroup=group))
        monkeypatch.setattr(SideCgroup, "usage_usec", lambda self: None)
        for index in range(3):
            before = read_steal_seconds()
            if index:
                served = server.start(LaunchSpec(argv=burn, side="A", index=index, pair=index, warmup=False,
                                                 cpu=cpu, cgroup=group))
            inv = served.wait()
            after = read_steal_seconds()
            assert inv.status == "ok", inv.error
            assert inv.cgroup_cpu_s is not None and inv.cgroup_cpu_s == pytest.approx(inv.user_s + inv.sys_s, rel=0.2)
            assert served.steal_at_end is not None and served.steal_at_end[0] == cpu
            if before and after:  # /proc/stat readable: the launcher's count lies between ours
                assert before[cpu] <= served.steal_at_end[1] <= after[cpu]
    finally:
        server.close()
        group.remove()


def test_a_held_request_can_be_let_go_unrun(native_dir: Path, tmp_path: Path) -> None:
    """The runner sends the next pair before the stop rule has spoken: a pair it then refuses is let go
    through the gate with "s" instead of "g", and nothing of it runs; the launcher serves on."""
    from duetbench.execute.invocation import LauncherServer, LaunchSpec, ReleaseGate

    gate = ReleaseGate()
    server = LauncherServer(tmp_path, "t", gate)
    marker = tmp_path / "ran"
    try:
        def spec(index: int) -> LaunchSpec:
            return LaunchSpec(argv=["sh", "-c", f"echo {index} >> {marker}"], side="A", index=index, pair=index,
                              warmup=False)

        held = server.start(spec(0), hold=True)
        with pytest.raises(RuntimeError):  # one at a time
            server.start(spec(1), hold=True)
        time.sleep(0.1)
        assert not marker.exists()  # forked, held at the gate
        gate.skip(1)
        assert held.wait().status == "skipped" and not marker.exists()
        released = server.start(spec(2), hold=True)
        gate.release(1)
        assert released.wait().status == "ok" and marker.read_text() == "2\n"
        assert server.process.poll() is None
    finally:
        server.close()
        gate.close()
    assert server.process.returncode == 0


@two_cpus
def test_a_duet_that_stops_runs_no_pair_beyond_its_stop_and_counts_each_invocations_cpu_once(
        native_dir: Path, tmp_path: Path) -> None:
    """Each pair is sent before the stop rule has judged the previous one; the one sent when it then says
    stop is let go unrun, and a cgroup's usage is never counted for two invocations."""
    runs = {side: tmp_path / side for side in "AB"}
    burn = "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done"
    settings = RunSettings(method="duet", argv={s: ["sh", "-c", f"{burn}; echo x >> {runs[s]}"] for s in "AB"},
                           cpus=(0, 1), seed=3, warmup=1)
    outcome = Runner(settings, lambda m, e: len(m) < 12, lambda inv: None).run()
    assert outcome.status == "complete" and len(outcome.measured) == 12
    for side in "AB":
        assert len(runs[side].read_text().splitlines()) == 1 + 6  # the warm-up pair and six measured
    for inv in outcome.measured:
        if inv.cgroup_cpu_s is not None:
            assert inv.cgroup_cpu_s == pytest.approx(inv.user_s + inv.sys_s, rel=0.25, abs=0.002), inv


def test_a_held_requests_child_is_forked_at_once_and_sets_up_only_when_released(native_dir: Path,
                                                                                 tmp_path: Path) -> None:
    """The launcher forks a held request's child at once (off the gap between pairs); the child opens the
    command's output only once released, so the previous invocation's files are left as they are until
    then; terminated while held, nothing runs and the launcher ends."""
    from duetbench.execute.invocation import LauncherServer, LaunchSpec, ReleaseGate

    gate = ReleaseGate()
    server = LauncherServer(tmp_path, "t", gate)
    out = tmp_path / "out"
    out.write_text("the previous invocation's output\n")
    try:
        held = server.start(LaunchSpec(argv=["echo", "new"], side="A", index=0, pair=0, warmup=False,
                                       stdout_path=out), hold=True)
        deadline = time.monotonic() + 5
        children: list[str] = []
        while not children and time.monotonic() < deadline:  # the child exists before the release
            time.sleep(0.01)
            children = Path(f"/proc/{server.process.pid}/task/{server.process.pid}/children").read_text().split()
        assert children, "no child forked for the held request"
        time.sleep(0.1)
        assert out.read_text() == "the previous invocation's output\n"
        gate.release(1)
        assert held.wait().status == "ok" and out.read_text() == "new\n"
        second = server.start(LaunchSpec(argv=["sh", "-c", f"echo ran > {tmp_path / 'ran'}"], side="A", index=1,
                                         pair=1, warmup=False), hold=True)
        time.sleep(0.1)
        second.terminate()
        assert second.wait().status == "interrupted" and not (tmp_path / "ran").exists()
        assert server.process.wait(timeout=10) == 0
    finally:
        server.close()
        gate.close()


@two_cpus
def test_the_orchestrator_reads_no_answer_while_a_side_of_the_pair_still_runs(
        native_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Work of ours beside the side still running slows it (docs/notes/duet_on_2cpus.md point 15): the
    first side's answer is read only once its partner ended too."""
    from duetbench.execute import invocation

    reads: list[tuple[int, int]] = []  # (when read, pair)
    original = invocation.ServedInvocation.wait

    def wait(self: invocation.ServedInvocation) -> Invocation:
        reads.append((time.monotonic_ns(), self.spec.pair))
        return original(self)

    monkeypatch.setattr(invocation.ServedInvocation, "wait", wait)
    settings = RunSettings(method="duet", argv={"A": ["sleep", "0.02"], "B": ["sleep", "0.12"]}, cpus=(0, 1),
                           seed=4, warmup=0)
    outcome = Runner(settings, lambda m, e: len(m) < 8, lambda inv: None).run()
    assert outcome.status == "complete"
    ends: dict[int, int] = {}
    for inv in outcome.measured:
        ends[inv.pair] = max(ends.get(inv.pair, 0), inv.end_ns)
    measured_reads = [(t, p) for t, p in reads if p in ends]
    assert len(measured_reads) == 8
    for when, pair in measured_reads:
        assert when >= ends[pair], (pair, (ends[pair] - when) / 1e6)
