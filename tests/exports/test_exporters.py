"""The export registry (report/exporters/): every command's --export-FORMAT options come from it, files are
replaced atomically (hyperfine's rule: overwrite), and the table formats escape names from outside."""
from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import click
import pytest

from duetbench.errors import DuetError
from duetbench.report.exporters import (
    FORMATS,
    KINDS,
    TABLE,
    Exports,
    asciidoc,
    exporters_for,
    formats_for,
    orgmode,
    registry,
    write_atomically,
)
from duetbench.report.exporters._document import Bullets, Code, Footer, Heading, Paragraph, Strong, Table, Warnings
from duetbench.report.exporters.markdown import MARKUP as MARKDOWN
from duetbench.report.model import ComparisonReport, ScanEntry, ScanReport

EVIL = "a|b<img src=x onerror=alert(1)> *bold* [[javascript:x][y]] pass:[<b>] {attr} @@html:<i>@@ `c` _u_ \u202e"


def _exports_of(command: click.Command) -> set[str]:
    return {opt[len("--export-"):] for p in command.params for opt in p.opts if opt.startswith("--export-")}


def test_every_command_offers_the_formats_that_write_what_it_produces() -> None:
    from duetbench.cli.analyze import analyze
    from duetbench.cli.main import compare, run, show

    everything = set(FORMATS)
    assert _exports_of(compare) == _exports_of(show) == everything
    # hyperfine's JSON holds commands' timing runs: a campaign's harness iterations are none.
    assert _exports_of(analyze) == _exports_of(run) == everything - {"hyperfine"}
    assert {"asciidoc", "orgmode", "html"} <= _exports_of(analyze)
    assert [e.name for e in exporters_for("campaign")] == [f for f in FORMATS if f != "hyperfine"]


def test_registry_names_match_their_modules_and_options() -> None:
    assert list(registry()) == list(FORMATS)
    for name, exporter in registry().items():
        assert exporter.name == name and exporter.kinds and exporter.help


def test_the_light_table_agrees_with_every_module() -> None:
    """The options are built from TABLE without importing the modules: what it says of each format is what
    its EXPORTER is."""
    assert [f.name for f in TABLE] == list(FORMATS)
    for entry, exporter in zip(TABLE, registry().values(), strict=True):
        assert (entry.name, entry.label, entry.help, entry.kinds) == \
            (exporter.name, exporter.label, exporter.help, exporter.kinds)
    for kind in KINDS:
        assert [f.name for f in formats_for(kind)] == [e.name for e in exporters_for(kind)]


def test_an_existing_file_is_replaced_keeping_its_mode(tmp_path: Path) -> None:
    path = tmp_path / "r.md"
    path.write_text("an older, much longer report that must not survive in part\n" * 10)
    path.chmod(0o640)
    write_atomically(path, "new\n", "Markdown export")
    assert path.read_text() == "new\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert os.listdir(tmp_path) == ["r.md"]  # no temporary file left


def test_a_new_file_gets_the_umask_mode(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        write_atomically(tmp_path / "n.json", "{}", "JSON export")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "n.json").stat().st_mode) == 0o640


def test_a_write_that_dies_leaves_the_old_file_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "r.csv"
    path.write_text("old,complete\n")

    def killed(fd: int) -> None:
        raise KeyboardInterrupt  # as Ctrl-C (or a SIGTERM turned into it) while the data is being flushed

    monkeypatch.setattr(os, "fsync", killed)
    with pytest.raises(KeyboardInterrupt):
        write_atomically(path, "new," * 100_000, "CSV export")
    assert path.read_text() == "old,complete\n"
    assert os.listdir(tmp_path) == ["r.csv"]


def test_a_symlink_keeps_pointing_at_the_replaced_file(tmp_path: Path) -> None:
    (tmp_path / "real.md").write_text("old")
    (tmp_path / "link.md").symlink_to("real.md")
    write_atomically(tmp_path / "link.md", "new", "Markdown export")
    assert (tmp_path / "link.md").is_symlink() and (tmp_path / "real.md").read_text() == "new"


def test_a_device_is_written_through_not_replaced() -> None:
    write_atomically(Path("/dev/null"), "x", "JSON export")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_unwritable_place_is_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    with pytest.raises(DuetError, match=r"cannot write the JSON export to .*a-file/r\.json: "):
        write_atomically(tmp_path / "a-file" / "r.json", "{}", "JSON export")


def test_missing_directories_are_made(tmp_path: Path) -> None:
    write_atomically(tmp_path / "missing" / "deeper" / "r.json", "{}", "JSON export")
    assert (tmp_path / "missing" / "deeper" / "r.json").read_text() == "{}"


def test_two_exports_to_one_file_are_refused(tmp_path: Path) -> None:
    with pytest.raises(DuetError, match="--export-json and --export-csv both name"):
        Exports({"json": tmp_path / "r", "csv": tmp_path / "." / "r"})
    Exports({"json": Path("/dev/null"), "markdown": Path("/dev/null")})  # a device may take several


DOC = [Heading(f"duetbench: {EVIL}"), Paragraph((Strong(EVIL), f" — {EVIL}", Code("--method auto"))),
       Table(("name", "B/A", "note"), (False, True, False), ((EVIL, "1.0500", ""), ("plain", "+4.80% … +5.30%", "x"))),
       Warnings((EVIL,)), Bullets((EVIL,)), Footer(EVIL)]


def test_markdown_escapes_names_as_before() -> None:
    text = MARKDOWN.render(DOC)
    assert "<img" not in text and "&lt;img" in text and "\u202e" not in text
    rows = [line for line in text.splitlines() if line.startswith("|")]
    assert rows[1] == "|---|---:|---|"
    assert all(len(re.findall(r"(?<!\\)\|", row)) == 4 for row in rows)
    assert rows[2].endswith("| 1.0500 | |")  # an empty cell, as `duet analyze` always wrote it


def test_asciidoc_leaves_no_markup_in_names() -> None:
    text = asciidoc.MARKUP.render(DOC)
    body = text.replace("|===", "")
    # Every | left is a cell separator at the start of a line, every [ ] { } < > & from a name is a reference.
    assert all(line.startswith("| ") or line == "|" or "|" not in line for line in body.splitlines())
    for raw in ("<", ">", "[[", "pass:[", "{attr}", "`c`", "_u_", "*bold*", "\u202e"):
        assert raw not in "\n".join(line for line in text.splitlines() if not line.startswith("[cols="))
    assert "&#124;" in text and "&#60;img" in text and "&#92;u202e" in text  # the bidi override shown as \\u202e
    cells = text.split("|===")[1].strip().split("\n\n")
    assert [len(re.findall(r"(?:^|(?<= ))\|", block, re.M)) for block in cells] == [3, 3, 3]


def test_orgmode_leaves_no_markup_in_names() -> None:
    text = orgmode.MARKUP.render(DOC)
    table = [line for line in text.splitlines() if line.startswith("|")]
    assert [line.count("|") for line in table] == [4, 2, 4, 4]  # |-+-| has two
    assert "\\vert{}" in text and "[[" not in text and "@@" not in text and "\u202e" not in text
    # An emphasis mark after a space gets a zero-width space before it; inside a word it needs none.
    assert " \u200b*bold\u200b*" not in text and " \u200b*bold*" in text


# -- one command (duet compare CMD): hyperfine's table, no B anywhere -----------------------------------

def _single(times: list[float], *, unit: str | None = None, name: str = "A", command: str = "sleep 0.01",
            report_id: int = 1) -> ComparisonReport:
    from duetbench.analyze.single import summarize

    bench = summarize("wall", times, [0.001] * len(times), [0.0005] * len(times), 0.99) if times else None
    return ComparisonReport(
        id=report_id, status="complete", method="single", names={"A": name, "B": ""}, commands={"A": command, "B": ""},
        seed=7, options={"name_a": name, "name_b": "B", "command_a": command, "command_b": None, "metric": "wall"},
        host={"hostname": "h", "cpu_model": "c"}, tool_version="0.test", primary_metric="wall", results={},
        invocations=[], analysis_error=None if bench else "no run finished", benchmark=bench, time_unit=unit)


def _table_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("|")]


@pytest.mark.parametrize("unit, symbol, row", [
    (None, "ms", "11.00 ± 1.00 | 10.00 | 12.00 | 1.00 | 0.50"),
    ("microsecond", "µs", "11000.0 ± 1000.0 | 10000.0 | 12000.0 | 1000.0 | 500.0"),
    ("second", "s", "0.0110 ± 0.0010 | 0.0100 | 0.0120 | 0.0010 | 0.0005"),
])
def test_one_command_is_hyperfines_table_in_the_chosen_unit(unit: str | None, symbol: str, row: str) -> None:
    text = registry()["markdown"].render(_single([0.010, 0.012, 0.011], unit=unit))  # type: ignore[attr-defined]
    lines = _table_lines(text)
    assert lines[0] == (f"| Command | Mean [{symbol}] | Min [{symbol}] | Max [{symbol}] | User [{symbol}] "
                        f"| System [{symbol}] | Runs |")
    assert lines[1] == "|---|---:|---:|---:|---:|---:|---:|"
    assert lines[2] == f"| sleep 0.01 | {row} | 3 |"
    assert len(lines) == 3 and " vs " not in text and "B/A" not in text
    assert "wall time, 3 runs; the mean's 99% CI is" in text and "would resolve about ±" in text


def test_one_command_above_a_second_is_in_seconds_and_named_as_given() -> None:
    markdown = registry()["markdown"]
    text = markdown.render(_single([1.5, 1.7], name="build", command="make -j2"))  # type: ignore[attr-defined]
    assert text.startswith("### duetbench: build\n") and "Command: make -j2" in text
    assert _table_lines(text)[2] == "| build | 1.600 ± 0.141 | 1.500 | 1.700 | 0.001 | 0.001 | 2 |"
    none = markdown.render(_single([]))  # type: ignore[attr-defined]
    assert "**No statistics**: no run finished." in none and not _table_lines(none)


def test_one_command_in_asciidoc_and_org_has_the_same_table() -> None:
    report = _single([0.010, 0.012, 0.011], unit="millisecond")
    adoc = registry()["asciidoc"].render(report)  # type: ignore[attr-defined]
    assert '[cols="<,>,>,>,>,>,>",options="header"]' in adoc
    assert "| Command | Mean &#91;ms&#93; | Min &#91;ms&#93;" in adoc and "| 11.00 ± 1.00\n| 10.00\n" in adoc
    # Org's brackets get a zero-width space before them (orgmode.py); the table is the Markdown one.
    org = registry()["orgmode"].render(report).replace("\u200b", "")  # type: ignore[attr-defined]
    assert "| Command | Mean [ms] | Min [ms] | Max [ms] | User [ms] | System [ms] | Runs |" in org
    assert "| sleep 0.01 | 11.00 ± 1.00 | 10.00 | 12.00 | 1.00 | 0.50 | 3 |" in org
    for text in (adoc, org):
        assert " vs " not in text and "B/A" not in text


def test_one_command_scan_has_a_row_per_value_in_one_unit() -> None:
    scan = ScanReport([ScanEntry({"n": "1"}, _single([0.010, 0.012], command="sleep 0.01")),
                       ScanEntry({"n": "2"}, _single([2.0, 2.2], command="sleep 2", report_id=2)),
                       ScanEntry({"n": "3"}, _single([], command="sleep 3", report_id=3))])
    text = registry()["markdown"].render(scan)  # type: ignore[attr-defined]
    assert text.startswith("### duetbench: one command, scanning n\n")
    assert _table_lines(text) == [
        "| n | Command | Mean [ms] | Min [ms] | Max [ms] | Runs |", "|---:|---|---:|---:|---:|---:|",
        "| 1 | sleep 0.01 | 11.00 ± 1.41 | 10.00 | 12.00 | 2 |",
        "| 2 | sleep 2 | 2100.00 ± 141.42 | 2000.00 | 2200.00 | 2 |",  # the first mean chose ms for the column
        "| 3 | sleep 3 | no statistics | – | – | 0 |"]


def test_one_command_in_json_and_csv_has_no_b() -> None:
    import csv
    import io
    import json

    from duetbench.execute.invocation import Invocation

    report = _single([0.010, 0.012], name="sleeper")
    doc = json.loads(registry()["json"].render(report))  # type: ignore[attr-defined]
    assert doc["comparisons"] == [] and doc["benchmark"]["name"] == "sleeper"
    assert doc["benchmark"]["command"] == "sleep 0.01" and doc["benchmark"]["runs"] == 2
    assert "name_b" not in doc["options"] and "command_b" not in doc["options"]
    assert doc["options"]["command_a"] == "sleep 0.01"
    report.invocations = [Invocation(side="A", index=k, pair=k, warmup=False, status="ok", exit_code=0, signal=0,
                                     start_ns=0, end_ns=int(t * 1e9), wall_s=t, cpu_s=t, user_s=t, sys_s=0.0,
                                     cgroup_cpu_s=None, maxrss_kb=1, nvcsw=0, nivcsw=0, minflt=0, majflt=0,
                                     cpu_requested=1, cpu_seen=1, orphans_reaped=0)
                          for k, t in enumerate((0.010, 0.012))]
    rows = list(csv.DictReader(io.StringIO(registry()["csv"].render(report))))  # type: ignore[attr-defined]
    assert [(r["side"], r["name"]) for r in rows] == [("A", "sleeper")] * 2


# -- two commands (duet compare A B) and N commands (duet compare REF X Y) --------------------------------

def _pair(a: list[float], b: list[float], *, unit: str | None = None, names: tuple[str, str] = ("A", "B"),
          cpu: bool = False, report_id: int = 1) -> ComparisonReport:
    from duetbench.analyze.comparison import ComparisonResult
    from duetbench.analyze.ratio import RatioResult
    from duetbench.analyze.summary import describe

    def result(metric: str, scale: float) -> ComparisonResult:
        sa, sb = describe([x * scale for x in a]), describe([x * scale for x in b])
        ratio = sb.mean / sa.mean
        return ComparisonResult(
            method="sequential", metric=metric, runs=len(a),
            ratio=RatioResult(ratio, ratio * 0.99, ratio * 1.01, 0.99, len(a), "t"),
            verdict="slower" if ratio > 1.02 else "no difference", u_test_p=0.0123, relative_ci_width=0.02,
            a=sa, b=sb, difference=None, outliers_removed=0, ratio_cv=None, notes=())

    results = {"wall": result("wall", 1.0)}
    if cpu:
        results["cpu"] = result("cpu", 0.5)
    return ComparisonReport(
        id=report_id, status="complete", method="sequential", names={"A": names[0], "B": names[1]},
        commands={"A": "./old", "B": "./new"}, seed=7, options={}, host={"hostname": "h", "cpu_model": "c"},
        tool_version="0.test", primary_metric="wall", results=results, invocations=[], time_unit=unit)


TWO_HEADER = "| metric | A mean | B mean | B/A | 99% CI | verdict | U-test p |"


@pytest.mark.parametrize("unit, a_mean, b_mean", [
    (None, "10.00 ms", "11.00 ms"),  # automatic: below a second, milliseconds
    ("microsecond", "10000.0 µs", "11000.0 µs"),
    ("millisecond", "10.00 ms", "11.00 ms"),
    ("second", "0.0100 s", "0.0110 s"),
])
def test_two_commands_table_in_the_time_unit(unit: str | None, a_mean: str, b_mean: str) -> None:
    """-u reaches the exports of two commands as it reaches the terminal (the means were always in ms)."""
    report = _pair([0.009, 0.010, 0.011], [0.010, 0.011, 0.012], unit=unit, cpu=True)
    text = registry()["markdown"].render(report)  # type: ignore[attr-defined]
    assert text.startswith("### duetbench: B vs A (sequential)\n")
    lines = _table_lines(text)
    assert lines[:2] == [TWO_HEADER, "|---|---:|---:|---:|---|---|---:|"]
    assert lines[2] == f"| wall | {a_mean} | {b_mean} | 1.1000 | +8.90% … +11.10% | slower | 0.0123 |"
    # One unit for the table: the CPU row (half the wall time here) is in the wall row's unit.
    half_a = {None: "5.00 ms", "microsecond": "5000.0 µs", "millisecond": "5.00 ms", "second": "0.0050 s"}[unit]
    assert lines[3].startswith(f"| cpu | {half_a} | ") and len(lines) == 4
    assert "**B is 10.0% slower (99% CI 8.9%–11.1%)** — wall time, 3 runs." in text


def test_two_commands_above_a_second_in_seconds_named_as_given() -> None:
    report = _pair([1.5, 1.6, 1.7], [1.2, 1.3, 1.4], names=("base", "pr"))
    text = registry()["markdown"].render(report)  # type: ignore[attr-defined]
    assert text.startswith("### duetbench: pr vs base (sequential)\n")
    lines = _table_lines(text)
    assert lines[0] == "| metric | base mean | pr mean | pr/base | 99% CI | verdict | U-test p |"
    assert lines[2] == "| wall | 1.600 s | 1.300 s | 0.8125 | -19.56% … -17.94% | no difference | 0.0123 |"


def test_two_commands_in_asciidoc_and_org_have_the_same_values() -> None:
    report = _pair([0.009, 0.010, 0.011], [0.010, 0.011, 0.012], unit="microsecond")
    adoc = registry()["asciidoc"].render(report)  # type: ignore[attr-defined]
    assert adoc.startswith("=== duetbench: B vs A (sequential)")
    assert '[cols="<,>,>,>,<,<,>",options="header"]' in adoc
    assert "| wall\n| 10000.0 µs\n| 11000.0 µs\n| 1.1000\n| +8.90% … +11.10%\n| slower\n| 0.0123" in adoc
    org = registry()["orgmode"].render(report).replace("\u200b", "")  # type: ignore[attr-defined]
    assert org.startswith("* duetbench: B vs A (sequential)")
    assert "| wall | 10000.0 µs | 11000.0 µs | 1.1000 | +8.90% … +11.10% | slower | 0.0123 |" in org
    assert [line.count("|") for line in org.splitlines() if line.startswith("|")] == [8, 2, 8]


def test_n_commands_are_one_row_each_against_the_reference() -> None:
    """`duet compare base x y` exports as a scan over the compared command: a row per other command, the
    heading naming them all against the reference (not "x vs base, scanning command")."""
    scan = ScanReport([ScanEntry({"command": "x"}, _pair([0.010] * 3, [0.011] * 3, names=("base", "x"))),
                       ScanEntry({"command": "y"}, _pair([0.010] * 3, [0.010] * 3, names=("base", "y"), report_id=2))])
    for name, heading in (("markdown", "### "), ("asciidoc", "=== "), ("orgmode", "* ")):
        text = registry()[name].render(scan)  # type: ignore[attr-defined]
        assert text.startswith(f"{heading}duetbench: x, y against base (sequential)\n"), text
        assert "scanning" not in text
    lines = _table_lines(registry()["markdown"].render(scan))  # type: ignore[attr-defined]
    assert lines == ["| command | B/A | 99% CI | verdict | runs |", "|---:|---:|---|---|---:|",
                     "| x | 1.1000 | +8.90% … +11.10% | slower | 3 |",
                     "| y | 1.0000 | -1.00% … +1.00% | no difference | 3 |"]
    # A real parameter scan keeps its heading.
    scanned = ScanReport([ScanEntry({"n": "1"}, _pair([0.010] * 3, [0.011] * 3))])
    assert registry()["markdown"].render(scanned).startswith(  # type: ignore[attr-defined]
        "### duetbench: B vs A (sequential), scanning n\n")


# -- document_exporter: the table formats through the registry ----------------------------------------

@pytest.mark.parametrize("name, module", [("markdown", "markdown"), ("asciidoc", "asciidoc"), ("orgmode", "orgmode")])
def test_each_table_format_is_its_markup_through_the_registry(name: str, module: str, tmp_path: Path) -> None:
    """registry()[name] is document_exporter(<module>.MARKUP): it writes every kind, each as its document
    spelled by that module's markup, and write() puts exactly that in the file."""
    import importlib

    from duetbench.report.exporters import TextExporter
    from duetbench.report.exporters._document import (
        campaign_document,
        comparison_document,
        document_exporter,
        scan_document,
    )
    from duetbench.report.model import CampaignReport

    markup = importlib.import_module(f"duetbench.report.exporters.{module}").MARKUP
    exporter = registry()[name]
    assert isinstance(exporter, TextExporter) and exporter.kinds == frozenset({"comparison", "scan", "campaign"})
    assert exporter in exporters_for("comparison") and exporter in exporters_for("campaign")
    pair, single = _pair([0.010] * 3, [0.011] * 3), _single([0.010, 0.012])
    scan = ScanReport([ScanEntry({"n": "1"}, pair)])
    campaign = CampaignReport(campaign_id=1, name="c", rows=[], meta={})
    for subject, document in ((pair, comparison_document(pair)), (single, comparison_document(single)),
                              (scan, scan_document(scan)), (campaign, campaign_document(campaign))):
        assert exporter.render(subject) == markup.render(document)
    exporter.write(pair, tmp_path / "out")
    assert (tmp_path / "out").read_text() == markup.render(comparison_document(pair))
    # The helper itself: names and help as given, the three renderers bound to the markup.
    made = document_exporter(markup, name="x", label="X", help="h")
    assert (made.name, made.label, made.help) == ("x", "X", "h") and made.kinds == exporter.kinds
    assert made.render(pair) == exporter.render(pair)
    # The three formats differ: each registry entry has its own markup, not a shared one.
    assert len({registry()[f].render(pair) for f in ("markdown", "asciidoc", "orgmode")}) == 3  # type: ignore[attr-defined]


def test_outlier_pairs_set_aside_are_counted_beside_the_runs() -> None:
    """`--runs 10` with one pair set aside by the robust filter read "9 runs" in the step summary, as if a
    run were lost: the headline counts what was measured and says how many pairs were set aside."""
    import msgspec

    report = _pair([0.009, 0.010, 0.011], [0.010, 0.011, 0.012])
    wall = msgspec.structs.replace(report.results["wall"], runs=2, outliers_removed=1)
    report = msgspec.structs.replace(report, results={"wall": wall})
    text = registry()["markdown"].render(report)  # type: ignore[attr-defined]
    assert "— wall time, 3 runs (1 outlier pair set aside)." in text
