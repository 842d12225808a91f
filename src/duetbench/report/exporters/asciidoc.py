"""``--export-asciidoc``: the Markdown export's content as AsciiDoc (a table per subject, as hyperfine's).

Escaping: every character of a text that AsciiDoc could read as markup — formatting marks, attribute
references ``{...}``, macro brackets ``[...]`` (``pass:[...]`` would let raw HTML through), cell
separators ``|``, HTML's ``< > &`` — is written as a numeric character reference (``&#91;``), which
Asciidoctor passes through as the character itself (Asciidoctor manual, "Character replacement
substitutions")."""
from __future__ import annotations

import re

from duetbench.report.exporters import TextExporter
from duetbench.report.exporters._document import (
    Block,
    Bullets,
    Code,
    Document,
    Footer,
    Heading,
    Inline,
    Paragraph,
    Strong,
    Table,
    Warnings,
    campaign_document,
    comparison_document,
    scan_document,
)
from duetbench.report.safe_text import visible

# Letters, digits, spaces and punctuation AsciiDoc does not interpret where our texts go (inside a
# paragraph or a cell, never at the start of a line); everything else ASCII becomes &#N;.
_MARKUP = re.compile(r"[^\w \t.,:;%/?!()=+'\-\u0080-\U0010ffff]|_")


def text(value: str) -> str:
    one_line = visible(value).replace("\r", " ").replace("\n", " ")
    return _MARKUP.sub(lambda m: f"&#{ord(m.group())};", one_line)


def _inline(part: Inline) -> str:
    if isinstance(part, Strong):
        return f"*{text(part.text)}*"
    if isinstance(part, Code):
        return f"`{text(part.text)}`"
    return text(part)


def _block(block: Block) -> str:
    if isinstance(block, Heading):
        return f"=== {text(block.text)}"
    if isinstance(block, Paragraph):
        return "".join(_inline(p) for p in block.parts)
    if isinstance(block, Table):
        cols = ",".join(">" if right else "<" for right in block.right)
        lines = [f'[cols="{cols}",options="header"]', "|===", "".join(f"| {text(c)} " for c in block.header).rstrip()]
        for row in block.rows:
            lines += ["", *(f"| {text(c)}".rstrip() for c in row)]
        return "\n".join([*lines, "|==="])
    if isinstance(block, Warnings):
        return "\n\n".join(f"WARNING: {text(w)}" for w in block.lines)
    if isinstance(block, Bullets):
        return "\n".join(f"* {text(item)}" for item in block.items)
    if isinstance(block, Footer):
        return f"[.small]#{text(block.text)}#"
    raise TypeError(block)


def render(doc: Document) -> str:
    return "\n\n".join(_block(b) for b in doc) + "\n"


EXPORTER = TextExporter(
    name="asciidoc", label="AsciiDoc", help="Write an AsciiDoc table (the Markdown export's content).",
    comparison=lambda report: render(comparison_document(report)),
    scan=lambda scan: render(scan_document(scan)),
    campaign=lambda campaign: render(campaign_document(campaign)),
)
