"""A rich console made when it is first used.

`duet compare` prints nothing before its first pair unless it draws the progress bar (a terminal,
without --no-progress): importing rich and making its console, ~17 ms of CPU on the 2-CPU VM (issue
17), then waits until the report, instead of delaying the first invocation.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console


class LazyConsole:
    """Stands in for ``rich.console.Console(**options)``: every attribute is the real console's, made on
    first use. What hands the console to rich itself (a `Progress`) passes `real_console(it)`."""

    def __init__(self, **options: Any) -> None:
        self._options = options
        self._console: Console | None = None

    @property
    def options_given(self) -> dict[str, Any]:
        """The options it was made with (another process makes the same console from them)."""
        return dict(self._options)

    @property
    def real(self) -> Console:
        if self._console is None:
            from duetbench.report.console import OutputConsole

            self._console = OutputConsole(**self._options)
        return self._console

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # not yet set (copying, pickling): never the console's private parts
            raise AttributeError(name)
        return getattr(self.real, name)


def real_console(console: Any) -> Console:
    """The rich console itself, made now if `console` is a `LazyConsole`."""
    return console.real if isinstance(console, LazyConsole) else console
