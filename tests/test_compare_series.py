"""``duet compare A B C ...`` and parameter scans as series of comparisons (usecases/series.py): exports that
keep every finished comparison when the run is interrupted or killed. Real processes, real store."""
from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest

SEQ = ["--no-progress", "--warmup", "0", "--method", "sequential"]


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

def write_then_sigterm(self, subject):
    write(self, subject)
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
