"""The kernel: its version (EMP §4.4: an old kernel caused low outliers), ASLR, perf sampling rate."""
from __future__ import annotations

import re

from duetbench.host.doctor.model import Check, Setting
from duetbench.host.doctor.sysroot import SysRoot

#: pidfd_open (precise waiting) needs 5.3, cgroup.kill 5.14: older kernels work, with fallbacks.
RECENT = (5, 14)


def _version(release: str) -> tuple[int, int] | None:
    m = re.match(r"(\d+)\.(\d+)", release)
    return (int(m.group(1)), int(m.group(2))) if m else None


def check_kernel(root: SysRoot) -> Check:
    title = "Kernel"
    release = root.read("/proc/sys/kernel/osrelease")
    full = root.read("/proc/version") or ""
    if release is None:
        return Check("kernel", title, "not-observable", ("no /proc/sys/kernel/osrelease",))
    evidence = [f"Linux {release}"]
    preempt = [w for w in ("PREEMPT_RT", "PREEMPT_DYNAMIC", "PREEMPT") if w in full.split()]
    if preempt:
        evidence.append(f"built with {preempt[0]}")
    version = _version(release)
    if version is not None and version < RECENT:
        return Check("kernel", title, "warn", tuple(evidence + [f"older than {RECENT[0]}.{RECENT[1]}"]),
                     "Update the kernel (EMP §4.4 traced outliers to an out-of-date kernel); duetbench falls back "
                     "where pidfd (5.3) or cgroup.kill (5.14) is missing.")
    return Check("kernel", title, "ok", tuple(evidence))


def check_aslr(root: SysRoot) -> Check:
    title = "ASLR"
    value = root.read_int("/proc/sys/kernel/randomize_va_space")
    if value is None:
        return Check("aslr", title, "not-observable", ("no /proc/sys/kernel/randomize_va_space",))
    meaning = {0: "off", 1: "stack, mmap and vDSO randomized", 2: "full randomization"}.get(value, "?")
    evidence = (f"randomize_va_space = {value} ({meaning})",)
    if value == 0:
        return Check("aslr", title, "info", evidence,
                     "With ASLR off every run gets the same memory layout, so a layout that happens to favour A "
                     "or B becomes a fixed bias; with it on, the bias turns into noise that more runs average out "
                     "(sysctl kernel.randomize_va_space=2).")
    return Check("aslr", title, "ok", evidence)


def check_perf_sampling(root: SysRoot) -> Check:
    """pyperf system tune lowers perf_event_max_sample_rate so profiler interrupts cannot pile up."""
    title = "perf sampling rate"
    path = "/proc/sys/kernel/perf_event_max_sample_rate"
    rate = root.read_int(path)
    if rate is None:
        return Check("perf-sampling", title, "not-observable", (f"no {path}",))
    evidence = (f"perf_event_max_sample_rate = {rate} per second",)
    if rate <= 1:
        return Check("perf-sampling", title, "ok", evidence)
    settings = (Setting(path, str(rate), "1", "limit perf sampling interrupts to 1 per second"),) \
        if root.writable(path) else ()
    return Check("perf-sampling", title, "info", evidence,
                 "Only matters while a profiler samples; pyperf system tune sets it to 1 "
                 "(duet doctor --fix --apply does the same).", settings)
