"""The end of a comparison (statistics, report, exports) in a second process forked when `duet` starts.

Why (issue 17): `duet compare` needs numpy, its statistics and rich only once it has measured, and
importing them took ~280 ms on a 2-vCPU AMD EPYC VM (~90 ms on an Intel one). In one process they
either delay the first measured pair (imported beside the warm-up, then waited for) or the report. A
thread cannot overlap them with the start-up: both hold the GIL. So the program forks at its very start
(`start`, before click parses anything), and the child imports them on the CPU that is idle while the
parent starts, validates and runs the warm-up; the parent waits for it (`Reporter.wait_ready`) before its
first measured pair, so nothing of it runs beside a measured invocation. Once measured, the parent hands
over what the report needs (the options; the measurements are in the store) and exits with the
reporter's exit code.

Wherever no progress line is drawn (the parent would need rich for it) and one comparison of two
commands is printed. A fixed count of runs of a fixed method then measures without numpy at all; an
adaptive stop or `--method auto`'s pilot needs the statistics in the orchestrator too, which it imports
beside the warm-up (usecases/compare.py `_store_then`) while the reporter imports the report's (rich, the
renderer, the exporters) on the other CPU (a default compare's first invocation ~90 ms sooner, its start
and end together ~40 ms shorter, than with the report imported beside the warm-up; a reporter's end
itself is ~10 ms longer than reporting in-process; docs/notes/overhead.md, twelfth pass). `start`
looks at the arguments cheaply; the comparison decides for certain once they are parsed
(usecases/compare.py `_report_apart`) and kills the reporter when it is not wanted, before anything is
measured. Only the `duet` program forks (its entry point calls `start`), never another program that
runs duetbench in its own process.

The reporter ignores SIGINT, SIGTERM and SIGHUP (a closed terminal sends it to both): the orchestrator
handles them (it stops measuring, stores what it has, and hands over an "interrupted" comparison). If
the orchestrator dies without handing over (SIGKILL, a crash), the reporter sees the pipe close and
exits at once, without a word. If the reporter is gone when the orchestrator hands over, the
orchestrator reports itself (`hand_over` returns None).
"""
from __future__ import annotations

import importlib
import os
import signal
import sys
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from rich.console import Console

#: The parent's handle on its reporter, until the comparison takes it (`take`).
_reporter: Reporter | None = None
#: True in the reporter process.
_in_child = False
#: The CPU seconds (user + system) of the reporter this process reaped last: bench/overhead.py counts
#: them as the orchestrator's own, with the parent's.
reporter_cpu_s = 0.0
#: What the orchestrator imports before its first invocation anyway and the reporter needs too (msgspec, the
#: records, the store's location, the console's stand-in; ~27 ms on a 2-vCPU Intel Xeon VM, issue 17):
#: imported once, before the fork, where each process imported them on its own. The reporter is ready no
#: later (it forks later by what it no longer imports), and a compare costs that much less CPU.
BOTH_IMPORT = ("duetbench.usecases.conclude", "duetbench.report.lazy_console", "duetbench.execute.owner",
               "duetbench.store.location", "duetbench.model.method", "json", "random", "threading",
               "struct", "weakref")
#: What the reporter ignores (the orchestrator handles them, and waits through them while it reports).
REPORTER_IGNORES = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
#: Longest wait for the reporter's imports (they take well under a second): beyond it something is wrong
#: with it, and the comparison goes on without it rather than hang.
READY_TIMEOUT_S = 60.0


def in_child() -> bool:
    """Is this process a reporter (forked by `start`)?"""
    return _in_child


def _worth_forking(args: Sequence[str]) -> bool:
    """A cheap look at `duet`'s arguments: a compare without a progress line, on two CPUs or more? A wrong
    yes (one command, a scan, a progress line forced by --style) costs a reporter killed before measuring
    (`take` is told so)."""
    if not args or args[0] != "compare" or any(a in ("-h", "--help") for a in args):
        return False
    if sys.stdout.isatty() and "--no-progress" not in args:
        return False
    return len(os.sched_getaffinity(0)) >= 2


def start(args: Sequence[str]) -> Handover | None:
    """At the program's start: fork the reporter if `args` look like a comparison it can report. In the
    parent None (the reporter waits for `take`); in the reporter, once the parent has measured and handed
    over, what it handed over."""
    global _reporter
    if not _worth_forking(args):
        return None
    for name in BOTH_IMPORT:
        importlib.import_module(name)
    forked = Reporter.fork((), then="duetbench.usecases.conclude:REPORT_MODULES")
    if isinstance(forked, Handover):
        return forked
    _reporter = forked
    return None


def take() -> Reporter | None:
    """The reporter forked at start, for the comparison to hand over to (or kill); None if there is none."""
    global _reporter
    reporter, _reporter = _reporter, None
    return reporter


def end() -> None:
    """At the program's end: a reporter nobody took (another command ran, or it failed first) ends too."""
    reporter = take()
    if reporter is not None:
        reporter.kill()


class Handover:
    """What the reporter needs from the orchestrator: how the comparison ended and where to report it
    (the measurements themselves are in the store). (A plain class: this module is imported before the
    fork, where every millisecond of import delays the reporter; dataclasses and pickle took ~17 ms.)"""

    def __init__(self, comparison_id: int, ending: Any, db_path: Any, exports: Any, console_options: dict[str, Any],
                 time_unit: str | None) -> None:
        self.comparison_id = comparison_id
        #: usecases.conclude.Ending: the status, the failure, the method and the options the end needs.
        self.ending = ending
        self.db_path = db_path
        #: report.exporters.Exports: the --export-FORMAT files.
        self.exports = exports
        #: The console's options (report.lazy_console.LazyConsole): the reporter makes the same console.
        self.console_options = console_options
        self.time_unit = time_unit

    def conclude(self) -> int:
        """In the reporter: judge, print and export the comparison; its exit code (or a DuetError)."""
        from duetbench.report.lazy_console import LazyConsole
        from duetbench.usecases.conclude import _DeferredComparison, conclude

        return conclude(self.ending, _DeferredComparison.stored(self.db_path, self.comparison_id),
                        db_path=self.db_path, exports=self.exports,
                        console=cast("Console", LazyConsole(**self.console_options)),
                        time_unit=self.time_unit, on_report=None)


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


class Reporter:
    """The orchestrator's handle on its reporter process."""

    def __init__(self, pid: int, ready_fd: int, job_fd: int) -> None:
        self.pid = pid
        self._ready_fd: int | None = ready_fd
        self._job_fd: int | None = job_fd
        self._reaped = False

    @classmethod
    def fork(cls, modules: Sequence[str], then: str | None = None) -> Reporter | Handover:
        """In the parent: the handle. In the reporter: once `modules` (and the names listed by `then`,
        "module:ATTRIBUTE") are imported and the parent handed over, what it handed over."""
        global _in_child
        ready_r, ready_w = os.pipe()
        job_r, job_w = os.pipe()
        for stream in (sys.stdout, sys.stderr):  # nothing buffered may be written twice
            try:
                stream.flush()
            except (OSError, ValueError, AttributeError):
                pass
        pid = os.fork()
        if pid:
            os.close(ready_w)
            os.close(job_r)
            return cls(pid, ready_r, job_w)
        _in_child = True
        os.close(ready_r)
        os.close(job_w)
        for signum in REPORTER_IGNORES:
            signal.signal(signum, signal.SIG_IGN)
        try:
            for name in modules:
                importlib.import_module(name)
            if then is not None:
                module, _, attribute = then.partition(":")
                for name in getattr(importlib.import_module(module), attribute):
                    importlib.import_module(name)
        except Exception:  # noqa: BLE001 - the report meets it again, with its own clear error
            pass
        from duetbench.startup import settle

        settle()  # its start-up is over; the report collects as Python does
        try:
            os.write(ready_w, b"r")
        except OSError:  # EPIPE: the parent is gone already (it failed, or was killed): nothing to report
            os._exit(0)
        os.close(ready_w)
        data = _read_all(job_r)
        os.close(job_r)
        if not data:  # the parent ended without handing over: nothing to report
            os._exit(0)
        import pickle

        handover: Handover = pickle.loads(data)
        return handover

    def wait_ready(self) -> None:
        """Block until the reporter has imported what it needs (or is gone): from here on it only waits. One
        that is not ready within READY_TIMEOUT_S is ended (the parent then reports itself)."""
        import select

        fd, self._ready_fd = self._ready_fd, None
        if fd is None:
            return
        try:
            ready, _, _ = select.select([fd], [], [], READY_TIMEOUT_S)
            if ready:
                os.read(fd, 1)
        finally:
            os.close(fd)
        if not ready:
            self.kill()

    def hand_over(self, handover: Handover, meanwhile: Callable[[], object] | None = None) -> int | None:
        """Give the reporter the comparison to report and wait for it; its exit code, or None if it is gone
        (then the caller reports itself; the reporter's imports held nothing it needs). `meanwhile`: what
        the orchestrator still has to do (end its launchers), done while the reporter reports."""
        import pickle

        self.wait_ready()
        try:
            data = pickle.dumps(handover)
        except Exception:  # noqa: BLE001 - something here cannot cross: report in this process
            self.kill()
            return None
        fd, self._job_fd = self._job_fd, None
        if fd is None or self._reaped:  # ended already (it was not ready in time)
            return None
        try:
            os.write(fd, data)
        except OSError:  # EPIPE: it died (OOM, a kill) before the hand-over
            os.close(fd)
            self._reap()
            return None
        os.close(fd)
        # The reporter ignores Ctrl-C, SIGTERM and SIGHUP and finishes the report: so does its waiter (a SIGTERM
        # here ended it with 143 while the orphaned reporter went on printing).
        previous = {signum: signal.signal(signum, signal.SIG_IGN) for signum in REPORTER_IGNORES}
        try:
            if meanwhile is not None:
                meanwhile()
        finally:
            try:
                code = self._reap()
            finally:
                for signum, handler in previous.items():
                    signal.signal(signum, handler)
        return code

    def kill(self) -> None:
        """No hand-over will come: end the reporter now, wherever it is (its imports must not go on beside
        what the parent measures next)."""
        for fd in (self._ready_fd, self._job_fd):
            if fd is not None:
                os.close(fd)
        self._ready_fd = self._job_fd = None
        if not self._reaped:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self._reap()

    def _reap(self) -> int:
        global reporter_cpu_s
        self._reaped = True
        _, status, usage = os.wait4(self.pid, 0)
        reporter_cpu_s = usage.ru_utime + usage.ru_stime
        return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


def exit_child(code: object) -> None:
    """End the reporter with `code` (a SystemExit's), without returning into the code that called the
    program: in the reporter nothing after the report may run twice."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    if code is None:
        os._exit(0)
    os._exit(code if isinstance(code, int) else 1)
