"""``--export-orgmode``: the Markdown export's content as an Emacs Org table (as hyperfine's).

Escaping: ``|`` ends a cell, so it is written as the entity ``\\vert{}``; a character that could open
Org markup (emphasis ``* / _ = ~ +``, links ``[[``, macros ``{{{``, export snippets ``@@``, entities
``\\``) gets a zero-width space before it, the escape the Org manual recommends ("Escape Character"),
so it stays plain text."""
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

ZERO_WIDTH_SPACE = "\u200b"
# Emphasis marks open markup only after a space, the start, or one of -('"{ (Org's "pre" characters):
# only there do they need the escape; brackets, braces, @ and backslash always do.
_OPENERS = re.compile(r"(?:(?<=^)|(?<=[\s\-('\"{]))([*/_=~+])|([\[\]{}@\\])")


def text(value: str) -> str:
    one_line = visible(value).replace("\r", " ").replace("\n", " ")
    return _OPENERS.sub(lambda m: ZERO_WIDTH_SPACE + m.group(), one_line).replace("|", "\\vert{}")


def _inline(part: Inline) -> str:
    if isinstance(part, Strong):
        return f"*{text(part.text)}*"
    if isinstance(part, Code):
        return f"~{text(part.text)}~"
    return text(part)


def _row(cells: tuple[str, ...]) -> str:
    return "|" + "".join(f" {text(c)} |" for c in cells)


def _block(block: Block) -> str:
    if isinstance(block, Heading):
        return f"* {text(block.text)}"
    if isinstance(block, Paragraph):
        return "".join(_inline(p) for p in block.parts)
    if isinstance(block, Table):
        # Org aligns numbers right by itself; <r>/<l> cookies would add a row.
        rule = "|" + "+".join("-" * (len(h) + 2) for h in block.header) + "|"
        return "\n".join([_row(block.header), rule, *(_row(r) for r in block.rows)])
    if isinstance(block, Warnings):
        return "\n".join(f"- ⚠ {text(w)}" for w in block.lines)
    if isinstance(block, Bullets):
        return "\n".join(f"- {text(item)}" for item in block.items)
    if isinstance(block, Footer):
        return text(block.text)
    raise TypeError(block)


def render(doc: Document) -> str:
    return "\n\n".join(_block(b) for b in doc) + "\n"


EXPORTER = TextExporter(
    name="orgmode", label="Org", help="Write an Emacs Org table (the Markdown export's content).",
    comparison=lambda report: render(comparison_document(report)),
    scan=lambda scan: render(scan_document(scan)),
    campaign=lambda campaign: render(campaign_document(campaign)),
)
