"""The console reports print to standard output with."""
from __future__ import annotations

import sys
from typing import Any

from rich.console import Console
from rich.text import Text

from duetbench.report.safe_text import escape_controls
from duetbench.report.streams import discard_further_output

#: 128 + SIGPIPE: the shell's code for a process whose reader closed the pipe.
EXIT_BROKEN_PIPE = 141


class OutputConsole(Console):
    """rich's Console, ending as a C tool killed by SIGPIPE would when the reader of the output goes away
    (`duet compare … | head`): without a word and with 141. rich's own ending is exit code 1, which
    duet's commands use for "a command failed"; what was measured is stored either way.

    Without emoji codes: a command is shown as given (`echo :smile:` was printed as `echo 😄`). Control
    characters in what it prints are shown as escapes (`safe_text.escape_controls`): rich passes ESC
    through, so a name given as `-n $'\\e[2J'` (or read from an imported file) cleared the terminal
    instead of being shown; rich's own styles are not in the strings it is given, so they are not touched."""

    def __init__(self, *args: Any, **options: Any) -> None:
        options.setdefault("emoji", False)
        super().__init__(*args, **options)

    def render_str(self, text: str, **options: Any) -> Text:
        return super().render_str(escape_controls(text), **options)

    def on_broken_pipe(self) -> None:
        self.quiet = True
        discard_further_output(sys.stdout)
        raise SystemExit(EXIT_BROKEN_PIPE)
