"""--fix --apply / --reset against writable temp copies of the fixture machines."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from doctor_fixtures import FIXTURES

from duetbench.cli.main import main
from duetbench.errors import DuetError
from duetbench.host.doctor import SysRoot, run_checks, tune


def _copy(name: str, tmp_path: Path) -> Path:
    root = tmp_path / name
    shutil.copytree(FIXTURES / name, root)
    return root


def _read(root: Path, absolute: str) -> str:
    return (root / absolute.lstrip("/")).read_text().strip()


def _tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


def test_apply_then_reset_restores_every_file_exactly(tmp_path: Path) -> None:
    root = _copy("intel-baremetal", tmp_path)
    state = tmp_path / "state" / "tune-state.json"
    before = _tree(root)
    settings = run_checks(root).settings
    assert len(settings) == 8 + 1 + 7 + 1  # governors, no_turbo, IRQs + default mask, perf sample rate
    outcomes = tune.apply(settings, SysRoot(root), state)
    assert all(o.ok for o in outcomes)
    assert _read(root, "/sys/devices/system/cpu/cpu3/cpufreq/scaling_governor") == "performance"
    assert _read(root, "/sys/devices/system/cpu/intel_pstate/no_turbo") == "1"
    assert _read(root, "/proc/irq/9/smp_affinity_list") == "0-5"
    assert _read(root, "/proc/irq/122/smp_affinity_list") == "2"  # was not on the measured CPUs
    saved = json.loads(state.read_text())
    assert {e["path"]: e["previous"] for e in saved["settings"]}["/sys/devices/system/cpu/intel_pstate/no_turbo"] == "0"
    # After applying, doctor sees the improvement.
    checks = {c.name: c for c in run_checks(root).checks}
    assert checks["cpu-frequency"].status == "ok" and checks["turbo"].status == "ok"
    assert run_checks(root).settings == []

    restored = tune.reset(SysRoot(root), state)
    assert len(restored) == len(settings) and all(o.ok for o in restored)
    assert _tree(root) == before
    assert not state.exists()
    assert tune.reset(SysRoot(root), state) == []  # a second reset has nothing to do


def test_applying_twice_keeps_the_original_values(tmp_path: Path) -> None:
    root = _copy("amd-acpi-boost", tmp_path)
    state = tmp_path / "tune-state.json"
    before = _tree(root)
    tune.apply(run_checks(root).settings, SysRoot(root), state)
    assert _read(root, "/sys/devices/system/cpu/cpufreq/boost") == "0"
    assert _read(root, "/sys/devices/system/clocksource/clocksource0/current_clocksource") == "tsc"
    (root / "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor").write_text("powersave\n")  # drift
    tune.apply(run_checks(root).settings, SysRoot(root), state)
    tune.reset(SysRoot(root), state)
    assert _tree(root) == before  # ondemand, not the intermediate powersave


def test_a_setting_that_cannot_be_written_is_reported_and_kept_for_reset(tmp_path: Path) -> None:
    if not Path("/proc/version").is_file():
        pytest.skip("needs /proc/version as a file that refuses writes")
    root = _copy("amd-acpi-boost", tmp_path)
    state = tmp_path / "tune-state.json"
    settings = run_checks(root).settings
    target = root / "sys/devices/system/cpu/cpufreq/boost"
    target.unlink()
    # Readable but refusing writes, like a sysfs file that rejects a value: /proc/version even for root.
    target.symlink_to("/proc/version")
    outcomes = tune.apply(settings, SysRoot(root), state)
    failed = [o for o in outcomes if not o.ok]
    assert [o.path for o in failed] == ["/sys/devices/system/cpu/cpufreq/boost"]
    assert all(o.ok for o in outcomes if o.path != failed[0].path)
    result = tune.reset(SysRoot(root), state)
    assert [o.path for o in result if not o.ok] == ["/sys/devices/system/cpu/cpufreq/boost"]
    assert [e["path"] for e in tune.saved_settings(state)] == ["/sys/devices/system/cpu/cpufreq/boost"]


def test_state_of_another_root_is_refused(tmp_path: Path) -> None:
    a, b = _copy("amd-acpi-boost", tmp_path / "a"), _copy("intel-baremetal", tmp_path / "b")
    state = tmp_path / "tune-state.json"
    tune.apply(run_checks(a).settings, SysRoot(a), state)
    with pytest.raises(DuetError, match="another root"):
        tune.apply(run_checks(b).settings, SysRoot(b), state)
    with pytest.raises(DuetError, match="--root"):
        tune.reset(SysRoot(b), state)


def test_cli_fix_apply_reset_on_a_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _copy("intel-baremetal", tmp_path)
    state = tmp_path / "tune-state.json"
    monkeypatch.setenv(tune.STATE_ENV, str(state))
    before = _tree(root)
    runner = CliRunner()
    shown = runner.invoke(main, ["doctor", "--root", str(root), "--fix"])
    assert shown.exit_code == 0, shown.output
    assert "no_turbo: 0 → 1" in shown.output and not state.exists() and _tree(root) == before
    applied = runner.invoke(main, ["doctor", "--root", str(root), "--fix", "--apply", "--json"])
    assert applied.exit_code == 0, applied.output
    data = json.loads(applied.output)
    assert data["fix"]["state_file"] == str(state)
    assert len(data["fix"]["applied"]) == len(data["fix"]["settings"]) == 17
    assert all(o["ok"] for o in data["fix"]["applied"])
    assert _read(root, "/sys/devices/system/cpu/intel_pstate/no_turbo") == "1"
    reset = runner.invoke(main, ["doctor", "--root", str(root), "--reset"])
    assert reset.exit_code == 0, reset.output
    assert "17 restored" in reset.output
    assert _tree(root) == before


def test_cli_fix_on_the_vm_copy_applies_nothing_but_the_sample_rate(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    root = _copy("vm-firecracker", tmp_path)
    monkeypatch.setenv(tune.STATE_ENV, str(tmp_path / "state.json"))
    monkeypatch.setenv("COLUMNS", "300")
    out = CliRunner().invoke(main, ["doctor", "--root", str(root), "--fix"])
    assert out.exit_code == 0, out.output
    assert "perf_event_max_sample_rate" in out.output
    assert "not observable here (virtualized, no cpufreq in /sys/devices/system/cpu/cpu0)" in out.output
