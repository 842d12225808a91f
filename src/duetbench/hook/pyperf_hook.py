"""The pyperf hook ``duet`` (pyperf >= 2.8): ``python bench.py --hook duet ...``.

pyperf finds it through the entry point group ``pyperf.hook`` (see pyproject.toml), creates one per
phase of a worker process (warmups, then values), enters it right before every timed call and calls
``teardown(metadata)`` after the phase. pyperf hands workers a filtered environment, so the command
needs ``--inherit-environ DUET_SIDE,DUET_ITERATION_LOG,DUET_BARRIER,DUET_BARRIER_TIMEOUT_MS`` and fixed
``--processes/--values/--warmups/--loops`` (docs/python-hooks.md).
"""
from __future__ import annotations

import os
import sys
from types import FrameType, TracebackType

from duetbench import hook
from duetbench.errors import DuetError

INHERIT_ENVIRON = ",".join(hook.ENVIRONMENT)


def _phase_kind(frame: FrameType | None) -> str | None:
    """'w' or 'm' from pyperf's ``WorkerTask._compute_values(..., is_warmup, calibrate_loops)``, which
    creates the hooks a couple of frames up; None (unknown) when pyperf is laid out differently."""
    for _ in range(6):
        if frame is None:
            return None
        if frame.f_code.co_name == "_compute_values" and "is_warmup" in frame.f_locals:
            calibrating = bool(frame.f_locals.get("calibrate_loops"))
            return "w" if frame.f_locals["is_warmup"] or calibrating else "m"
        frame = frame.f_back
    return None


class DuetHook:
    """Synchronizes every value (warmups and calibration included) of a pyperf worker with the other
    side of a duet and logs it; adds ``duet_*`` run metadata at teardown."""

    def __init__(self) -> None:
        self._kind = _phase_kind(sys._getframe(1))
        try:
            # pyperf creates hooks only in workers, right before their values: loading now turns a
            # broken install into pyperf's one-line "ERROR setting up hook" instead of a traceback.
            hook._library()
        except DuetError as exc:
            from pyperf._hooks import HookError

            raise HookError(str(exc)) from None

    def __enter__(self) -> None:
        hook.before_iteration(self._kind)

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        hook.after_iteration()

    def teardown(self, metadata: dict[str, object]) -> None:
        state = hook.state()
        metadata["duet_sync"] = state
        if state not in ("off", "not-started"):
            metadata["duet_side"] = os.environ.get("DUET_SIDE", "?")
            metadata["duet_synced"] = hook.synced_iterations()
            metadata["duet_iterations"] = hook.iterations()
