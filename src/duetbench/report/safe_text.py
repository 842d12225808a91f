"""Text from outside (benchmark names from an import, commands, notes) made safe for where it is shown.

- Invisible characters that change what a reader sees — bidirectional overrides (U+202E makes
  ``exe.txt`` read as ``txt.exe``), zero-width characters, line separators — are shown as ``\\u202e``
  escapes in the terminal, CSV, Markdown and HTML (`visible`).
- A CSV text cell starting with ``=``, ``+``, ``-``, ``@`` (or a tab / carriage return) is a formula to
  a spreadsheet: it is prefixed with ``'`` (the OWASP advice); numbers stay numbers (`csv_cell`).
- Markdown passes raw HTML through (``<img onerror=…>`` in a pull-request comment): HTML special
  characters are escaped, and so are the characters that would end a table cell or a code span, or
  start emphasis or a link (`markdown_text`).
"""
from __future__ import annotations

import re
from typing import Any, NoReturn, TextIO

# Bidi embeddings, overrides and isolates, marks, zero-width characters (not U+200D, the joiner inside
# emoji sequences), word joiner and invisible operators, line and paragraph separators, BOM.
_INVISIBLE = re.compile("[\u061c\u200b\u200c\u200e\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?%?")
# Backslash-escaped in Markdown (CommonMark escapes any ASCII punctuation): the escape itself, a cell's end,
# a code span's, emphasis (`cp *.c *.h dir` read as "cp <em>.c </em>.h dir"), strike-through, and the "]"
# that makes "[text](url)" or "[text][ref]" a link (a bracket alone, "Mean [ms]", is text, as hyperfine writes it).
# An underscore between two letters or digits never starts or ends emphasis: `BM_Fast`, `duet_sync` stay as typed.
_MARKDOWN_MARK = re.compile(r"[\\|`*~]|(?<![^\W_])_|_(?![^\W_])|\](?=[(\[])")


def visible(text: str) -> str:
    """`text` with every invisible, reordering character written as a ``\\uXXXX`` escape."""
    return _INVISIBLE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


#: Control characters a terminal acts on rather than shows (C0 but tab and newline, DEL, C1): ESC starts a
#: sequence that recolours, moves the cursor or sets the window's title; rich passes it through as text.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def escape_controls(text: str) -> str:
    """`text` with every control character a terminal would act on written as a ``\\xNN`` escape: a name
    or command (``-n $'\\e[31mred'``, a benchmark's name in an imported file) is shown, not obeyed."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def visible_deep(value: Any) -> Any:
    """`visible` applied to every string inside dicts, lists and tuples (keys included)."""
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, dict):
        return {visible_deep(k): visible_deep(v) for k, v in value.items()}
    if isinstance(value, list):
        return [visible_deep(v) for v in value]
    if isinstance(value, tuple):
        return tuple(visible_deep(v) for v in value)
    return value


def csv_cell(value: Any) -> Any:
    """A value as a CSV cell no spreadsheet runs as a formula. Numbers, and text that is a plain number
    (``-2.5``, ``+3%``), are left as they are: only text cells that start a formula get the ``'``."""
    if not isinstance(value, str):
        return value
    text = visible(value)
    if text.startswith(_FORMULA_START) and not _NUMBER.fullmatch(text):
        return "'" + text
    return text


def csv_row(row: dict[str, Any]) -> dict[str, Any]:
    return {k: csv_cell(v) for k, v in row.items()}


def markdown_text(text: str) -> str:
    """Text for a Markdown table cell or heading: no raw HTML, no cell or code-span breaks, one line."""
    import html  # here, not at the top: html.entities' tables are ~3 ms of every `duet` start

    escaped = html.escape(visible(text), quote=False)
    return _MARKDOWN_MARK.sub(r"\\\g<0>", escaped).replace("\r", " ").replace("\n", " ")


class VisibleStream:
    """A text stream that writes `visible` text: wraps stdout/stderr so that no name printed by any part
    of the CLI can reorder the terminal's line. Everything else is the wrapped stream's.

    A stream that cannot be written (a full disk, `> /dev/full`, a terminal gone: EIO) ends the command
    with one line, not a traceback: the stream is pointed at /dev/null first, so that neither that line
    (when it is stderr that failed) nor the interpreter's last flush fails again. A closed pipe is left
    to the console (report/console.py: quiet, 141)."""

    def __init__(self, stream: TextIO, name: str = "output") -> None:
        self._stream = stream
        self._name = name

    def write(self, text: str) -> int:
        if isinstance(text, str) and not text:
            # click probes a stream with write("") and takes any exception as "binary"; a write of nothing
            # to /dev/full fails, and must not end the command before anything was to be written.
            return 0
        try:
            self._stream.write(visible(text))
        except BrokenPipeError:
            raise
        except OSError as exc:
            self._unwritable(exc)
        return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            self._unwritable(exc)

    def _unwritable(self, exc: OSError) -> NoReturn:
        from duetbench.errors import DuetError
        from duetbench.report.streams import discard_further_output

        discard_further_output(self._stream)
        raise DuetError(f"cannot write to standard {self._name}: {exc.strerror or exc}",
                        hint="send it where there is room; anything measured is stored already (`duet show`)") from None

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def guard_standard_streams() -> None:
    """Make sys.stdout and sys.stderr `VisibleStream`s (once)."""
    import sys

    if not isinstance(sys.stdout, VisibleStream):
        sys.stdout = VisibleStream(sys.stdout, "output")
    if not isinstance(sys.stderr, VisibleStream):
        sys.stderr = VisibleStream(sys.stderr, "error")
