"""Standard streams that cannot be written or are closed. Unwritable (a full disk; here /dev/full): every
path that prints ends with one line on stderr and exit code 2, never a traceback (the fast `--version` and
`--help`, click's pages, a report), and a comparison whose report could not be printed is stored all the
same. Closed (`>&-`): the comparison runs as usual."""
from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full to write to")

LINE = "error: cannot write to standard output: No space left on device"


def _run_to_full(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    # As the installed script starts (argv[0] "duet": the kept --help page is only for that name).
    code = "import sys\nsys.argv = ['duet', *sys.argv[1:]]\nfrom duetbench.cli.program import entry\nentry()\n"
    with open("/dev/full", "w") as full:
        return subprocess.run([sys.executable, "-c", code, *args], stdout=full, stderr=subprocess.PIPE, text=True,
                              env=env, cwd=cwd, timeout=120)


@pytest.mark.parametrize(("args", "columns"), [
    (["--version"], "80"),
    (["--help"], "80"),  # the kept page
    (["--help"], "60"),  # click's rendering, before any command's set-up ran
    (["compare", "--help"], "80"),
    (["run", "--help"], "80"),
])
def test_an_unwritable_output_is_one_line(args: list[str], columns: str, tmp_path: Path) -> None:
    env = {**os.environ, "COLUMNS": columns}
    done = _run_to_full(args, env, tmp_path)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr
    assert done.stderr.startswith(LINE) and done.stderr.count("\n") == 1, done.stderr


def test_a_comparison_whose_report_cannot_be_printed_is_stored(duet_env: dict[str, str], tmp_path: Path) -> None:
    done = _run_to_full(["compare", "true", "true", "--runs", "3", "--method", "sequential", "--db", "r.db"],
                        duet_env, tmp_path)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and done.stderr.startswith(LINE), done.stderr
    with sqlite3.connect(tmp_path / "r.db") as conn:
        status, = conn.execute("SELECT status FROM comparisons").fetchone()
        measured, = conn.execute("SELECT count(*) FROM invocations WHERE warmup = 0").fetchone()
    assert status == "complete" and measured == 6


@pytest.mark.parametrize("closed", ["<&- >&- 2>&-", ">&-", "2>&-"])
def test_closed_standard_streams_measure_as_usual(closed: str, duet_env: dict[str, str], tmp_path: Path) -> None:
    """Started with stdin, stdout or stderr closed, nothing lands in the wrong file (the next file opened
    would take the closed descriptor) and the launchers' commands run (they inherit /dev/null)."""
    compare = [sys.executable, "-m", "duetbench", "compare", "true", "true", "--runs", "3", "--method", "duet", "--db",
               "r.db"]
    done = subprocess.run(["sh", "-c", f'exec "$@" {closed}', "sh", *compare], env=duet_env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done
    with sqlite3.connect(tmp_path / "r.db") as conn:
        assert conn.execute("SELECT status FROM comparisons").fetchone()[0] == "complete"
        assert conn.execute("SELECT count(*) FROM invocations WHERE warmup = 0 AND status = 'ok'").fetchone()[0] == 6
