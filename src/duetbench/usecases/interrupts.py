"""Signals that end a measurement as Ctrl-C does: stop, keep what finished, report.

SIGTERM is what a CI job's timeout, `kill` and schedulers send; SIGHUP is what a closed terminal or a
dropped ssh session sends. By default either would end the process at once: no clean-up, the comparison
left ``running`` until the next command finds its owner dead, the run under way lost. SIGHUP is left as
it is when it is ignored (`nohup duet …`): that user asked to go on without the terminal.

Between recording a measurement (as ``running``) and installing that handling, `hold_stop_signals` keeps
them pending: a signal there would otherwise end the process with the record left ``running``.
"""
from __future__ import annotations

import signal
from collections.abc import Callable
from typing import Any

Handler = Callable[[int, Any], Any] | int | None


def raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def stop_like_ctrl_c() -> dict[int, Handler]:
    """Make SIGTERM (and SIGHUP, unless ignored) raise KeyboardInterrupt; what they did before, for
    `restore`."""
    previous: dict[int, Handler] = {signal.SIGTERM: signal.signal(signal.SIGTERM, raise_interrupt)}
    if signal.getsignal(signal.SIGHUP) is not signal.SIG_IGN:
        previous[signal.SIGHUP] = signal.signal(signal.SIGHUP, raise_interrupt)
    return previous


def restore(previous: dict[int, Handler]) -> None:
    for signum, handler in previous.items():
        signal.signal(signum, handler)


#: Ctrl-C and the signals `stop_like_ctrl_c` makes act like it.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def hold_stop_signals() -> set[signal.Signals | int]:
    """Keep Ctrl-C, SIGTERM and SIGHUP pending (not lost) until `release`; the signal mask to give it.

    Only this thread's mask: call it while duet has no other thread, as before a measurement starts."""
    return signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)


def release(held: set[signal.Signals | int]) -> None:
    """Undo `hold_stop_signals`. A signal that came meanwhile is handled before this returns (CPython runs
    the handlers of the signals it unblocks), so call it where that handler's KeyboardInterrupt is caught."""
    signal.pthread_sigmask(signal.SIG_SETMASK, held)
