"""--cpus-per-command: a multi-threaded command given several CPUs (or all), with real pinning.

Each command is pinned to one CPU by default, so a change in a command's parallel speed does not show
(a 4-thread program against its 1-thread build read "no difference"; hyperfine, unpinned, 1.8× faster).
Given all CPUs it runs its threads in parallel, as unpinned; a duet then needs twice as many CPUs.
"""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from duetbench.host.doctor.sysroot import parse_cpu_list
from duetbench.host.procstat import steal_delta
from duetbench.model.invocation import Invocation
from duetbench.plan.schedule import choose_cpus, place, side_cpus
from duetbench.report.warnings import parallel_warning, teaching_warnings


def _allowed(listed: str) -> set[int]:
    """A kernel CPU list ("0-1,3", as /proc/self/status's Cpus_allowed_list) as a set."""
    return set(parse_cpu_list(listed))


USABLE = sorted(os.sched_getaffinity(0))
two_cpus = pytest.mark.skipif(len(USABLE) < 2, reason="needs two CPUs to give a command more than one")


def test_a_duet_gives_each_side_its_own_run_of_the_highest_cpus() -> None:
    eight = list(range(8))
    assert side_cpus(eight, 1) == ((6,), (7,))
    assert side_cpus(eight, 2) == ((4, 5), (6, 7))
    assert side_cpus(eight, 4) == ((0, 1, 2, 3), (4, 5, 6, 7))
    assert side_cpus(eight, 5) is None and side_cpus([3], 1) is None
    assert side_cpus([1, 4, 6, 9], 2) == ((1, 4), (6, 9))  # whatever numbers the process may use
    # one CPU per command is what every other caller has always been given
    for usable in ([0, 1], [0, 1, 2], eight, [5, 9, 12]):
        assert choose_cpus(usable) == tuple(s[0] for s in side_cpus(usable, 1) or ())


def test_placement_keys_each_side_by_its_lowest_cpu_and_falls_to_sequential_without_twice_the_cpus() -> None:
    duet = place(list(range(8)), 2)
    assert duet.duet_possible and duet.cpus == (4, 6) and duet.cpu_sets == {4: (4, 5), 6: (6, 7)}
    single = place(list(range(8)), 1)
    assert single.duet_possible and single.cpus == (6, 7) and single.cpu_sets == {}
    # more than half: A and B take turns on the highest ones
    turns = place(list(range(8)), 5)
    assert not turns.duet_possible and turns.cpus == (3, 3) and turns.cpu_sets == {3: (3, 4, 5, 6, 7)}
    every = place([0, 1], 2)
    assert not every.duet_possible and every.cpus == (0, 0) and every.cpu_sets == {0: (0, 1)}
    assert place([0], 1) == place([0], 1) and not place([0], 1).duet_possible and place([0], 1).cpu_sets == {}
    for bad in (0, 3):
        with pytest.raises(ValueError):
            place([0, 1], bad)


def test_steal_of_a_command_on_several_cpus_is_summed_over_them() -> None:
    before, after = {0: 1.0, 1: 2.0, 2: 5.0}, {0: 1.5, 1: 2.25, 2: 9.0}
    assert steal_delta(before, after, (0, 1)) == pytest.approx(0.75)
    assert steal_delta(before, after, 2) == pytest.approx(4.0)
    assert steal_delta(before, after, (1, 3)) is None  # a CPU not read: unknown, not a partial sum


def _runs(side: str, wall: float, cpu: float, wait: float | None, n: int = 7) -> list[Invocation]:
    return [Invocation(side=side, index=k, pair=k, warmup=False, status="ok", exit_code=0, signal=0,
                       start_ns=k * 10**9, end_ns=k * 10**9 + int(wall * 1e9), wall_s=wall, cpu_s=cpu, user_s=cpu,
                       sys_s=0.0, cgroup_cpu_s=None, maxrss_kb=1000, nvcsw=0, nivcsw=0, minflt=0, majflt=0,
                       cpu_requested=0, cpu_seen=0, orphans_reaped=0, cgroup_wait_s=wait) for k in range(n)]


NAMES = {"A": "serial", "B": "threads"}


def test_the_parallel_warning_counts_the_cpus_each_command_was_given_and_names_the_flag() -> None:
    # 1.9 CPUs busy of wall time, waiting 60 %: one CPU given of 4: warned, with the way out
    runs = _runs("A", 0.040, 0.040, 0.0) + _runs("B", 0.020, 0.038, 0.012)
    one = parallel_warning(runs, NAMES, per_command=1, usable_cpus=4)
    assert one is not None and "--cpus-per-command all gives each command all 4 CPUs" in one, one
    # given 2 of 4: 1.9 of 2 CPUs busy is still "more threads than CPUs" (>= 80 % of 2)
    two = parallel_warning(runs, NAMES, per_command=2, usable_cpus=4)
    assert two is not None and two.startswith("threads kept its CPUs busy and still had tasks waiting for them 60%")
    assert "the 2 CPUs each command was given" in two and "--cpus-per-command all" in two
    # given 2 of 4 but only 1.2 CPUs busy: waiting for something else, not its own threads
    assert parallel_warning(_runs("B", 0.020, 0.024, 0.012), NAMES, per_command=2, usable_cpus=4) is None
    # given every CPU this process may use: nothing left to give, and hyperfine would measure the same
    assert parallel_warning(runs, NAMES, per_command=2, usable_cpus=2) is None
    assert parallel_warning(runs, NAMES, per_command=1, usable_cpus=1) is None


def test_an_explicit_duet_without_twice_the_cpus_says_what_a_duet_needs() -> None:
    text = teaching_warnings("sequential", {}, [], names=NAMES, usable_cpus=2, fell_back=True, per_command=2)
    assert text and text[0].startswith("Each command was given 2 CPUs (--cpus-per-command) and 2 are available")
    assert "A duet needs 4 CPUs." in text[0]
    assert teaching_warnings("sequential", {}, [], names=NAMES, usable_cpus=1, fell_back=True)[0].startswith(
        "Only 1 CPU is available")


@two_cpus
def test_the_launcher_pins_a_command_to_a_list_of_cpus(launcher: Path, tmp_path: Path) -> None:
    out, result = tmp_path / "allowed", tmp_path / "r.json"
    listed = ",".join(map(str, USABLE[-2:]))
    done = subprocess.run([str(launcher), "--result", str(result), "--cpu", listed, "--", "sh", "-c",
                           f"grep Cpus_allowed_list /proc/self/status > {out}"], capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    answer = json.loads(result.read_text())
    assert answer["status"] == "ok" and answer["cpu_requested"] == USABLE[-2]
    assert answer["steal_ticks"] == -1  # a set's steal is read by the orchestrator, over every CPU of it
    assert _allowed(out.read_text().split()[-1]) == set(USABLE[-2:])
    for bad in ("1x", "", "3-1", "-1", ",", "99999"):
        refused = subprocess.run([str(launcher), "--result", str(result), "--cpu", bad, "--", "true"],
                                 capture_output=True, text=True, timeout=60)
        assert refused.returncode == 2 and "--cpu takes a CPU list" in refused.stderr, (bad, refused.stderr)


@two_cpus
def test_a_served_launcher_moves_between_a_set_and_one_cpu(native_dir: Path, tmp_path: Path) -> None:
    from duetbench.execute.invocation import LauncherServer, LaunchSpec

    server = LauncherServer(tmp_path, "t")
    seen = tmp_path / "seen"
    argv = ["sh", "-c", f"grep Cpus_allowed_list /proc/self/status >> {seen}"]
    try:
        for cpus in ((), tuple(USABLE), (), tuple(USABLE)):
            spec = LaunchSpec(argv=argv, side="A", index=0, pair=0, warmup=False, cpu=USABLE[0], cpus=cpus)
            inv = server.start(spec).wait()
            assert inv.status == "ok" and inv.cpu_requested == USABLE[0], inv
    finally:
        server.close()
    allowed = [_allowed(line.split()[-1]) for line in seen.read_text().splitlines()]
    assert allowed == [{USABLE[0]}, set(USABLE), {USABLE[0]}, set(USABLE)]



def _allowed_per_run(path: Path) -> list[set[int]]:
    return [_allowed(line.split()[-1]) for line in path.read_text().splitlines()]


@two_cpus
def test_compare_gives_each_command_every_cpu_with_all_and_one_by_default(duet, tmp_path: Path) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    commands = [f"grep Cpus_allowed_list /proc/self/status >> {a}", f"grep Cpus_allowed_list /proc/self/status >> {b}"]
    result = duet("compare", *commands, "--runs", "4", "--warmup", "0", "--cpus-per-command", "all", "--no-progress",
                  "--export-json", str(tmp_path / "all.json"))
    assert result.returncode == 0, result.stderr
    data = json.loads((tmp_path / "all.json").read_text())
    assert _allowed_per_run(a) == _allowed_per_run(b) == [set(USABLE)] * 4
    # all CPUs each: A and B take turns on them, by the user's choice, not a shortfall to warn about
    assert data["method"] == "sequential" and data["options"]["cpus_per_command"] == len(USABLE)
    assert not [w for w in data["warnings"] if "side by side" in w], data["warnings"]
    header = next(line for line in result.stdout.splitlines() if line.startswith("duet compare #"))
    assert f" · {len(USABLE)} CPUs per command · " in header, result.stdout
    a.unlink()
    b.unlink()
    result = duet("compare", *commands, "--runs", "4", "--warmup", "0", "--no-progress")
    assert result.returncode == 0, result.stderr
    seen = _allowed_per_run(a) + _allowed_per_run(b)  # with --method auto's pilot too
    assert len(seen) >= 8 and all(len(cpus) == 1 for cpus in seen)


@pytest.mark.skipif(len(USABLE) != 2, reason="the fall-back is checked where two CPUs are all there is")
def test_an_explicit_duet_with_two_cpus_each_on_a_two_cpu_machine_runs_sequential_and_says_so(
        duet, tmp_path: Path) -> None:
    result = duet("compare", "true", "true", "--runs", "3", "--warmup", "0", "--method", "duet",
                  "--cpus-per-command", "2", "--no-progress", "--export-json", str(tmp_path / "o.json"))
    assert result.returncode == 0, result.stderr
    data = json.loads((tmp_path / "o.json").read_text())
    assert data["method"] == "sequential"
    assert any(w.startswith("Each command was given 2 CPUs") for w in data["warnings"]), data["warnings"]


@pytest.mark.skipif(len(USABLE) < 4, reason="a duet of two CPUs per command needs four usable CPUs")
def test_a_duet_of_two_cpus_per_command_pins_each_side_to_its_own_pair(duet, tmp_path: Path) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    result = duet("compare", f"grep Cpus_allowed_list /proc/self/status >> {a}",
                  f"grep Cpus_allowed_list /proc/self/status >> {b}", "--runs", "4", "--warmup", "0",
                  "--method", "duet", "--cpus-per-command", "2", "--no-progress")
    assert result.returncode == 0, result.stderr
    sets = {frozenset(c) for c in _allowed_per_run(a) + _allowed_per_run(b)}
    # the sides swap their pairs of CPUs between pairs, as one-CPU sides swap CPUs
    assert sets <= {frozenset(USABLE[-4:-2]), frozenset(USABLE[-2:])} and all(len(s) == 2 for s in sets)


@pytest.mark.parametrize(("value", "says"), [
    ("0", "--cpus-per-command 0: not a number of CPUs"),
    ("two", "--cpus-per-command two: not a number of CPUs"),
    ("4096", "--cpus-per-command 4096: this process may use only"),
])
def test_a_bad_count_is_one_line(duet, value: str, says: str) -> None:
    result = duet("compare", "true", "--runs", "2", "--cpus-per-command", value)
    assert result.returncode == 2
    assert result.stderr.startswith(f"error: {says}") and len(result.stderr.strip().splitlines()) == 1, result.stderr


@two_cpus
@pytest.mark.parametrize("method", ["duet", "aduet", "sequential"])
def test_every_method_runs_with_cpu_sets(native_dir: Path, tmp_path: Path, method: str) -> None:
    # Two disjoint sets need four CPUs; on two, each side's key is given both (overlapping sets), which
    # still takes every path of the runner (pairs, queued batches, steal over a set) with real pinning.
    from duetbench.execute.runner import Runner, RunSettings

    first, second = USABLE[-2:]
    files = {side: tmp_path / f"{side}.txt" for side in "AB"}
    argv = {side: ["sh", "-c", f"grep Cpus_allowed_list /proc/self/status >> {path}"] for side, path in files.items()}
    both = (first, second)
    settings = RunSettings(method=method, argv=argv, cpus=(first, second), cpu_sets={first: both, second: both},
                           seed=3, warmup=1)
    outcome = Runner(settings, lambda m, e: min(sum(i.side == s for i in m) for s in "AB") < 6,
                     lambda inv: None).run()
    assert outcome.status == "complete"
    assert all(inv.status == "ok" for inv in outcome.measured)
    allowed = _allowed_per_run(files["A"]) + _allowed_per_run(files["B"])
    assert len(allowed) >= 14 and all(cpus == set(both) for cpus in allowed)
    if os.path.exists("/proc/stat"):
        assert all(inv.steal_s is not None and inv.steal_s >= 0 for inv in outcome.measured), method
