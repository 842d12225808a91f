"""The runners of one comparison share a stage (execute/runner.py `RunnerStage`): `--method auto`'s pilot
runs four runners before the measured one, and each used to start and end its own launchers, cgroups,
scratch directory and noise snapshots (~17 ms per switch). Real launchers, real cgroups where the
machine has them."""
from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path

import pytest

from duetbench.execute import noise
from duetbench.execute.invocation import Invocation, LauncherServer
from duetbench.execute.runner import Runner, RunSettings
from duetbench.execute.stage import RunnerStage

CPUS = sorted(os.sched_getaffinity(0))
two_cpus = pytest.mark.skipif(len(CPUS) < 2, reason="needs two CPUs to run a duet")


def _settings(method: str, seed: int) -> RunSettings:
    return RunSettings(method=method, argv={"A": ["true"], "B": ["true"]}, cpus=(CPUS[0], CPUS[1]), seed=seed,
                       warmup=1 if method == "duet" else 0)


def _units(n: int):  # type: ignore[no-untyped-def]
    def more(measured: list[Invocation], elapsed: float) -> bool:
        return len(measured) < 2 * n
    return more


@two_cpus
def test_runners_on_one_stage_share_launchers_and_end_everything_with_it(native_dir: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[LauncherServer] = []
    init = LauncherServer.__init__

    def counted(self: LauncherServer, *args: object, **kwargs: object) -> None:
        init(self, *args, **kwargs)  # type: ignore[arg-type]
        started.append(self)

    monkeypatch.setattr(LauncherServer, "__init__", counted)
    snapshots: list[int] = []
    take = noise.snapshot
    monkeypatch.setattr(noise, "snapshot", lambda: snapshots.append(1) or take())
    stored: list[Invocation] = []
    with RunnerStage() as stage:
        outcomes = [Runner(_settings(method, k), _units(3), stored.append, stage=stage).run()
                    for k, method in enumerate(["duet", "sequential", "duet", "sequential"])]
        workdir = stage.workdir
        groups = [g for g in stage._groups.values() if g is not None]
        assert workdir is not None and workdir.is_dir()
    assert [o.status for o in outcomes] == ["complete"] * 4
    assert len([i for i in stored if not i.warmup]) == 4 * 6
    # One launcher per CPU for all four runners, each ended with the stage; its scratch and cgroups gone.
    assert len(started) == 2
    assert all(server.process.poll() is not None for server in started)
    assert not workdir.exists()
    assert all(not Path(g.path).exists() for g in groups)
    # Each runner's closing snapshot opened the next one's window: 4 closing + 1 opening, not 8.
    assert len(snapshots) == 5, snapshots


@two_cpus
def test_a_default_compare_starts_two_launchers_for_its_pilot_and_its_runs(duet_probe) -> None:  # type: ignore[no-untyped-def]
    hooks = ("from duetbench.execute.invocation import LauncherServer\n"
             "init = LauncherServer.__init__\n"
             "def counted(self, *a, **k):\n"
             "    init(self, *a, **k)\n"
             "    print('launcher started', flush=True)\n"
             "LauncherServer.__init__ = counted\n")
    result = duet_probe(hooks, ["compare", "true", "true", "--max-runs", "12", "--no-progress"],
                        then="print('exit', e.code)\n")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines.count("launcher started") == 2, result.stdout
    assert "method auto" in result.stdout and lines[-1] == "exit 0", result.stdout


def test_the_stage_makes_each_queued_stderr_file_once_and_never_empties_it() -> None:
    with RunnerStage() as stage:
        path = stage.queued_stderr(0, 3)
        assert path.is_file() and path.stat().st_size == 0 and path.parent == stage.workdir
        path.write_text("left by the last pair\n")  # the child empties it as it starts (O_TRUNC)
        assert stage.queued_stderr(0, 3) == path and path.read_text() == "left by the last pair\n"
        assert stage.queued_stderr(1, 3) != path
    assert not path.exists()


def test_a_stderr_file_the_stage_cannot_make_is_left_to_the_child(monkeypatch: pytest.MonkeyPatch) -> None:
    # A full disk: the child's own open then fails and is reported as the command's set-up failure, one
    # line (as before the stage made the files), not a traceback of the orchestrator.
    with RunnerStage() as stage:
        real_open = os.open

        def full(path: object, *args: object, **kwargs: object) -> int:
            if str(path).endswith(".stderr"):
                raise OSError(28, "No space left on device")
            return real_open(path, *args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(os, "open", full)
        path = stage.queued_stderr(0, 1)
        monkeypatch.undo()
        assert not path.exists()
        assert stage.queued_stderr(0, 1) == path and path.is_file()  # made once there is room


@two_cpus
def test_queued_pairs_keep_each_invocations_own_stderr_across_batches(duet, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # 70 pairs: a batch of at most 64, then the rest in the same files (each child empties its file).
    command = "sh -c 'echo $DUET_SIDE $DUET_ITERATION >&2'"
    result = duet("compare", command, command, "--runs", "70", "--method", "duet", "--no-progress",
                  "--db", "d.db")
    assert result.returncode == 0, result.stderr
    rows = sqlite3.connect(tmp_path / "d.db").execute(  # the fixture runs `duet` in tmp_path
        'SELECT side, "index", stderr_tail FROM invocations WHERE NOT warmup').fetchall()
    assert len(rows) == 140
    assert all(tail.strip() == f"{side} {index}" for side, index, tail in rows), rows[:5]


@two_cpus
def test_the_first_batchs_stderr_files_are_made_beside_the_warmup(native_dir: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # Made while the warm-up runs (the orchestrator only waits there), not at the first batch's start.
    calls: list[tuple[str, int, int]] = []
    make = RunnerStage.queued_stderr

    def recorded(self: RunnerStage, cpu: int, slot: int) -> Path:
        calls.append((threading.current_thread().name, cpu, slot))
        return make(self, cpu, slot)

    monkeypatch.setattr(RunnerStage, "queued_stderr", recorded)
    stored: list[Invocation] = []
    outcome = Runner(_settings("duet", 7), _units(5), stored.append,
                     certain=lambda measured, elapsed: max(1, 5 - len(measured) // 2)).run()
    assert outcome.status == "complete" and len([i for i in stored if not i.warmup]) == 10
    beside = [(cpu, slot) for thread, cpu, slot in calls if thread == "duetbench-meanwhile"]
    assert sorted(beside) == sorted((cpu, slot) for cpu in CPUS[:2] for slot in range(5))
    assert all(thread == "duetbench-meanwhile" for thread, _, _ in calls[:len(beside)])
