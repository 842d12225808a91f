"""The console reports print to standard output with."""
from __future__ import annotations

import os
import sys
from typing import Any

from rich.console import Console

#: 128 + SIGPIPE: the shell's code for a process whose reader closed the pipe.
EXIT_BROKEN_PIPE = 141


class OutputConsole(Console):
    """rich's Console, ending as a C tool killed by SIGPIPE would when the reader of the output goes away
    (`duet compare … | head`): without a word and with 141. rich's own ending is exit code 1, which
    duet's commands use for "a command failed"; what was measured is stored either way.

    Without emoji codes: a command is shown as given (`echo :smile:` was printed as `echo 😄`)."""

    def __init__(self, *args: Any, **options: Any) -> None:
        options.setdefault("emoji", False)
        super().__init__(*args, **options)

    def on_broken_pipe(self) -> None:
        self.quiet = True
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        raise SystemExit(EXIT_BROKEN_PIPE)
