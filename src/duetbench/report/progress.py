"""Live progress bars refreshed only between measurements, for `duet compare` and `duet run`.

Auto-refresh is off on purpose: a refresh thread would wake up during measurements and land on one
side of a duet (docs/notes/duet_on_2cpus.md point 1).
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Self

from duetbench.report.lazy_console import real_console

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import ProgressColumn


class ManualProgress:
    """A rich progress bar with one task that draws only when told to (`refresh`), on terminals only."""

    def __init__(self, console: Console, enabled: bool, columns: list[ProgressColumn], *, transient: bool = False,
                 description: str, total: int, completed: int = 0, **fields: Any) -> None:
        from rich.progress import Progress

        self.enabled = enabled and console.is_terminal
        self.console = console
        self.progress = Progress(*columns, console=real_console(console), auto_refresh=False, transient=transient)
        self.task = self.progress.add_task(description, total=total, completed=completed, **fields)

    def __enter__(self) -> Self:
        if self.enabled:
            self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.enabled:
            self.progress.stop()

    def refresh(self) -> None:
        if self.enabled:
            self.progress.refresh()


#: Least time between two redraws of `duet compare`'s bar. A redraw costs ~1 ms of the orchestrator's CPU
#: between two pairs, where it delays the next one (issue 17); ten a second is as fast as anyone reads.
REDRAW_INTERVAL_S = 0.1


class LiveProgress(ManualProgress):
    """`duet compare`: invocations done and the CI narrowing."""

    def __init__(self, console: Console, total: int, enabled: bool) -> None:
        self._drawn = float("-inf")
        if not enabled:  # nothing to draw: neither rich nor the console (report/lazy_console.py) is needed yet
            self.enabled = False
            self.console = console
            return
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn

        super().__init__(console, enabled, [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                            TimeElapsedColumn(), TextColumn("{task.fields[ci]}")],
                         transient=True, description="measuring", total=total, ci="")

    def due(self) -> bool:
        """Would an update now be drawn? (What only the bar shows need not be computed otherwise.)"""
        return self.enabled and time.monotonic() - self._drawn >= REDRAW_INTERVAL_S

    def update(self, *, done: int, total: int, description: str, ci: str) -> None:
        if self.enabled:
            self.progress.update(self.task, completed=done, total=total, description=description, ci=ci)
            now = time.monotonic()
            if now - self._drawn >= REDRAW_INTERVAL_S or done >= total:
                self._drawn = now
                self.progress.refresh()
