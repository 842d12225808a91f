"""Following a run's iteration logs while it runs: dynamic warmup stopping inside a run (Laaber et al. 2020 §4.2.1).

The hooks append one line per iteration to each side's log (docs/hooks.md). The orchestrator sleeps
in poll() on the launchers' pidfds and an inotify descriptor watching the sides' output directories,
so it wakes only when something was written — never on a timer that would land on a measured CPU. After
each new iteration it asks the warmup criterion (analyze.stopping) whether warmup is over, for the
pair in a duet (both sides stable at the same iteration), and once warmup is over and `mi` measurement
iterations followed on every side, it ends the run: the sides are stopped through their launchers and
everything they measured is kept.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
from dataclasses import dataclass, field
from pathlib import Path

from duetbench.analyze.stopping import StoppingParams, WarmupDecision, pair_warmup_step, warmup_step
from duetbench.harness.iteration_log import parse_line

_IN_MODIFY = 0x00000002
_IN_CREATE = 0x00000100


class Inotify:
    """A minimal inotify watch (libc through ctypes): a file descriptor that becomes readable when one
    of the watched files is written. The files need not exist yet: until they do, their directories are
    watched for creation only. `fd` is None where inotify is missing."""

    def __init__(self, files: list[Path]) -> None:
        self.fd: int | None = None
        self._files = {f: False for f in files}  # file -> watched directly
        try:
            self._libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
            fd = self._libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        except (OSError, AttributeError):
            return
        if fd < 0:
            return
        self.fd = fd
        for d in {f.parent for f in files}:
            self._libc.inotify_add_watch(fd, str(d).encode(), _IN_CREATE)
        self._watch_existing()

    def _watch_existing(self) -> None:
        # Only the logs themselves wake us, not the harnesses' stdout in the same directory: every
        # wake-up is work on a CPU that a measured side needs (there is no spare one on 2 CPUs).
        for f, watched in self._files.items():
            if not watched and f.exists() and self.fd is not None:
                self._files[f] = self._libc.inotify_add_watch(self.fd, str(f).encode(), _IN_MODIFY) >= 0

    def drain(self) -> None:
        if self.fd is None:
            return
        try:
            while os.read(self.fd, 65536):
                pass
        except BlockingIOError:
            pass
        self._watch_existing()

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


@dataclass
class _Follower:
    path: Path
    offset: int = 0
    partial: bytes = b""
    values: list[float] = field(default_factory=list)
    durations: list[float] = field(default_factory=list)

    def read(self) -> None:
        try:
            with self.path.open("rb") as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return
        self.offset += len(data)
        lines = (self.partial + data).split(b"\n")
        self.partial = lines.pop()
        for raw in lines:
            line = parse_line(raw.decode("ascii", "replace").strip())
            if line is not None:
                self.durations.append((line.end_ns - line.start_ns) / 1e9)
                # The harness's value where the hook logged one (JMH's fixed-time iterations all last
                # the same; their score is what warms up), else the iteration's duration.
                self.values.append(line.value_s if line.value_s is not None
                                   else (line.end_ns - line.start_ns) / 1e9)


class LiveWarmup:
    """Decides, from the sides' logs as they grow, when a run has warmed up and measured enough."""

    def __init__(self, params: StoppingParams, logs: dict[str, Path]) -> None:
        self.params = params
        self.followers = {side: _Follower(path) for side, path in logs.items()}
        self.decision: WarmupDecision | None = None
        self._judged = 0

    def update(self) -> bool:
        """Read what was appended; True once the run may stop (warmup decided and `mi` iterations after it)."""
        for f in self.followers.values():
            f.read()
        counts = [len(f.values) for f in self.followers.values()]
        n = min(counts) if counts else 0
        if self.decision is None and n > self._judged:
            self._judged = n
            series = [f.values[:n] for f in self.followers.values()]
            d = (pair_warmup_step(series[0], series[1], self.params) if len(series) == 2
                 else warmup_step(series[0], self.params))
            if d.done:
                self.decision = d
        return (self.decision is not None and self.decision.measurement_end is not None
                and n >= self.decision.measurement_end)

    def seconds_to_end(self) -> float | None:
        """Once warmup is decided, about how long until every side reached the end of measurement
        (median iteration time × iterations left), so the orchestrator can sleep instead of waking on
        every iteration; None while warmup is undecided."""
        d = self.decision
        if d is None or d.measurement_end is None:
            return None
        left = max(d.measurement_end - min(len(f.values) for f in self.followers.values()), 0)
        times = sorted(v for f in self.followers.values() for v in f.durations[-20:])
        return left * (times[len(times) // 2] if times else 0.0)

    def outcome(self) -> dict[str, object]:
        """How warmup ended, as stored with the run (store: runs.adaptive_warmup): ``outcome`` is
        "stable" (the criterion held at iteration ``iteration``), "max" (wi_max reached without
        stability) or "undecided" (the run ended first); ``warmup_iterations`` the warmup length used."""
        d = self.decision
        outcome = "undecided" if d is None else ("stable" if d.stable else "max")
        return {"criterion": self.params.criterion, "outcome": outcome,
                "iteration": d.iteration if d is not None and d.stable else None,
                "warmup_iterations": d.warmup_iterations if d is not None else None,
                "measurement_end": d.measurement_end if d is not None else None}

    def note(self) -> str:
        d = self.decision
        if d is None:
            return "adaptive warmup: the run ended before warmup was decided"
        text = f"adaptive warmup ({d.criterion}): {d.reason}; run ended after {d.measurement_end} iterations"
        return text + (f" — {d.warning}" if d.warning else "")
