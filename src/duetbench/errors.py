"""Errors a user can act on. The CLI prints them as one line and exits with their code."""
from __future__ import annotations

#: `duet compare`'s exit code when --fail-if-slower trips: apart from 1 (a command failed) and 2 (bad
#: input), so that CI can tell a measured regression from a broken benchmark.
EXIT_SLOWER = 3
#: A benchmarked command (or, in `duet run`, one or more runs) failed.
EXIT_FAILED = 1


class DuetError(Exception):
    """A problem with the user's input or machine, reported as one line with a hint, never a traceback."""

    exit_code = 2

    def __init__(self, message: str, *, hint: str | None = None, exit_code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        if exit_code is not None:
            self.exit_code = exit_code

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message} — {self.hint}"


class StoreFailed(DuetError):
    """The results database failed while in use (a full disk, a lost connection, a lock held too long).
    Apart from other errors so that a comparison that meets it mid-run can stop, report what it stored
    before, and say where that is kept."""


class CommandFailed(DuetError):
    """A benchmarked command exited non-zero (and --ignore-failure was not given)."""

    exit_code = 1
