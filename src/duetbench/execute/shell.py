"""A hook's or an artifact's shell command, run to its end in a process group of its own.

Why a group: a shell killed alone leaves what it started running (`--prepare 'make -j4'`, a
`sleep 100` of a test), holding the pipes its reader waits on, and outliving duet after a SIGTERM or
Ctrl-C. The whole group is killed instead, whenever the wait for it ends other than by its exit."""
from __future__ import annotations

import contextlib
import os
import signal
import subprocess


def run_in_group(argv: list[str], *, timeout: float | None = None,
                 capture_stdout: bool = False) -> subprocess.CompletedProcess[str]:
    """Run `argv` (stdin from /dev/null; stderr captured; stdout captured or discarded) to its end. On a
    timeout (subprocess.TimeoutExpired), an interrupt or any other exception while waiting, its process
    group is killed and reaped before the exception goes on."""
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE if capture_stdout else subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            errors="replace")  # a command may print any bytes (an artifact's `cat /bin/ls`)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # it leads its group (start_new_session)
        proc.communicate()
        raise
    return subprocess.CompletedProcess(argv, proc.returncode, stdout, stderr)
