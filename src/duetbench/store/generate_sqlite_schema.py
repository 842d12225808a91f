"""Writes store/sqlite_schema.py, the current schema of a SQLite results database as plain data, from
the SQLAlchemy metadata (store/schema.py) and the migrations (store/migrations.py), which stay its only
source: ``python -m duetbench.store.generate_sqlite_schema``. tests/store/test_direct.py fails when
the checked-in file differs from what this generates."""
from __future__ import annotations

from pathlib import Path

from sqlalchemy.dialects import sqlite
from sqlalchemy.schema import CreateIndex, CreateTable

from duetbench.store import schema
from duetbench.store.migrations import HEAD, MIGRATIONS

TARGET = Path(__file__).with_name("sqlite_schema.py")


def ddl() -> list[str]:
    """The statements creating every table and index, as the migrations create them on a new database."""
    dialect = sqlite.dialect()
    statements: list[str] = []
    for table in schema.metadata.sorted_tables:
        statements.append(str(CreateTable(table).compile(dialect=dialect)).strip())
        for index in sorted(table.indexes, key=lambda i: str(i.name)):
            statements.append(str(CreateIndex(index).compile(dialect=dialect)).strip())
    return statements


def render() -> str:
    lines = [
        '"""The current schema of a SQLite results database, as plain data for the direct store (store/direct.py).',
        "",
        "Generated from the SQLAlchemy metadata (store/schema.py) and the migrations (store/migrations.py) by",
        "``python -m duetbench.store.generate_sqlite_schema``: do not edit; tests/store/test_direct.py fails",
        'when it differs from what they generate."""',
        "",
        "#: The schema version of the last migration (migrations.HEAD).",
        f"HEAD = {HEAD}",
        "",
        "#: (version, name) of every migration, as `schema_migrations` records them.",
        "MIGRATIONS: tuple[tuple[int, str], ...] = (",
        *[f"    ({m.version}, {m.name!r})," for m in MIGRATIONS],
        ")",
        "",
        "#: Every table's columns, in order.",
        "COLUMNS: dict[str, tuple[str, ...]] = {",
    ]
    for table in schema.metadata.sorted_tables:
        lines.append(f"    {table.name!r}: (")
        names = [repr(c.name) for c in table.columns]
        row = "       "
        for name in names:
            if len(row) + len(name) + 2 > 116:
                lines.append(row)
                row = "       "
            row += f" {name},"
        lines.append(row)
        lines.append("    ),")
    lines += ["}", "", "#: What creates them on a new database, in order.", "DDL: tuple[str, ...] = ("]
    for statement in ddl():  # a literal per line of it, to stay within 120 columns
        parts = statement.splitlines(keepends=True)
        lines += ["    (", *[f"        {part!r}" for part in parts], "    ),"]
    lines += [")", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    TARGET.write_text(render())
    print(f"wrote {TARGET}")
