"""``--export-orgmode``: the Markdown export's content as an Emacs Org table (as hyperfine's).

Escaping: ``|`` ends a cell, so it is written as the entity ``\\vert{}``; a character that could open
Org markup (emphasis ``* / _ = ~ +``, links ``[[``, macros ``{{{``, export snippets ``@@``, entities
``\\``) gets a zero-width space before it, the escape the Org manual recommends ("Escape Character"),
so it stays plain text."""
from __future__ import annotations

import re

from duetbench.report.exporters import described
from duetbench.report.exporters._document import Markup, Table, document_exporter
from duetbench.report.safe_text import visible

ZERO_WIDTH_SPACE = "\u200b"
# Emphasis marks open markup only after a space, the start, or one of -('"{ (Org's "pre" characters):
# only there do they need the escape; brackets, braces, @ and backslash always do.
_OPENERS = re.compile(r"(?:(?<=^)|(?<=[\s\-('\"{]))([*/_=~+])|([\[\]{}@\\])")


def text(value: str) -> str:
    one_line = visible(value).replace("\r", " ").replace("\n", " ")
    return _OPENERS.sub(lambda m: ZERO_WIDTH_SPACE + m.group(), one_line).replace("|", "\\vert{}")


class Org(Markup):
    def text(self, value: str) -> str:
        return text(value)

    def strong(self, value: str) -> str:
        return f"*{text(value)}*"

    def code(self, value: str) -> str:
        return f"~{text(value)}~"

    def heading(self, value: str) -> str:
        return f"* {text(value)}"

    def _row(self, cells: tuple[str, ...]) -> str:
        return "|" + "".join(f" {text(c)} |" for c in cells)

    def table(self, table: Table) -> str:
        # Org aligns numbers right by itself; <r>/<l> cookies would add a row.
        rule = "|" + "+".join("-" * (len(h) + 2) for h in table.header) + "|"
        return "\n".join([self._row(table.header), rule, *(self._row(r) for r in table.rows)])

    def warnings(self, lines: tuple[str, ...]) -> str:
        return "\n".join(f"- ⚠ {text(w)}" for w in lines)

    def bullets(self, items: tuple[str, ...]) -> str:
        return "\n".join(f"- {text(item)}" for item in items)

    def footer(self, value: str) -> str:
        return text(value)


MARKUP = Org()
EXPORTER = document_exporter(MARKUP, **described("orgmode"))
