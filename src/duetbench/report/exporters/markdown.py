"""``--export-markdown``: GitHub-flavoured Markdown, e.g. for a pull-request comment or $GITHUB_STEP_SUMMARY.

Every text is escaped with `markdown_text` (no raw HTML, no cell or code-span breaks, one line)."""
from __future__ import annotations

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
from duetbench.report.safe_text import markdown_text


def _inline(part: Inline) -> str:
    if isinstance(part, Strong):
        return f"**{markdown_text(part.text)}**"
    if isinstance(part, Code):
        return f"`{part.text}`"
    return markdown_text(part)


def _row(cells: tuple[str, ...]) -> str:
    return "|" + "".join(f" {markdown_text(c)} |" if c else " |" for c in cells)


def _block(block: Block) -> str:
    if isinstance(block, Heading):
        return f"### {markdown_text(block.text)}"
    if isinstance(block, Paragraph):
        return "".join(_inline(p) for p in block.parts)
    if isinstance(block, Table):
        rule = "|" + "".join("---:|" if right else "---|" for right in block.right)
        return "\n".join([_row(block.header), rule, *(_row(r) for r in block.rows)])
    if isinstance(block, Warnings):
        return "\n".join(f"> ⚠ {markdown_text(w)}" for w in block.lines)
    if isinstance(block, Bullets):
        return "\n".join(f"- {markdown_text(item)}" for item in block.items)
    if isinstance(block, Footer):
        return f"<sub>{markdown_text(block.text)}</sub>"
    raise TypeError(block)


def render(doc: Document) -> str:
    return "\n\n".join(_block(b) for b in doc) + "\n"


EXPORTER = TextExporter(
    name="markdown", label="Markdown", help="Write a Markdown table (a pull-request comment, $GITHUB_STEP_SUMMARY).",
    comparison=lambda report: render(comparison_document(report)),
    scan=lambda scan: render(scan_document(scan)),
    campaign=lambda campaign: render(campaign_document(campaign)),
)
