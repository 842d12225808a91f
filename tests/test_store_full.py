"""A results database whose disk fills: before anything is stored, one clear line and no empty database
file left behind (the next `duet show` took it for a results database); mid-run, the runs stored before
it are reported and exported, and the error says where they are kept (it said only that the disk was
full, with every measured run silently in the file)."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from own_mounts import in_own_mounts


@pytest.mark.parametrize("how", ["true --method sequential", "true --method duet", ""], ids=["sequential", "duet", "one command"])
def test_a_disk_that_fills_mid_run_reports_what_was_stored(duet_env: dict[str, str], tmp_path: Path,
                                                           how: str) -> None:
    disk = tmp_path / "disk"
    disk.mkdir()
    export = tmp_path / "r.json"
    # ~400 KiB holds the schema and some hundreds of invocations of `true`, never the 3000 pairs asked for
    result = in_own_mounts(
        f"mount -t tmpfs -o size=400k tmpfs {disk} && {sys.executable} -m duetbench compare true "
        f"{how} --runs 3000 --no-progress --db {disk}/r.db --export-json {export}; echo rc=$?",
        env=duet_env, timeout=300)
    assert "rc=2" in result.stdout, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    found = re.search(r"error: cannot use the results database \S+: database or disk is full; the (\d+) run\(s\) "
                      rf"measured before it are reported above and kept there \(duet show 1 --db {disk}/r.db\)",
                      " ".join(result.stderr.split()))
    assert found, result.stderr
    kept = int(found.group(1))
    assert 10 <= kept < 3000
    assert ("wall:" if how else "Time (mean ± σ)") in result.stdout, result.stdout  # the report of those runs
    exported = json.loads(export.read_text())
    assert exported["status"] == "failed", list(exported)


def test_a_database_that_cannot_be_created_leaves_no_file(duet_env: dict[str, str], tmp_path: Path) -> None:
    disk = tmp_path / "disk"
    disk.mkdir()
    result = in_own_mounts(
        f"mount -t tmpfs -o size=64k tmpfs {disk} && dd if=/dev/zero of={disk}/fill bs=4k count=16 2>/dev/null; "
        f"{sys.executable} -m duetbench compare true true --runs 3 --no-progress --db {disk}/r.db; echo rc=$?; "
        f"ls {disk}", env=duet_env, timeout=300)
    assert "rc=2" in result.stdout, (result.stdout, result.stderr)
    assert "database or disk is full" in result.stderr and "Traceback" not in result.stderr, result.stderr
    assert result.stdout.split()[-1] == "fill", result.stdout  # no r.db, r.db-wal, r.db-shm
