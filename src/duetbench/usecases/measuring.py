"""What a comparison of two commands and a benchmark of one share around their measuring.

While they measure, SIGTERM and SIGHUP stop them as Ctrl-C does (usecases/interrupts.py); a failing
--setup or --cleanup hook is kept to be reported after what was measured; and a store that fails mid-run
(a full disk) is kept too, so the runs stored before it are reported and named (usecases/conclude.py
`kept_before`). Whatever happens, the comparison's record is ended (`finish`) and the machine's
measurement lock released. Each caller had its own copy of this; one differed only in what it stored.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from duetbench.errors import StoreFailed
from duetbench.execute.runner import ShellCommandFailed
from duetbench.usecases.interrupts import restore, stop_like_ctrl_c

if TYPE_CHECKING:
    from duetbench.execute.lock import MeasurementLock


class Failures:
    """What went wrong while measuring and was kept to be reported after it: a hook that failed, the
    store that failed (each None if not). A plain class: `dataclasses` is not on the orchestrator's
    start-up path (its import, and `copy`'s, would be paid again by the reporter; tests/test_apart.py)."""

    __slots__ = ("shell", "store")

    def __init__(self) -> None:
        self.shell: ShellCommandFailed | None = None
        self.store: StoreFailed | None = None


@contextmanager
def guarded(has_record: Callable[[], bool], finish: Callable[[Failures], None],
            lock: MeasurementLock) -> Iterator[Failures]:
    """Measure inside this. `has_record`: whether the comparison's record was begun (a store that fails
    before it holds nothing to report, and its error is raised as it is). `finish`: ends the record (a
    store failure it raises is dropped when the store had already failed: the record stays 'running' until
    the next `duet` finds its owner gone)."""
    failures = Failures()
    previous = stop_like_ctrl_c()
    try:
        yield failures
    except ShellCommandFailed as exc:
        failures.shell = exc
    except StoreFailed as exc:
        if not has_record():
            raise
        failures.store = exc
    finally:
        restore(previous)
        try:
            finish(failures)
        except StoreFailed:
            if failures.store is None:
                raise
        finally:
            lock.release()
