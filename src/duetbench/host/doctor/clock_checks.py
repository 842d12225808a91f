"""Clocks: which clocksource the kernel reads, and whether NTP disciplines the clock (EMP §4.2)."""
from __future__ import annotations

from duetbench.host.doctor.live import CLOCK_STATES, STA_PLL, LiveProbe, Timex
from duetbench.host.doctor.model import Check, Setting, Status
from duetbench.host.doctor.sysroot import SysRoot

CLOCKSOURCE = "/sys/devices/system/clocksource/clocksource0"
#: Clocksources read without a trap to the hypervisor or a slow bus access.
FAST = {"tsc", "arch_sys_counter", "kvm-clock", "hyperv_clocksource_tsc_page", "timebase", "riscv_clocksource"}
SLOW = {"hpet", "acpi_pm", "xen", "pit", "jiffies", "refined-jiffies"}
NTP_DAEMONS = ("chronyd", "ntpd", "systemd-timesyn", "openntpd", "ntpsec", "timesyncd")


def check_clocksource(root: SysRoot) -> Check:
    title = "Clocksource"
    current = root.read(f"{CLOCKSOURCE}/current_clocksource")
    if current is None:
        return Check("clocksource", title, "not-observable", (f"no {CLOCKSOURCE}/current_clocksource",))
    available = (root.read(f"{CLOCKSOURCE}/available_clocksource") or "").split()
    evidence = (f"current: {current}", f"available: {' '.join(available) or '?'}")
    if current in FAST:
        return Check("clocksource", title, "ok", evidence)
    better = next((c for c in ("tsc", "arch_sys_counter", "kvm-clock") if c in available), None)
    settings: tuple[Setting, ...] = ()
    if better and root.writable(f"{CLOCKSOURCE}/current_clocksource"):
        settings = (Setting(f"{CLOCKSOURCE}/current_clocksource", current, better,
                            f"read time from {better} instead of {current}"),)
    status: Status = "bad" if current in ("jiffies", "refined-jiffies") else "warn"
    fix = (f"The {current} clocksource is slow to read (µs per timestamp) or coarse. "
           + (f"Switch to {better}: duet doctor --fix --apply" if better else
              "No faster one is offered; the kernel may have found the TSC unstable (see dmesg)."))
    return Check("clocksource", title, status, evidence, fix, settings)


def ntp_daemons(root: SysRoot) -> list[str]:
    found = []
    for pid in root.listdir("/proc"):
        if pid.isdigit():
            comm = root.read(f"/proc/{pid}/comm")
            if comm and comm.startswith(NTP_DAEMONS):
                found.append(f"{comm} (pid {pid})")
    return found


def check_ntp(root: SysRoot, probe: LiveProbe) -> Check:
    """NTP state from adjtimex (read-only); timedatectl would need systemd, which containers and VMs lack."""
    title = "NTP synchronization"
    daemons = ntp_daemons(root)
    daemon_text = f"time daemon running: {', '.join(daemons)}" if daemons else \
        "no chronyd, ntpd or systemd-timesyncd process running"
    tx: Timex | None = probe.adjtimex()
    if tx is None:
        return Check("ntp", title, "not-observable", ("adjtimex could not be asked (not the live machine)",
                                                     daemon_text))
    state = CLOCK_STATES.get(tx.state, str(tx.state))
    evidence = [f"adjtimex: state {state}, status 0x{tx.status:04x} ("
                + ("synchronised" if tx.synced else "STA_UNSYNC: not synchronised") + ")",
                f"offset {tx.offset_ns / 1e6:+.3f} ms, frequency correction {tx.freq_ppm:+.3f} ppm, "
                f"max error {tx.maxerror_us / 1000:.1f} ms",
                daemon_text]
    if not tx.synced:
        return Check("ntp", title, "warn", tuple(evidence),
                     "Run an NTP daemon (e.g. apt-get install chrony) so the clock is disciplined: EMP §4.2 found "
                     "fewer outliers with NTP active. Durations use CLOCK_MONOTONIC, which NTP only slews by "
                     "at most 500 ppm (0.05 %), so this matters little for ratios.")
    if abs(tx.offset_ns) > 1_000_000 and tx.status & STA_PLL:
        return Check("ntp", title, "info", tuple(evidence),
                     "NTP is still correcting a large offset: CLOCK_MONOTONIC runs up to 0.05 % fast or slow "
                     "meanwhile. Wait until the offset is small before measuring.")
    return Check("ntp", title, "ok", tuple(evidence))
