"""--output=pipe: each side's output into a pipe that is read and discarded."""
from __future__ import annotations

import os
import select
import threading
from pathlib import Path


class PipeSinks:
    """--output=pipe: a side's output goes into a FIFO that a thread of ours reads and discards, so the
    command writes to a pipe (as into `| cat`) rather than to /dev/null, which some programs detect and
    skip writing to. The FIFO, unlike a pipe, can be named in a launcher request."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self._paths: dict[str, Path] = {}
        self._fds: list[int] = []
        self._stop_r, self._stop_w = -1, -1
        self._thread: threading.Thread | None = None

    def __enter__(self) -> PipeSinks:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def path(self, side: str) -> Path:
        if side not in self._paths:
            path = self.workdir / f"{side}.pipe"
            os.mkfifo(path)
            # Our own write end keeps the read end from reporting end-of-file between invocations.
            read_fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
            self._fds += [read_fd, os.open(path, os.O_WRONLY)]
            self._paths[side] = path
            self._restart()
        return self._paths[side]

    def _restart(self) -> None:
        self._stop()
        self._stop_r, self._stop_w = os.pipe()
        readers = self._fds[0::2]
        self._thread = threading.Thread(target=_drain, args=(readers, self._stop_r), daemon=True)
        self._thread.start()

    def _stop(self) -> None:
        if self._thread is not None:
            os.write(self._stop_w, b"x")
            self._thread.join()
            os.close(self._stop_r)
            os.close(self._stop_w)
            self._thread = None

    def close(self) -> None:
        self._stop()
        for fd in self._fds:
            os.close(fd)
        for path in self._paths.values():  # the scratch directory may serve the comparison's next runner
            path.unlink(missing_ok=True)
        self._fds, self._paths = [], {}


def _drain(fds: list[int], stop: int) -> None:
    """Read and discard whatever arrives on `fds` until `stop` becomes readable."""
    poller = select.poll()
    for fd in (*fds, stop):
        poller.register(fd, select.POLLIN)
    while True:
        for fd, _ in poller.poll():
            if fd == stop:
                return
            try:
                os.read(fd, 1 << 16)
            except BlockingIOError:
                pass
