"""Each check against copies of /proc and /sys from three machines (tests/doctor/fixtures)."""
from __future__ import annotations

from pathlib import Path

import pytest
from doctor_fixtures import FIXTURES, MACHINES

from duetbench.host.doctor import STATUSES, run_checks
from duetbench.host.doctor.report import DoctorReport

EXPECTED_NAMES = ["virtualization", "cpu-frequency", "turbo", "smt", "isolated-cpus", "irq-affinity", "cpuidle",
                  "power", "clocksource", "ntp", "kernel", "aslr", "perf-sampling", "load", "daemons", "steal",
                  "cgroups", "perf-counters", "taskstats", "containers"]


def _run(name: str) -> DoctorReport:
    def no_sleep(_: float) -> None:
        raise AssertionError("a copy of /proc is never slept on")
    return run_checks(FIXTURES / name, sleep=no_sleep)


def _by_name(report: DoctorReport) -> dict:
    return {c.name: c for c in report.checks}


@pytest.mark.parametrize("machine", MACHINES)
def test_every_item_present_with_status_and_evidence(machine: str) -> None:
    report = _run(machine)
    assert [c.name for c in report.checks] == EXPECTED_NAMES
    for c in report.checks:
        assert c.status in STATUSES
        assert c.evidence and all(isinstance(e, str) and e for e in c.evidence)
        if c.status in ("warn", "bad"):
            assert c.fix, f"{machine}/{c.name} is {c.status} but says nothing about a fix"


def test_vm_without_cpufreq_says_not_observable_and_changes_nothing() -> None:
    checks = _by_name(_run("vm-firecracker"))
    for name in ("cpu-frequency", "turbo"):
        assert checks[name].status == "not-observable"
        assert "no cpufreq in /sys/devices/system/cpu/cpu0" in checks[name].evidence[0]
        assert "virtualized" in checks[name].evidence[0]
        assert checks[name].settings == ()
    assert checks["virtualization"].status == "warn"
    assert checks["smt"].status == "ok"
    assert checks["clocksource"].status == "ok"
    # The recorded adjtimex answer of this VM: STA_UNSYNC, TIME_ERROR.
    assert checks["ntp"].status == "warn" and "TIME_ERROR" in checks["ntp"].evidence[0]
    assert checks["perf-counters"].status == "info" and "ENOENT" in " ".join(checks["perf-counters"].evidence)
    assert checks["irq-affinity"].status == "info" and checks["irq-affinity"].settings == ()
    assert "hybrid" in checks["cgroups"].evidence[0]
    assert "leftover duetbench-*" in " ".join(checks["cgroups"].evidence)
    # Only the perf sampling rate is a setting this VM lets us change.
    report = _run("vm-firecracker")
    assert [s.path for s in report.settings] == ["/proc/sys/kernel/perf_event_max_sample_rate"]


def test_intel_baremetal_pstate_turbo_smt_isolcpus() -> None:
    report = _run("intel-baremetal")
    checks = _by_name(report)
    assert checks["virtualization"].status == "ok"
    freq = checks["cpu-frequency"]
    assert freq.status == "warn" and "intel_pstate" in freq.evidence[0] and "powersave" in freq.evidence[0]
    assert {s.path for s in freq.settings} == {f"/sys/devices/system/cpu/cpu{c}/cpufreq/scaling_governor"
                                               for c in range(8)}
    assert all(s.wanted == "performance" and s.current == "powersave" for s in freq.settings)
    turbo = checks["turbo"]
    assert turbo.status == "warn"
    assert [(s.path, s.current, s.wanted) for s in turbo.settings] == [
        ("/sys/devices/system/cpu/intel_pstate/no_turbo", "0", "1")]
    assert checks["smt"].status == "warn" and "0,4" in checks["smt"].evidence[1]
    iso = checks["isolated-cpus"]
    assert iso.status == "ok" and "isolated: 6-7" in iso.evidence
    assert "kernel command line: isolcpus=6,7" in iso.evidence
    irq = checks["irq-affinity"]
    # IRQ 122 is already on CPU 2 only; the rest are moved off the measured CPUs 6-7, default mask too.
    assert irq.status == "warn" and "irqbalance" in irq.fix
    assert [(s.path, s.wanted) for s in irq.settings] == [("/proc/irq/default_smp_affinity", "3f")] + [
        (f"/proc/irq/{n}/smp_affinity_list", "0-5") for n in (0, 1, 8, 9, 120, 121)]
    assert checks["ntp"].status == "ok" and "chronyd (pid 640)" in checks["ntp"].evidence[2]
    assert checks["perf-counters"].status == "ok"
    daemons = checks["daemons"]
    assert daemons.status == "bad" and "packagekitd (pid 2211) 31.0%" in daemons.evidence[1]
    assert checks["steal"].status == "ok"
    assert checks["cgroups"].status == "ok" and "v2 (unified)" in checks["cgroups"].evidence[0]
    assert checks["cpuidle"].status == "info"  # C10 wakes in 890 µs
    assert report.interval_s == pytest.approx(1.0)


def test_amd_acpi_cpufreq_boost_hpet_old_kernel() -> None:
    checks = _by_name(_run("amd-acpi-boost"))
    freq = checks["cpu-frequency"]
    assert freq.status == "warn" and "acpi-cpufreq" in freq.evidence[0] and "ondemand" in freq.evidence[0]
    assert len(freq.settings) == 4
    turbo = checks["turbo"]
    assert turbo.status == "warn"
    assert [(s.path, s.wanted) for s in turbo.settings] == [("/sys/devices/system/cpu/cpufreq/boost", "0")]
    clock = checks["clocksource"]
    assert clock.status == "warn" and [(s.current, s.wanted) for s in clock.settings] == [("hpet", "tsc")]
    assert checks["kernel"].status == "warn"
    assert checks["load"].status == "bad"  # load 3.4 on 4 CPUs
    assert checks["cgroups"].status == "info" and "v1 (legacy)" in checks["cgroups"].evidence[0]
    # No recorded live answers and only one snapshot: said plainly, not guessed.
    for name in ("ntp", "taskstats", "containers", "daemons"):
        assert checks[name].status == "not-observable", name


def test_json_shape_is_stable() -> None:
    data = _run("intel-baremetal").to_dict()
    assert set(data) == {"root", "interval_s", "summary", "checks"}
    assert set(data["summary"]) == set(STATUSES)
    assert sum(data["summary"].values()) == len(EXPECTED_NAMES)
    for c in data["checks"]:
        assert set(c) == {"name", "title", "status", "evidence", "fix", "settings"}
        for s in c["settings"]:
            assert set(s) == {"path", "current", "wanted", "why"}


def test_empty_root_reports_not_observable_instead_of_failing(tmp_path: Path) -> None:
    report = run_checks(tmp_path)
    assert [c.name for c in report.checks] == EXPECTED_NAMES
    statuses = {c.name: c.status for c in report.checks}
    assert statuses["cpu-frequency"] == "not-observable"
    assert statuses["clocksource"] == "not-observable"
    assert statuses["kernel"] == "not-observable"
    assert report.settings == []
