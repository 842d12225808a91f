"""Work the orchestrator does on a thread while the warm-up runs (imports, files the first batch needs)."""
from __future__ import annotations

import threading
from collections.abc import Callable, Sequence


def import_modules(names: Sequence[str]) -> Callable[[], None]:
    """A `RunSettings.during_warmup` task that imports `names`, in order."""
    def task() -> None:
        import importlib

        for name in names:
            importlib.import_module(name)

    return task


class Meanwhile:
    """`RunSettings.during_warmup`, run at most once on a thread, from the first warm-up launch to `join`.

    The thread imports modules (with the GIL, while the orchestrator sleeps in poll()) and makes files
    the first batch needs; a failure is left for the orchestrator to meet when it does that itself, with
    its own clear error."""

    def __init__(self, task: Callable[[], None] | None) -> None:
        self._task = task
        self._thread: threading.Thread | None = None

    @staticmethod
    def _run(task: Callable[[], None]) -> None:
        try:
            task()
        except Exception:  # noqa: BLE001 - see the class docstring
            pass

    def first(self, task: Callable[[], None]) -> None:
        """Run `task` before the one given, on the same thread (if the thread runs at all)."""
        then = self._task

        def both() -> None:
            task()
            if then is not None:
                then()

        self._task = both

    def start(self) -> None:
        if self._task is not None and self._thread is None:
            self._thread = threading.Thread(target=self._run, args=(self._task,), name="duetbench-meanwhile",
                                            daemon=True)
            self._thread.start()
        self._task = None

    def join(self) -> None:
        self._task = None  # nothing measured runs beside it: once measuring has begun it is too late
        if self._thread is not None:
            self._thread.join()
            self._thread = None
