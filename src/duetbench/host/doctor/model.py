"""What ``duet doctor`` reports: one ``Check`` per thing on the machine that can disturb timing."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

#: ok: nothing to do · warn: disturbs timing, fixable or worth knowing · bad: will visibly spoil results ·
#: info: a fact that shapes the measurement, nothing to fix · not-observable: this machine does not let us see it
Status = Literal["ok", "warn", "bad", "info", "not-observable"]
STATUSES: tuple[Status, ...] = ("ok", "warn", "bad", "info", "not-observable")


@dataclass(frozen=True)
class Setting:
    """One kernel setting ``duet doctor --fix`` would change: a file under /proc or /sys and its new value.

    ``path`` is absolute as seen on the machine (``/sys/...``); the tuner maps it under the inspected root."""

    path: str
    current: str
    wanted: str
    why: str

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "current": self.current, "wanted": self.wanted, "why": self.why}


@dataclass(frozen=True)
class Check:
    name: str  # stable key, e.g. "cpu-frequency"
    title: str  # what a person reads, e.g. "CPU frequency governor"
    status: Status
    evidence: tuple[str, ...]
    fix: str | None = None
    settings: tuple[Setting, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"unknown status {self.status!r} for check {self.name}")
        if not self.evidence:
            raise ValueError(f"check {self.name} has no evidence: every status must say why")

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "title": self.title, "status": self.status, "evidence": list(self.evidence),
                "fix": self.fix, "settings": [s.to_dict() for s in self.settings]}
