"""``duet doctor --fix --apply`` and ``--reset``: write the settings that make timing steadier, reversibly.

Before anything is written, the previous value of every file is saved in a state file; ``--reset``
writes exactly those back and then removes it. Applying twice keeps the *first* previous value, so
a reset always returns to the machine as it was before duetbench touched it.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from duetbench.errors import DuetError
from duetbench.host.doctor.model import Setting
from duetbench.host.doctor.sysroot import SysRoot

STATE_ENV = "DUETBENCH_TUNE_STATE"
DEFAULT_STATE = Path("/var/lib/duetbench/tune-state.json")
STATE_VERSION = 1


def state_path() -> Path:
    override = os.environ.get(STATE_ENV)
    return Path(override) if override else DEFAULT_STATE


@dataclass(frozen=True)
class Outcome:
    path: str
    value: str
    ok: bool
    message: str

    def to_dict(self) -> dict[str, object]:
        return {"path": self.path, "value": self.value, "ok": self.ok, "message": self.message}


def _load(path: Path) -> dict[str, Any]:
    """The state file's JSON (checked for its version only), or {} when there is none."""
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise DuetError(f"cannot read the tuning state file {path}: {exc}",
                        hint=f"inspect it, or delete it if it is damaged (set {STATE_ENV} to use another "
                             "path)") from None
    if not isinstance(data, dict) or data.get("version") != STATE_VERSION:
        raise DuetError(f"the tuning state file {path} has an unknown format",
                        hint="it was written by another duetbench version; restore by hand and delete it")
    settings = data.get("settings", [])
    if not isinstance(settings, list) or not all(
            isinstance(e, dict) and all(isinstance(e.get(k), str) for k in ("path", "previous")) for e in settings):
        raise DuetError(f"the tuning state file {path} is damaged: every setting needs a path and its previous value",
                        hint="restore the values it names by hand, then delete it")
    return data


def _save(path: Path, data: dict[str, object]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(data, indent=2) + "\n")
        os.replace(tmp, path)  # atomic: a crash leaves the old state or the new one, never half of one
    except OSError as exc:
        raise DuetError(f"cannot write the tuning state file {path}: {exc.strerror}",
                        hint=f"set {STATE_ENV} to a writable path") from None


def _write(root: SysRoot, absolute: str, value: str) -> str | None:
    """Write one kernel setting; None on success, else why not."""
    try:
        with open(root.path(absolute), "w") as fh:
            fh.write(value + "\n")
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def _root_name(root: SysRoot) -> str:
    """The root as the state file names it: absolute, so that a reset from another directory (or with
    the same copy named another way) finds the settings, and a relative name never means another copy."""
    return str(root.root.resolve())


def apply(settings: list[Setting], root: SysRoot, state: Path) -> list[Outcome]:
    """Save the previous values, then write each setting. A setting that fails is reported, not fatal."""
    data = _load(state)
    if data and data.get("root") != _root_name(root):
        raise DuetError(f"{state} holds settings applied to another root ({data.get('root')})",
                        hint="run duet doctor --reset for that root first")
    saved: list[dict[str, str]] = list(data.get("settings", []))
    known = {s["path"] for s in saved}
    pending = []
    unreadable = []
    for s in settings:
        current = root.read(s.path)
        if current is None:
            unreadable.append(Outcome(s.path, s.wanted, False, "cannot read the current value; left unchanged"))
            continue
        if s.path not in known:
            saved.append({"path": s.path, "previous": current, "applied": s.wanted})
            known.add(s.path)
        pending.append((s, current))
    # The state is on disk before the first write: a crash in between can always be reset.
    _save(state, {"version": STATE_VERSION, "root": _root_name(root), "applied_at": time.time(), "settings": saved})
    outcomes = unreadable
    for s, current in pending:
        if current == s.wanted:
            outcomes.append(Outcome(s.path, s.wanted, True, "already set"))
            continue
        error = _write(root, s.path, s.wanted)
        outcomes.append(Outcome(s.path, s.wanted, error is None, error or f"{current} → {s.wanted}"))
    return outcomes


def reset(root: SysRoot, state: Path) -> list[Outcome]:
    """Write every saved previous value back (last applied first) and delete the state file; entries that
    cannot be restored stay in it so a later reset can retry."""
    data = _load(state)
    if not data:
        return []
    if data.get("root") != _root_name(root):
        raise DuetError(f"{state} holds settings applied to {data.get('root')}, not {_root_name(root)}",
                        hint=f"run the reset with --root {data.get('root')}")
    saved: list[dict[str, str]] = list(data.get("settings", []))
    outcomes = []
    failed = []
    for entry in reversed(saved):
        error = _write(root, entry["path"], entry["previous"])
        outcomes.append(Outcome(entry["path"], entry["previous"], error is None, error or "restored"))
        if error is not None:
            failed.append(entry)
    if failed:
        _save(state, {**data, "settings": list(reversed(failed))})
    else:
        try:
            state.unlink()
        except OSError:
            pass
    return outcomes


def saved_settings(state: Path) -> list[dict[str, str]]:
    """What a reset would restore (empty when nothing was applied)."""
    return list(_load(state).get("settings", []))
