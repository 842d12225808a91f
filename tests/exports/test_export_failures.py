"""Exports that cannot be written: `duet measure --export-json` (and --plot) refuse a bad path before
measuring and replace the file whole, as `duet compare`'s do; one export failing at the end keeps none of
the others from being written, and each failure is told in a line of its own."""
from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from duetbench.errors import DuetError
from duetbench.model.invocation import Invocation
from duetbench.report.exporters import Exports
from duetbench.report.model import ComparisonReport

SQLITE_MAGIC = b"SQLite format 3\0"


def _database(path: Path) -> bytes:
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE kept (x)")
    db.close()
    return path.read_bytes()


def _duet(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "duetbench", *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=120)


def _report() -> ComparisonReport:
    invocations = [Invocation(side=side, index=k, pair=k, warmup=False, status="ok", exit_code=0, signal=0,
                              start_ns=k, end_ns=k + 10**7, wall_s=0.01, cpu_s=0.005, user_s=0.005, sys_s=0.0,
                              cgroup_cpu_s=None, maxrss_kb=1024, nvcsw=0, nivcsw=0, minflt=0, majflt=0,
                              cpu_requested=0, cpu_seen=0, orphans_reaped=0) for side in "AB" for k in range(2)]
    return ComparisonReport(
        id=1, status="complete", method="sequential", names={"A": "A", "B": "B"},
        commands={"A": "sleep 0.01", "B": "sleep 0.01"}, seed=7, options={}, host={"hostname": "h", "cpu_model": "c"},
        tool_version="0.test", primary_metric="wall", results={}, invocations=invocations, analysis_error="none")


def test_an_export_that_fails_keeps_none_of_the_others_from_being_written(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """The JSON export's directory became a file and the CSV's target a database during the run: the
    Markdown and HTML exports after them were skipped. Now every one that can be is written, and each
    failure is one line (the last is the error the command ends with)."""
    (tmp_path / "gone").write_text("a file where the directory was")
    kept = _database(tmp_path / "later.db")
    exports = Exports({"json": tmp_path / "gone" / "r.json", "csv": tmp_path / "later.db",
                       "markdown": tmp_path / "r.md", "hyperfine": tmp_path / "h.json"})
    with pytest.raises(DuetError) as raised:
        exports.write(_report())
    assert (tmp_path / "r.md").read_text().startswith("### ") and (tmp_path / "h.json").stat().st_size > 0
    assert (tmp_path / "later.db").read_bytes() == kept
    assert "will not replace" in raised.value.message and str(tmp_path / "later.db") in raised.value.message
    told = capsys.readouterr().err.splitlines()
    assert len(told) == 1 and told[0].startswith("error: cannot write the JSON export to ")
    assert "Not a directory" in told[0]
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".part")]


def test_duet_compare_writes_the_other_exports_and_tells_each_failure(duet_env: dict[str, str], tmp_path: Path) -> None:
    """`duet compare ... --export-json gone/r.json --export-csv r.csv --export-markdown r.md` where gone/ became
    a file during the run: r.csv and r.md were never written. And with B killed as well, the export's failure
    is told and the command's failure is the error it ends with; the runs stay stored either way."""
    (tmp_path / "gone").mkdir()
    prepare = f"rmdir {tmp_path / 'gone'} 2>/dev/null; touch {tmp_path / 'gone'}"
    done = _duet(duet_env, tmp_path, "compare", "true", "true", "--runs", "3", "--method", "sequential",
                 "--db", "r.db", "--prepare", prepare, "--export-json", "gone/r.json", "--export-csv", "r.csv",
                 "--export-markdown", "r.md")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.count("error:") == 1 and "cannot write the JSON export to gone/r.json" in done.stderr
    assert (tmp_path / "r.csv").read_text().startswith("comparison_id,") and (tmp_path / "r.md").exists()

    (tmp_path / "gone").unlink()
    (tmp_path / "gone").mkdir()
    killed = _duet(duet_env, tmp_path, "compare", "true", "sh -c 'kill -9 $$'", "--runs", "3", "--method",
                   "sequential", "--db", "r.db", "--prepare", prepare, "--export-json", "gone/r.json",
                   "--export-markdown", "k.md")
    lines = killed.stderr.strip().splitlines()
    assert killed.returncode == 1 and len(lines) == 2, killed.stderr
    assert lines[0].startswith("error: cannot write the JSON export to gone/r.json")
    assert lines[1].startswith("error: command B was killed by signal 9") and (tmp_path / "k.md").exists()
    with sqlite3.connect(tmp_path / "r.db") as db:
        assert db.execute("SELECT COUNT(DISTINCT comparison_id) FROM invocations").fetchone() == (2,)
    db.close()


def test_duet_measure_refuses_an_export_path_before_measuring(duet_env: dict[str, str], tmp_path: Path) -> None:
    """`duet measure CMD --export-json .duetbench/results.db` measured, then replaced the results database
    with JSON; `--export-json out/` wrote a file `out`. Both are refused before the first sample now."""
    kept = _database(tmp_path / "r.db")
    for option, path, said in (("--export-json", "r.db", "is an SQLite database"), ("--plot", "r.db", "SQLite"),
                               ("--export-json", "out/", "names no file")):
        done = _duet(duet_env, tmp_path, "measure", "true", "--runs", "2", "--samples", "s.jsonl", option, path)
        assert done.returncode == 2 and said in done.stderr and "Traceback" not in done.stderr, done.stderr
        assert not (tmp_path / "s.jsonl").exists() and not (tmp_path / "out").exists()
    assert (tmp_path / "r.db").read_bytes() == kept


def test_duet_measure_replaces_its_export_whole_and_says_where_the_samples_are(duet_env: dict[str, str],
                                                                              tmp_path: Path) -> None:
    """The JSON is written beside the old file and renamed over it (a killed run leaves the old or the new,
    not half of one); an export that cannot be written at the end was a traceback (NotADirectoryError)."""
    old = tmp_path / "emp.json"
    old.write_text("old\n")
    inode = old.stat().st_ino
    done = _duet(duet_env, tmp_path, "measure", "true", "--runs", "3", "--samples", "s.jsonl", "--export-json",
                 "emp.json")
    assert done.returncode == 0, done.stderr
    assert old.read_text().startswith("{") and old.stat().st_ino != inode
    assert sorted(p.name for p in tmp_path.iterdir()) == ["emp.json", "s.jsonl"]

    (tmp_path / "d").mkdir()
    gone = _duet(duet_env, tmp_path, "measure", f"rmdir {tmp_path / 'd'} 2>/dev/null; touch {tmp_path / 'd'}",
                 "--shell", "--runs", "3", "--samples", "t.jsonl", "--export-json", "d/emp.json")
    assert gone.returncode == 2 and "Traceback" not in gone.stderr, gone.stderr
    assert "cannot write the JSON export to d/emp.json" in gone.stderr and "--load t.jsonl" in gone.stderr
    assert len((tmp_path / "t.jsonl").read_text().splitlines()) > 3  # the header and every sample kept
    assert os.path.isfile(tmp_path / "d")


def test_duet_measure_never_empties_an_existing_samples_file(duet_env: dict[str, str], tmp_path: Path) -> None:
    """`--samples` opened its file for writing: a second measure with the same path emptied the first one's
    samples, `--samples .duet/results.db` a results database. An existing file is refused (pyperf refuses an
    existing -o file too), before anything is measured; the earlier samples stay and can be --load'ed."""
    first = _duet(duet_env, tmp_path, "measure", "true", "--runs", "3", "--samples", "s.jsonl")
    assert first.returncode == 0, first.stderr
    samples = (tmp_path / "s.jsonl").read_bytes()
    kept = _database(tmp_path / "r.db")
    for path in ("s.jsonl", "r.db", "-"):
        again = _duet(duet_env, tmp_path, "measure", "true", "--runs", "3", "--samples", path)
        assert again.returncode == 2 and "Traceback" not in again.stderr, again.stderr
        lines = [line for line in again.stderr.splitlines() if line.strip()]
        assert len(lines) == 3 and lines[-1].startswith("Error: "), again.stderr  # click's usage, then one error
    assert "--load s.jsonl" in _duet(duet_env, tmp_path, "measure", "true", "--samples", "s.jsonl").stderr
    assert (tmp_path / "s.jsonl").read_bytes() == samples and (tmp_path / "r.db").read_bytes() == kept
    loaded = _duet(duet_env, tmp_path, "measure", "--load", "s.jsonl")
    assert loaded.returncode == 0, loaded.stderr
