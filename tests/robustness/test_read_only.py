"""Issue 16 item 8: a results database on a read-only mount can be shown, analysed and reported; writing
to it is one clear error."""
from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

HYPERFINE = {"results": [{"command": "a", "mean": 0.1, "times": [0.10, 0.11, 0.10, 0.12, 0.10, 0.11]},
                         {"command": "b", "mean": 0.2, "times": [0.20, 0.21, 0.20, 0.22, 0.20, 0.21]}]}


@pytest.fixture()
def read_only_view(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """(writable directory, the same directory mounted read-only)."""
    if os.geteuid() != 0:
        pytest.skip("a read-only bind mount needs root")
    rw, ro = tmp_path / "rw", tmp_path / "ro"
    rw.mkdir()
    ro.mkdir()
    made = subprocess.run(["mount", "--bind", str(rw), str(ro)], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"cannot bind-mount here: {made.stderr.strip()}")
    try:
        remount = subprocess.run(["mount", "-o", "remount,bind,ro", str(ro)], capture_output=True, text=True)
        if remount.returncode != 0:
            pytest.skip(f"cannot remount read-only: {remount.stderr.strip()}")
        yield rw, ro
    finally:
        if subprocess.run(["umount", str(ro)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(ro)], capture_output=True)  # busy: detach it anyway


@pytest.mark.parametrize("leave_wal", [False, True])
def test_show_analyze_report_on_a_read_only_mount(duet, tmp_path: Path, read_only_view, leave_wal: bool) -> None:  # type: ignore[no-untyped-def]
    rw, ro = read_only_view
    (tmp_path / "hf.json").write_text(json.dumps(HYPERFINE))
    assert duet("import", "hyperfine", "hf.json", "--db", str(rw / "r.db")).returncode == 0
    assert duet("compare", "true", "true", "--runs", "3", "--no-progress", "--db", str(rw / "r.db")).returncode == 0
    if leave_wal:  # a writer that died without closing: its -wal and -shm files stay beside the database
        subprocess.run([sys.executable, "-c", "import os, sqlite3\nc = sqlite3.connect('r.db')\n"
                        "c.execute('PRAGMA journal_mode=WAL')\nc.execute(\"UPDATE comparisons SET name_a='late'\")\n"
                        "c.commit()\nos._exit(0)"], cwd=rw, check=True)
        assert (rw / "r.db-wal").exists()
    db = str(ro / "r.db")
    probe = sqlite3.connect(db)
    try:
        with pytest.raises(sqlite3.OperationalError):
            probe.execute("CREATE TABLE x (y)")  # really read-only
    finally:
        probe.close()
    shown = duet("show", "--db", db)
    assert shown.returncode == 0, shown.stderr
    assert ("late" in shown.stdout) == leave_wal  # what the -wal file holds is read too
    assert duet("show", "1", "--db", db).returncode == 0
    analyzed = duet("analyze", "--db", db, "--resamples", "200")
    assert analyzed.returncode == 0, analyzed.stderr
    report = duet("report", "--db", db, "-o", str(tmp_path / "r.html"), "--resamples", "200")
    assert report.returncode == 0, report.stderr
    written = duet("compare", "true", "true", "--runs", "3", "--no-progress", "--db", db)
    assert written.returncode != 0
    assert "read" in written.stderr and written.stderr.count("\n") == 1
