"""duet doctor on damaged copies of /proc and /sys, bad option values, and where its output goes."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from doctor_fixtures import FIXTURES

from duetbench.cli.main import main
from duetbench.host.doctor import SysRoot, run_checks, tune


def _copy(name: str, tmp_path: Path) -> Path:
    root = tmp_path / name
    shutil.copytree(FIXTURES / name, root)
    return root


@pytest.mark.parametrize(("damaged", "text", "check", "status"), [
    ("proc/uptime", "", "daemons", "not-observable"),
    ("proc/uptime", "up since monday\n", "daemons", "not-observable"),
    ("later/proc/uptime", "", "daemons", "not-observable"),
    ("later/proc/loadavg", "x y z\n", "load", "not-observable"),
    # The first snapshot's rows are unreadable: steal is judged from the second one's since boot.
    ("proc/stat", "cpu a b c d e f g h\ncpu0 1 2\nprocs_running many\n", "steal", "ok"),
])
def test_a_damaged_proc_file_is_reported_not_a_crash(tmp_path: Path, damaged: str, text: str, check: str,
                                                      status: str) -> None:
    root = _copy("vm-firecracker", tmp_path)
    (root / damaged).write_text(text)
    result = CliRunner().invoke(main, ["doctor", "--root", str(root), "--json"])
    assert result.exit_code == 0, result.output
    report = {c.name: c for c in run_checks(root).checks}
    assert report[check].status == status


def test_an_empty_default_irq_mask_is_not_a_crash(tmp_path: Path) -> None:
    root = _copy("intel-baremetal", tmp_path)
    (root / "proc/irq/default_smp_affinity").write_text("\n")
    checks = {c.name: c for c in run_checks(root).checks}
    assert checks["irq-affinity"].status == "warn"


def test_reset_finds_the_settings_whatever_the_root_was_called(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    root = _copy("amd-acpi-boost", tmp_path)
    state = tmp_path / "state.json"
    monkeypatch.chdir(tmp_path)
    relative = SysRoot(Path(root.name))
    assert all(o.ok for o in tune.apply(run_checks(relative.root).settings, relative, state))
    monkeypatch.chdir("/")  # the reset runs elsewhere, naming the copy by its absolute path
    restored = tune.reset(SysRoot(root), state)
    assert restored and all(o.ok for o in restored)
    assert not state.exists()


def test_the_undo_hint_names_the_root_it_applied_to(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _copy("amd-acpi-boost", tmp_path)
    monkeypatch.setenv(tune.STATE_ENV, str(tmp_path / "state.json"))
    applied = CliRunner().invoke(main, ["doctor", "--root", str(root), "--fix", "--apply"], env={"COLUMNS": "300"})
    assert applied.exit_code == 0, applied.output
    assert f"undo with: duet doctor --reset --root {root}" in applied.output


@pytest.mark.parametrize("args", [["doctor", "--interval", "nan"], ["calibrate", "--budget", "nan"]])
def test_nan_is_refused(args: list[str]) -> None:
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    assert "not a finite number" in result.output


def test_snapshot_into_an_impossible_place_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    result = CliRunner().invoke(main, ["doctor", "--snapshot", str(tmp_path / "file" / "sub"), "--interval", "0.1"])
    assert result.exit_code == 2
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "cannot write the snapshot" in result.output and "Traceback" not in result.output


def test_snapshot_refuses_a_root_it_would_ignore(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["doctor", "--root", str(FIXTURES / "vm-firecracker"),
                                       "--snapshot", str(tmp_path / "new")])
    assert result.exit_code == 2 and "without --root" in result.output
    assert not (tmp_path / "new").exists()


def test_the_table_keeps_every_word_at_80_columns() -> None:
    result = CliRunner().invoke(main, ["doctor", "--root", str(FIXTURES / "intel-baremetal")],
                                env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert "…" not in result.output  # a path or a number cut short is evidence lost
    assert max(len(line) for line in result.output.splitlines()) <= 80


@pytest.mark.parametrize("settings", ['[{"path": "/proc/sys/kernel/perf_event_max_sample_rate"}]', '"abc"', "[1]"])
def test_a_damaged_state_file_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settings: str) -> None:
    root = _copy("vm-firecracker", tmp_path)
    state = tmp_path / "state.json"
    state.write_text(f'{{"version": 1, "root": "{root.resolve()}", "settings": {settings}}}')
    monkeypatch.setenv(tune.STATE_ENV, str(state))
    result = CliRunner().invoke(main, ["doctor", "--root", str(root), "--reset"])
    assert result.exit_code == 2, result.output
    assert "is damaged" in result.output and "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


@pytest.mark.parametrize("odd", ["fifo", "device-link"])
def test_a_fifo_or_a_link_to_a_device_in_a_copy_does_not_hang(tmp_path: Path, odd: str) -> None:
    import os
    import subprocess
    import sys

    import duetbench

    root = _copy("vm-firecracker", tmp_path)
    target = root / "proc/cpuinfo"
    target.unlink()
    if odd == "fifo":
        os.mkfifo(target)  # opening it to read would wait for a writer for ever
    else:
        target.symlink_to("/dev/zero")  # reading it would never end, and fill memory
    env = dict(os.environ, PYTHONPATH=str(Path(duetbench.__file__).resolve().parents[1]))
    try:
        done = subprocess.run([sys.executable, "-m", "duetbench", "doctor", "--root", str(root), "--json"],
                              capture_output=True, text=True, env=env, timeout=15)
    except subprocess.TimeoutExpired:
        pytest.fail("duet doctor --root hung on a damaged copy")
    assert done.returncode == 0, done.stderr
    checks = {c["name"]: c for c in json.loads(done.stdout)["checks"]}
    assert not any("CPU:" in e for e in checks["virtualization"]["evidence"])  # /proc/cpuinfo was not read


@pytest.mark.parametrize("recorded", ["not json", "[]", '{"adjtimex": {"state": 5}}',
                                      '{"adjtimex": {"state": "x", "status": 1, "offset_ns": 0, "freq_ppm": 0, '
                                      '"maxerror_us": 1, "esterror_us": 1}, "container_engines": [{"name": 1}]}'])
def test_damaged_recorded_answers_are_not_observable(tmp_path: Path, recorded: str) -> None:
    root = _copy("vm-firecracker", tmp_path)
    (root / "live.json").write_text(recorded)
    result = CliRunner().invoke(main, ["doctor", "--root", str(root), "--json"])
    assert result.exit_code == 0, result.output
    checks = {c["name"]: c for c in json.loads(result.output)["checks"]}
    assert checks["ntp"]["status"] == "not-observable"


def test_a_damaged_schedstat_is_one_line(tmp_path: Path) -> None:
    root = _copy("vm-firecracker", tmp_path)
    schedstat = next((root / "proc").rglob("schedstat"))
    schedstat.write_text("x y z\n")
    result = CliRunner().invoke(main, ["doctor", "--root", str(root)])
    assert result.exit_code == 2
    assert "schedstat file of this copy is not numbers" in result.output and "Traceback" not in result.output
