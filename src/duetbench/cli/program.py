"""The `duet` program itself (its script and ``python -m duetbench``): before click or anything else is
imported, a compare whose report can be made apart forks its reporter (usecases/apart.py), so that the
reporter's imports overlap the whole start-up; then the command line (`cli.main`) runs.

Not in `cli.main`: importing it imports click (~40-80 ms on a 2-vCPU AMD EPYC VM), which the fork would
otherwise wait for."""
from __future__ import annotations

import sys
import warnings

#: typing.TYPE_CHECKING without importing typing (~15 ms of `duet --version` on a 2-vCPU AMD EPYC VM);
#: mypy treats any name TYPE_CHECKING as true.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import NoReturn

    from duetbench.usecases import apart


def setup_process() -> None:
    """What every `duet` process sets up before it prints anything (the reporter too)."""
    from duetbench.report.safe_text import guard_standard_streams

    guard_standard_streams()  # names with bidi overrides (U+202E) must not reorder what the terminal shows
    # numpy's RuntimeWarnings (a division by zero on degenerate data) are source lines on stderr that no
    # user can act on; every result they touch is already judged (nan, "no statistics").
    warnings.simplefilter("ignore", RuntimeWarning)


def write_stdout(data: bytes) -> None:
    """Write what a fast path prints (before click, without the guarded streams of `setup_process`): a
    closed pipe ends it as through click (exit 1, silent); an unwritable output (a full disk, `>
    /dev/full`) with one line, as `VisibleStream` does (exit 2). Either way standard output is pointed at
    /dev/null first, so that the interpreter's last flush does not complain again."""
    try:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    except OSError as exc:
        from duetbench.report.streams import discard_further_output

        discard_further_output(sys.stdout)
        if isinstance(exc, BrokenPipeError):
            sys.exit(1)
        sys.stderr.write(f"error: cannot write to standard output: {exc.strerror or exc} "
                         "\u2014 send it where there is room\n")
        sys.exit(2)


def _open_closed_standard_descriptors() -> None:
    """A program started with stdin, stdout or stderr closed (`duet compare … >&-`) would have its next
    file take that descriptor, and whatever it prints would land in it (an export, a launcher's pipe), and
    Python makes that stream None (an AttributeError on first use; exit code 120 when it flushes at the
    end). Each closed one is opened on /dev/null first, as C programs that care do, so what would have
    been printed there is dropped."""
    import os

    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
            os.set_inheritable(fd, True)  # os.open's are not: the launchers and commands need it too
    for name, fd, mode in (("stdin", 0, "r"), ("stdout", 1, "w"), ("stderr", 2, "w")):
        if getattr(sys, name) is None:
            setattr(sys, name, open(fd, mode, closefd=False, errors="backslashreplace"))


def entry() -> None:
    try:
        run = _start()
    except KeyboardInterrupt:
        _interrupted_while_starting()
    if run is not None:
        run()


def _start() -> Callable[[], None] | None:
    """Everything before the command line is parsed: the fast answers (then None), the reporter's fork
    (whose child reports here and never returns), and the import of the command line, which it returns."""
    from duetbench.startup import defer_collection

    defer_collection()  # before any import of ours: start-up makes no garbage (startup.py)
    _open_closed_standard_descriptors()
    # A terminal whose encoding lacks a character we print (an em dash of the help, a µ of a time, a
    # name) shows it escaped instead of ending in a traceback (stderr does so already, by default).
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(errors="backslashreplace")
    if sys.argv[1:] == ["--version"]:
        # click's own answer (tests/test_startup.py checks they agree), without importing click: ~60 of
        # the ~120 ms `duet --version` took on a 2-vCPU AMD EPYC VM.
        from duetbench import __version__

        write_stdout(f"duetbench, version {__version__}\n".encode())
        return None
    if sys.argv[1:] in (["--help"], ["-h"]):
        # click's page too, kept per width (cli/help_page.py): ~40 ms instead of ~140 on that VM.
        from duetbench.cli.help_page import print_kept

        if print_kept(sys.argv):
            return None
    from duetbench.usecases import apart

    handover = apart.start(sys.argv[1:])
    if handover is not None:  # this is the reporter, and the orchestrator measured: report, then end here
        _report(handover)
    from duetbench.cli.main import entry as run

    return run


def _interrupted_while_starting() -> NoReturn:
    """Ctrl-C (or SIGINT) while the program imports what it needs (~0.1-0.3 s, before its command line is
    parsed): nothing was measured or stored yet. Exit as every interrupted command does, with one line
    instead of the traceback of whatever import it landed in."""
    sys.stderr.write("interrupted while starting: nothing was measured\n")
    raise SystemExit(130)


def _report(handover: apart.Handover) -> None:
    """The reporter's whole life after the hand-over: the report, its errors as `duet` shows them, the exit."""
    from duetbench.errors import DuetError
    from duetbench.usecases import apart

    setup_process()
    code: object = 1
    try:
        code = handover.conclude()
    except DuetError as exc:
        from duetbench.cli.main import _fail

        try:
            _fail(exc)
        except SystemExit as exit_:
            code = exit_.code
    except SystemExit as exit_:
        code = exit_.code
    except BaseException:  # noqa: BLE001 - shown as it would be in one process, then the exit
        import traceback

        traceback.print_exc()
    apart.exit_child(code)

