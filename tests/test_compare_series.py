"""``duet compare A B C ...`` and parameter scans as series of comparisons (usecases/series.py): hyperfine's
summary of the fastest, --reference/--reference-name, --sort, and exports that keep every finished
comparison when the run is interrupted or killed. Real processes, real store."""
from __future__ import annotations

import json
import re
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest
from cli_output import one_line_error

SEQ = ["--no-progress", "--warmup", "0", "--method", "sequential"]
# given order: mid, slow, quick, fair; by time: quick (5 ms) < fair (15 ms) < mid (30 ms) < slow (60 ms).
# Each at least twice the one before, not 5 / 10 / 20 / 40 ms: a busy machine adds its start-up and wake-up
# delays to every sleep, most to the shortest in proportion (beside a CPU hog quick took 10.4 ms on average
# and fair 12.9, and the factor between them, derived from two comparisons, held 1 in its interval).
FOUR = ["sleep 0.03", "sleep 0.06", "sleep 0.005", "sleep 0.015", "-n", "mid", "-n", "slow", "-n", "quick",
        "-n", "fair"]




def summary_rows(stdout: str) -> list[tuple[str, str, str]]:
    """(faster|slower|as fast, the other command, "via" when derived) of every line of the summary, in order."""
    summary = stdout[stdout.index("Summary"):]
    rows = []
    for line in summary.splitlines():
        m = re.match(r"\s+(?:([\d.]+) times (faster|slower) than (\S+)|as fast as (\S+):)", line)
        if m:
            rows.append((m.group(2) or "as fast", m.group(3) or m.group(4), "via" if ", via " in line else ""))
    return rows


def test_the_summary_names_the_fastest_and_derives_the_other_factors(duet, tmp_path: Path) -> None:
    result = duet("compare", *FOUR, "--runs", "10", "--export-json", "m.json", "--export-markdown", "m.md", *SEQ)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "quick was the fastest" in out and "  quick ran" in out
    # by time (--sort auto); mid is the reference: quick's factor against it is measured, the others derived
    assert summary_rows(out) == [("faster", "fair", "via"), ("faster", "mid", ""), ("faster", "slow", "via")]
    factors = [float(f) for f in re.findall(r"([\d.]+) times faster than", out[out.index("Summary"):])]
    # slow against quick is derived (slow/mid × mid/quick): nominally 12, ~9 measured (each sleep's start-up,
    # ~2 ms, weighs most on quick's 5 ms), less on a busy machine; above slow/mid's 2 in any case
    assert 1.3 < factors[0] < factors[1] < factors[2] and factors[2] > 4, factors
    assert "via mid: every command was measured against mid" in out
    # measured pairwise against mid, stored and exported in the order they ran, tables as given (auto)
    scan = json.loads((tmp_path / "m.json").read_text())["scan"]
    assert [e["parameters"]["command"] for e in scan] == ["slow", "quick", "fair"]
    assert all(e["comparisons"][0]["a"]["name"] == "mid" for e in scan)
    md_rows = [line.split("|")[1].strip() for line in (tmp_path / "m.md").read_text().splitlines()
               if line.startswith("| ") and not line.startswith("| command")]
    assert md_rows == ["slow", "quick", "fair"]


def test_an_explicit_reference_heads_the_summary_and_sort_mean_time_orders_the_tables(duet, tmp_path: Path) -> None:
    result = duet("compare", *FOUR, "--reference", "1", "--sort", "mean-time", "--runs", "10", "--export-json",
                  "m.json", "--export-markdown", "m.md", *SEQ)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "against the reference mid" in out and "  mid ran" in out and "was the fastest" not in out
    assert summary_rows(out) == [("slower", "quick", ""), ("slower", "fair", ""), ("faster", "slow", "")]
    md_rows = [line.split("|")[1].strip() for line in (tmp_path / "m.md").read_text().splitlines()
               if line.startswith("| ") and not line.startswith("| command")]
    assert md_rows == ["quick", "fair", "slow"]  # by time
    scan = json.loads((tmp_path / "m.json").read_text())["scan"]
    assert [e["parameters"]["command"] for e in scan] == ["slow", "quick", "fair"]  # JSON: as they ran


def test_sort_command_and_reference_name(duet, tmp_path: Path) -> None:
    # B sleeps 4x as long as C (at 2x, the factor between them, derived through slow, once held 1 in its
    # interval beside a CPU hog: C's 5 ms sleep took 10 ms there)
    result = duet("compare", "sleep 0.04", "sleep 0.02", "sleep 0.005", "--reference-name", "slow", "--sort",
                  "command", "--runs", "10", "--export-json", "c.json", *SEQ)
    assert result.returncode == 0, result.stderr
    assert "C was the fastest" in result.stdout
    assert summary_rows(result.stdout) == [("faster", "slow", ""), ("faster", "B", "via")]  # as given
    scan = json.loads((tmp_path / "c.json").read_text())["scan"]
    assert {e["comparisons"][0]["a"]["name"] for e in scan} == {"slow"}
    # a reference command of its own, named, with the others named by -n (each ~2.5x from the reference)
    result = duet("compare", "sleep 0.005", "sleep 0.04", "--reference", "sleep 0.015", "--reference-name", "base",
                  "-n", "quick", "-n", "mid", "--runs", "10", "--export-json", "r.json", *SEQ)
    assert result.returncode == 0, result.stderr
    assert "against the reference base" in result.stdout
    assert summary_rows(result.stdout) == [("slower", "quick", ""), ("faster", "mid", "")]
    scan = json.loads((tmp_path / "r.json").read_text())["scan"]
    assert [(e["comparisons"][0]["a"]["name"], e["comparisons"][0]["a"]["command"], e["parameters"]["command"])
            for e in scan] == [("base", "sleep 0.015", "quick"), ("base", "sleep 0.015", "mid")]


def test_sort_mean_time_orders_a_parameter_scans_tables(duet, tmp_path: Path) -> None:
    result = duet("compare", "sleep 0.02", "sleep 0.0{n}", "-L", "n", "3,1,2", "--sort", "mean-time", "--runs", "6",
                  "--export-json", "s.json", "--export-markdown", "s.md", "--export-orgmode", "s.org", *SEQ)
    assert result.returncode == 0, result.stderr
    for table in ("s.md", "s.org"):
        rows = [line.split("|")[1].strip() for line in (tmp_path / table).read_text().splitlines()
                if line.startswith("| ") and not line.startswith("| n ")]
        assert rows == ["1", "2", "3"], table
    out = result.stdout
    terminal = [line.split("│")[1].strip() for line in out[out.index("parameter scan:"):].splitlines()
                if line.startswith("│")]
    assert terminal == ["1", "2", "3"]  # the scan's own table too
    scan = json.loads((tmp_path / "s.json").read_text())["scan"]
    assert [e["parameters"]["n"] for e in scan] == ["3", "1", "2"]  # as they ran


def test_bad_reference_name_and_sort_are_one_line_errors(duet, tmp_path: Path) -> None:
    both = duet("compare", "true", "true", "true", "-n", "a", "-n", "b", "--reference", "2", "--reference-name", "x",
                *SEQ)
    assert both.returncode == 2 and "both name the reference (command 2)" in one_line_error(both)
    same = duet("compare", "true", "true", "true", "-n", "x", "--reference", "3", "--reference-name", "x", *SEQ)
    assert same.returncode == 2 and "both named 'x'" in one_line_error(same)
    blank = duet("compare", "true", "true", "true", "--reference-name", " ", *SEQ)
    assert blank.returncode == 2 and "a command name" in one_line_error(blank) and "is empty" in blank.stderr
    blank = duet("compare", "true", "true", "-n", "a", "-n", "", *SEQ)
    assert blank.returncode == 2 and "is empty" in one_line_error(blank)
    # "¹" passes str.isdigit but is no number: a command of its own (not found), never a traceback
    sup = duet("compare", "true", "true", "--reference", "\u00b9", *SEQ)
    assert sup.returncode != 0 and "not found" in one_line_error(sup) and "Traceback" not in sup.stderr
    bad = duet("compare", "true", "true", "true", "--sort", "median", *SEQ)
    assert bad.returncode == 2 and "'median' is not one of" in bad.stderr and "Traceback" not in bad.stderr
    assert not (tmp_path / ".duet" / "results.db").exists()


def test_help_documents_sort_and_reference_name(duet) -> None:
    text = " ".join(duet("compare", "--help").stdout.split())
    assert "--sort [auto|command|mean-time]" in text and "--reference-name NAME" in text
    assert "names the fastest command" in text


# -- interrupted and killed series --------------------------------------------------------------------

def _count(db: Path, comparison_id: int) -> int:
    try:
        with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:  # never creates it
            return int(con.execute("SELECT COUNT(*) FROM invocations WHERE comparison_id = ?",
                                   (comparison_id,)).fetchone()[0])
    except sqlite3.Error:  # not created yet, or locked by the writer for a moment
        return 0


def _exported(path: Path) -> list[dict[str, object]]:
    try:
        return list(json.loads(path.read_text())["scan"])
    except (OSError, ValueError):
        return []


SERIES = {  # the first comparison is quick; the second (200 runs of 50 ms) is still running when signalled
    "commands": ["true", "true", "sleep 0.05", "-n", "ref", "-n", "first", "-n", "second"],
    "scan": ["true", "sleep 0.0{n}", "-L", "n", "0,5"],
}


@pytest.mark.parametrize(("kind", "sig"), [("commands", signal.SIGKILL), ("commands", signal.SIGINT),
                                           ("scan", signal.SIGTERM), ("scan", signal.SIGKILL)])
def test_a_series_stopped_in_its_second_comparison_keeps_the_first_in_its_exports(
        duet_env: dict[str, str], tmp_path: Path, kind: str, sig: signal.Signals) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "duetbench", "compare", *SERIES[kind], "--runs", "200",
                             "--export-json", "s.json", "--export-markdown", "s.md", "--export-csv", "s.csv", *SEQ],
                            cwd=tmp_path, env=duet_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 90
        # the first comparison exported, and the second one measuring
        while not (len(_exported(tmp_path / "s.json")) == 1 and _count(tmp_path / ".duet/results.db", 2) >= 3):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the second comparison did not start"
            time.sleep(0.05)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    entries = _exported(tmp_path / "s.json")
    first = {"command": "first"} if kind == "commands" else {"n": "0"}
    assert entries[0]["status"] == "complete" and entries[0]["parameters"] == first
    assert f"| {next(iter(first.values()))} |" in (tmp_path / "s.md").read_text()
    assert len((tmp_path / "s.csv").read_text().splitlines()) > 200  # the first comparison's 400 invocations
    assert not list(tmp_path.glob(".s.*.part"))  # no temporary file of an atomic replacement left behind
    if sig == signal.SIGKILL:
        assert proc.returncode == -signal.SIGKILL and len(entries) == 1
        return
    # Ctrl-C / SIGTERM: the second comparison is kept as interrupted, and the summary shows both
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert [e["status"] for e in entries] == ["complete", "interrupted"]
    assert "Interrupted" in out
    assert ("parameter scan: 2 of 2" in out) if kind == "scan" else ("Summary" in out and "second" in out)


# The window between two comparisons, when no comparison is measuring: SIGTERM there must not kill the
# process before its summary. This run sends it to itself the moment the first comparison is exported.
_SIGTERM_AFTER_FIRST_EXPORT = """
import os, signal, sys
from duetbench.report import exporters

write = exporters.Exports.write
sent = []

def write_then_sigterm(self, subject, **where):
    write(self, subject, **where)
    if getattr(subject, "entries", None) and not sent:
        sent.append(1)
        os.kill(os.getpid(), signal.SIGTERM)

exporters.Exports.write = write_then_sigterm
from duetbench.cli.main import main
main(sys.argv[1:])
"""


def test_sigterm_between_two_comparisons_still_summarises_and_exports(duet_env: dict[str, str],
                                                                     tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-c", _SIGTERM_AFTER_FIRST_EXPORT, "compare", "true", "sleep 0.01",
                             "true", "-n", "ref", "-n", "first", "-n", "second", "--runs", "3", "--export-json",
                             "s.json", *SEQ], cwd=tmp_path, env=duet_env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 130, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr and "interrupted" in result.stderr
    assert "Summary" in result.stdout and "1/2: first against ref" in result.stdout
    assert "2/2" not in result.stdout  # the second never started
    entries = _exported(tmp_path / "s.json")
    assert [e["parameters"] for e in entries] == [{"command": "first"}]
