"""The duetbench hook for Python harnesses (contract: docs/hooks.md; usage: docs/python-hooks.md).

Call around every iteration the harness times, warmups included::

    from duetbench import hook

    for i in range(warmups + values):
        with hook.iteration("w" if i < warmups else "m"):
            run_once()

Without the DUET_* environment of ``duet run`` every call returns at once and nothing is loaded.
Inside a duet the work is done by libduethook.so (adapters/c/duet.h), so Python and C harnesses
follow the protocol with one implementation. This module runs inside harness processes: it imports
nothing heavy (no numpy, no scipy) and never raises because of the barrier.
"""
from __future__ import annotations

import ctypes
import os
from collections.abc import Iterator
from contextlib import contextmanager

from duetbench.errors import DuetError

__all__ = ["before_iteration", "after_iteration", "iteration", "state", "synced_iterations", "iterations",
           "ENVIRONMENT"]

ENVIRONMENT = ("DUET_SIDE", "DUET_ITERATION_LOG", "DUET_BARRIER", "DUET_BARRIER_TIMEOUT_MS")

# Values of duet_hook_state() in duet.h, by name.
_STATES = {-1: "not-started", 0: "off", 1: "log-only", 2: "synchronized", 3: "lost"}
_KINDS = {None: 0, "w": ord("w"), "m": ord("m")}

_lib: ctypes.CDLL | None = None
_active: bool | None = None  # None until the first iteration reads the environment


def _library() -> ctypes.CDLL | None:
    """The native library, or None when not in a duet; decided once, at the first iteration."""
    global _active, _lib
    if _active is None:
        _active = any(name in os.environ for name in ENVIRONMENT[:3])
        if _active:
            from duetbench.hook import _native

            _lib = _native.load()
    return _lib


def before_iteration(kind: str | None = None) -> bool:
    """Wait for the other side (in a synchronous duet), then stamp this iteration's start.

    ``kind`` is ``"w"`` (warmup), ``"m"`` (measurement) or None (unknown). Returns True when the
    iteration started through the barrier, False otherwise (no duet, no barrier, or synchronization
    lost after the other side stopped — said once on stderr)."""
    try:
        code = _KINDS[kind]
    except KeyError:
        raise DuetError(f"duetbench.hook: an iteration's kind is 'w', 'm' or None, not {kind!r}") from None
    lib = _library()
    if lib is None:
        return False
    lib.duet_set_kind(code)
    return bool(lib.duet_before_iteration())


def after_iteration() -> None:
    """Stamp the end of the iteration begun by :func:`before_iteration` and append its log line."""
    if _lib is not None:
        _lib.duet_after_iteration()


@contextmanager
def iteration(kind: str | None = None) -> Iterator[bool]:
    """One iteration: ``with iteration("m"): work()``. Yields what :func:`before_iteration` returned.

    The line is logged even when the body raises: the two sides' iteration counts must stay equal."""
    synced = before_iteration(kind)
    try:
        yield synced
    finally:
        after_iteration()


def state() -> str:
    """``not-started``, ``off`` (no duet), ``log-only`` (no barrier), ``synchronized`` or ``lost``."""
    if _active is None:
        return "not-started"
    if _lib is None:
        return "off"
    return _STATES.get(_lib.duet_hook_state(), "unknown")


def synced_iterations() -> int:
    """Iterations of this process that started through the barrier."""
    return int(_lib.duet_hook_synced()) if _lib is not None else 0


def iterations() -> int:
    """Iterations of this process completed while the hook was active (the next log index)."""
    return int(_lib.duet_hook_iterations()) if _lib is not None else 0
