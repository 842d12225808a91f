"""Issue 16 item 5: exports of names from outside — spreadsheet formulas neutralized in CSV (numbers kept
numeric), raw HTML escaped in Markdown, bidi controls visible in the terminal, CSV, Markdown and HTML."""
from __future__ import annotations

import csv
from pathlib import Path

from duetbench.report.safe_text import csv_cell, escape_controls, markdown_text, visible

EVIL = '=HYPERLINK("http://x")<img src=x onerror=alert(1)>\u202egpj.exe'
RLO = "\u202e"


def test_csv_cell_neutralizes_formulas_but_keeps_numbers() -> None:
    assert csv_cell("=1+1") == "'=1+1"
    assert csv_cell("@SUM(A1)") == "'@SUM(A1)"
    assert csv_cell("+cmd") == "'+cmd" and csv_cell("-cmd") == "'-cmd"
    assert csv_cell(-2.5) == -2.5 and csv_cell("-2.5") == "-2.5" and csv_cell("+3%") == "+3%"
    assert csv_cell("plain") == "plain"


def test_markdown_text_escapes_html_cells_and_code_spans() -> None:
    text = markdown_text("<img onerror=x>|`a`\nb")
    assert "<" not in text and "\\|" in text and "\\`" in text and "\n" not in text


def test_visible_escapes_reordering_characters_only() -> None:
    assert visible(f"a{RLO}b\u2066c\u200bd") == "a\\u202eb\\u2066c\\u200bd"
    assert visible("naïve ⚪ 🟢") == "naïve ⚪ 🟢"


def test_escape_controls_escapes_what_a_terminal_obeys_only() -> None:
    assert escape_controls("a\x1b[31mb\x07\tc\nd\x9be\x7f") == "a\\x1b[31mb\\x07\tc\nd\\x9be\\x7f"
    assert escape_controls("naïve ⚪ 🟢 → ±") == "naïve ⚪ 🟢 → ±"


def test_terminal_shows_control_characters_in_names_instead_of_obeying_them(duet) -> None:  # type: ignore[no-untyped-def]
    title, clear = "\x1b]0;pwned\x07A", "\x1b[2JB"  # set the window's title; clear the screen
    proc = duet("compare", "true", "true", "--runs", "3", "--warmup", "0", "--min-runs", "2", "--no-progress",
                "--method", "sequential", "--name-a", title, "--name-b", clear, "--db", "r.db")
    assert proc.returncode == 0, proc.stderr
    shown = duet("show", "1", "--db", "r.db")
    assert shown.returncode == 0, shown.stderr
    for out in (proc.stdout, shown.stdout):
        assert "\x1b" not in out and "\x07" not in out, out
        assert escape_controls(title) in out and escape_controls(clear) in out, out


def _import(duet, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    rows = ["bench,method,run,side,value"]
    rows += [f'"{EVIL.replace(chr(34), chr(34) * 2)}",{m},{r},{s},{1 + 0.01 * ((r + i) % 3)}'
             for m in ("duet", "sequential") for r in range(4) for s in "AB" for i in range(3)]
    (tmp_path / "evil.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    proc = duet("import", "csv", "evil.csv", "--col", "benchmark=bench", "--col", "method=method", "--col", "run=run",
                "--col", "side=side", "--col", "value=value", "--db", "r.db")
    assert proc.returncode == 0, proc.stderr


def test_analyze_exports_of_an_evil_name(duet, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _import(duet, tmp_path)
    proc = duet("analyze", "--db", "r.db", "--resamples", "200", "--export-csv", "a.csv", "--export-markdown", "a.md")
    assert proc.returncode == 0, proc.stderr
    assert RLO not in proc.stdout + proc.stderr and "\\u202e" in proc.stdout
    with open(tmp_path / "a.csv", newline="", encoding="utf-8") as f:
        table = list(csv.DictReader(f))
    assert table and all(row["benchmark"].startswith("'=HYPERLINK") for row in table)
    assert all(RLO not in value for row in table for value in row.values())
    assert any(row["ratio"] and float(row["ratio"]) > 0 for row in table)  # numbers stay numbers
    md = (tmp_path / "a.md").read_text(encoding="utf-8")
    assert "<img" not in md and "&lt;img" in md and RLO not in md
    report = duet("report", "--db", "r.db", "-o", "r.html")
    assert report.returncode == 0, report.stderr
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert RLO not in html and "<img src=x" not in html


def test_compare_exports_of_evil_names(duet, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    proc = duet("compare", "true", "true", "--runs", "3", "--warmup", "0", "--min-runs", "2", "--no-progress",
                "--name-a", "=cmd|' /C calc'!A0", "--name-b", f"<b onmouseover=x>{RLO}B", "--db", "r.db",
                "--export-csv", "c.csv", "--export-markdown", "c.md")
    assert proc.returncode == 0, proc.stderr
    assert RLO not in proc.stdout + proc.stderr
    with open(tmp_path / "c.csv", newline="", encoding="utf-8") as f:
        names = {row["name"] for row in csv.DictReader(f)}
    assert names == {"'=cmd|' /C calc'!A0", "<b onmouseover=x>\\u202eB"}
    md = (tmp_path / "c.md").read_text(encoding="utf-8")
    assert "<b " not in md and RLO not in md
