"""The processor: virtualization, frequency scaling and turbo (EMP §4.3), SMT, isolation, IRQs, idle, power.

Frequency controls are invisible inside most VMs; there the answer is "not observable", never "off"
(docs/notes/machine_probe.md §1): the host may still scale the frequency behind the guest's back.
"""
from __future__ import annotations

from duetbench.host.doctor.model import Check, Setting
from duetbench.host.doctor.sysroot import (
    SysRoot,
    format_cpu_list,
    kernel_cmdline_params,
    measured_cpus,
    online_cpus,
    parse_cpu_list,
)

CPU = "/sys/devices/system/cpu"


def _cpuinfo_flags(root: SysRoot) -> set[str]:
    for line in (root.read("/proc/cpuinfo") or "").splitlines():
        if line.startswith(("flags", "Features")):
            return set(line.split(":", 1)[1].split())
    return set()


def _cpuinfo_field(root: SysRoot, name: str) -> str | None:
    for line in (root.read("/proc/cpuinfo") or "").splitlines():
        key, _, value = line.partition(":")
        if key.strip() == name:
            return value.strip()
    return None


def is_virtualized(root: SysRoot) -> bool:
    return "hypervisor" in _cpuinfo_flags(root) or root.read("/sys/hypervisor/type") is not None


def check_virtualization(root: SysRoot) -> Check:
    evidence: list[str] = []
    hv_flag = "hypervisor" in _cpuinfo_flags(root)
    hv_type = root.read("/sys/hypervisor/type")
    vendor = root.read("/sys/class/dmi/id/sys_vendor")
    product = root.read("/sys/class/dmi/id/product_name")
    model = _cpuinfo_field(root, "model name")
    if model:
        evidence.append(f"CPU: {model}")
    if hv_flag:
        evidence.append("/proc/cpuinfo has the 'hypervisor' flag: running as a virtual machine guest")
    if hv_type:
        evidence.append(f"/sys/hypervisor/type: {hv_type}")
    if vendor or product:
        evidence.append(f"DMI: {vendor or '?'} {product or ''}".rstrip())
    container = [p for p in ("/.dockerenv", "/run/.containerenv") if root.exists(p)]
    if container:
        evidence.append(f"inside a container ({', '.join(container)} exists)")
    if hv_flag or hv_type:
        return Check("virtualization", "Virtualization", "warn", tuple(evidence),
                     "A VM shares the host with other guests (steal time, cache and memory-bandwidth "
                     "neighbours, host frequency changes). Prefer the duet method, which cancels noise common to "
                     "both sides, and look at the cpu metric beside wall; a dedicated or bare-metal host is steadier.")
    evidence.append("no hypervisor flag in /proc/cpuinfo: bare metal" + (" (in a container)" if container else ""))
    return Check("virtualization", "Virtualization", "ok", tuple(evidence))


def _cpus_with_cpufreq(root: SysRoot) -> list[int]:
    return [c for c in online_cpus(root) if root.exists(f"{CPU}/cpu{c}/cpufreq/scaling_governor")]


def _not_observable_freq(root: SysRoot, what: str) -> str:
    why = "virtualized, " if is_virtualized(root) else ""
    return f"not observable here ({why}no cpufreq in {CPU}/cpu{(online_cpus(root) or [0])[0]}): {what}"


def check_frequency(root: SysRoot) -> Check:
    title = "CPU frequency governor (SpeedStep)"
    cpus = _cpus_with_cpufreq(root)
    if not cpus:
        evidence = [_not_observable_freq(root, "the governor and frequency scaling cannot be seen or set")]
        mhz = _cpuinfo_field(root, "cpu MHz")
        if mhz:
            evidence.append(f"/proc/cpuinfo reports {mhz} MHz (the guest's view, not the host's actual clock)")
        return Check("cpu-frequency", title, "not-observable", tuple(evidence),
                     "Nothing to set from inside; on a cloud VM pick an instance type with a fixed frequency, "
                     "and rely on the duet to cancel host-side changes common to both sides.")
    driver = root.read(f"{CPU}/cpu{cpus[0]}/cpufreq/scaling_driver") or "?"
    governors: dict[str, list[int]] = {}
    settings: list[Setting] = []
    for c in cpus:
        base = f"{CPU}/cpu{c}/cpufreq"
        gov = root.read(f"{base}/scaling_governor") or "?"
        governors.setdefault(gov, []).append(c)
        available = (root.read(f"{base}/scaling_available_governors") or "").split()
        if gov != "performance" and "performance" in available and root.writable(f"{base}/scaling_governor"):
            settings.append(Setting(f"{base}/scaling_governor", gov, "performance",
                                    f"CPU {c}: run at the highest frequency instead of following the load"))
    evidence = [f"driver {driver}; governor " + "; ".join(f"{g} on CPU {format_cpu_list(cs)}"
                                                          for g, cs in governors.items())]
    base0 = f"{CPU}/cpu{cpus[0]}/cpufreq"
    lo, hi = root.read_int(f"{base0}/scaling_min_freq"), root.read_int(f"{base0}/scaling_max_freq")
    if lo and hi:
        evidence.append(f"CPU {cpus[0]} may run between {lo / 1000:.0f} and {hi / 1000:.0f} MHz")
    epp = root.read(f"{base0}/energy_performance_preference")
    if epp:
        evidence.append(f"energy_performance_preference: {epp}")
    if set(governors) == {"performance"}:
        return Check("cpu-frequency", title, "ok", tuple(evidence))
    fix = ("Set the performance governor (EMP §4.3: frequency scaling makes the same work take different time): "
           "duet doctor --fix --apply, or: cpupower frequency-set -g performance")
    if not settings:
        fix += " (the governor files are not writable here, or 'performance' is not offered)"
    return Check("cpu-frequency", title, "warn", tuple(evidence), fix, tuple(settings))


def check_turbo(root: SysRoot) -> Check:
    title = "Turbo boost"
    evidence: list[str] = []
    settings: list[Setting] = []
    on = False
    no_turbo_path = f"{CPU}/intel_pstate/no_turbo"
    no_turbo = root.read(no_turbo_path)
    if no_turbo is not None:
        status = root.read(f"{CPU}/intel_pstate/status")
        evidence.append(f"intel_pstate ({status or 'active'}): no_turbo = {no_turbo}")
        if no_turbo.strip() == "0":
            on = True
            if root.writable(no_turbo_path):
                settings.append(Setting(no_turbo_path, "0", "1", "disable Intel Turbo Boost"))
    boost_path = f"{CPU}/cpufreq/boost"
    boost = root.read(boost_path)
    if boost is not None:
        evidence.append(f"cpufreq boost = {boost}")
        if boost.strip() == "1":
            on = True
            if root.writable(boost_path):
                settings.append(Setting(boost_path, "1", "0", "disable frequency boost (AMD Core Performance Boost)"))
    for policy in root.listdir(f"{CPU}/cpufreq"):
        per = f"{CPU}/cpufreq/{policy}/boost"
        if policy.startswith("policy") and boost is None and root.read(per) is not None:
            value = root.read(per) or ""
            evidence.append(f"{policy}: boost = {value}")
            if value == "1":
                on = True
                if root.writable(per):
                    settings.append(Setting(per, "1", "0", f"disable frequency boost on {policy}"))
    amd = root.read(f"{CPU}/amd_pstate/status")
    if amd is not None:
        evidence.append(f"amd_pstate status: {amd}")
    if not evidence:
        flags = _cpuinfo_flags(root)
        capable = sorted(flags & {"ida", "cpb", "hwp"})
        hint = f" (CPU flags {', '.join(capable)} say it exists)" if capable else ""
        evidence.append(_not_observable_freq(root, "turbo/boost state unknown") + hint)
        return Check("turbo", title, "not-observable", tuple(evidence),
                     "Nothing to set from inside; a VM's host decides. Compare both versions in a duet so that "
                     "a changing clock hits both alike.")
    if not on:
        return Check("turbo", title, "ok", tuple(evidence + ["turbo/boost is off"]))
    return Check("turbo", title, "warn", tuple(evidence + ["turbo/boost is on: the clock depends on temperature "
                                                          "and on how many cores are busy"]),
                 "Turn turbo off for steady timing (EMP §4.3): duet doctor --fix --apply "
                 "(or in the firmware setup)", tuple(settings))


def check_smt(root: SysRoot) -> Check:
    title = "SMT (hyper-threading)"
    control = root.read(f"{CPU}/smt/control")
    siblings: list[list[int]] = []
    seen: set[int] = set()
    for c in online_cpus(root):
        group = parse_cpu_list(root.read(f"{CPU}/cpu{c}/topology/thread_siblings_list"))
        if len(group) > 1 and c not in seen:
            siblings.append(group)
            seen.update(group)
    evidence = [f"smt/control = {control}"] if control else []
    if siblings:
        pairs = "; ".join(format_cpu_list(g) for g in siblings[:6]) + (" …" if len(siblings) > 6 else "")
        evidence.append(f"{len(siblings)} cores with sibling threads: {pairs}")
        measured = measured_cpus(root)
        shared = [g for g in siblings if len(set(g) & set(measured)) > 1]
        if shared:
            evidence.append(f"the two CPUs a duet would use ({format_cpu_list(measured)}) are siblings of one core")
        return Check("smt", title, "warn", tuple(evidence),
                     "Sibling threads share a core's execution units and caches: a process on one slows the other. "
                     "Keep the two duet sides on different cores, leave their siblings idle, or turn SMT off "
                     f"(echo off > {CPU}/smt/control; reboot-safe only via the nosmt boot option).")
    if not evidence and not online_cpus(root):
        return Check("smt", title, "not-observable", (f"no CPU topology under {CPU}",))
    evidence.append("no CPU shares its core with another (thread_siblings_list has one CPU each)")
    return Check("smt", title, "ok", tuple(evidence))


def check_isolation(root: SysRoot) -> Check:
    title = "Isolated CPUs"
    params = kernel_cmdline_params(root)
    isolated = parse_cpu_list(root.read(f"{CPU}/isolated"))
    nohz = parse_cpu_list(root.read(f"{CPU}/nohz_full"))
    evidence = [f"isolated: {format_cpu_list(isolated) or 'none'}",
                f"nohz_full: {format_cpu_list(nohz) or 'none'}"]
    for key in ("isolcpus", "nohz_full", "rcu_nocbs", "irqaffinity"):
        if key in params:
            evidence.append(f"kernel command line: {key}={params[key]}")
    cpus = online_cpus(root)
    measured = measured_cpus(root)
    if isolated:
        missing = [c for c in measured if c not in isolated]
        if missing:
            evidence.append(f"a duet uses CPUs {format_cpu_list(measured)}; {format_cpu_list(missing)} not isolated")
            return Check("isolated-cpus", title, "info", tuple(evidence),
                         f"Isolated CPUs are {format_cpu_list(isolated)}: run duet with its sides there "
                         f"(taskset -c {format_cpu_list(isolated)} duet ...).")
        return Check("isolated-cpus", title, "ok", tuple(evidence))
    if len(cpus) <= 2:
        return Check("isolated-cpus", title, "info", tuple(evidence),
                     "With 2 CPUs a duet needs both, so isolating them leaves nothing for the rest of the system; "
                     "on a larger machine boot with isolcpus=, nohz_full= and rcu_nocbs= for the measured CPUs.")
    return Check("isolated-cpus", title, "info", tuple(evidence),
                 f"Optional, needs a reboot: add isolcpus={format_cpu_list(measured)} nohz_full="
                 f"{format_cpu_list(measured)} rcu_nocbs={format_cpu_list(measured)} to the kernel command line so "
                 "nothing else is scheduled on the measured CPUs.")


def check_irq_affinity(root: SysRoot) -> Check:
    """Where interrupts land. Moving them only makes sense when a CPU is left over for them."""
    title = "IRQ affinity"
    cpus = online_cpus(root)
    measured = measured_cpus(root)
    housekeeping = [c for c in cpus if c not in measured]
    irqs = [n for n in root.listdir("/proc/irq") if n.isdigit()]
    if not irqs:
        return Check("irq-affinity", title, "not-observable", ("no /proc/irq entries readable",))
    on_measured: list[str] = []
    settings: list[Setting] = []
    target = format_cpu_list(housekeeping)
    for irq in sorted(irqs, key=int):
        path = f"/proc/irq/{irq}/smp_affinity_list"
        current = root.read(path)
        if current is None or not set(parse_cpu_list(current)) & set(measured):
            continue
        on_measured.append(irq)
        if housekeeping and root.writable(path):
            settings.append(Setting(path, current, target, f"IRQ {irq}: keep it off the measured CPUs"))
    evidence = [f"{len(irqs)} IRQs; {len(on_measured)} may be delivered to the measured CPUs "
                f"{format_cpu_list(measured)}"]
    default = root.read("/proc/irq/default_smp_affinity")
    if default is not None:
        evidence.append(f"default_smp_affinity (hex mask): {default}")
        if housekeeping and root.writable("/proc/irq/default_smp_affinity"):
            mask = sum(1 << c for c in housekeeping)
            width = len(default.replace(",", ""))
            wanted = format(mask, f"0{width}x")
            if _hex_mask(default) != mask:
                settings.insert(0, Setting("/proc/irq/default_smp_affinity", default, wanted,
                                           "new IRQs go to the housekeeping CPUs"))
    irqbalance = _running(root, "irqbalance")
    if irqbalance:
        evidence.append("irqbalance is running (it would move IRQs back)")
    if not housekeeping:
        evidence.append(f"only {len(cpus)} CPUs and a duet measures on all of them: IRQs have nowhere else to go")
        return Check("irq-affinity", title, "info", tuple(evidence),
                     "Nothing to do on this machine; with more CPUs, duet doctor --fix moves IRQs off the "
                     "measured ones (as pyperf system tune does).")
    if not on_measured:
        return Check("irq-affinity", title, "ok", tuple(evidence))
    fix = f"Move IRQs to CPU {target} while measuring: duet doctor --fix --apply"
    if irqbalance:
        fix += "; stop irqbalance first, or it undoes this"
    return Check("irq-affinity", title, "warn", tuple(evidence), fix, tuple(settings))


def _hex_mask(text: str) -> int | None:
    """The kernel's CPU mask ('ff,00000003'); None when it is not one (a damaged copy under --root)."""
    try:
        return int(text.replace(",", ""), 16)
    except ValueError:
        return None


def _running(root: SysRoot, comm: str) -> bool:
    for pid in root.listdir("/proc"):
        if pid.isdigit() and root.path(f"/proc/{pid}/comm").is_file():
            if (root.read(f"/proc/{pid}/comm") or "") == comm:
                return True
    return False


def check_cpuidle(root: SysRoot) -> Check:
    title = "CPU idle states"
    driver = root.read(f"{CPU}/cpuidle/current_driver")
    if driver is None:
        return Check("cpuidle", title, "not-observable", (f"no {CPU}/cpuidle/current_driver",))
    governor = root.read(f"{CPU}/cpuidle/current_governor") or root.read(f"{CPU}/cpuidle/current_governor_ro")
    c = (online_cpus(root) or [0])[0]
    states = []
    deepest = 0
    for s in root.listdir(f"{CPU}/cpu{c}/cpuidle"):
        base = f"{CPU}/cpu{c}/cpuidle/{s}"
        name, latency = root.read(f"{base}/name"), root.read_int(f"{base}/latency")
        disabled = root.read(f"{base}/disable") == "1"
        if name is not None:
            states.append(f"{name} ({latency} µs{', disabled' if disabled else ''})")
            if not disabled and latency is not None:
                deepest = max(deepest, latency)
    evidence = [f"driver {driver}, governor {governor or '?'}", "states: " + (", ".join(states) or "none listed")]
    if deepest > 100:
        return Check("cpuidle", title, "info", tuple(evidence),
                     f"Waking from the deepest state takes {deepest} µs; short benchmarks that sleep and wake pay "
                     "it. duetbench's barrier spins, so a duet's start is not affected.")
    return Check("cpuidle", title, "ok", tuple(evidence))


def check_power(root: SysRoot) -> Check:
    title = "Power supply"
    supplies = root.listdir("/sys/class/power_supply")
    if not supplies:
        return Check("power", title, "ok", ("no batteries or power supplies listed: a desktop, server or VM",))
    evidence = []
    on_battery = False
    for s in supplies:
        kind = root.read(f"/sys/class/power_supply/{s}/type")
        online = root.read(f"/sys/class/power_supply/{s}/online")
        status = root.read(f"/sys/class/power_supply/{s}/status")
        evidence.append(f"{s}: {kind or '?'}" + (f" online={online}" if online else "")
                        + (f" {status}" if status else ""))
        if kind == "Mains" and online == "0":
            on_battery = True
    if on_battery:
        return Check("power", title, "warn", tuple(evidence),
                     "Plug in the charger: on battery, laptops lower the CPU frequency and change it often.")
    return Check("power", title, "ok", tuple(evidence))
