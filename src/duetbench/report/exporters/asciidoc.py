"""``--export-asciidoc``: the Markdown export's content as AsciiDoc (a table per subject, as hyperfine's).

Escaping: every character of a text that AsciiDoc could read as markup — formatting marks, attribute
references ``{...}``, macro brackets ``[...]`` (``pass:[...]`` would let raw HTML through), cell
separators ``|``, HTML's ``< > &`` — is written as a numeric character reference (``&#91;``), which
Asciidoctor passes through as the character itself (Asciidoctor manual, "Character replacement
substitutions")."""
from __future__ import annotations

import re

from duetbench.report.exporters import described
from duetbench.report.exporters._document import Markup, Table, document_exporter
from duetbench.report.safe_text import visible

# Letters, digits, spaces and punctuation AsciiDoc does not interpret where our texts go (inside a
# paragraph or a cell, never at the start of a line); everything else ASCII becomes &#N;.
_MARKUP = re.compile(r"[^\w \t.,:;%/?!()=+'\-\u0080-\U0010ffff]|_")


def text(value: str) -> str:
    one_line = visible(value).replace("\r", " ").replace("\n", " ")
    return _MARKUP.sub(lambda m: f"&#{ord(m.group())};", one_line)


class AsciiDoc(Markup):
    def text(self, value: str) -> str:
        return text(value)

    def strong(self, value: str) -> str:
        return f"*{text(value)}*"

    def code(self, value: str) -> str:
        return f"`{text(value)}`"

    def heading(self, value: str) -> str:
        return f"=== {text(value)}"

    def table(self, table: Table) -> str:
        cols = ",".join(">" if right else "<" for right in table.right)
        lines = [f'[cols="{cols}",options="header"]', "|===", "".join(f"| {text(c)} " for c in table.header).rstrip()]
        for row in table.rows:
            lines += ["", *(f"| {text(c)}".rstrip() for c in row)]
        return "\n".join([*lines, "|==="])

    def warnings(self, lines: tuple[str, ...]) -> str:
        return "\n\n".join(f"WARNING: {text(w)}" for w in lines)

    def bullets(self, items: tuple[str, ...]) -> str:
        return "\n".join(f"* {text(item)}" for item in items)

    def footer(self, value: str) -> str:
        return f"[.small]#{text(value)}#"


MARKUP = AsciiDoc()
EXPORTER = document_exporter(MARKUP, **described("asciidoc"))
