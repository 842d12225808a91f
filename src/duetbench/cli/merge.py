"""``duet merge``: fold per-task SQLite result files into one store."""
from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape

from duetbench.store.db import DEFAULT_DB
from duetbench.store.location import StoreLocation
from duetbench.store.option import DB_PATH_OR_URL, SOURCE_DB


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

    console = Console(highlight=False, emoji=False)
    dest = Store(db)
    try:
        report = merge_databases(sources, dest)
    finally:
        dest.close()
    console.print(f"merged {report.sources} database(s) into {escape(str(dest.location))}: {escape(str(report))}")
    if report.conflicts:
        console.print(f"[yellow]{len(report.conflicts)} conflict(s)[/yellow]: the same record differs between "
                      "files; the first merged was kept:")
        for line in report.conflicts:
            console.print(f"  {escape(line)}")
