"""Signals that end a measurement as Ctrl-C does: stop, keep what finished, report.

SIGTERM is what a CI job's timeout, `kill` and schedulers send; SIGHUP is what a closed terminal or a
dropped ssh session sends. By default either would end the process at once: no clean-up, the comparison
left ``running`` until the next command finds its owner dead, the run under way lost. SIGHUP is left as
it is when it is ignored (`nohup duet …`): that user asked to go on without the terminal.
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
