"""``duet merge``: fold per-task SQLite result files into one store."""
from __future__ import annotations

from contextlib import closing
from pathlib import Path

import click
from rich.markup import escape

from duetbench.errors import DuetError
from duetbench.report.console import OutputConsole
from duetbench.store.db import DEFAULT_DB
from duetbench.store.location import StoreLocation
from duetbench.store.option import DB_PATH_OR_URL, SOURCE_DB


def _remove_if_empty(path: Path) -> None:
    """A merge that failed before copying anything leaves no empty database behind where there was none."""
    import sqlite3

    try:
        with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=rw", uri=True)) as conn:
            held = conn.execute("SELECT (SELECT count(*) FROM campaigns) + (SELECT count(*) FROM comparisons)")
            if held.fetchone()[0]:
                return
    except sqlite3.Error:
        return  # not the empty store this merge made: leave it
    for leftover in (path, *(path.with_name(path.name + s) for s in ("-wal", "-shm", "-journal"))):
        leftover.unlink(missing_ok=True)


def _check_source(path: Path) -> None:
    """Refuse an SQLite file of another program before anything is merged (opening it as a store would
    refuse it too, but after the sources before it were merged), with merge's hint."""
    from duetbench.store.sqlite_file import NotADatabase, refuse_foreign_file

    try:
        refuse_foreign_file(path)
    except NotADatabase as exc:
        raise DuetError(exc.message, hint="give duet merge results files duet wrote (duet compare, duet run, "
                                          "duet import)") from None


@click.command("merge")
@click.argument("sources", nargs=-1, required=True, type=SOURCE_DB)
@click.option("--db", type=DB_PATH_OR_URL, default=DEFAULT_DB, show_default=True,
              help="The store to merge into: a SQLite file (created if missing) or a postgresql:// URL.")
def merge(sources: tuple[Path, ...], db: Path | StoreLocation) -> None:
    """Merge the results in SOURCES (SQLite files, e.g. one per cluster task) into --db.

    Campaigns are matched by their uid, runs by (campaign, run key), comparisons by uid: what --db
    already holds is skipped, so merging again adds nothing twice. A run stored differently in two
    files is a conflict: the first merged is kept, and the conflict is listed.

    \b
    Examples:
      duet merge tasks/*.db                         # into .duet/results.db
      duet merge a.db b.db --db postgresql://host/results
    """
    from duetbench.store.db import Store
    from duetbench.store.merge import merge_databases

    console = OutputConsole(highlight=False)
    for source in sources:
        _check_source(source)
    target = StoreLocation.parse(db).path
    new_file = target is not None and not target.exists()
    dest = Store(db)
    try:
        report = merge_databases(sources, dest)
    except BaseException:
        dest.close()
        if new_file and target is not None:
            _remove_if_empty(target)
        raise
    finally:
        dest.close()
    console.print(f"merged {report.sources} database(s) into {escape(str(dest.location))}: {escape(str(report))}")
    if report.conflicts:
        console.print(f"[yellow]{len(report.conflicts)} conflict(s)[/yellow]: the same record differs between "
                      "files; the first merged was kept:")
        for line in report.conflicts:
            console.print(f"  {escape(line)}")
