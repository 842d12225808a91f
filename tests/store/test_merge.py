"""Merging per-task SQLite files into one store (SQLite or PostgreSQL): no duplicates, idempotent,
conflicts kept-first and reported; and the `duet merge` command."""
from __future__ import annotations

import dataclasses
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from duetbench.errors import DuetError
from duetbench.store.campaigns import CampaignStore
from duetbench.store.db import Store
from duetbench.store.merge import merge_databases
from store_samples import begin_campaign, comparable, invocation, run

UID = "6a1c0ad3-2f7e-4a51-9a55-8c1b0e8f0001"


def task_file(path: Path, keys: list[str], *, uid: str = UID, comparison_uid: str | None = None) -> Path:
    """A per-task database as a cluster task leaves it: a copy of the campaign (same uid) with its own runs."""
    store = Store(path)
    try:
        campaigns = CampaignStore(store)
        cid = begin_campaign(campaigns, "nightly", uid=uid)
        for position, key in enumerate(keys):
            campaigns.add_run(cid, run(key, position))
        if comparison_uid:
            comp = store.begin_comparison(method="duet", name_a="a", name_b="b", command_a="x", command_b="y",
                                          seed=1, options={}, host={}, tool_version="0", uid=comparison_uid)
            for i in range(3):
                store.add_invocation(comp, invocation("A", i))
            store.finish_comparison(comp, "complete")
    finally:
        store.close()
    return path


def test_tasks_merge_into_one_campaign_without_duplicates(db_location: str, tmp_path: Path) -> None:
    t0 = task_file(tmp_path / "t0.db", ["fib/duet/0", "fib/duet/1"], comparison_uid="cmp-1")
    t1 = task_file(tmp_path / "t1.db", ["fib/duet/2", "fib/duet/1"])  # one run in both
    dest = Store(db_location)
    try:
        report = merge_databases([t0, t1], dest)
        assert (report.sources, report.campaigns_added, report.campaigns_matched) == (2, 1, 1)
        assert (report.runs_added, report.runs_skipped_duplicate, report.runs_conflicting) == (3, 1, 0)
        assert (report.comparisons_added, report.comparisons_skipped_duplicate) == (1, 0)
        assert report.conflicts == []
        campaigns = CampaignStore(dest)
        [merged] = campaigns.campaigns()
        assert merged.uid == UID and merged.name == "nightly" and merged.seed == 2**40
        by_key = {r.key: r for r in campaigns.runs(merged.id)}
        assert sorted(by_key) == ["fib/duet/0", "fib/duet/1", "fib/duet/2"]
        assert comparable(by_key["fib/duet/2"]) == comparable(run("fib/duet/2", 0))
        [comparison] = dest.comparisons()
        assert comparison.uid == "cmp-1" and comparison.status == "complete"
        assert dest.invocations(comparison.id) == [invocation("A", i) for i in range(3)]

        again = merge_databases([t0, t1], dest)  # idempotent
        assert not again.added_anything
        assert (again.runs_skipped_duplicate, again.comparisons_skipped_duplicate) == (4, 1)
        assert len(campaigns.runs(merged.id)) == 3 and len(dest.comparisons()) == 1

        t2 = task_file(tmp_path / "t2.db", ["fib/duet/3"])  # a task that finished later adds only its run
        later = merge_databases([t0, t1, t2], dest)
        assert (later.campaigns_added, later.runs_added) == (0, 1)

        # another comparison under the same uid (not a copy of the first): kept first, reported
        t3 = task_file(tmp_path / "t3.db", [], uid="other-campaign", comparison_uid="cmp-1")
        clash = merge_databases([t3], dest)
        assert (clash.comparisons_added, clash.comparisons_conflicting) == (0, 1)
        assert "cmp-1" in clash.conflicts[0] and len(dest.comparisons()) == 1
    finally:
        dest.close()


def test_a_run_that_differs_between_sources_keeps_the_first(tmp_path: Path) -> None:
    t0 = task_file(tmp_path / "t0.db", ["fib/duet/0"])
    t1 = tmp_path / "t1.db"
    store = Store(t1)
    campaigns = CampaignStore(store)
    cid = begin_campaign(campaigns, "nightly", uid=UID)
    campaigns.add_run(cid, dataclasses.replace(run("fib/duet/0", 0), status="failed", error="killed"))
    store.close()
    dest = Store(tmp_path / "dest.db")
    try:
        report = merge_databases([t0, t1], dest)
        assert (report.runs_added, report.runs_conflicting, report.runs_skipped_duplicate) == (1, 1, 0)
        assert len(report.conflicts) == 1 and "fib/duet/0" in report.conflicts[0] and "t1.db" in report.conflicts[0]
        [kept] = CampaignStore(dest).runs(1)
        assert kept.status == "ok"
        assert "conflicting" in str(report)
    finally:
        dest.close()


def test_campaigns_with_other_uids_stay_apart(tmp_path: Path) -> None:
    a = task_file(tmp_path / "a.db", ["fib/duet/0"], uid="uid-a")
    b = task_file(tmp_path / "b.db", ["fib/duet/0"], uid="uid-b")
    dest = Store(tmp_path / "dest.db")
    try:
        report = merge_databases([a, b], dest)
        assert (report.campaigns_added, report.runs_added) == (2, 2)
        assert sorted(c.uid for c in CampaignStore(dest).campaigns()) == ["uid-a", "uid-b"]
    finally:
        dest.close()


def test_bad_sources_are_clear_errors(tmp_path: Path) -> None:
    dest = Store(tmp_path / "dest.db")
    try:
        with pytest.raises(DuetError, match="no results database"):
            merge_databases([tmp_path / "missing.db"], dest)
        assert not (tmp_path / "missing.db").exists()  # not created by trying
        with pytest.raises(DuetError, match="both a source and the destination"):
            merge_databases([tmp_path / "dest.db"], dest)
    finally:
        dest.close()


def test_a_source_from_a_newer_duetbench_is_named(tmp_path: Path) -> None:
    # Task files from nodes with different duetbench versions: the error said "the results database is at
    # schema version 99" without saying which of the files merged it is, and told to fix --db.
    old = task_file(tmp_path / "task0.db", ["r0"])
    newer = task_file(tmp_path / "task1.db", ["r1"], uid="6a1c0ad3-2f7e-4a51-9a55-8c1b0e8f0002")
    with sqlite3.connect(newer) as conn:
        conn.execute("INSERT INTO schema_migrations VALUES (99, 'from the future', 0)")
    dest = Store(tmp_path / "dest.db")
    try:
        with pytest.raises(DuetError, match=r"task1\.db: the results database is at schema version 99") as info:
            merge_databases([old, newer], dest)
        assert "--db" not in str(info.value) and "upgrade duetbench" in str(info.value)
    finally:
        dest.close()


def test_old_files_get_stable_uids_so_merging_them_twice_adds_nothing(tmp_path: Path) -> None:
    """A file from before uids existed: opening it gives its campaigns uids, kept in the file."""
    from test_migration import old_database

    old = tmp_path / "old.db"
    old_database(old, 2)
    dest = Store(tmp_path / "dest.db")
    try:
        first = merge_databases([old], dest)
        assert (first.campaigns_added, first.runs_added, first.comparisons_added) == (2, 6, 2)
        assert not merge_databases([old], dest).added_anything
    finally:
        dest.close()


def test_duet_merge_command(tmp_path: Path, duet_env: dict[str, str]) -> None:
    task_file(tmp_path / "t0.db", ["fib/duet/0", "fib/duet/1"])
    task_file(tmp_path / "t1.db", ["fib/duet/2", "fib/duet/1"])

    def merge(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "duetbench", "merge", *args], cwd=tmp_path, env=duet_env,
                              capture_output=True, text=True, timeout=120)

    out = merge("t0.db", "t1.db", "--db", "all.db")
    assert out.returncode == 0, out.stderr
    assert "1 campaign(s) added" in out.stdout and "3 run(s) added" in out.stdout
    assert "1 duplicate run(s) skipped" in out.stdout
    again = merge("t0.db", "t1.db", "--db", "all.db")
    assert "0 run(s) added" in again.stdout and "4 duplicate run(s) skipped" in again.stdout
    with sqlite3.connect(tmp_path / "all.db") as conn:
        assert conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 3
    default = merge("t0.db")
    assert default.returncode == 0 and (tmp_path / ".duet" / "results.db").exists()
    conflicting = task_file(tmp_path / "t2.db", ["fib/duet/0", "fib/duet/1"][::-1])  # other positions
    clash = merge(conflicting.name, "--db", "all.db")
    assert clash.returncode == 0 and "2 conflicting run(s)" in clash.stdout
    assert clash.stdout.count("differs from the run merged first") == 2
    missing = merge("nope.db", "--db", "all.db")
    assert missing.returncode == 2 and "Traceback" not in missing.stderr and "nope.db" in missing.stderr
    # A file that is no results database: the hint is about the files to merge, not about --db.
    (tmp_path / "notes.txt").write_text("not a database\n" * 200)
    foreign = merge("notes.txt", "--db", "all.db")
    assert foreign.returncode == 2 and "Traceback" not in foreign.stderr, foreign.stderr
    assert "not a database" in foreign.stderr and "give duet merge results files" in foreign.stderr, foreign.stderr
    assert "--db" not in foreign.stderr, foreign.stderr


def test_a_source_that_cannot_be_opened_says_why_with_a_hint_about_that_file(tmp_path: Path,
                                                                              duet_env: dict[str, str]) -> None:
    # What the store says of a database it cannot open speaks of --db, the destination in a merge: duet merge
    # replaces that hint, by the error's class. A results file on a full disk (opening an older one brings its
    # schema up to date in place) was told "give duet merge results files duet wrote", which it is.
    from own_mounts import in_own_mounts
    from test_migration import old_database

    old_database(tmp_path / "old.db", 2)
    place = tmp_path / "place"
    place.mkdir()
    merge = f"cd {tmp_path} && {sys.executable} -m duetbench merge {place}/old.db --db {tmp_path}/all.db; echo rc=$?"
    full = in_own_mounts(f"mount -t tmpfs -o size=64k tmpfs {place} && cp {tmp_path}/old.db {place}/ && "
                         f"{{ dd if=/dev/zero of={place}/fill bs=4k 2>/dev/null; true; }} && {merge}", env=duet_env)
    assert "rc=2" in full.stdout, full.stdout + full.stderr
    error = [line for line in full.stderr.splitlines() if line.strip()]
    assert len(error) == 1 and f"{place}/old.db" in error[0], full.stderr
    assert "make room where it is" in error[0] and "--db" not in error[0], full.stderr
    assert "give duet merge results files" not in error[0], full.stderr
    # A read-only file of an older schema: the store's own hint is about that file already, and stays.
    read_only = in_own_mounts(f"mount -t tmpfs tmpfs {place} && cp {tmp_path}/old.db {place}/ && "
                              f"mount -o remount,ro {place} && {merge}", env=duet_env)
    assert "rc=2" in read_only.stdout, read_only.stdout + read_only.stderr
    error = [line for line in read_only.stderr.splitlines() if line.strip()]
    assert len(error) == 1 and f"{place}/old.db is read-only and has schema version" in error[0], read_only.stderr
    assert "copy it to a writable place" in error[0], read_only.stderr
