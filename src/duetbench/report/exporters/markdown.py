"""``--export-markdown``: GitHub-flavoured Markdown, e.g. for a pull-request comment or $GITHUB_STEP_SUMMARY.

Every text is escaped with `markdown_text` (no raw HTML, no cell or code-span breaks, one line)."""
from __future__ import annotations

from duetbench.report.exporters import described
from duetbench.report.exporters._document import Markup, Table, document_exporter
from duetbench.report.safe_text import markdown_text


class Markdown(Markup):
    def text(self, value: str) -> str:
        return markdown_text(value)

    def strong(self, value: str) -> str:
        return f"**{markdown_text(value)}**"

    def code(self, value: str) -> str:
        return f"`{value}`"  # our own option names: nothing to escape

    def heading(self, value: str) -> str:
        return f"### {markdown_text(value)}"

    def _row(self, cells: tuple[str, ...]) -> str:
        return "|" + "".join(f" {markdown_text(c)} |" if c else " |" for c in cells)

    def table(self, table: Table) -> str:
        rule = "|" + "".join("---:|" if right else "---|" for right in table.right)
        return "\n".join([self._row(table.header), rule, *(self._row(r) for r in table.rows)])

    def warnings(self, lines: tuple[str, ...]) -> str:
        return "\n".join(f"> ⚠ {markdown_text(w)}" for w in lines)

    def bullets(self, items: tuple[str, ...]) -> str:
        return "\n".join(f"- {markdown_text(item)}" for item in items)

    def footer(self, value: str) -> str:
        return f"<sub>{markdown_text(value)}</sub>"


MARKUP = Markdown()
EXPORTER = document_exporter(MARKUP, **described("markdown"))
