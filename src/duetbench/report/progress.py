"""Live progress: runs done and the CI narrowing, refreshed only between invocations.

Auto-refresh is off on purpose: a refresh thread would wake up during measurements and land on one
side of a duet (notes/duet_on_2cpus.md point 1).
"""
from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


class LiveProgress:
    def __init__(self, console: Console, total: int, enabled: bool) -> None:
        self.enabled = enabled and console.is_terminal
        self.progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TimeElapsedColumn(), TextColumn("{task.fields[ci]}"), console=console,
                                 auto_refresh=False, transient=True)
        self.task = self.progress.add_task("measuring", total=total, ci="")

    def __enter__(self) -> "LiveProgress":
        if self.enabled:
            self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.enabled:
            self.progress.stop()

    def update(self, *, done: int, total: int, description: str, ci: str) -> None:
        if self.enabled:
            self.progress.update(self.task, completed=done, total=total, description=description, ci=ci)
            self.progress.refresh()
