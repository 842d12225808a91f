"""Exports of what users really give: parameters named as our own columns, comparisons that produced no
statistics, names with Markdown markup, failed invocations as hyperfine counts them."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from duetbench.model.invocation import Invocation
from duetbench.report.exporters import registry
from duetbench.report.model import ComparisonReport, ScanEntry, ScanReport
from duetbench.report.safe_text import markdown_text


def _invocation(side: str, index: int, wall: float, *, status: str = "ok", exit_code: int = 0,
                signal: int = 0) -> Invocation:
    return Invocation(side=side, index=index, pair=index, warmup=False, status=status, exit_code=exit_code,
                      signal=signal, start_ns=index * 10**9, end_ns=index * 10**9 + int(wall * 1e9), wall_s=wall,
                      cpu_s=wall / 2, user_s=wall / 2, sys_s=0.0, cgroup_cpu_s=None, maxrss_kb=1024, nvcsw=0,
                      nivcsw=0, minflt=0, majflt=0, cpu_requested=0, cpu_seen=0, orphans_reaped=0)


def _failed(*, names: tuple[str, str] = ("A", "B"), invocations: list[Invocation] | None = None,
            error: str = "needs at least 2 measured iterations per side, got 0 A and 0 B") -> ComparisonReport:
    """A comparison that ended without statistics (B failed at its first run)."""
    return ComparisonReport(
        id=3, status="failed", method="sequential", names={"A": names[0], "B": names[1]},
        commands={"A": "sleep 0.01", "B": "./crashes"}, seed=7, options={}, host={"hostname": "h", "cpu_model": "c"},
        tool_version="0.test", primary_metric="wall", results={}, invocations=invocations or [],
        analysis_error=error)


def test_a_parameter_named_as_a_csv_column_keeps_its_values() -> None:
    """`duet compare 'x {side}' 'y {side}' -L side 1,2 --export-csv`: the parameter's column was "side",
    twice in the header, and every row held the invocation's side (A, B) under both: the values 1, 2 were
    lost. It is hyperfine's parameter_side now; other parameters keep their bare names."""
    invocations = [_invocation("A", 0, 0.01), _invocation("B", 0, 0.02)]
    scan = ScanReport([ScanEntry({"side": value, "n": "5"}, _failed(invocations=invocations))
                       for value in ("1", "2")])
    text = registry()["csv"].render(scan)  # type: ignore[attr-defined]
    header = next(csv.reader(io.StringIO(text)))
    assert len(header) == len(set(header))
    assert header[:3] == ["parameter_side", "n", "comparison_id"]
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [(r["parameter_side"], r["n"], r["side"]) for r in rows] == [
        ("1", "5", "A"), ("1", "5", "B"), ("2", "5", "A"), ("2", "5", "B")]


def test_a_comparison_without_statistics_says_why_in_every_table_format() -> None:
    """`duet compare 'sleep 0.01' "sh -c 'kill -9 \\$\\$'" --export-markdown pr.md`: the file held a heading and
    an empty table (no rows, no reason, nothing saying the comparison failed)."""
    killed = _invocation("B", 0, 0.001, status="signaled", exit_code=-1, signal=9)
    report = _failed(invocations=[_invocation("A", 0, 0.01), killed])
    for name, heading in (("markdown", "### "), ("asciidoc", "=== "), ("orgmode", "* ")):
        text = registry()[name].render(report)  # type: ignore[attr-defined]
        assert text.startswith(f"{heading}duetbench: B vs A (sequential, failed)\n"), text
        assert "No statistics" in text and "got 0 A and 0 B; B was killed by signal 9 (invocation 0)." in text
        assert "metric" not in text and "U-test" not in text  # no table of headers alone
    single = _failed(invocations=[_invocation("A", 0, 0.001, status="failed", exit_code=1)], error="no run finished")
    single.method, single.names, single.commands = "single", {"A": "A", "B": ""}, {"A": "false", "B": ""}
    assert registry()["markdown"].render(single).startswith(  # type: ignore[attr-defined]
        "### duetbench: false (failed)\n\n**No statistics**: no run finished; the command failed with exit code 1 "
        "(invocation 0).\n")
    from duetbench.report.comparisons_html import comparison_data

    assert comparison_data(report, {})["problem"].endswith("; B was killed by signal 9 (invocation 0)")


def test_duet_show_of_a_failed_comparison_prints_why_not_an_empty_table() -> None:
    from rich.console import Console

    from duetbench.report.terminal import render

    console = Console(record=True, width=200, color_system=None)
    render(_failed(invocations=[_invocation("B", 0, 0.001, status="failed", exit_code=3)]), console)
    text = console.export_text()
    assert "max RSS" not in text
    assert "No statistics: needs at least 2 measured iterations per side, got 0 A and 0 B; B failed with exit code 3 " \
           "(invocation 0)" in text


def test_markdown_shows_names_and_commands_as_typed_not_as_emphasis_or_links() -> None:
    """`duet compare 'cp *.c *.h d' ... -n 'run [fast](x)'`: the Markdown export rendered "cp <em>.c </em>.h d"
    and a link; every Markdown mark from outside is backslash-escaped now (rendered here by markdown-it, the
    CommonMark parser rich uses, with GitHub's tables and strike-through)."""
    from markdown_it import MarkdownIt

    names = ("cp *.c *.h d", "run [fast](http://x) ~~old~~ __init__")
    report = ComparisonReport(
        id=1, status="complete", method="single", names={"A": names[0], "B": ""},
        commands={"A": names[1], "B": ""}, seed=7, options={}, host={}, tool_version="0.test",
        primary_metric="wall", results={}, invocations=[], analysis_error="no run finished")
    html = MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(
        registry()["markdown"].render(report))  # type: ignore[attr-defined]
    assert "<em>" not in html and "<a " not in html and "<s>" not in html and "<strong>cp" not in html
    assert "cp *.c *.h d" in html and "run [fast](http://x) ~~old~~ __init__" in html
    # ... while an underscore inside a word, which is no emphasis, is left as typed in the file
    assert markdown_text("BM_Fast/64 duet_sync _x") == "BM_Fast/64 duet_sync \\_x"


def test_hyperfine_export_of_several_commands_lists_each_once_without_a_made_up_parameter() -> None:
    """`duet compare base x y --export-hyperfine f.json` wrote base twice and every entry with "parameters":
    {"command": "B"}, a parameter the user never gave: a reader keyed by command (Bencher) or grouping by
    parameter (hyperfine's plot_parametrized.py) got four benchmarks of a scan. `hyperfine base x y` writes
    three entries, no parameters; the reference has its runs of both comparisons."""
    def against(other: str, command: str, a_times: list[float], b_times: list[float]) -> ScanEntry:
        report = _failed(names=("A", other), invocations=[
            *(_invocation("A", k, t) for k, t in enumerate(a_times)),
            *(_invocation("B", k, t) for k, t in enumerate(b_times))])
        report.commands = {"A": "./base", "B": command}
        return ScanEntry({"command": other}, report)

    scan = ScanReport([against("B", "./x", [0.010, 0.012], [0.020, 0.022]),
                       against("C", "./y", [0.011, 0.013], [0.030, 0.032])])
    results = json.loads(registry()["hyperfine"].render(scan))["results"]  # type: ignore[attr-defined]
    assert [(r["command"], r["times"]) for r in results] == [
        ("./base", [0.010, 0.012, 0.011, 0.013]), ("./x", [0.020, 0.022]), ("./y", [0.030, 0.032])]
    assert not any("parameters" in r for r in results)
    assert results[0]["exit_codes"] == [0] * 4 and abs(results[0]["mean"] - 0.0115) < 1e-12
    # A real parameter scan keeps hyperfine's parameters on every entry.
    scanned = ScanReport([ScanEntry({"n": "1"}, against("B", "./x", [0.01, 0.01], [0.02, 0.02]).report)])
    assert [r["parameters"] for r in json.loads(registry()["hyperfine"].render(scanned))["results"]] == [  # type: ignore[attr-defined]
        {"n": "1"}, {"n": "1"}]


def test_an_export_never_replaces_the_results_database(duet, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`--export-json r.db` beside `--db r.db` (or `--export-csv .duet/results.db`, the default --db, before
    the first comparison made it) replaced the database with the export: every stored comparison lost."""
    fast = ["--method", "sequential", "--runs", "2", "--warmup", "0", "--no-progress"]
    assert duet("compare", "true", "true", "--db", "r.db", *fast).returncode == 0
    early = duet("compare", "true", "true", "--db", "r.db", "--export-json", "r.db", *fast)
    assert early.returncode == 2 and "r.db is an SQLite database" in early.stderr
    late = duet("compare", "true", "true", "--export-csv", ".duet/results.db", *fast)
    assert late.returncode == 2 and "will not replace .duet/results.db with the CSV export" in late.stderr
    for db in ("r.db", ".duet/results.db"):
        assert (tmp_path / db).read_bytes().startswith(b"SQLite format 3\0")
        shown = duet("show", "1", "--db", db)
        assert shown.returncode == 0 and "duet compare #1" in shown.stdout, shown.stderr


def test_an_export_path_naming_no_file_is_refused_before_measuring(duet, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`--export-json ''` was measured, then failed ("cannot write the JSON export to .: Is a directory");
    `--export-json out/` wrote a file named `out`."""
    for path in ("", "out/"):
        result = duet("compare", "true", "--runs", "2", "--warmup", "0", "--no-progress", "--db", "r.db",
                      "--export-json", path)
        assert result.returncode == 2 and f"'{path}' names no file" in result.stderr, result.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "r.db").exists()


def test_hyperfine_export_has_no_null_means_nor_killed_runs() -> None:
    """A comparison B ended at its first run (killed, timed out) was written with B's (and A's) mean, median,
    min and max null: hyperfine never writes that, and a reader parsing them as numbers failed on the whole
    file. A timed-out run (its time the --timeout's) was one of the timing runs."""
    report = _failed(invocations=[_invocation("A", 0, 0.010), _invocation("A", 1, 0.012),
                                  _invocation("B", 0, 0.011), _invocation("B", 1, 0.5, status="timeout", exit_code=-1)])
    results = json.loads(registry()["hyperfine"].render(report))["results"]  # type: ignore[attr-defined]
    assert [(r["command"], r["times"], r["exit_codes"]) for r in results] == [
        ("sleep 0.01", [0.010, 0.012], [0, 0]), ("./crashes", [0.011], [0])]
    assert results[1]["stddev"] is None and results[1]["mean"] == 0.011
    nothing = _failed(invocations=[_invocation("B", 0, 0.001, status="signaled", exit_code=-1, signal=9)])
    assert json.loads(registry()["hyperfine"].render(nothing)) == {"results": []}  # type: ignore[attr-defined]
