"""Questions only a system call can answer (NTP state, hardware counters, taskstats, container engines).

A check never calls the kernel directly: it asks a probe. ``SystemProbe`` asks this machine;
``RecordedProbe`` answers from a ``live.json`` kept beside a copy of /proc and /sys (fixtures,
``duet doctor --snapshot``); ``NoProbe`` answers nothing, and the checks then say "not observable".
"""
from __future__ import annotations

import ctypes
import ctypes.util
import errno
import json
import os
import platform
import shutil
import socket
import struct
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Protocol, TypeVar

import msgspec

# adjtimex return values (clock state), <linux/timex.h>
CLOCK_STATES = {0: "TIME_OK", 1: "TIME_INS", 2: "TIME_DEL", 3: "TIME_OOP", 4: "TIME_WAIT", 5: "TIME_ERROR"}
STA_PLL, STA_UNSYNC, STA_NANO = 0x0001, 0x0040, 0x2000


@dataclass(frozen=True)
class Timex:
    """The kernel's NTP state (adjtimex with modes=0: read only)."""

    state: int
    status: int
    offset_ns: int
    freq_ppm: float
    maxerror_us: int
    esterror_us: int

    @property
    def synced(self) -> bool:
        return not self.status & STA_UNSYNC and self.state != 5


@dataclass(frozen=True)
class PerfResult:
    """Outcome of opening a hardware cycles counter for this process."""

    ok: bool
    errno: int = 0


@dataclass(frozen=True)
class EngineResult:
    name: str
    path: str | None
    reachable: bool
    detail: str


class LiveProbe(Protocol):
    def adjtimex(self) -> Timex | None: ...
    def perf_hw_cycles(self) -> PerfResult | None: ...
    def taskstats_family(self) -> int | None | bool: ...
    def container_engines(self) -> list[EngineResult] | None: ...


class NoProbe:
    """Nothing can be asked (a copy of /proc and /sys without recorded answers)."""

    def adjtimex(self) -> Timex | None:
        return None

    def perf_hw_cycles(self) -> PerfResult | None:
        return None

    def taskstats_family(self) -> int | None | bool:
        # False = "could not ask", distinct from None = "asked, family absent".
        return False

    def container_engines(self) -> list[EngineResult] | None:
        return None


class _CTimex(ctypes.Structure):
    # struct timex of <sys/timex.h> on 64-bit Linux; ctypes inserts the same padding as the C compiler.
    _fields_ = [("modes", ctypes.c_uint), ("offset", ctypes.c_long), ("freq", ctypes.c_long),
                ("maxerror", ctypes.c_long), ("esterror", ctypes.c_long), ("status", ctypes.c_int),
                ("constant", ctypes.c_long), ("precision", ctypes.c_long), ("tolerance", ctypes.c_long),
                ("tv_sec", ctypes.c_long), ("tv_usec", ctypes.c_long), ("tick", ctypes.c_long),
                ("ppsfreq", ctypes.c_long), ("jitter", ctypes.c_long), ("shift", ctypes.c_int),
                ("stabil", ctypes.c_long), ("jitcnt", ctypes.c_long), ("calcnt", ctypes.c_long),
                ("errcnt", ctypes.c_long), ("stbcnt", ctypes.c_long), ("tai", ctypes.c_int),
                ("_reserved", ctypes.c_int * 11)]


_PERF_EVENT_OPEN = {"x86_64": 298, "aarch64": 241, "ppc64le": 319, "s390x": 331, "riscv64": 241}
_GENL_ID_CTRL, _CTRL_CMD_GETFAMILY, _CTRL_ATTR_FAMILY_NAME, _CTRL_ATTR_FAMILY_ID = 0x10, 3, 2, 1
_NLMSG_ERROR = 2


class SystemProbe:
    """Asks the running kernel. Every call is read-only and fails soft (None), never raising."""

    def __init__(self, engine_timeout_s: float = 10.0) -> None:
        self.engine_timeout_s = engine_timeout_s

    def adjtimex(self) -> Timex | None:
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            tx = _CTimex()
            tx.modes = 0  # read only: never adjust the clock
            state = libc.adjtimex(ctypes.byref(tx))
        except (OSError, AttributeError):
            return None
        if state < 0:
            return None
        offset_ns = tx.offset if tx.status & STA_NANO else tx.offset * 1000
        return Timex(state=state, status=tx.status, offset_ns=offset_ns, freq_ppm=tx.freq / 65536.0,
                     maxerror_us=tx.maxerror, esterror_us=tx.esterror)

    def perf_hw_cycles(self) -> PerfResult | None:
        nr = _PERF_EVENT_OPEN.get(platform.machine())
        if nr is None:
            return None
        # struct perf_event_attr, first version (PERF_ATTR_SIZE_VER0 = 64 bytes), which every kernel accepts:
        # type=PERF_TYPE_HARDWARE(0), size, config=PERF_COUNT_HW_CPU_CYCLES(0), then flags with
        # disabled(bit 0) | exclude_kernel(bit 5) | exclude_hv(bit 6) so no privilege is needed for it.
        attr = bytearray(64)
        struct.pack_into("=IIQ", attr, 0, 0, 64, 0)
        struct.pack_into("=Q", attr, 40, (1 << 0) | (1 << 5) | (1 << 6))
        buf = (ctypes.c_char * len(attr)).from_buffer(attr)
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            libc.syscall.restype = ctypes.c_long
            fd = libc.syscall(ctypes.c_long(nr), buf, ctypes.c_int(0), ctypes.c_int(-1), ctypes.c_int(-1),
                              ctypes.c_ulong(0))
        except (OSError, AttributeError):
            return None
        if fd >= 0:
            os.close(fd)
            return PerfResult(ok=True)
        return PerfResult(ok=False, errno=ctypes.get_errno())

    def taskstats_family(self) -> int | None | bool:
        """Netlink family id of TASKSTATS (genetlink CTRL_CMD_GETFAMILY); None when absent, False on failure."""
        name = b"TASKSTATS\0"
        attr_len = 4 + len(name)
        attr = struct.pack("=HH", attr_len, _CTRL_ATTR_FAMILY_NAME) + name + b"\0" * ((4 - attr_len % 4) % 4)
        genl = struct.pack("=BBH", _CTRL_CMD_GETFAMILY, 1, 0)
        body = genl + attr
        msg = struct.pack("=IHHII", 16 + len(body), _GENL_ID_CTRL, 1, 1, 0) + body  # NLM_F_REQUEST
        try:
            with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 16) as sock:  # NETLINK_GENERIC
                sock.settimeout(2.0)
                sock.bind((0, 0))
                sock.send(msg)
                reply = sock.recv(65536)
        except OSError:
            return False
        if len(reply) < 16:
            return False
        _, msg_type, _, _, _ = struct.unpack_from("=IHHII", reply, 0)
        if msg_type == _NLMSG_ERROR:
            code = struct.unpack_from("=i", reply, 16)[0]
            return None if -code == errno.ENOENT else False
        offset = 20  # nlmsghdr (16) + genlmsghdr (4)
        while offset + 4 <= len(reply):
            length, kind = struct.unpack_from("=HH", reply, offset)
            if length < 4:
                break
            if kind == _CTRL_ATTR_FAMILY_ID:
                return struct.unpack_from("=H", reply, offset + 4)[0]
            offset += (length + 3) & ~3
        return None

    def container_engines(self) -> list[EngineResult] | None:
        found: list[EngineResult] = []
        for name, argv in (("podman", ["podman", "info", "--format", "{{.Host.CgroupsVersion}}"]),
                           ("docker", ["docker", "info", "--format", "{{.ServerVersion}}"])):
            path = shutil.which(name)
            if path is None:
                found.append(EngineResult(name, None, False, "not installed"))
                continue
            try:
                done = subprocess.run(argv, check=False, capture_output=True, text=True, timeout=self.engine_timeout_s,
                                      stdin=subprocess.DEVNULL)
            except subprocess.TimeoutExpired:
                found.append(EngineResult(name, path, False, f"no answer within {self.engine_timeout_s:g} s"))
                continue
            except OSError as exc:
                found.append(EngineResult(name, path, False, exc.strerror or str(exc)))
                continue
            text = (done.stdout.strip() or done.stderr.strip()).splitlines()
            first = text[-1][:160] if text else ""
            if done.returncode == 0:
                detail = f"cgroups {first}" if name == "podman" else f"server {first}"
                found.append(EngineResult(name, path, True, detail))
            else:
                found.append(EngineResult(name, path, False, first or f"exit code {done.returncode}"))
        return found

    def record(self) -> dict[str, object]:
        """Every answer, in the shape ``RecordedProbe`` reads (for ``duet doctor --snapshot``)."""
        tx, perf, engines = self.adjtimex(), self.perf_hw_cycles(), self.container_engines()
        return {"adjtimex": asdict(tx) if tx else None, "perf_hw_cycles": asdict(perf) if perf else None,
                "taskstats_family": self.taskstats_family(),
                "container_engines": [asdict(e) for e in engines] if engines is not None else None}


T = TypeVar("T")


def _recorded(data: object, kind: type[T]) -> T | None:
    """A recorded answer of the right shape, else None (not observable): a copy's live.json may be damaged."""
    try:
        return msgspec.convert(data, kind)
    except msgspec.ValidationError:
        return None


class RecordedProbe:
    """Answers recorded in ``live.json`` beside a copy of /proc and /sys; a missing or damaged key = not
    observable."""

    def __init__(self, path: Path) -> None:
        try:
            data = json.loads(path.read_text(errors="replace"))
        except (OSError, ValueError):
            data = None
        self.data: dict[str, object] = data if isinstance(data, dict) else {}

    def adjtimex(self) -> Timex | None:
        return _recorded(self.data.get("adjtimex"), Timex)

    def perf_hw_cycles(self) -> PerfResult | None:
        return _recorded(self.data.get("perf_hw_cycles"), PerfResult)

    def taskstats_family(self) -> int | None | bool:
        if "taskstats_family" not in self.data:
            return False
        value = self.data["taskstats_family"]
        return value if isinstance(value, (int, bool)) or value is None else False

    def container_engines(self) -> list[EngineResult] | None:
        return _recorded(self.data.get("container_engines"), list[EngineResult])


def probe_for(root: Path) -> LiveProbe:
    """The machine itself for '/', recorded answers for a snapshot that has them, else none."""
    if Path(root).resolve() == Path("/"):
        return SystemProbe()
    recorded = Path(root) / "live.json"
    return RecordedProbe(recorded) if recorded.is_file() else NoProbe()
